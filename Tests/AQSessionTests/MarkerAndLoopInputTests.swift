import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24: markers and loops in the session file: read, refused with a clear line when
/// wrong (before anything plays), and markers as `--from` positions.
@Suite("Markers and loops: input")
struct MarkerAndLoopInputTests {
    /// A 3 s 48 kHz PCM track (144000 frames) in a fresh folder.
    static func folder() throws -> TempDir {
        let dir = try TempDir()
        let r = try runTool("/usr/bin/sox", ["-n", "-r", "48000", "-c", "1", "-b", "16", dir.file("pcm.wav").path, "synth", "3", "sine", "440", "gain", "-6"])
        guard r.status == 0 else { throw ToolFailure(description: r.output) }
        return dir
    }

    static func load(_ dir: TempDir, _ text: String) -> Result<Session, SessionError> {
        let url = try! dir.write("m\(UUID().uuidString.prefix(4)).toml", text)
        do throws(SessionError) { return .success(try SessionLoader.load(url)) } catch { return .failure(error) }
    }

    static func refused(_ dir: TempDir, session: String = "", _ rest: String) -> String {
        switch load(dir, "[session]\nsample_rate = 48000\n\(session)\n[[track]]\nfile = \"pcm.wav\"\n\(rest)") {
        case .success: return "accepted"
        case .failure(let e): return e.description
        }
    }

    @Test func markersAndLoopAreRead() throws {
        let dir = try Self.folder()
        let s = try Self.load(dir, """
            [session]
            sample_rate = 48000
            loop = { from = "verse", to = "frames:96000", count = 4 }
            [[track]]
            file = "pcm.wav"
            [[marker]]
            name = "verse"
            at = "0:01"
            [[marker]]
            name = "end"
            at = 144000
            """).get()
        #expect(s.markers == [SessionMarker(name: "verse", at: .seconds(1)), SessionMarker(name: "end", at: .frames(144000))])
        #expect(s.loop == SessionLoop(from: .seconds(1), to: .frames(96000), count: 4))
        #expect(s.position("verse") == .seconds(1) && s.position("1:30") == .seconds(90) && s.position("nowhere") == nil)
        #expect(s.marker(at: 47999, deviceRate: 48000) == nil)
        #expect(s.marker(at: 48000, deviceRate: 48000)?.name == "verse")
        #expect(s.marker(at: 144000, deviceRate: 48000)?.name == "end")
        // At 44.1 kHz the marker is scaled as every session time is.
        #expect(s.marker(at: 44099, deviceRate: 44100) == nil && s.marker(at: 44100, deviceRate: 44100)?.name == "verse")
    }

    @Test func badMarkers() throws {
        let dir = try Self.folder()
        func r(_ m: String) -> String { Self.refused(dir, m) }
        #expect(r("[[marker]]\nname = \"a\"\nat = \"0:04\"").contains("marker 'a' at frame 192000 at 48000 Hz, 0:04.000 is past the session's end (frame 144000 at 48000 Hz, 0:03.000)"))
        let dup = r("[[marker]]\nname = \"a\"\nat = 1\n[[marker]]\nname = \"a\"\nat = 2")
        #expect(dup.contains("marker 'a': marker 1 has the same name; marker names are unique"), "\(dup)")
        #expect(dup.contains(":10:1:"), "the line of the second name: \(dup)")
        #expect(r("[[marker]]\nname = \"90\"\nat = 1").contains("marker '90': the name reads as a position"))
        #expect(r("[[marker]]\nat = 1").contains("marker 1 has no name"))
        #expect(r("[[marker]]\nname = \"a\"").contains("marker 'a' has no time"))
        #expect(r("[[marker]]\nname = \"a\"\nat = -5").contains("marker 'a': at -5 is not a position in the session"))
        #expect(r("[[marker]]\nname = \"a\"\nat = \"soon\"").contains("marker 'a': at \"soon\" is not a position in the session"))
        #expect(r("[[marker]]\nname = \"a\"\nat = 1\ncolour = 3").contains("unknown key 'colour' in marker 1 (expected: at, name)"))
        #expect(r("[[marker]]\nname = \"a\"\nat = 144000") == "accepted")
    }

    @Test func badLoops() throws {
        let dir = try Self.folder()
        func r(_ loop: String, _ rest: String = "") -> String { Self.refused(dir, session: "loop = \(loop)", rest) }
        #expect(r("{ from = 48000, to = 48000, count = 2 }").contains("[session] loop to (frame 48000 at 48000 Hz, 0:01.000) is not after from (frame 48000 at 48000 Hz, 0:01.000): a loop lasts at least one frame"))
        #expect(r("{ from = \"2s\", to = \"1s\" }").contains("is not after from"))
        #expect(r("{ from = 0, to = \"0:04\", count = 2 }").contains("[session] loop to (frame 192000 at 48000 Hz, 0:04.000) is past the session's end (frame 144000 at 48000 Hz, 0:03.000)"))
        #expect(r("{ from = \"chorus\", to = \"0:02\" }", "[[marker]]\nname = \"verse\"\nat = 0").contains("[session] loop from \"chorus\" is neither a marker (markers: verse) nor a time"))
        #expect(r("{ from = \"chorus\", to = \"0:02\" }").contains("(the session has no markers)"))
        #expect(r("{ from = 0, to = 100, count = 0 }").contains("[session] loop count must be an integer of at least 1 (the passes in all), not 0"))
        #expect(r("{ from = 0, to = 100, times = 2 }").contains("unknown key 'times' in [session] loop (expected: count, from, to)"))
        #expect(r("{ to = 100 }").contains("[session] loop has no from"))
        #expect(r("\"verse\"").contains("[session] loop must be a table"))
        #expect(r("{ from = -1, to = 100 }").contains("[session] loop from -1 is negative"))
        #expect(r("{ from = 0, to = 144000, count = 2 }") == "accepted")
        let line = r("{ from = 5, to = 1 }")
        #expect(line.contains(":3:1:"), "the loop's line: \(line)")
    }

    @Test func tempo() throws {
        let dir = try Self.folder()
        func r(_ lines: String) -> String { Self.refused(dir, session: lines, "") }
        #expect(r("bpm = 0").contains("[session] bpm must be a number of beats per minute from 1 to 999"))
        #expect(r("bpm = \"fast\"").contains("[session] bpm must be a number"))
        #expect(r("meter = \"3/4\"").contains("[session] meter needs a bpm: add bpm = 120"))
        #expect(r("bpm = 120\nmeter = \"3/5\"").contains("[session] meter must be a string \"N/D\""))
        #expect(r("bpm = 120\nmeter = 3").contains("[session] meter must be a string"))
        #expect(r("bpm = 97.5\nmeter = \"7/8\"") == "accepted")
        let s = try Self.load(dir, "[session]\nbpm = 97.5\nmeter = \"7/8\"\n[[track]]\nfile = \"pcm.wav\"\n").get()
        #expect(s.tempo == SessionTempo(bpm: 97.5, beatsPerBar: 7, beatType: 8))
        #expect(try Self.load(dir, "[session]\nbpm = 120\n[[track]]\nfile = \"pcm.wav\"\n").get().tempo == SessionTempo(bpm: 120))
    }

    /// The CLI: `--from` takes a marker's name; an unknown one is a usage error naming the
    /// markers; a render of a loop without a count is refused (status 1, no file).
    @Test func commandLine() throws {
        let dir = try Self.folder()
        let url = try dir.write("s.toml", """
            [session]
            sample_rate = 48000
            loop = { from = "verse", to = "frames:96000", count = 3 }
            [[track]]
            file = "pcm.wav"
            [[marker]]
            name = "verse"
            at = "0:01"
            [[marker]]
            name = "coda"
            at = "2.5s"
            """)
        let out = dir.file("o.wav")
        let coda = try runTool(aqsyncURL().path, ["render", url.path, "-o", out.path, "--from", "coda", "--quiet"])
        #expect(coda.status == 0, "\(coda.output)")
        #expect(try WAVReader.read(out).frameCount == 24000)
        let verse = try runTool(aqsyncURL().path, ["render", url.path, "-o", out.path, "--from", "verse", "--quiet"])
        #expect(verse.status == 0, "\(verse.output)")
        #expect(try WAVReader.read(out).frameCount == 96000 + 48000 * 2)
        let unknown = try runTool(aqsyncURL().path, ["render", url.path, "-o", out.path, "--from", "bridge"])
        #expect(unknown.status == 64 && unknown.output.contains("--from 'bridge' is not a position nor a marker of the session") && unknown.output.contains("(markers: verse, coda)"), "\(unknown.output)")
        let open = try dir.write("open.toml", "[session]\nsample_rate = 48000\nloop = { from = 0, to = 4800 }\n[[track]]\nfile = \"pcm.wav\"\n")
        let out2 = dir.file("never.wav")
        let never = try runTool(aqsyncURL().path, ["render", open.path, "-o", out2.path])
        #expect(never.status == 1 && never.output.contains("the loop has no count, so it never ends"), "\(never.output)")
        #expect(!FileManager.default.fileExists(atPath: out2.path))
    }
}
