import AQCore
@testable import AQEngine
import AQTypes
import Foundation
import Testing

/// Processing taps (issue 22): the tap on its own (no engine: chunks, in-place output, siphon,
/// stream starts, the context checks), then on a playback queue on the hand-driven device
/// (a halving tap heard halved sample for sample, a siphon seeing every frame once, PostEffects
/// after time/pitch, dispose, result codes).
@Suite struct ProcessingTapTests {
    /// A ramp of `n` frames per channel (channel c: c * 1000 + i).
    static func ramp(_ channels: Int, _ n: Int) -> [[Float]] {
        (0..<channels).map { c in (0..<n).map { Float(c * 1000 + $0) } }
    }

    /// Runs `planes` through `tap` at queue frame `q`.
    static func run(_ tap: AudioQueueProcessingTap, _ planes: inout [[Float]], at q: Int64, epoch: UInt32 = 0) {
        let n = planes[0].count
        let ptrs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: planes.count)
        defer { ptrs.deallocate() }
        var flat = planes.flatMap { $0 }
        flat.withUnsafeMutableBufferPointer { f in
            for c in 0..<planes.count { ptrs[c] = f.baseAddress! + c * n }
            tap.process(ptrs, frames: n, at: q, queueFrames: n, epoch: epoch)
        }
        planes = (0..<planes.count).map { Array(flat[$0 * n..<($0 + 1) * n]) }
    }

    @Test func maxFramesIsNearestPowerOfTwoTo50ms() {
        let cb: AudioQueueProcessingTap.Callback = { _, _, _, _, _ in 0 }
        #expect(AudioQueueProcessingTap(channels: 1, sampleRate: 44100, flags: .preEffects, callback: cb).maxFrames == 2048)
        #expect(AudioQueueProcessingTap(channels: 1, sampleRate: 48000, flags: .preEffects, callback: cb).maxFrames == 2048)
        #expect(AudioQueueProcessingTap(channels: 1, sampleRate: 96000, flags: .preEffects, callback: cb).maxFrames == 4096)
        let f = AudioQueueProcessingTap(channels: 2, sampleRate: 48000, flags: .preEffects, callback: cb).processingFormat
        #expect(f.formatFlags == [.isFloat, .isPacked, .isNonInterleaved] && f.bytesPerFrame == 4 && f.channelsPerFrame == 2 && f.sampleRate == 48000)
    }

    /// A tap halving what it pulls, in place, in chunks of at most maxFrames, with the flags
    /// and continuous time stamps the header promises.
    @Test func halvingTapInPlaceInChunks() {
        var calls: [(frames: Int, time: Double, flags: UInt32, pulledFlags: UInt32, queueTime: Double, queueFrames: Int)] = []
        let tap = AudioQueueProcessingTap(channels: 2, sampleRate: 48000, flags: .preEffects) { tap, frames, ts, flags, data in
            let io = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 2)
            defer { io.deallocate() }
            io.initialize(repeating: nil, count: 2)
            let got = try! tap.getSourceAudio(frames: frames, into: UnsafeMutableBufferPointer(start: io, count: 2))
            let qt = try! tap.queueTime()
            calls.append((frames, ts.sampleTime, flags.rawValue, got.flags.rawValue, qt.sampleTime, qt.frameCount))
            for c in 0..<2 {
                for i in 0..<got.frames { io[c]![i] *= 0.5 }
                data[c] = io[c]
            }
            return got.frames
        }
        var planes = Self.ramp(2, 5000)
        Self.run(tap, &planes, at: 100)
        #expect(planes == Self.ramp(2, 5000).map { $0.map { $0 * 0.5 } })
        #expect(calls.map(\.frames) == [2048, 2048, 904])
        #expect(calls.map(\.time) == [100, 2148, 4196])
        #expect(calls.map(\.queueTime) == [100, 2148, 4196] && calls.map(\.queueFrames) == [2048, 2048, 904])
        #expect(calls.map(\.flags) == [0x101, 0x1, 0x1])
        #expect(calls.map(\.pulledFlags) == [0x100, 0, 0])
        // Continuing at 5100: no new stream; a gap, or a new epoch, starts one.
        var more = Self.ramp(2, 10)
        Self.run(tap, &more, at: 5100)
        Self.run(tap, &more, at: 9000)
        Self.run(tap, &more, at: 9010, epoch: 1)
        #expect(calls.suffix(3).map(\.flags) == [0x1, 0x101, 0x101])
        #expect(calls.suffix(3).map(\.time) == [5100, 9000, 9010])
    }

    /// Output shorter than asked plays silence after it; a tap returning nil pointers, silence.
    @Test func shortOutputIsPaddedWithSilence() {
        let tap = AudioQueueProcessingTap(channels: 1, sampleRate: 48000, flags: .postEffects) { tap, frames, _, _, data in
            _ = try! tap.getSourceAudio(frames: frames, into: data)
            return frames / 2
        }
        var planes = Self.ramp(1, 100)
        Self.run(tap, &planes, at: 0)
        #expect(Array(planes[0].prefix(50)) == Self.ramp(1, 50)[0])
        #expect(planes[0].suffix(50).allSatisfy { $0 == 0 })
    }

    /// A siphon sees every frame once, in order, and the audio stays as it was; it cannot pull.
    @Test func siphonSeesEveryFrameOnce() {
        var seen: [Float] = []
        var pullStatus: AudioQueueError.Code?
        let tap = AudioQueueProcessingTap(channels: 1, sampleRate: 48000, flags: [.preEffects, .siphon]) { tap, frames, _, _, data in
            seen += Array(UnsafeBufferPointer(start: data[0]!, count: frames))
            do { _ = try tap.getSourceAudio(frames: 1, into: data) } catch { pullStatus = (error as? AudioQueueError)?.code }
            return 0
        }
        var planes = Self.ramp(1, 4100)
        Self.run(tap, &planes, at: 0)
        #expect(seen == Self.ramp(1, 4100)[0])
        #expect(planes == Self.ramp(1, 4100))
        #expect(pullStatus == .invalidTapContext)
    }

    /// Outside the callback: InvalidTapContext.
    @Test func outsideTheCallbackIsInvalidTapContext() {
        let tap = AudioQueueProcessingTap(channels: 1, sampleRate: 48000, flags: .preEffects) { _, _, _, _, _ in 0 }
        let io = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 1)
        defer { io.deallocate() }
        io.initialize(to: nil)
        #expect(throws: AudioQueueError.self) { _ = try tap.getSourceAudio(frames: 1, into: UnsafeMutableBufferPointer(start: io, count: 1)) }
        do { _ = try tap.queueTime(); Issue.record("queueTime outside the callback") } catch { #expect(error.code == .invalidTapContext) }
    }
}
