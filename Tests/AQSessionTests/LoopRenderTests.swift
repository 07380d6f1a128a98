import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24: loops, rendered offline. Every track wraps at the loop's end onto the exact frame
/// of its start: the render with a loop equals the render without one, cut and repeated as
/// the loop says, sample for sample (PCM clicks, FLAC clicks, an MP3 sweep, a track that
/// starts and ends inside the loop).
@Suite("Loops, offline")
struct LoopRenderTests {
    /// 48 kHz, outputs 1–4: PCM clicks every 4800 frames from frame 1 plus clicks on the frames
    /// either side of both loop ends (0–2 s); FLAC clicks from frame 1000 (2 s); an MP3 sweep
    /// (from frame 333, 1.5 s); a PCM click track inside the loop (0.9–1.1 s). Loop
    /// 24000 ..< 72000 (1.000 s) between the markers `a` and `b`.
    struct Fixture {
        let dir: TempDir
        let url: URL
        /// Session frames of every PCM click on output 1.
        let clicks: [Int]
        let length = 97000
    }

    static func tool(_ path: String, _ args: [String]) throws {
        let r = try runTool(path, args)
        guard r.status == 0 else { throw ToolFailure(description: "\(path) \(args.joined(separator: " ")): \(r.output)") }
    }

    static func make(loop: String) throws -> Fixture {
        let dir = try TempDir()
        var clicks = Array(stride(from: 1, to: 96000, by: 4800))
        clicks += [23999, 24000, 24001, 71998, 71999]
        clicks = Array(Set(clicks)).sorted()
        _ = try makeImpulseFile(dir, "clicks.wav", rate: 48000, frames: 96000, impulses: [clicks], encoding: ["-e", "signed-integer", "-b", "16"])
        _ = try makeImpulseFile(dir, "fclicks.wav", rate: 48000, frames: 96000, impulses: [Array(stride(from: 7, to: 96000, by: 3001))],
                                encoding: ["-e", "signed-integer", "-b", "16"])
        try tool("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", dir.file("fclicks.wav").path, "-c:a", "flac", dir.file("clicks.flac").path])
        try tool("/usr/bin/sox", ["-n", "-r", "48000", "-c", "1", "-b", "16", dir.file("mp3src.wav").path, "synth", "1.5", "sine", "300-1200", "gain", "-8"])
        try tool("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", dir.file("mp3src.wav").path, "-c:a", "libmp3lame", "-b:a", "128k", dir.file("sweep.mp3").path])
        _ = try makeImpulseFile(dir, "inner.wav", rate: 48000, frames: 9600, impulses: [[0, 101, 9599]], encoding: ["-e", "signed-integer", "-b", "16"])
        let url = try dir.write("s.toml", """
            [session]
            sample_rate = 48000
            \(loop)
            [output]
            channels = 4
            [[track]]
            file = "clicks.wav"
            outputs = [1]
            [[track]]
            file = "clicks.flac"
            start = 1000
            outputs = [2]
            [[track]]
            file = "sweep.mp3"
            start = 333
            outputs = [3]
            [[track]]
            file = "inner.wav"
            start = "0.9s"
            outputs = [4]
            [[marker]]
            name = "a"
            at = 24000
            [[marker]]
            name = "b"
            at = "1.5s"
            [[marker]]
            name = "chorus"
            at = "0:01.2"
            """)
        return Fixture(dir: dir, url: url, clicks: clicks)
    }

    /// The session frame played at render frame t: from position p, passes over from ..< to.
    static func sessionFrame(_ t: Int, p: Int, from: Int, to: Int, passes: Int) -> Int {
        let first = to - p
        if p >= to || t < first { return p + t }
        let l = to - from
        let k = (t - first) / l + 1
        if k < passes { return from + (t - first) % l }
        return to + (t - first - (passes - 1) * l)
    }

    static func render(_ session: Session, _ dir: TempDir, from: SessionTime = .frames(0), cycle: Int = 1024) throws -> (WAVFile, OfflineRenderer.Result) {
        let out = dir.file("r-\(UUID().uuidString.prefix(6)).wav")
        let r = try OfflineRenderer.render(session: session, to: out, cycleFrames: cycle, from: from)
        return (try WAVReader.read(out), r)
    }

    /// Compares `got` with the full render `full` mapped through the loop; returns the first
    /// difference (render frame, output) or nil.
    static func firstDifference(_ got: [[Float]], _ full: WAVFile, p: Int, from: Int, to: Int, passes: Int) -> String? {
        for c in 0..<got.count {
            let g = got[c], f = full.channels[c]
            for t in 0..<g.count {
                let s = sessionFrame(t, p: p, from: from, to: to, passes: passes)
                if g[t] != f[s] { return "output \(c + 1), render frame \(t) (session frame \(s)): \(g[t]) vs \(f[s])" }
            }
        }
        return nil
    }

    /// 100 passes of a 1.000 s loop over four tracks (PCM, FLAC, MP3, one inside the loop):
    /// the render is the unlooped render cut and repeated, every sample; every PCM click on its
    /// frame, none missing, none doubled at any of the 99 wraps.
    @Test func hundredPassesAreExact() throws {
        let fx = try Self.make(loop: "loop = { from = \"a\", to = \"b\", count = 100 }")
        let looped = try SessionLoader.load(fx.url)
        #expect(looped.loop == SessionLoop(from: .frames(24000), to: .seconds(1.5), count: 100))
        var plain = looped
        plain.loop = nil
        let (full, fr) = try Self.render(plain, fx.dir)
        #expect(full.frameCount == fx.length && fr.frames == Int64(fx.length))
        #expect(full.channels[2].contains { abs($0) > 0.05 }, "the MP3 plays")
        let (got, r) = try Self.render(looped, fx.dir, cycle: 1000)
        let expectedLength = 72000 + 99 * 48000 + (fx.length - 72000)
        #expect(got.frameCount == expectedLength && r.frames == Int64(expectedLength))
        let diff = Self.firstDifference(got.channels, full, p: 0, from: 24000, to: 72000, passes: 100)
        #expect(diff == nil, "\(diff ?? "")")
        // The clicks of output 1, counted: before the loop, 100 times inside it, after it.
        var want: [Int] = fx.clicks.filter { $0 < 72000 }
        for k in 1..<100 { want += fx.clicks.filter { $0 >= 24000 && $0 < 72000 }.map { 72000 + (k - 1) * 48000 + $0 - 24000 } }
        want += fx.clicks.filter { $0 >= 72000 }.map { $0 + 99 * 48000 }
        let found = ImpulseFinder.find(got.channels[0], threshold: 0.25)
        let clicksMatch = found == want
        #expect(clicksMatch, "clicks: \(found.count) found, \(want.count) expected; first difference at \(zip(found, want).first { $0 != $1 }.map { "\($0)" } ?? "the end")")
        #expect(r.tracks.allSatisfy { $0.completed && $0.lateFrames == 0 && $0.damagedPackets == 0 }, "\(r.tracks)")
    }

    /// Starting inside the loop (a partial first pass), at the loop's start, and after it (no
    /// loop); `count = 1` plays straight through.
    @Test func positionsAroundTheLoop() throws {
        let fx = try Self.make(loop: "loop = { from = 24000, to = \"b\", count = 3 }")
        let looped = try SessionLoader.load(fx.url)
        var plain = looped
        plain.loop = nil
        let (full, _) = try Self.render(plain, fx.dir)
        for p in [0, 24000, 50001, 71999, 72000, 80000] {
            let (got, r) = try Self.render(looped, fx.dir, from: .frames(Int64(p)), cycle: 777)
            let passes = p < 72000 ? 3 : 1
            let length = p < 72000 ? fx.length - p + 2 * 48000 : fx.length - p
            #expect(got.frameCount == length, "from \(p)")
            let diff = Self.firstDifference(got.channels, full, p: p, from: 24000, to: 72000, passes: passes)
            #expect(diff == nil, "from \(p): \(diff ?? "")")
            #expect(r.tracks.allSatisfy { $0.completed && $0.lateFrames == 0 }, "from \(p): \(r.tracks)")
        }
        var once = looped
        once.loop?.count = 1
        let (got, _) = try Self.render(once, fx.dir)
        #expect(got.channels == full.channels)
    }

    /// A 44.1 kHz track across the loop's ends: at each wrap its rate converter starts anew
    /// (8192 input frames early, as for `--from`), so it matches the unlooped render cut and
    /// repeated within 1e-5 (the converter's warm-up differs, not its timing); the other
    /// tracks stay exact.
    @Test func rateConvertedTrackWraps() throws {
        let fx = try Self.make(loop: "loop = { from = \"a\", to = \"b\", count = 4 }")
        let r = try runTool("/usr/bin/sox", ["-n", "-r", "44100", "-c", "1", "-b", "16", fx.dir.file("t441.wav").path, "synth", "1.9", "sine", "100-3000", "gain", "-6"])
        try #require(r.status == 0, "\(r.output)")
        var looped = try SessionLoader.load(fx.url)
        let extra = try SessionLoader.parse("[output]\nchannels = 4\n[[track]]\nfile = \"t441.wav\"\nstart = 777\noutputs = [4]\n", url: fx.url)
        looped.tracks.append(extra.tracks[0])
        var plain = looped
        plain.loop = nil
        let (full, _) = try Self.render(plain, fx.dir)
        let (got, res) = try Self.render(looped, fx.dir, cycle: 512)
        #expect(got.frameCount == full.frameCount + 3 * 48000)
        var worst: Float = 0
        for t in 0..<got.frameCount {
            let s = Self.sessionFrame(t, p: 0, from: 24000, to: 72000, passes: 4)
            for c in 0..<3 where got.channels[c][t] != full.channels[c][s] {
                Issue.record("output \(c + 1) frame \(t): \(got.channels[c][t]) vs \(full.channels[c][s])")
                return
            }
            worst = max(worst, abs(got.channels[3][t] - full.channels[3][s]))
        }
        #expect(worst <= 1e-5, "output 4 (the inner track and the 44.1 kHz one): max difference \(worst)")
        #expect(full.channels[3].contains { abs($0) > 0.1 }, "the 44.1 kHz track plays")
        #expect(res.tracks.allSatisfy { $0.completed && $0.lateFrames == 0 }, "\(res.tracks)")
    }

    /// The display's position: the session frame (loops unrolled), the loop pass, the marker.
    @Test func positionText() throws {
        let fx = try Self.make(loop: "loop = { from = \"a\", to = \"b\", count = 3 }")
        let session = try SessionLoader.load(fx.url)
        let engine = try AudioQueueEngine(device: ManualDevice(sampleRate: 48000, channels: 4, framesPerCycle: 1000, uid: "text"))
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine)
        defer { player.close() }
        #expect(player.positionText(atPlayerFrame: 0) == "0:00.000 / 0:02.021")
        #expect(player.positionText(atPlayerFrame: 24000) == "0:00.500 / 0:02.021  loop 1/3  [a]")
        #expect(player.positionText(atPlayerFrame: 60000) == "0:01.250 / 0:02.021  loop 1/3  [chorus]")
        // Second pass: render frame 72000 is session frame 24000 again.
        #expect(player.positionText(atPlayerFrame: 72000) == "0:00.500 / 0:02.021  loop 2/3  [a]")
        #expect(player.sessionFrame(atPlayerFrame: 72000 + 2 * 48000)! == (72000, 0))
        #expect(player.positionText(atPlayerFrame: 72000 + 2 * 48000) == "0:01.500 / 0:02.021  [b]")
        #expect(player.positionText(atPlayerFrame: 10_000_000) == "0:02.021 / 0:02.021  [b]")
        #expect(player.lengthFrames == 193_000 && player.loopPasses == 3 && player.hasLoop)
    }

    /// A loop without a count plays until released: on a manual device, release after some
    /// passes; every track leaves the loop at the same wrap, and the render is the unlooped
    /// one with as many passes as the release says.
    @Test func releasedLoop() throws {
        let fx = try Self.make(loop: "loop = { from = \"a\", to = \"b\" }")
        let session = try SessionLoader.load(fx.url)
        var plain = session
        plain.loop = nil
        let (full, _) = try Self.render(plain, fx.dir)
        do {
            _ = try Self.render(session, fx.dir)
            Issue.record("a render of a loop without a count was accepted")
        } catch let e as SessionError {
            #expect(e.message.contains("the loop has no count, so it never ends"), "\(e)")
        }
        let device = ManualDevice(sampleRate: 48000, channels: 4, framesPerCycle: 1000, uid: "loop-release")
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine)
        defer { player.close() }
        #expect(player.hasLoop && player.loopPasses == nil && player.lengthFrames == .max)
        try player.start(at: AudioTimeStamp(sampleTime: 0))
        var out = [[Float]](repeating: [], count: 4)
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: 4000)
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 4)
        defer { storage.deallocate(); planes.deallocate() }
        for c in 0..<4 { planes[c] = storage + c * 1000 }
        var done: Int64 = 0
        var passes: Int?
        while done < player.lengthFrames {
            // Release in the middle of the 6th pass (render frame 72000 + 4.5 × 48000).
            if passes == nil && done >= 72000 + 4 * 48000 + 24000 { passes = player.releaseLoop() }
            let n = Int(min(1000, player.lengthFrames - done))
            try player.waitUntilEnqueued(through: done + Int64(n))
            device.render(frames: n, into: planes)
            for c in 0..<4 { out[c] += UnsafeBufferPointer(start: planes[c], count: n) }
            done += Int64(n)
            #expect(done < 100 * 48000, "the released loop did not end")
            if done >= 100 * 48000 { return }
        }
        guard let passes else { Issue.record("never released"); return }
        // The feeder runs at most 4 buffers of 8192 frames ahead: the pass playing (the 6th)
        // or the next one is the last.
        #expect(passes == 6 || passes == 7, "\(passes) passes")
        #expect(player.loopPasses == passes)
        #expect(out[0].count == 72000 + (passes - 1) * 48000 + fx.length - 72000)
        let diff = Self.firstDifference(out, full, p: 0, from: 24000, to: 72000, passes: passes)
        #expect(diff == nil, "\(diff ?? "")")
    }
}
