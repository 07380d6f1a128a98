import AQSession
import AQTesting
import Foundation
import Testing

@Suite("Offline render")
struct OfflineRenderTests {
    /// Every impulse of every track at its exact absolute frame, with its gain; trimmed
    /// impulses absent; the 44.1 kHz track's impulses on their converted frames.
    @Test func impulsesLandOnTheirExactFrames() throws {
        let fx = try ImpulseSession.make()
        let session = try SessionLoader.load(fx.url)
        #expect(session.tracks.map(\.audio.fileType.description) == ["WAVE", "AIFF", "caff", "NeXT", "WAVE"])
        let out = fx.dir.file("render.wav")
        let r = try OfflineRenderer.render(session: session, to: out, cycleFrames: 256)
        #expect(r.frames == Int64(fx.length))
        let wav = try WAVReader.read(out)
        #expect(wav.channels.count == 5 && wav.frameCount == fx.length)
        for c in 0..<4 {
            let found = ImpulseFinder.find(wav.channels[c], threshold: 0.05)
            #expect(found == fx.exact[c].map(\.frame), "output \(c + 1)")
            for (f, a) in fx.exact[c] { #expect(abs(wav.channels[c][f] - a) < 1e-6, "output \(c + 1) frame \(f): \(wav.channels[c][f]) vs \(a)") }
        }
        #expect(peaks(wav.channels[4], threshold: 0.2) == fx.resampled)
        #expect(r.tracks.allSatisfy { $0.completed && $0.lateFrames == 0 })
        #expect(r.tracks.map(\.scheduledStartFrame) == [12347, 24000, 1021, 4099, 30011])
    }

    /// The output does not depend on the render cycle's size.
    @Test func cycleSizeDoesNotMatter() throws {
        let fx = try ImpulseSession.make()
        let session = try SessionLoader.load(fx.url)
        var renders: [[[Float]]] = []
        for cycle in [64, 1000, 4096] {
            let out = fx.dir.file("r\(cycle).wav")
            try OfflineRenderer.render(session: session, to: out, cycleFrames: cycle)
            renders.append(try WAVReader.read(out).channels)
        }
        #expect(renders[0] == renders[1] && renders[1] == renders[2])
    }

    /// s16 and s24 outputs: samples rounded from the float render (0.5 → 16384, 8388608/2).
    @Test(arguments: [("s16", Float(1) / 32768), ("s24", Float(1) / 8_388_608)])
    func integerFormats(format: String, step: Float) throws {
        let fx = try ImpulseSession.make()
        let session = try SessionLoader.load(fx.url)
        let out = fx.dir.file("r.\(format).wav")
        try OfflineRenderer.render(session: session, to: out, format: WAVSampleFormat(rawValue: format)!)
        let wav = try WAVReader.read(out)
        #expect(!wav.isFloat && wav.bitsPerSample == (format == "s16" ? 16 : 24))
        for (f, a) in fx.exact[1] { #expect(wav.channels[1][f] == a) }
        for (f, a) in fx.exact[0] { #expect(abs(wav.channels[0][f] - a) <= step / 2 + 1e-9) }
    }

    /// The CLI: `aqsync render` writes the same file as the library.
    @Test func renderCommand() throws {
        let fx = try ImpulseSession.make()
        let out = fx.dir.file("cli.wav")
        let r = try runTool(aqsyncURL().path, ["render", fx.url.path, "-o", out.path])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("wav441") && r.output.contains("30011"))
        let lib = fx.dir.file("lib.wav")
        try OfflineRenderer.render(session: try SessionLoader.load(fx.url), to: lib)
        #expect(try WAVReader.read(out).channels == WAVReader.read(lib).channels)
    }

    /// Memory does not grow with the length of the files: peak RSS of `aqsync render` for
    /// eight 60 s tracks is within a few MB of that for eight 5 s tracks.
    @Test func constantMemory() throws {
        let dir = try TempDir()
        func rss(seconds: Int) throws -> Int {
            var text = "[output]\nchannels = 2\n"
            for i in 0..<8 {
                let f = dir.file("long\(seconds)-\(i).wav")
                let r = try runTool("/usr/bin/sox", ["-n", "-r", "48000", "-c", "1", "-b", "16", f.path, "synth", "\(seconds)", "sine", "\(200 + 50 * i)", "gain", "-20"])
                #expect(r.status == 0, "\(r.output)")
                text += "[[track]]\nfile = \"\(f.lastPathComponent)\"\nstart = \(i * 4801)\noutputs = [\(i % 2 + 1)]\n"
            }
            let s = try dir.write("long\(seconds).toml", text)
            let out = dir.file("long\(seconds)-out.wav")
            let r = try runTool("/usr/bin/time", ["-v", aqsyncURL().path, "render", s.path, "-o", out.path, "--quiet"])
            #expect(r.status == 0, "\(r.output)")
            try? FileManager.default.removeItem(at: out)
            let line = r.output.split(separator: "\n").first { $0.contains("Maximum resident set size") } ?? ""
            return Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? -1
        }
        let short = try rss(seconds: 5)
        let long = try rss(seconds: 60)
        #expect(short > 0 && long > 0)
        #expect(long - short < 8 * 1024, "peak RSS \(short) kB for 5 s, \(long) kB for 60 s")
    }
}
