import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// `crossfade = true` (docs/session-format.md, "Crossfades"): the earlier track fades out and
/// the later one fades in over exactly the frames where they overlap, with the later track's
/// `fade_curve`; rendered against the documented curves within 1e-6, at the session rate and at
/// another device rate; refused when there is nothing to crossfade or a fade is in the way.
@Suite("Crossfades")
struct CrossfadeTests {
    /// Two mono tones of 1 s at 48 kHz; a session playing `a.wav` at 0 and `b.wav` at `bStart`,
    /// `bKeys` under the second track.
    static func fixture(bStart: String = "36000", bKeys: String = "crossfade = true\nfade_curve = \"equal-power\"", aKeys: String = "") throws -> (TempDir, URL) {
        let dir = try TempDir()
        try runTool("/usr/bin/sox", ["-n", "-r", "48000", "-c", "1", "-b", "16", dir.file("a.wav").path, "synth", "1", "sine", "440", "gain", "-6"])
        try runTool("/usr/bin/sox", ["-n", "-r", "48000", "-c", "1", "-b", "16", dir.file("b.wav").path, "synth", "1", "sine", "660", "gain", "-6"])
        let url = try dir.write("s.toml", """
            [session]
            sample_rate = 48000
            [output]
            channels = 1
            [[track]]
            file = "a.wav"
            \(aKeys)
            [[track]]
            file = "b.wav"
            start = \(bStart)
            \(bKeys)
            """)
        return (dir, url)
    }

    static func render(_ session: Session, _ dir: TempDir, rate: Double? = nil) throws -> [Float] {
        let out = dir.file("r-\(UUID().uuidString.prefix(6)).wav")
        _ = try OfflineRenderer.render(session: session, to: out, sampleRate: rate)
        return try WAVReader.read(out).channels[0]
    }

    /// The documented curves.
    static func curve(_ c: FadeCurve, _ x: Double) -> Double {
        switch c {
        case .linear: return x
        case .equalPower: return sin(Double.pi / 2 * x)
        case .exponential: return (pow(1000, x) - 1) / 999
        }
    }

    /// Each track rendered alone without fades, then the mix: A × its fade-out + B × its
    /// fade-in over the overlap (A's last frame and B's first are silent), within 1e-6; the
    /// overlap is worked out at the device rate (48 kHz: 12000 frames; 44.1 kHz: 11025).
    @Test(arguments: [48000.0, 44100.0])
    func mixIsTheDocumentedCrossfade(rate: Double) throws {
        let (dir, url) = try Self.fixture()
        let session = try SessionLoader.load(url)
        #expect(session.tracks[1].crossfadeIn?.curve == .equalPower && session.tracks[0].crossfadeOut?.curve == .equalPower)
        var onlyA = session, onlyB = session
        onlyA.tracks = [session.tracks[0]]
        onlyA.tracks[0].crossfadeOut = nil
        onlyB.tracks = [session.tracks[1]]
        onlyB.tracks[0].crossfadeIn = nil
        let a = try Self.render(onlyA, dir, rate: rate)
        let b = try Self.render(onlyB, dir, rate: rate)
        let mix = try Self.render(session, dir, rate: rate)
        let n = Int(session.deviceLength(of: session.tracks[0], deviceRate: rate))
        let bStart = Int(session.startOffset(of: session.tracks[1], deviceRate: rate))
        let overlap = n - bStart
        #expect(overlap == (rate == 48000 ? 12000 : 11025))
        #expect(mix.count == b.count && a.count == n)
        var worst = 0.0
        for f in mix.indices {
            var want = 0.0
            if f < n {
                let gOut = f >= n - overlap ? Self.curve(.equalPower, Double(n - 1 - f) / Double(overlap)) : 1
                want += Double(a[f]) * gOut
            }
            if f >= bStart {
                let j = f - bStart
                let gIn = j < overlap ? Self.curve(.equalPower, Double(j) / Double(overlap)) : 1
                want += Double(b[f]) * gIn
            }
            worst = max(worst, abs(want - Double(mix[f])))
        }
        #expect(worst <= 1e-6, "max difference \(worst) at \(rate) Hz")
        #expect(mix[bStart] == 0 || abs(Double(mix[bStart]) - Double(a[bStart])) <= 1e-6, "B's first frame is silent")
    }

    /// Nothing to crossfade, or a fade in the way: refused before anything plays, naming why.
    @Test func badCrossfadesAreRefused() throws {
        let cases: [(start: String, bKeys: String, aKeys: String, message: String)] = [
            ("48000", "crossfade = true", "", "after 'a.wav' ends (frame 48000): they do not overlap"),
            ("0", "crossfade = true", "", "not after 'a.wav' (frame 0)"),
            ("36000", "crossfade = true\nfade_in = 0.1", "", "has both crossfade and fade_in"),
            ("36000", "crossfade = true", "fade_out = 0.1", "which has a fade_out"),
            ("36000", "crossfade = 1", "", "crossfade must be true or false"),
            ("36000", "", "crossfade = true", "needs a track listed before it"),
        ]
        for c in cases {
            let (dir, url) = try Self.fixture(bStart: c.start, bKeys: c.bKeys, aKeys: c.aKeys)
            defer { withExtendedLifetime(dir) {} }
            do {
                _ = try SessionLoader.load(url)
                Issue.record("accepted: \(c)")
            } catch {
                #expect(error.kind == .invalidValue && error.description.contains(c.message), "\(c.bKeys) \(c.aKeys): \(error)")
            }
        }
    }
}
