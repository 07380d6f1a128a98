import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24: `--from POSITION` (every track on its exact frame) and fades, rendered offline.
@Suite("Start position and fades")
struct SeekAndFadeTests {
    /// A 48 kHz session of four tracks on five outputs: a PCM sweep (0–3 s), FLAC noise
    /// (from 1 s, 2.5 s less trim_start 1000), an MP3 sweep (from 24000, 2 s less trim_start
    /// 500) and a 44.1 kHz PCM sweep (from 0.3 s).
    struct Fixture {
        let dir: TempDir
        let url: URL
    }

    static func tool(_ path: String, _ args: [String]) throws {
        let r = try runTool(path, args)
        guard r.status == 0 else { throw ToolFailure(description: "\(path) \(args.joined(separator: " ")): \(r.output)") }
    }

    static func makeAudio(_ dir: TempDir) throws {
        try tool("/usr/bin/sox", ["-n", "-r", "48000", "-c", "2", "-b", "16", dir.file("pcm.wav").path, "synth", "3", "sine", "200-3000", "sine", "500-900", "gain", "-6"])
        try tool("/usr/bin/sox", ["-n", "-r", "48000", "-c", "1", "-b", "16", dir.file("noise.wav").path, "synth", "2.5", "pinknoise", "gain", "-10"])
        try tool("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", dir.file("noise.wav").path, "-c:a", "flac", dir.file("noise.flac").path])
        try tool("/usr/bin/sox", ["-n", "-r", "48000", "-c", "2", "-b", "16", dir.file("mp3src.wav").path, "synth", "2", "sine", "300-1200", "sine", "700", "gain", "-8"])
        try tool("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", dir.file("mp3src.wav").path, "-c:a", "libmp3lame", "-b:a", "128k", dir.file("sweep.mp3").path])
        try tool("/usr/bin/sox", ["-n", "-r", "44100", "-c", "1", "-b", "16", dir.file("pcm441.wav").path, "synth", "1.5", "sine", "100-5000", "gain", "-6"])
    }

    static func make(tracks extra: String = "") throws -> Fixture {
        let dir = try TempDir()
        try makeAudio(dir)
        let url = try dir.write("s.toml", """
            [session]
            sample_rate = 48000
            [output]
            channels = 5
            [[track]]
            file = "pcm.wav"
            outputs = [1, 2]
            \(extra)
            [[track]]
            file = "noise.flac"
            start = "1s"
            trim_start = 1000
            outputs = [3]
            [[track]]
            file = "sweep.mp3"
            start = 24000
            trim_start = 500
            outputs = [4, 4]
            gain_db = -3
            [[track]]
            file = "pcm441.wav"
            start = "0.3s"
            outputs = [5]
            """)
        return Fixture(dir: dir, url: url)
    }

    static func render(_ session: Session, _ dir: TempDir, from: SessionTime = .frames(0), cycle: Int = 1024) throws -> (WAVFile, OfflineRenderer.Result) {
        let out = dir.file("r-\(UUID().uuidString.prefix(6)).wav")
        let r = try OfflineRenderer.render(session: session, to: out, cycleFrames: cycle, from: from)
        return (try WAVReader.read(out), r)
    }

    /// `--from` at positions before, inside and after tracks: the render equals the full
    /// render from that frame on, sample for sample, on every output (PCM, FLAC and MP3 exact;
    /// the 44.1 kHz track, whose rate converter starts 8192 input frames early, within 1e-5).
    @Test func fromEqualsTheFullRenderFromThatFrame() throws {
        let fx = try Self.make()
        let session = try SessionLoader.load(fx.url)
        let (full, fr) = try Self.render(session, fx.dir)
        #expect(full.frameCount == 167000 && fr.frames == 167000)
        #expect(full.channels[3].contains { abs($0) > 0.05 } && full.channels[2].contains { abs($0) > 0.05 })
        // Before the FLAC and 44.1 kHz tracks, inside the PCM and MP3 ones; inside everything
        // (odd frames, not on a packet or buffer edge); after the MP3 and 44.1 kHz tracks' ends
        // (the MP3 ends near 120000); the last frame.
        for f: Int64 in [1, 12345, 61_111, 95_999, 120_001, 150_000, 166_999] {
            let (part, r) = try Self.render(session, fx.dir, from: .frames(f), cycle: 1000)
            #expect(Int64(part.frameCount) == 167000 - f && r.frames == 167000 - f, "from \(f)")
            for c in 0..<5 {
                let want = Array(full.channels[c][Int(f)...])
                let got = part.channels[c]
                if c == 4 {
                    let d = zip(want, got).map { abs($0 - $1) }.max() ?? 0
                    #expect(d <= 1e-5, "from \(f) output 5 (44.1 kHz): max difference \(d)")
                } else {
                    let firstOff = zip(want, got).enumerated().first { $0.element.0 != $0.element.1 }
                    #expect(firstOff == nil, "from \(f) output \(c + 1): first difference at \(firstOff.map { "\($0.offset): \($0.element.0) vs \($0.element.1)" } ?? "")")
                }
            }
            #expect(r.tracks.allSatisfy { $0.completed && $0.lateFrames == 0 && $0.damagedPackets == 0 }, "from \(f): \(r.tracks)")
        }
    }

    /// Tracks are placed relative to the position: one starting later starts later by the
    /// difference, one already playing at frame 0, one that has ended plays nothing.
    @Test func placement() throws {
        let fx = try Self.make()
        let session = try SessionLoader.load(fx.url)
        let (_, r) = try Self.render(session, fx.dir, from: .seconds(0.5))
        #expect(r.tracks.map(\.scheduledStartFrame) == [0, 24000, 0, 0])
        #expect(r.tracks[0].framesPlayed == 144000 - 24000 && r.tracks[1].framesPlayed == 119000)
        let (_, late) = try Self.render(session, fx.dir, from: .frames(150_000))
        #expect(late.tracks.map(\.framesPlayed) == [0, 17000, 0, 0])
        #expect(late.tracks.allSatisfy { $0.completed })
    }

    /// Position strings.
    @Test func positions() {
        #expect(SessionTime.parsePosition("90") == .seconds(90))
        #expect(SessionTime.parsePosition("90.25") == .seconds(90.25))
        #expect(SessionTime.parsePosition("1:30") == .seconds(90))
        #expect(SessionTime.parsePosition("1:02:03.5") == .seconds(3723.5))
        #expect(SessionTime.parsePosition("frames:123456") == .frames(123_456))
        #expect(SessionTime.parsePosition("250ms") == .seconds(0.25))
        for bad in ["", "-1", "frames:", "frames:-5", "frames:1.5", "abc", "1:75", "1e3"] {
            #expect(SessionTime.parsePosition(bad) == nil, "\(bad)")
        }
    }

    /// The reference gain of track frame i (docs/session-format.md).
    static func curve(_ name: String, _ x: Double) -> Double {
        switch name {
        case "equal-power": return sin(Double.pi / 2 * x)
        case "exponential": return (pow(1000, x) - 1) / 999
        default: return x
        }
    }

    static func gain(_ i: Int, n: Int, fadeIn: Int, fadeOut: Int, curve c: String) -> Double {
        var g = 1.0
        if i < fadeIn { g *= curve(c, Double(i) / Double(fadeIn)) }
        if n - 1 - i < fadeOut { g *= curve(c, Double(n - 1 - i) / Double(fadeOut)) }
        return g
    }

    /// Fades on a PCM track (each curve) and on the FLAC track, compared with the unfaded
    /// render times the documented gain: max error ≤ 1e-6; `--from` inside a fade continues it
    /// on the right frame (equal to the full faded render from there).
    @Test(arguments: ["linear", "equal-power", "exponential"])
    func fadesFollowTheFormulas(curve: String) throws {
        let dir = try TempDir()
        try Self.makeAudio(dir)
        let head = "[session]\nsample_rate = 48000\n[output]\nchannels = 3\n"
        let plain = try dir.write("plain.toml", head + """
            [[track]]
            file = "pcm.wav"
            start = 1000
            outputs = [1, 2]
            [[track]]
            file = "noise.flac"
            start = 500
            outputs = [3]
            """)
        let faded = try dir.write("faded.toml", head + """
            [[track]]
            file = "pcm.wav"
            start = 1000
            outputs = [1, 2]
            fade_in = 0.5
            fade_out = "frames:30001"
            fade_curve = "\(curve)"
            [[track]]
            file = "noise.flac"
            start = 500
            outputs = [3]
            fade_in = "frames:100000"
            fade_out = "2s"
            fade_curve = "\(curve)"
            """)
        let (a, _) = try Self.render(try SessionLoader.load(plain), dir)
        let fadedSession = try SessionLoader.load(faded)
        let (b, _) = try Self.render(fadedSession, dir)
        #expect(a.frameCount == b.frameCount)
        var worst = 0.0
        for c in 0..<3 {
            let (start, n, fi, fo) = c < 2 ? (1000, 144000, 24000, 30001) : (500, 120000, 100000, 96000)
            for f in 0..<a.frameCount {
                let i = f - start
                let g = i >= 0 && i < n ? Self.gain(i, n: n, fadeIn: fi, fadeOut: fo, curve: curve) : 1
                worst = max(worst, abs(Double(b.channels[c][f]) - Double(a.channels[c][f]) * g))
            }
        }
        #expect(worst <= 1e-6, "max error \(worst)")
        // The fades are there: the first and last frames of each track are silent.
        #expect(b.channels[0][1000] == 0 && b.channels[0][1000 + 143_999] == 0 && b.channels[2][500] == 0)
        // --from inside the fades.
        for f in [13_001, 130_000, 100_200] {
            let (part, _) = try Self.render(fadedSession, dir, from: .frames(Int64(f)), cycle: 777)
            for c in 0..<3 { #expect(part.channels[c] == Array(b.channels[c][f...]), "from \(f) output \(c + 1)") }
        }
    }

    /// Bad input is refused before anything plays, with a line naming the problem.
    @Test func badInput() throws {
        let dir = try TempDir()
        try Self.makeAudio(dir)
        func refused(_ track: String) -> String {
            let url = try! dir.write("b\(UUID().uuidString.prefix(4)).toml", "[[track]]\nfile = \"pcm.wav\"\n" + track)
            do { _ = try SessionLoader.load(url); return "accepted" } catch { return error.description }
        }
        #expect(refused("fade_in = 3.5").contains("fade_in of 168000 frames is longer than the track (144000 frames at 48000 Hz)"))
        #expect(refused("fade_out = \"frames:144001\"").contains("fade_out of 144001 frames is longer than the track"))
        #expect(refused("fade_in = -1").contains("fade_in -1.0 is negative"))
        #expect(refused("fade_in = \"soon\"").contains("fade_in \"soon\" is not a length"))
        #expect(refused("fade_out = true").contains("fade_out must be seconds"))
        #expect(refused("fade_in = 1\nfade_curve = \"cubic\"").contains("fade_curve must be \"linear\", \"equal-power\", \"exponential\", not \"cubic\""))
        #expect(refused("fade_in = 2\nfade_out = 2") == "accepted")  // overlapping: the product of both
        let ok = try dir.write("ok.toml", "[session]\nsample_rate = 48000\n[[track]]\nfile = \"pcm.wav\"\n")
        let session = try SessionLoader.load(ok)
        do {
            _ = try Self.render(session, dir, from: .frames(144000))
            Issue.record("--from at the end accepted")
        } catch let e as SessionError {
            #expect(e.description.contains("--from frames:144000 (frame 144000 at 48000 Hz) is at or past the session's end (frame 144000, 0:03.000): nothing to play"), "\(e)")
        }
        // The CLI: refused before anything runs, status 1 (past the end) or 64 (a bad value).
        let out = dir.file("o.wav")
        let past = try runTool(aqsyncURL().path, ["render", ok.path, "-o", out.path, "--from", "1:30"])
        #expect(past.status == 1 && past.output.contains("is at or past the session's end"), "\(past.output)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
        let negative = try runTool(aqsyncURL().path, ["render", ok.path, "-o", out.path, "--from=-2"])
        #expect(negative.status == 64 && negative.output.contains("--from '-2' is negative"), "\(negative.output)")
        let junk = try runTool(aqsyncURL().path, ["render", ok.path, "-o", out.path, "--from", "1m30"])
        #expect(junk.status == 64 && junk.output.contains("--from '1m30' is not a position"), "\(junk.output)")
        let play = try runTool(aqsyncURL().path, ["play", ok.path, "--from", "soon", "--no-start-server"])
        #expect(play.status == 64 && play.output.contains("--from 'soon' is not a position"), "\(play.output)")
        let cli = try runTool(aqsyncURL().path, ["render", ok.path, "-o", out.path, "--from", "0:02.5", "--quiet"])
        #expect(cli.status == 0, "\(cli.output)")
        #expect(try WAVReader.read(out).frameCount == 24000)
    }
}
