import Foundation
import Testing

@testable import AQConvert

/// SoundTouch through ``TimePitch`` (issue 22): a play rate changes the length and keeps the
/// pitch, a pitch shift changes the frequency and keeps the length, out-of-range values are
/// refused. Lengths are the tone's (frames above a threshold), not SoundTouch's padded output.
@Suite struct TimePitchTests {
    static let rate = 48000.0

    /// `seconds` of a `hz` sine at 0.5, `channels` identical planes.
    static func tone(_ hz: Double, seconds: Double, channels: Int) -> [[Float]] {
        let n = Int(seconds * rate)
        let x = (0..<n).map { Float(0.5 * sin(2 * Double.pi * hz * Double($0) / rate)) }
        return Array(repeating: x, count: channels)
    }

    /// Feeds `planes` in chunks of 1000 frames, then flushes; returns the output.
    static func run(_ tp: TimePitch, _ planes: [[Float]]) -> [[Float]] {
        var out = [[Float]](repeating: [], count: planes.count)
        var i = 0
        while i < planes[0].count {
            let j = min(i + 1000, planes[0].count)
            let part = tp.process(planes.map { Array($0[i..<j]) })
            for c in out.indices { out[c] += part[c] }
            i = j
        }
        let tail = tp.flush()
        for c in out.indices { out[c] += tail[c] }
        return out
    }

    /// Frames from the first to the last sample above 0.1, and the frequency by rising zero
    /// crossings over the middle of that stretch.
    static func measure(_ x: [Float]) -> (frames: Int, hz: Double) {
        guard let on = x.firstIndex(where: { abs($0) > 0.1 }), let off = x.lastIndex(where: { abs($0) > 0.1 }) else { return (0, 0) }
        let a = on + (off - on) / 4, b = off - (off - on) / 4
        var crossings: [Int] = []
        for i in (a + 1)...b where x[i - 1] < 0 && x[i] >= 0 { crossings.append(i) }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return (off - on + 1, 0) }
        return (off - on + 1, Double(crossings.count - 1) * rate / Double(last - first))
    }

    @Test(arguments: [(Float(2), 1), (0.5, 2), (1.5, 1)])
    func playRateChangesLengthNotPitch(playRate: Float, channels: Int) throws {
        let tp = try TimePitch(channels: channels, sampleRate: Self.rate)
        try tp.setPlayRate(playRate)
        let out = Self.run(tp, Self.tone(440, seconds: 2, channels: channels))
        for c in 0..<channels {
            let (frames, hz) = Self.measure(out[c])
            let expected = 2 * Self.rate / Double(playRate)
            #expect(abs(Double(frames) - expected) < 0.01 * expected, "rate \(playRate): \(frames) frames, expected \(expected)")
            #expect(abs(hz - 440) < 0.005 * 440, "rate \(playRate): \(hz) Hz")
        }
    }

    @Test(arguments: [Float(1200), -1200, 700])
    func pitchChangesFrequencyNotLength(cents: Float) throws {
        let tp = try TimePitch(channels: 2, sampleRate: Self.rate)
        try tp.setPitch(cents: cents)
        let out = Self.run(tp, Self.tone(440, seconds: 2, channels: 2))
        let (frames, hz) = Self.measure(out[0])
        let want = 440 * pow(2, Double(cents) / 1200)
        #expect(abs(hz - want) < 0.005 * want, "\(cents) cents: \(hz) Hz, want \(want)")
        #expect(abs(Double(frames) - 2 * Self.rate) < 0.01 * 2 * Self.rate, "\(cents) cents: \(frames) frames")
    }

    @Test func outOfRangeIsRefused() throws {
        let tp = try TimePitch(channels: 1, sampleRate: Self.rate)
        for r in [Float(0.49), 2.01, .nan, .infinity] { #expect(throws: TimePitchError.self) { try tp.setPlayRate(r) } }
        for c in [Float(-2401), 2401, .nan] { #expect(throws: TimePitchError.self) { try tp.setPitch(cents: c) } }
        #expect(tp.playRate == 1 && tp.pitchCents == 0)
        #expect(throws: TimePitchError.self) { _ = try TimePitch(channels: 0, sampleRate: 48000) }
        #expect(throws: TimePitchError.self) { _ = try TimePitch(channels: 2, sampleRate: 0) }
    }
}
