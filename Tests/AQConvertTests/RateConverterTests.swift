import Foundation
import Testing

@testable import AQConvert

/// Planar float storage with a stable array of plane pointers, as the converter's API wants.
final class Planes {
    let channels: Int
    let capacity: Int
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    init(channels: Int, capacity: Int) {
        self.channels = channels
        self.capacity = capacity
        pointers = .allocate(capacity: channels)
        for c in 0..<channels {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(capacity, 1))
            p.initialize(repeating: .nan, count: max(capacity, 1))
            (pointers + c).initialize(to: p)
        }
    }

    convenience init(_ data: [[Float]]) {
        self.init(channels: data.count, capacity: data[0].count)
        for c in 0..<channels { data[c].withUnsafeBufferPointer { pointers[c].update(from: $0.baseAddress!, count: capacity) } }
    }

    deinit {
        for c in 0..<channels { pointers[c].deallocate() }
        pointers.deallocate()
    }

    /// Plane pointers moved `offset` frames in (read-only view), in a fresh pointer array.
    func withInput<R>(at offset: Int, _ body: (UnsafePointer<UnsafePointer<Float>>) -> R) -> R {
        let moved = (0..<channels).map { UnsafePointer(pointers[$0] + offset) }
        return moved.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    func prefix(_ n: Int) -> [[Float]] {
        (0..<channels).map { Array(UnsafeBufferPointer(start: pointers[$0], count: n)) }
    }
}

/// Feeds `input` through `converter` in chunks cycling through `chunks`, each call given
/// `maximumOutputFrames` of its chunk plus `extraCapacity`, then flushes `flushCapacity` frames
/// at a time until the flush returns 0. Returns the whole output stream.
func stream(
    _ converter: RateConverter, _ input: [[Float]], chunks: [Int], extraCapacity: Int = 0,
    flushCapacity: Int = 257
) -> [[Float]] {
    let source = Planes(input)
    let frames = input[0].count
    var output = Array(repeating: [Float](), count: input.count)
    var position = 0
    var k = 0
    while position < frames {
        let n = min(chunks[k % chunks.count], frames - position)
        k += 1
        let wanted = RateConverter.maximumOutputFrames(
            inputFrames: n, inputRate: converter.inputRate, outputRate: converter.outputRate) + extraCapacity
        let capacity = max(0, wanted)
        let out = Planes(channels: input.count, capacity: capacity)
        let written = source.withInput(at: position) {
            converter.process(input: $0, frames: n, output: out.pointers, capacity: capacity)
        }
        #expect(written <= capacity)
        for (c, plane) in out.prefix(written).enumerated() { output[c] += plane }
        position += n
    }
    let tail = Planes(channels: input.count, capacity: flushCapacity)
    while true {
        let pending = converter.pendingOutputFrames
        let written = converter.flush(output: tail.pointers, capacity: flushCapacity)
        #expect(written == min(pending, flushCapacity))
        if written == 0 { break }
        for (c, plane) in tail.prefix(written).enumerated() { output[c] += plane }
    }
    #expect(converter.pendingOutputFrames == 0)
    return output
}

func impulse(at q: Int, frames: Int) -> [Float] {
    var x = [Float](repeating: 0, count: frames)
    x[q] = 1
    return x
}

/// round(x × out / in), halves up, in exact integer arithmetic.
func expectedFrames(_ n: Int, _ inRate: Int, _ outRate: Int) -> Int { (2 * n * outRate + inRate) / (2 * inRate) }

func peakIndex(_ x: [Float]) -> Int {
    x.indices.max { abs(x[$0]) < abs(x[$1]) }!
}

let inputRates = [8000, 22050, 44100, 48000, 96000, 192000]
let outputRates = [48000, 44100]
let ratePairs: [(Int, Int)] = inputRates.flatMap { i in outputRates.map { (i, $0) } }
let chunkPatterns: [[Int]] = [[1], [2, 3, 5, 7, 11, 13], [1009], [4096], [97, 1, 256, 31]]

@Suite("Rate conversion timing and quality")
struct RateConverterTests {

    @Test("impulse at q peaks at round(q × out / in) ± 1, any chunking", arguments: ratePairs)
    func impulseTiming(pair: (Int, Int)) throws {
        let (inRate, outRate) = pair
        let frames = inRate / 5 + 3  // 0.2 s and a bit, an odd length
        let positions = [0, 1, 7919 % frames, frames / 2 + 1, frames - 1]
        for q in positions {
            for chunks in chunkPatterns {
                let conv = try RateConverter(inputRate: Double(inRate), outputRate: Double(outRate), channels: 1)
                let out = stream(conv, [impulse(at: q, frames: frames)], chunks: chunks)
                let expected = expectedFrames(q, inRate, outRate)
                let peak = peakIndex(out[0])
                #expect(abs(peak - expected) <= 1, "\(inRate)→\(outRate) q=\(q) chunks=\(chunks): peak \(peak), want \(expected)")
                #expect(out[0].count == expectedFrames(frames, inRate, outRate))
                // The peak is a real peak, not noise (unless the true peak lies past the stream's
                // last frame, as for an impulse in the last input frame).
                if expected + 1 < out[0].count {
                    #expect(Double(abs(out[0][peak])) > 0.4 * min(1, Double(outRate) / Double(inRate)))
                }
            }
        }
    }

    @Test("total output is exactly round(N × out / in) for any N and chunking", arguments: ratePairs)
    func totalFrames(pair: (Int, Int)) throws {
        let (inRate, outRate) = pair
        for n in [1, 2, 3, 7, 160, 441, 1000, 4410, 12345, inRate / 2 + 1] {
            for chunks in [[n], [1, 2, 3], [4096], [13]] where !(chunks == [1, 2, 3] && n > 5000) {
                let conv = try RateConverter(inputRate: Double(inRate), outputRate: Double(outRate), channels: 2)
                let input = [impulse(at: n / 3, frames: n), (0..<n).map { Float($0 % 7) / 10 }]
                let out = stream(conv, input, chunks: chunks, flushCapacity: 64)
                #expect(out[0].count == expectedFrames(n, inRate, outRate), "\(inRate)→\(outRate) N=\(n) \(chunks)")
                #expect(out[1].count == out[0].count)
                #expect(conv.outputFramesDelivered == out[0].count)
                #expect(conv.inputFramesProcessed == n)
                // libsoxr's own tail already has the exact count (nothing padded).
                #expect(conv.flushPadding == 0, "\(inRate)→\(outRate) N=\(n) padded \(conv.flushPadding)")
                #expect(conv.flushTrimmed == 0, "\(inRate)→\(outRate) N=\(n) trimmed \(conv.flushTrimmed)")
            }
        }
    }

    @Test("rates that are not whole numbers keep the contract too")
    func fractionalRates() throws {
        for (inRate, outRate) in [(44100.5, 48000.0), (47999.9, 44100.0), (22050.0, 48000.25)] {
            for n in [1, 999, 20011] {
                let q = n / 2
                let conv = try RateConverter(inputRate: inRate, outputRate: outRate, channels: 1)
                let out = stream(conv, [impulse(at: q, frames: n)], chunks: [1, 7, 1013])
                #expect(out[0].count == Int((Double(n) * outRate / inRate).rounded()), "\(inRate)→\(outRate) N=\(n)")
                #expect(conv.flushPadding == 0 && conv.flushTrimmed == 0, "padded \(conv.flushPadding), trimmed \(conv.flushTrimmed)")
                if n > 100 {
                    let expected = Int((Double(q) * outRate / inRate).rounded())
                    #expect(abs(peakIndex(out[0]) - expected) <= 1, "\(inRate)→\(outRate) N=\(n)")
                }
            }
        }
    }

    @Test("the same input split differently gives the same output", arguments: ratePairs)
    func chunkingIndependence(pair: (Int, Int)) throws {
        let (inRate, outRate) = pair
        let frames = inRate / 10 + 11
        var rng = SeededRandom(seed: UInt64(inRate * 7 + outRate))
        let input = [(0..<frames).map { _ in Float.random(in: -0.9...0.9, using: &rng) },
                     (0..<frames).map { sin(Float($0) * 0.01) }]
        let reference = stream(
            try RateConverter(inputRate: Double(inRate), outputRate: Double(outRate), channels: 2),
            input, chunks: [frames])
        for chunks in chunkPatterns + [[frames / 3, 1, 2]] {
            let out = stream(
                try RateConverter(inputRate: Double(inRate), outputRate: Double(outRate), channels: 2),
                input, chunks: chunks, flushCapacity: 5)
            #expect(out[0].count == reference[0].count)
            let diff = zip(out, reference).map { a, b in zip(a, b).map { abs($0 - $1) }.max() ?? 0 }.max()!
            #expect(diff <= 1e-6, "\(inRate)→\(outRate) chunks \(chunks): max difference \(diff)")
        }
    }

    @Test("small capacities lose nothing: output held back comes out later")
    func smallCapacity() throws {
        for (inRate, outRate) in [(44100, 48000), (8000, 48000), (48000, 48000), (96000, 44100)] {
            let frames = 5000
            let input = [(0..<frames).map { Float($0 % 100) / 100 }]
            let reference = stream(
                try RateConverter(inputRate: Double(inRate), outputRate: Double(outRate), channels: 1),
                input, chunks: [frames])
            // A capacity of 1 frame per call is far too small; everything comes out at flush.
            let conv = try RateConverter(inputRate: Double(inRate), outputRate: Double(outRate), channels: 1)
            let source = Planes(input)
            let out = Planes(channels: 1, capacity: 1)
            var got: [Float] = []
            for i in stride(from: 0, to: frames, by: 50) {
                let n = source.withInput(at: i) { conv.process(input: $0, frames: 50, output: out.pointers, capacity: 1) }
                got += out.prefix(n)[0]
            }
            let tail = Planes(channels: 1, capacity: 1000)
            while case let n = conv.flush(output: tail.pointers, capacity: 1000), n > 0 { got += tail.prefix(n)[0] }
            #expect(got == reference[0], "\(inRate)→\(outRate)")
        }
    }

    @Test("a resampled sine keeps its frequency and phase", arguments: ratePairs)
    func sine(pair: (Int, Int)) throws {
        let (inRate, outRate) = pair
        let f = 1000.0 + 0.5  // not a divisor of any rate
        let seconds = 0.5
        let n = Int(Double(inRate) * seconds)
        let input = (0..<n).map { Float(sin(2 * .pi * f * Double($0) / Double(inRate))) }
        let out = stream(
            try RateConverter(inputRate: Double(inRate), outputRate: Double(outRate), channels: 1), [input],
            chunks: [333, 1, 4096])[0]
        #expect(out.count == expectedFrames(n, inRate, outRate))
        // Away from the ends (filter start-up and tail), the output is the ideal sine sampled at
        // the output rate: same frequency and same phase, so the timing has no offset.
        let margin = outRate / 20
        var worst: Double = 0
        for j in margin..<(out.count - margin) {
            let ideal = sin(2 * .pi * f * Double(j) / Double(outRate))
            worst = max(worst, abs(Double(out[j]) - ideal))
        }
        #expect(worst < 2e-3, "\(inRate)→\(outRate): max deviation from the ideal sine \(worst)")
        // Zero crossings count the frequency independently of phase.
        var crossings = 0
        for j in (margin + 1)..<(out.count - margin) where (out[j - 1] < 0) != (out[j] < 0) { crossings += 1 }
        let span = Double(out.count - 2 * margin - 1) / Double(outRate)
        let measured = Double(crossings) / 2 / span
        #expect(abs(measured - f) < 3, "\(inRate)→\(outRate): \(measured) Hz")
    }

    @Test("equal rates pass audio through unchanged, with the same API")
    func passthrough() throws {
        let conv = try RateConverter(inputRate: 48000, outputRate: 48000, channels: 3)
        #expect(conv.isPassthrough)
        #expect(conv.filterDelay == 0)
        let frames = 1001
        let input = (0..<3).map { c in (0..<frames).map { Float($0 * 3 + c) } }
        let out = stream(conv, input, chunks: [1, 17, 256])
        #expect(out == input)
        conv.reset()
        // Capacity smaller than the input: the rest waits inside and comes out next (or at flush).
        let small = stream(conv, input, chunks: [100], extraCapacity: -60)
        #expect(small == input)
    }

    @Test("reset starts a new stream: the same input gives the same output")
    func reset() throws {
        let conv = try RateConverter(inputRate: 44100, outputRate: 48000, channels: 1)
        let input = [impulse(at: 1234, frames: 4410)]
        let first = stream(conv, input, chunks: [512])
        conv.reset()
        #expect(conv.inputFramesProcessed == 0 && conv.outputFramesDelivered == 0)
        let second = stream(conv, input, chunks: [7])
        #expect(first.count == 1 && first[0].count == 4800)
        let diff = zip(first[0], second[0]).map { abs($0 - $1) }.max()!
        #expect(diff <= 1e-6)
        // Reset in the middle of a stream drops what was in flight.
        conv.reset()
        let source = Planes(input)
        let out = Planes(channels: 1, capacity: 10000)
        _ = source.withInput(at: 0) { conv.process(input: $0, frames: 3000, output: out.pointers, capacity: 10000) }
        conv.reset()
        let third = stream(conv, input, chunks: [4410])
        #expect(zip(first[0], third[0]).map { abs($0 - $1) }.max()! <= 1e-6)
    }

    @Test("bad rates and channel counts are refused with 'fmt?'")
    func refused() {
        for (i, o, c, fragment) in [
            (0.0, 48000.0, 1, "input rate 0.0"), (44100, .infinity, 1, "output rate inf"),
            (44100, 48000, 0, "channel count 0"), (44100, 48000, 33, "channel count 33"),
            (999, 48000, 2, "input rate 999.0"),
        ] {
            #expect {
                _ = try RateConverter(inputRate: i, outputRate: o, channels: c)
            } throws: { error in
                guard let e = error as? RateConverterError else { return false }
                return e.message.contains(fragment) && e.resultCode == 1_718_449_215
            }
        }
    }

    @Test("maximumOutputFrames bounds the frames due for a call")
    func maximumOutputFrames() {
        for (i, o) in ratePairs {
            for n in [0, 1, 2, 3, 100, 1009, 48000] {
                let bound = RateConverter.maximumOutputFrames(inputFrames: n, inputRate: Double(i), outputRate: Double(o))
                #expect(bound >= expectedFrames(n, i, o) + 1)
                #expect(bound <= Int((Double(n) * Double(o) / Double(i)).rounded(.up)) + 2)
            }
        }
    }

    @Test("outputFrames(forInputFrames:) rounds halves up, exactly, also for huge counts")
    func outputFramesRounding() throws {
        let conv = try RateConverter(inputRate: 96000, outputRate: 44100, channels: 1)
        #expect(conv.outputFrames(forInputFrames: 160) == 74)  // 73.5 → 74
        #expect(conv.outputFrames(forInputFrames: 1) == 0)  // 0.459 → 0
        #expect(conv.outputFrames(forInputFrames: 3) == 1)  // 1.378 → 1
        let day = 96000 * 86400 * 365
        #expect(conv.outputFrames(forInputFrames: day) == 44100 * 86400 * 365)
        let odd = try RateConverter(inputRate: 44100.5, outputRate: 48000, channels: 1)
        #expect(odd.outputFrames(forInputFrames: 44100) == Int((44100 * 48000 / 44100.5).rounded()))
    }

    /// Prints libsoxr's delay for docs/conversion.md, and checks it is bounded.
    @Test("measure libsoxr's delay for each rate pair")
    func measureDelay() throws {
        var lines: [String] = []
        for (i, o) in ratePairs where i != o {
            let conv = try RateConverter(inputRate: Double(i), outputRate: Double(o), channels: 1)
            let source = Planes([[Float](repeating: 0, count: i)])
            let out = Planes(channels: 1, capacity: 2 * o)
            var held = 0
            var maximumDelay = 0.0
            var position = 0
            while position < i {
                let n = min(256, i - position)
                _ = source.withInput(at: position) { conv.process(input: $0, frames: n, output: out.pointers, capacity: 2 * o) }
                position += n
                held = max(held, conv.pendingOutputFrames)
                maximumDelay = max(maximumDelay, conv.filterDelay)
            }
            let final = conv.filterDelay
            #expect(final > 0 && Double(held) < Double(o) * 0.1, "\(i)→\(o) holds \(held) frames")
            lines.append(
                "| \(i) → \(o) | \(String(format: "%.1f", final)) | \(String(format: "%.1f", maximumDelay)) | \(held) | "
                    + String(format: "%.1f", Double(held) * 1000 / Double(o)) + " |")
        }
        print("DELAY-TABLE\n" + lines.joined(separator: "\n"))
    }
}

/// A small deterministic generator (SplitMix64), so test inputs repeat run to run.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
