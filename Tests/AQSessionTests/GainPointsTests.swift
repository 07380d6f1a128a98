import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// A track's gain points (`gain = [[time, dB], …]`, docs/session-format.md "Gain points"):
/// rendered against the documented envelope computed here, and refused when malformed.
@Suite("Gain points")
struct GainPointsTests {
    /// The documented envelope at frame i: the first point's gain before it, the last's after,
    /// linear in amplitude between two points, the later of two points at one frame from it.
    static func envelope(_ points: [(frame: Int64, db: Double)], _ i: Int64) -> Double {
        let g = points.map { $0.db == -.infinity ? 0 : pow(10, $0.db / 20) }
        if i < points[0].frame { return g[0] }
        guard let k = points.lastIndex(where: { $0.frame <= i }) else { return g[0] }
        if k == points.count - 1 { return g[k] }
        let x = Double(i - points[k].frame) / Double(points[k + 1].frame - points[k].frame)
        return g[k] + (g[k + 1] - g[k]) * x
    }

    /// Ramps, a fade to −∞ and back, and a step, on the first track (pcm.wav on outputs 1
    /// and 2): its outputs are the plain render × the envelope within 1e-6; the other tracks
    /// are unchanged; `--from` inside the envelope is the full render from there.
    @Test func rendersTheDocumentedEnvelope() throws {
        let points = #"gain = [[0, 0], ["0.5s", -6], ["1s", -inf], ["frames:60000", -inf], ["1.5s", 0], [2, -20], [2, 0]]"#
        let fx = try SeekAndFadeTests.make(tracks: points)
        let session = try SessionLoader.load(fx.url)
        #expect(session.tracks[0].gainPoints.count == 7)
        var plainSession = session
        plainSession.tracks[0].gainPoints = []
        let plain = try SeekAndFadeTests.render(plainSession, fx.dir).0.channels
        let shaped = try SeekAndFadeTests.render(session, fx.dir).0.channels
        let frames: [(Int64, Double)] = [(0, 0), (24000, -6), (48000, -.infinity), (60000, -.infinity), (72000, 0), (96000, -20), (96000, 0)]
        for c in 0..<2 {
            var worst = 0.0
            for i in plain[c].indices {
                let want = plain[c][i] * Float(Self.envelope(frames, Int64(i)))
                worst = max(worst, Double(abs(want - shaped[c][i])))
            }
            #expect(worst <= 1e-6, "output \(c + 1): max difference \(worst)")
            #expect(shaped[c][48000..<60000].allSatisfy { $0 == 0 }, "output \(c + 1) silent between the two −inf points")
            #expect(abs(shaped[c][96000] - plain[c][96000]) <= 1e-6, "the later point at one frame applies from it")
        }
        for c in 2..<5 { #expect(plain[c].indices.allSatisfy { plain[c][$0] == shaped[c][$0] }, "output \(c + 1) unchanged") }
        let (from, _) = try SeekAndFadeTests.render(session, fx.dir, from: .frames(50_001))
        for c in 0..<2 {
            let d = zip(shaped[c][50_001...], from.channels[c]).map { abs($0 - $1) }.max() ?? 1
            #expect(d == 0, "--from 50001 output \(c + 1): max difference \(d)")
        }
    }

    /// Malformed envelopes are refused before anything plays, naming the point.
    @Test func badPointsAreRefused() throws {
        let cases: [(String, String)] = [
            ("gain = 3", "gain must be an array of [time, dB] pairs"),
            ("gain = [[0, 0, 1]]", "gain must be an array of [time, dB] pairs"),
            (#"gain = [["1s", 0], ["0.5s", -6]]"#, "gain point 2 at frame 24000 is before the point before it (frame 48000)"),
            ("gain = [[0, 30]]", "gain point 1: the gain must be decibels, at most +24, or -inf"),
            ("gain = [[0, nan]]", "gain point 1: the gain must be decibels, at most +24, or -inf"),
            (#"gain = [["-1s", 0]]"#, "gain point 1: the time must be seconds"),
            ("gain = [[9, 0]]", "gain point 1 at frame 432000 is past the track's end (144000 frames at 48000 Hz)"),
        ]
        for (line, message) in cases {
            let fx = try SeekAndFadeTests.make(tracks: line)
            do {
                _ = try SessionLoader.load(fx.url)
                Issue.record("accepted: \(line)")
            } catch {
                #expect(error.kind == .invalidValue && error.description.contains(message) && error.line == 8, "\(line): \(error)")
            }
        }
    }
}
