import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24: `aqsync render a.toml b.toml -o out.wav`, a set list rendered offline: each session
/// exactly where the previous one ended, after its `[session] gap`, equal to its own render.
@Suite("Set lists, offline")
struct SetListRenderTests {
    @Test func setListIsTheRendersInTurn() throws {
        let fx = try LoopRenderTests.make(loop: "loop = { from = \"a\", to = \"b\", count = 2 }")
        let r = try runTool("/usr/bin/sox", ["-n", "-r", "48000", "-c", "2", "-b", "16", fx.dir.file("b.wav").path, "synth", "0.5", "sine", "330", "sine", "550", "gain", "-6"])
        try #require(r.status == 0, "\(r.output)")
        let bURL = try fx.dir.write("b.toml", "[session]\nsample_rate = 48000\ngap = \"frames:1234\"\n[[track]]\nfile = \"b.wav\"\n")
        let a = try SessionLoader.load(fx.url), b = try SessionLoader.load(bURL)
        #expect(b.gap == .frames(1234))
        let aOut = fx.dir.file("a.wav"), bOut = fx.dir.file("b-out.wav"), list = fx.dir.file("list.wav")
        try OfflineRenderer.render(session: a, to: aOut)
        try OfflineRenderer.render(session: b, to: bOut)
        let results = try OfflineRenderer.renderSetList([a, b, a], to: list, cycleFrames: 700)
        let ra = try WAVReader.read(aOut), rb = try WAVReader.read(bOut), rl = try WAVReader.read(list)
        #expect(results.map(\.frames) == [Int64(ra.frameCount), Int64(rb.frameCount), Int64(ra.frameCount)])
        #expect(ra.frameCount == 97000 + 48000, "the loop's second pass is in A's render")
        #expect(rl.channels.count == 4 && rl.frameCount == 2 * ra.frameCount + 1234 + rb.frameCount)
        for c in 0..<4 {
            var want = ra.channels[c]
            want += [Float](repeating: 0, count: 1234)
            want += c < 2 ? rb.channels[c] : [Float](repeating: 0, count: rb.frameCount)
            want += ra.channels[c]  // A again: no gap of its own
            let diff = zip(rl.channels[c], want).enumerated().first { $0.element.0 != $0.element.1 }
            #expect(diff == nil, "output \(c + 1): first difference at \(diff.map { "\($0.offset)" } ?? "")")
        }
        // The command line: the same file; --from with a set list refused; a bad gap refused.
        let cliOut = fx.dir.file("cli.wav")
        let cli = try runTool(aqsyncURL().path, ["render", fx.url.path, bURL.path, fx.url.path, "-o", cliOut.path])
        #expect(cli.status == 0 && cli.output.contains("rendered a set list of 3 sessions"), "\(cli.output)")
        #expect(try WAVReader.read(cliOut).channels == rl.channels)
        let from = try runTool(aqsyncURL().path, ["render", fx.url.path, bURL.path, "-o", cliOut.path, "--from", "1"])
        #expect(from.status == 64 && from.output.contains("--from applies to one session, not to a set list"), "\(from.output)")
        let bad = try fx.dir.write("bad.toml", "[session]\ngap = -1\n[[track]]\nfile = \"b.wav\"\n")
        let refused = try runTool(aqsyncURL().path, ["render", fx.url.path, bad.path, "-o", cliOut.path])
        #expect(refused.status == 1 && refused.output.contains("[session] gap -1.0 is negative"), "\(refused.output)")
    }
}
