import AQSession
import AQTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 24, item 8: set lists live. `aqsync play A B C` on a private jackd, recorded by
/// jack-record beside a ``FrameCountWitness``, equals `aqsync render A B C` of the same list
/// sample for sample (the same timing rule, ``SetList``).
@Suite("Set lists live on a private JACK server", .serialized)
struct SetListOnJACKTests {
    /// Three sessions of clicks: A 1.2 s with 0.2…0.6 s played twice (1.6 s); B (a mono file at 44.1 kHz, converted) after a gap
    /// of 1234 frames, shorter than the commitment's second, so it is scheduled before it
    /// starts; C after a gap of 0.1 s, its track 100 frames in.
    static func makeList(_ dir: TempDir) throws -> [URL] {
        _ = try makeImpulseFile(dir, "a.wav", rate: 48000, frames: 57_600, impulses: [[100, 20_000, 57_599], [5_000, 40_000]], encoding: ["-e", "floating-point", "-b", "32"])
        _ = try makeImpulseFile(dir, "b.wav", rate: 44100, frames: 22_050, impulses: [[0, 7_000, 22_049]], encoding: ["-e", "signed-integer", "-b", "16"])
        _ = try makeImpulseFile(dir, "c.wav", rate: 48000, frames: 48_000, impulses: [[0, 30_000], [1, 47_999]], amplitude: 0.25, encoding: ["-e", "signed-integer", "-b", "24"])
        return [
            try dir.write("a.toml", "[session]\nname = \"a\"\nsample_rate = 48000\nloop = { from = \"0.2s\", to = \"0.6s\", count = 2 }\n[[track]]\nfile = \"a.wav\"\n"),
            try dir.write("b.toml", "[session]\nname = \"b\"\ngap = \"frames:1234\"\n[[track]]\nfile = \"b.wav\"\n"),
            try dir.write("c.toml", "[session]\nname = \"c\"\ngap = 0.1\n[[track]]\nfile = \"c.wav\"\nstart = 100\n"),
        ]
    }

    @Test(.timeLimit(.minutes(4)))
    func setListLiveEqualsItsRender() throws {
        let dir = try TempDir()
        let list = try Self.makeList(dir)
        let sessions = try list.map { try SessionLoader.load($0) }
        let renderURL = dir.file("list.wav")
        try OfflineRenderer.renderSetList(sessions, to: renderURL, sampleRate: 48000)
        let offline = try WAVReader.read(renderURL).channels
        // A 1.2 s + its loop's second pass 0.4 s, the gap, B 0.5 s, 0.1 s, C 100 frames + 1 s.
        #expect(offline[0].count == 57_600 + 19_200 + 1234 + 24_000 + 4_800 + 100 + 48_000)
        try liveRun("setListLiveEqualsItsRender") { _, isLast in
            try playAndCompare(list, dir: dir, offline: offline, isLast: isLast)
        }
    }

    private func playAndCompare(_ list: [URL], dir: TempDir, offline: [[Float]], isLast: Bool) throws -> LiveRunVerdict {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let log = dir.file("play-\(UUID().uuidString.prefix(6)).log")
        let p = try startAqsync(["play"] + list.map(\.path) + [
            "--server", server.name, "--client-name", "aqsl", "--no-connect", "--lead", "1.0", "--no-start-server", "--allow-loss"], log: log)
        defer { p.terminateAndReap() }
        try JackTools.waitForPorts(["aqsl:out_1", "aqsl:out_2"], server: server.name)
        let (rec, witness) = try FrameCountWitness.recording(["aqsl:out_1", "aqsl:out_2"], server: server.name, directory: dir.url, serverCounter: true)
        defer { rec.removeFiles(); witness.stop() }
        let end = Date().addingTimeInterval(30)
        while p.isRunning && Date() < end { usleep(20_000) }
        // The last cycles reach the recorder after aqsync has gone.
        usleep(200_000)
        rec.stop()
        let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(!p.isRunning, "aqsync still ran after 30 s:\n\(out)")
        #expect(p.terminationStatus == 0, "\(out)")
        // The log: B scheduled where A ends plus its gap, C where B ends plus 0.1 s, on time.
        #expect(out.contains("session 2/3 'b' scheduled: starts at device frame ") && out.contains(", 1234 frames after the previous ends"), "\(out)")
        #expect(out.contains("session 3/3 'c' scheduled: starts at device frame ") && out.contains(", 4800 frames after the previous ends"), "\(out)")
        #expect(!out.contains("LATE"), "\(out)")
        let recorded = try rec.read().channels
        let live = Array(recorded.prefix(2))
        let timeline = WitnessTimeline(channel: recorded.count > 2 ? recorded[2] : [], serverChannel: recorded.count > 3 ? recorded[3] : nil)
        let n = offline[0].count
        let origin = (live[0].firstIndex { $0 != 0 } ?? -1) - (offline[0].firstIndex { $0 != 0 } ?? 0)
        let covered = origin >= 0 && origin + n <= live[0].count
        let equal = covered && live.indices.allSatisfy { c in (0..<n).allSatisfy { live[c][origin + $0] == offline[c][$0] } }
        if !equal && !isLast {
            let span = max(0, origin)...(max(0, origin) + n)
            let breaks = timeline.breaks.filter { span.contains($0) }, slips = timeline.slips.filter { span.contains($0) }
            if !breaks.isEmpty || !slips.isEmpty || !covered {
                return .witnessCouldNotTell(
                    reason: "the recording differs from the render; the recorder broke \(breaks.count) time(s), the witness slipped \(slips.count) time(s) (origin \(origin))",
                    aqsyncFigures: aqsyncPlayFigures(out))
            }
        }
        try #require(covered, "the recording covers the render (origin \(origin))\n\(out)")
        let match = LiveRenderMatch(live: live, witness: timeline, offline: offline, origin: origin, keptLostFrames: Self.keptLostFrames(out))
        #expect(match.mismatches == 0 && match.judgedFrames * 2 >= n, "\(match)\n\(out)")
        if !equal { print("setListLiveEqualsItsRender: \(match)") }
        return .judged
    }

    /// The integer right after the first `prefix` in `text`.
    static func number(after prefix: String, in text: String) -> Int64? {
        guard let r = text.range(of: prefix) else { return nil }
        return Int64(text[r.upperBound...].prefix { $0.isNumber })
    }

    /// The frames of lost time aqsync kept (its `server: …` line), for ``LiveRenderMatch``.
    static func keptLostFrames(_ out: String) -> Int {
        guard let line = out.split(separator: "\n").first(where: { $0.hasPrefix("server: ") && $0.contains("(kept") }),
              let after = line.components(separatedBy: "after going away, ").dropFirst().first else { return 0 }
        return Int(after.prefix { $0.isNumber }) ?? 0
    }

    /// `/aqsync/next` and `/aqsync/previous` (oscsend, liblo-tools) on a set list of two 3 s
    /// sessions: next fades A out and starts B, previous goes back to A, previous there is
    /// refused, a locate in A before B is committed moves A's end and B follows it, one after
    /// is refused, A then plays to its end and B follows on its frame; status 0 (`--allow-loss`:
    /// the skips are judged here, not frames a loaded machine loses). Judged on the log.
    @Test(.timeLimit(.minutes(2)))
    func oscSkipsInASetList() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/oscsend"), "oscsend (Debian's liblo-tools) is missing")
        let dir = try TempDir()
        _ = try makeImpulseFile(dir, "long.wav", rate: 48000, frames: 144_000, impulses: [[0, 48_000, 96_000], [0]], encoding: ["-e", "signed-integer", "-b", "16"])
        let a = try dir.write("a.toml", "[session]\nname = \"a\"\n[[track]]\nfile = \"long.wav\"\n")
        let b = try dir.write("b.toml", "[session]\nname = \"b\"\ngap = 0.5\n[[track]]\nfile = \"long.wav\"\n")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let port = Int.random(in: 20000...60000)
        let log = dir.file("skip.log")
        let p = try startAqsync(["play", a.path, b.path, "--server", server.name, "--no-connect", "--no-start-server", "--osc", "\(port)",
                                 "--client-name", "aqskip", "--lead", "0.25", "--allow-loss"], log: log)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) }; p.waitUntilExit() }
        let aqLog = AqsyncLog(url: log), send = OSCSend(port: port)
        func waitFor(_ want: String) -> Bool { aqLog.waitFor(want) }
        func text() -> String { aqLog.text }
        try #require(waitFor("OSC: listening on 127.0.0.1:\(port) (UDP)") && waitFor("playing 'a' (1/2)"))
        try send(["/aqsync/next"])
        #expect(waitFor("osc /aqsync/next: 1/2 'a' fades out (5 ms); session 2/2 'b' starts 0.25 s after the fade (--lead), without its gap"))
        #expect(waitFor("session 1/2 'a' skipped"))
        #expect(waitFor("playing 'b' (2/2)"))
        try send(["/aqsync/previous"])
        #expect(waitFor("osc /aqsync/previous: 2/2 'b' fades out (5 ms); session 1/2 'a' starts 0.25 s after the fade (--lead), without its gap"))
        #expect(waitFor("session 2/2 'b' skipped") && waitFor("session 1/2 'a' starts at device frame "))
        #expect(text().components(separatedBy: "playing 'a' (1/2)").count - 1 == 2, "\(text())")
        try send(["/aqsync/previous"])
        #expect(waitFor("osc /aqsync/previous: no session before 1/2 'a' (Home starts it again)"))
        // A seek before the next session is committed moves A's end, and B follows it: B is
        // scheduled on the restart frame + the 2 s left of A + B's gap.
        try send(["/aqsync/locate", "f", "1.0"])
        #expect(waitFor("osc /aqsync/locate 1.0 s: seek to session 0:01.000 (plays from device frame "))
        #expect(waitFor("session 2/2 'b' scheduled: starts at device frame ") && waitFor(", 24000 frames after the previous ends"))
        let restart = Self.number(after: "osc /aqsync/locate 1.0 s: seek to session 0:01.000 (plays from device frame ", in: text())
        let scheduled = Self.number(after: "session 2/2 'b' scheduled: starts at device frame ", in: text())
        #expect(restart != nil && scheduled == restart.map { $0 + 96_000 + 24_000 }, "\(text())")
        // Committed: nothing may move A's end any more.
        try send(["/aqsync/locate", "f", "0.5"])
        #expect(waitFor("osc /aqsync/locate 0.5 s: the next session (2/2 'b') is already scheduled to start where this one ends (1 s before it): n skips to it"))
        #expect(p.waitUntilExit(within: 30), "aqsync did not exit at the set list's end")
        #expect(p.terminationStatus == 0, "\(text())")
        #expect(text().contains("session 1/2 'a' ended") && text().contains("session 2/2 'b' ended"), "\(text())")
        #expect(!text().contains("played nothing") && !text().contains("LATE"), "\(text())")
    }
}

extension SetListOnJACKTests {
    /// The keys in a tmux pane: the display names the session playing (`▶ 1/2 'a'`), `n` skips
    /// to B (`▶ 2/2 'b'`), `p` back to A, `n` again, `n` in the last session ends playback,
    /// status 0; no display line left behind.
    @Test(.timeLimit(.minutes(2)))
    func keysSkipAndTheDisplayNamesTheSession() throws {
        let dir = try TempDir()
        _ = try makeImpulseFile(dir, "long.wav", rate: 48000, frames: 240_000, impulses: [[0, 48_000], [0]], encoding: ["-e", "signed-integer", "-b", "16"])
        let a = try dir.write("a.toml", "[session]\nname = \"a\"\n[[track]]\nfile = \"long.wav\"\n")
        let b = try dir.write("b.toml", "[session]\nname = \"b\"\n[[track]]\nfile = \"long.wav\"\n")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let tmux = TerminalDisplayOnJACKTests.Tmux()
        defer { tmux.kill() }
        let command = [aqsyncURL().path, "play", a.path, b.path, "--server", server.name, "--no-connect", "--no-start-server", "--allow-loss"]
            .map { "'\($0)'" }.joined(separator: " ")
        _ = try tmux.run(["new-session", "-d", "-s", "t", "-x", "160", "-y", "30", "\(command); echo EXIT=$?; exec sleep 600"])
        func waitFor(_ text: String, history: Bool = false) throws -> Bool { try tmux.waitFor(text, history: history) }
        try #require(try waitFor("▶ 1/2 'a'  0:00."))
        for (key, line, shown) in [
            ("n", "key n: 1/2 'a' fades out (5 ms); session 2/2 'b' starts 0.25 s after the fade (--lead), without its gap", "▶ 2/2 'b'  0:0"),
            ("p", "key p: 2/2 'b' fades out (5 ms); session 1/2 'a' starts 0.25 s after the fade (--lead), without its gap", "▶ 1/2 'a'  0:0"),
            ("n", "key n: 1/2 'a' fades out (5 ms); session 2/2 'b' starts 0.25 s after the fade (--lead), without its gap", "▶ 2/2 'b'  0:0"),
        ] as [(String, String, String)] {
            // Past the session's first frames: the display has been drawn for it.
            usleep(400_000)
            _ = try tmux.run(["send-keys", "-t", "t", key])
            #expect(try waitFor(line, history: true), "after \(key)")
            #expect(try waitFor(shown), "after \(key)")
        }
        usleep(400_000)
        _ = try tmux.run(["send-keys", "-t", "t", "n"])
        #expect(try waitFor("EXIT=0"))
        let history = try tmux.capture(history: true).joined(separator: "\n")
        #expect(history.contains("key n: 2/2 'b' fades out (5 ms); it is the last: playback ends"), "\(history)")
        #expect(history.components(separatedBy: "session 1/2 'a' skipped").count - 1 == 2, "\(history)")
        #expect(!history.contains("▶ 1/2") && !history.contains("▶ 2/2"), "display lines left behind:\n\(history)")
    }
}

/// `aqsync play A B …`: what a set list refuses before anything plays (no JACK needed: every
/// refusal comes before a server is looked for).
@Suite("Set lists live: bad input")
struct SetListPlayInputTests {
    static func play(_ args: [String]) throws -> (status: Int32, output: String) {
        try runTool(aqsyncURL().path, ["play"] + args + ["--server", "aqsl-none-\(getpid())", "--no-start-server"])
    }

    @Test func optionsForOneSessionAreRefused() throws {
        let dir = try TempDir()
        let list = try SetListOnJACKTests.makeList(dir).map(\.path)
        let from = try Self.play(list + ["--from", "0.5"])
        #expect(from.status == 64 && from.output.contains("--from applies to one session, not to a set list"), "\(from.output)")
        for mode in ["follow", "lead"] {
            let t = try Self.play(list + ["--transport", mode])
            #expect(t.status == 64 && t.output.contains("--transport \(mode) plays one session"), "\(t.output)")
        }
        // Accepted: the list reaches the server lookup (none here: status 1, nothing played).
        let ok = try Self.play(list)
        #expect(ok.status == 1 && ok.output.contains("no JACK server 'aqsl-none-") && !ok.output.contains("playing"), "\(ok.output)")
    }

    @Test func sessionsThatCannotShareTheClientAreRefused() throws {
        let dir = try TempDir()
        let list = try SetListOnJACKTests.makeList(dir)
        let four = try dir.write("four.toml", "[output]\nchannels = 4\n[[track]]\nfile = \"a.wav\"\n")
        let r = try Self.play([list[0].path, four.path])
        #expect(r.status == 1 && r.output.contains("four.toml: [output] channels = 4, but 'a.toml' has 2"), "\(r.output)")
        let named = try dir.write("named.toml", "[output]\nclient_name = \"other\"\n[[track]]\nfile = \"a.wav\"\n")
        let n = try Self.play([list[0].path, named.path])
        #expect(n.status == 1 && n.output.contains("named.toml: [output] client_name 'other' differs"), "\(n.output)")
        // --client-name names the one client: accepted (then no server).
        let o = try Self.play([list[0].path, named.path, "--client-name", "x"])
        #expect(o.status == 1 && o.output.contains("no JACK server"), "\(o.output)")
        let wired = try dir.write("wired.toml", "[output]\nconnect = [\"system:playback_1\", \"system:playback_2\"]\n[[track]]\nfile = \"a.wav\"\n")
        let w = try Self.play([list[0].path, wired.path])
        #expect(w.status == 1 && w.output.contains("wired.toml: [output] connect differs"), "\(w.output)")
        let wn = try Self.play([list[0].path, wired.path, "--no-connect"])
        #expect(wn.status == 1 && wn.output.contains("no JACK server"), "\(wn.output)")
    }

    @Test func endlessLoopsAndTakesAreRefused() throws {
        let dir = try TempDir()
        let list = try SetListOnJACKTests.makeList(dir)
        let endless = try dir.write("endless.toml", "[session]\nloop = { from = \"0\", to = \"0.2s\" }\n[[track]]\nfile = \"a.wav\"\n")
        let e = try Self.play([list[0].path, endless.path])
        #expect(e.status == 1 && e.output.contains("endless.toml: the loop has no count, so it never ends: in a set list"), "\(e.output)")
        let takes = try dir.write("takes.toml", "[[track]]\nfile = \"a.wav\"\n[[record]]\nfile = \"take.wav\"\nchannels = 1\n")
        let t = try Self.play([takes.path, list[1].path])
        #expect(t.status == 1 && t.output.contains("takes.toml: [[record]] takes cannot be recorded in a set list yet"), "\(t.output)")
    }

    @Test func skipKeysDecode() {
        #expect(ControlKey.decode(Array("npNP".utf8)) == [.nextSession, .previousSession, .nextSession, .previousSession])
    }

    @Test func timingRuleIsTheRendersOne() throws {
        let dir = try TempDir()
        let s = try SetListOnJACKTests.makeList(dir).map { try SessionLoader.load($0) }
        // No gap before the first, whatever it says; B's frames scaled from 44.1 kHz; C's seconds.
        var first = s[1]
        first.gap = .frames(999)
        #expect(SetList.gapFrames(before: first, at: 0, deviceRate: 48000) == 0)
        #expect(SetList.gapFrames(before: s[1], at: 1, deviceRate: 44100) == 1234)
        var b441 = s[1]
        b441.sampleRate = 44100
        #expect(SetList.gapFrames(before: b441, at: 1, deviceRate: 48000) == 1343)  // 1343.13…
        #expect(SetList.start(of: s[2], at: 2, after: 1000, deviceRate: 48000) == 1000 + 4800)
        #expect(SetList.gapFrames(before: s[0], at: 1, deviceRate: 48000) == 0)
    }
}
