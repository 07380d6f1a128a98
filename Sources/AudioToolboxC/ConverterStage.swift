// The part of an AudioConverter after decoding (issue 23): routes the source's channels to the
// destination's (kAudioConverterChannelMap, Apple's default when none is set) and converts the
// rate through libsoxr (AQConvert's RateConverter). Planar floats in, planar floats out. Used
// from one thread at a time, like its converter.
import AQConvert
import CAudioToolbox

final class ConverterStage {
    let inChannels: Int
    let outChannels: Int
    /// Per destination channel, the source channel it takes (−1: silence).
    private(set) var map: [Int]
    private let rate: RateConverter?
    /// Source frames routed per ``push(_:from:count:)``.
    let chunk = 4096
    private let routed: [UnsafeMutablePointer<Float>]
    private let silence: UnsafeMutablePointer<Float>
    /// Converted frames: `held` of them, `given` given out.
    let out: [UnsafeMutablePointer<Float>]
    private let outCapacity: Int
    private(set) var held = 0
    private(set) var given = 0
    /// The source ended and everything was flushed out of the rate converter.
    private(set) var ended = false

    /// Apple's default routing (kAudioConverterChannelMap): with more source channels than
    /// destination ones the first are kept and the rest dropped; with fewer, the first
    /// destination channels get them and the rest are silent.
    static func defaultMap(from inChannels: Int, to outChannels: Int) -> [Int] {
        (0..<outChannels).map { $0 < inChannels ? $0 : -1 }
    }

    /// A stage from `inChannels` at `inRate` to `outChannels` at `outRate`, with the default map.
    init(inChannels: Int, outChannels: Int, inRate: Double, outRate: Double) throws(AudioFileFailure) {
        self.inChannels = inChannels
        self.outChannels = outChannels
        map = Self.defaultMap(from: inChannels, to: outChannels)
        if inRate != outRate {
            for (r, status) in [(inRate, kAudioConverterErr_InputSampleRateOutOfRange), (outRate, kAudioConverterErr_OutputSampleRateOutOfRange)]
            where !(r >= 1000 && r <= 768_000) {
                throw AudioFileFailure(status: status, "\(r) Hz is outside 1000…768000 Hz")
            }
            do { rate = try RateConverter(inputRate: inRate, outputRate: outRate, channels: outChannels) } catch {
                throw AudioFileFailure(status: kAudioConverterErr_FormatNotSupported, "rate conversion: \(error)")
            }
        } else {
            rate = nil
        }
        outCapacity = RateConverter.maximumOutputFrames(inputFrames: chunk, inputRate: inRate, outputRate: outRate) + 4096
        let c = chunk
        routed = (0..<outChannels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: c) }
        silence = .allocate(capacity: c)
        silence.initialize(repeating: 0, count: c)
        let oc = outCapacity
        out = (0..<outChannels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: oc) }
    }

    deinit {
        for p in routed { p.deallocate() }
        for p in out { p.deallocate() }
        silence.deallocate()
    }

    /// Sets the routing: one source channel (or −1) per destination channel.
    func setMap(_ m: [Int]) throws(AudioFileFailure) {
        guard m.count == outChannels else {
            throw AudioFileFailure(status: kAudioConverterErr_BadPropertySizeError, "the map takes one entry per destination channel (\(outChannels))")
        }
        guard m.allSatisfy({ $0 >= -1 && $0 < inChannels }) else {
            throw AudioFileFailure(status: paramError, "a map entry names no source channel (0…\(inChannels - 1) or −1)")
        }
        map = m
    }

    /// Marks the converted frames given out.
    func gave(_ k: Int) { given += k }

    /// Routes and converts `count` (≤ ``chunk``) source frames of `planes` from frame `from`;
    /// call only when every converted frame was given out.
    func push(_ planes: [UnsafeMutablePointer<Float>], from: Int, count: Int) {
        precondition(given == held && count <= chunk)
        for (o, i) in map.enumerated() {
            if i >= 0 { routed[o].update(from: planes[i] + from, count: count) } else { routed[o].update(from: silence, count: count) }
        }
        given = 0
        guard let rate else {
            for o in 0..<outChannels { out[o].update(from: routed[o], count: count) }
            held = count
            return
        }
        held = routed.map { UnsafePointer($0) }.withUnsafeBufferPointer { input in
            out.withUnsafeBufferPointer { output in
                rate.process(input: input.baseAddress!, frames: count, output: output.baseAddress!, capacity: outCapacity)
            }
        }
    }

    /// The source ended: what the rate converter still holds comes out, as much as fits, a
    /// call at a time, until a call gives nothing and the stage has ``ended``. Call only when
    /// every converted frame was given out.
    func finish() {
        precondition(given == held)
        given = 0
        held = 0
        guard let rate, !ended else { ended = true; return }
        held = out.withUnsafeBufferPointer { rate.flush(output: $0.baseAddress!, capacity: outCapacity) }
        if held == 0 { ended = true }
    }

    /// Drops what is held and starts a new stream (AudioConverterReset).
    func reset() {
        held = 0
        given = 0
        ended = false
        rate?.reset()
    }

    /// Output frames the stream's `frames` source frames become in all.
    func outputFrames(forInputFrames frames: Int) -> Int { rate?.outputFrames(forInputFrames: frames) ?? frames }
}
