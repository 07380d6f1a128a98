import AQEngine
import AQJack
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24: `aqsync play SESSION --transport follow --transport-offset N`, the command line,
/// on a private jackd with the C transport master (``TransportMaster``) and its witness
/// recorded beside aqsync's ports; and its usage errors.
@Suite("aqsync play --transport follow", .serialized)
struct TransportFollowCommandOnJACKTests {
    @Test func usageErrors() throws {
        let dir = try TempDir()
        let s = try dir.write("s.toml", "[[track]]\nfile = \"none.wav\"\n")
        let bad = try runTool(aqsyncURL().path, ["play", s.path, "--transport", "chase"])
        #expect(bad.status == 64 && bad.output.contains("--transport must be 'follow' or 'lead', not 'chase'"), "\(bad.output)")
        let offset = try runTool(aqsyncURL().path, ["play", s.path, "--transport-offset", "10"])
        #expect(offset.status == 64 && offset.output.contains("--transport-offset needs --transport follow or lead"), "\(offset.output)")
        let end = try runTool(aqsyncURL().path, ["play", s.path, "--exit-at-end"])
        #expect(end.status == 64 && end.output.contains("--exit-at-end needs --transport follow"), "\(end.output)")
        let from = try runTool(aqsyncURL().path, ["play", s.path, "--transport", "follow", "--from", "1"])
        #expect(from.status == 64 && from.output.contains("--from and --transport follow exclude each other"), "\(from.output)")
    }

    /// The master's script (locates stopped and rolling, starts, stops) with aqsync following
    /// from the command line: every recorded frame of its ports equals the offline render at
    /// transport frame − 4800 where the transport rolled, silence where it did not; SIGINT
    /// ends it (status 130) with the follower's summary.
    @Test(.timeLimit(.minutes(3)))
    func commandFollowsTheTransport() throws {
        let fx = try LoopRenderTests.make(loop: "")
        let session = try SessionLoader.load(fx.url)
        let refURL = fx.dir.file("ref.wav")
        try OfflineRenderer.render(session: session, to: refURL)
        let full = try WAVReader.read(refURL).channels
        try liveRun("commandFollowsTheTransport") { _, _ in
            let server = try PrivateJackServer(sampleRate: 48000, period: 256)
            defer { server.stop() }
            let log = fx.dir.file("follow.log")
            let p = try startAqsync(["play", fx.url.path, "--transport", "follow", "--transport-offset", "4800", "--server", server.name,
                           "--no-connect", "--no-start-server", "--client-name", "aqfollow"], log: log)
            defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) }; p.waitUntilExit() }
            // Its log says when the follower is installed (the sync callback registered).
            let deadline = Date().addingTimeInterval(20)
            var out = ""
            while Date() < deadline && p.isRunning {
                out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                if out.contains("following the JACK transport") { break }
                usleep(20_000)
            }
            try #require(out.contains("following the JACK transport"), "\(out)")
            let targets: [UInt32] = [4800 + 10_007, 4800 + 60_001, 3, 4800 + 95_000]
            let master = try TransportMaster(server: server.name, targets: targets, directory: fx.dir.url)
            defer { master.stop() }
            let rec = try JackRecorder(server: server.name, ports: (1...4).map { "aqfollow:out_\($0)" } + [master.port])
            defer { rec.removeFiles() }
            master.go()
            let finished = master.waitUntilDone(timeout: .seconds(60))
            rec.stop()
            #expect(finished, "the master's script did not end")
            kill(p.processIdentifier, SIGINT)
            #expect(p.waitUntilExit(within: 30), "aqsync did not stop on SIGINT")
            out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            #expect(p.terminationStatus == 130, "\(out)")
            #expect(out.contains("session frame 0 = transport frame 4800") && out.contains("0 rolling cycle(s) silent"), "\(out)")
            let j = TransportFollowOnJACKTests.judge(recorded: try rec.read().channels, full: full)
            #expect(j.lateStarts(targets.map(Int64.init), test: "commandFollowsTheTransport") != nil, "a rolling run does not start at every locate target \(targets): \(j.segments) (xrun marks \(j.xrunMarks.prefix(20)))")
            #expect(j.rollingFrames > 48000 && j.heard > 10000, "\(j.rollingFrames) rolling frames, \(j.heard) samples heard")
            #expect(j.wrongRolling == 0 && j.wrongStopped == 0,
                "\(j.wrongRolling) samples wrong while rolling, \(j.wrongStopped) not silent while stopped; first: \(j.firstWrong ?? "-")")
            return .judged
        }
    }

    /// `--transport lead`: aqsync locates the transport to the session's start (transport frame
    /// 4800), starts it, and stops it once past the session's end, then exits 0. Its outputs are
    /// connected (`--connect`) to a recorder already recording the transport witness, so the
    /// whole run is in the recording: one rolling run from frame 4800, every frame exact but
    /// for a late client's cycle the server reported (``TransportFollowOnJACKTests/judge(recorded:full:)``).
    @Test(.timeLimit(.minutes(2)))
    func leadPlaysTheSessionOnce() throws {
        let fx = try LoopRenderTests.make(loop: "")
        let session = try SessionLoader.load(fx.url)
        let refURL = fx.dir.file("ref.wav")
        try OfflineRenderer.render(session: session, to: refURL)
        let full = try WAVReader.read(refURL).channels
        try liveRun("leadPlaysTheSessionOnce") { _, _ in
            let server = try PrivateJackServer(sampleRate: 48000, period: 256)
            defer { server.stop() }
            let master = try TransportMaster(server: server.name, targets: [0, 0, 0, 0], directory: fx.dir.url)  // a witness: its script never starts
            defer { master.stop() }
            let rec = try JackRecorder(server: server.name, channels: 5)
            defer { rec.removeFiles() }
            try JackTools.connect(master.port, rec.inputPortNames[4], server: server.name)
            let r = try runTool(aqsyncURL().path, ["play", fx.url.path, "--transport", "lead", "--transport-offset", "4800", "--server", server.name,
                                                   "--no-start-server", "--connect", rec.inputPortNames.prefix(4).joined(separator: ",")])
            rec.stop()
            #expect(r.status == 0 && r.output.contains("leading: transport located to frame 4800") && r.output.contains(": stopped it"), "\(r.output)")
            let j = TransportFollowOnJACKTests.judge(recorded: try rec.read().channels, full: full)
            if !j.forgiven.isEmpty { print("leadPlaysTheSessionOnce: \(j.wrongInServerXruns) samples wrong in cycles the server reported an xrun for (\(j.forgiven.joined(separator: ", ")))") }
            // The first rolling run at the session's start (a period later only where the witness
            // was late for that cycle, beside the server's xrun report).
            let startLate = j.lateStarts([4800], test: "leadPlaysTheSessionOnce")
            #expect(startLate != nil && (j.segments.first == 4800 || j.segments.first == 5056), "rolling runs start at \(j.segments) (xrun marks \(j.xrunMarks.prefix(20)))")
            // The transport frames it rolled through (the recorder may lose some of them).
            let rolled = (j.lastRollingFrame ?? 0) - (j.segments.first ?? 0) + 1
            #expect(rolled >= 97000 && rolled < 97000 + 48000, "rolled through \(rolled) transport frames (\(j.rollingFrames) recorded)")
            #expect(j.wrongRolling == 0 && j.wrongStopped == 0,
                "\(j.wrongRolling) samples wrong while rolling, \(j.wrongStopped) not silent while stopped; first: \(j.firstWrong ?? "-")\n\(r.output)")
            return .judged
        }
    }

    /// `--transport lead` with `[session] bpm = 150`, `meter = "3/4"`: aqsync is timebase
    /// master, and the bar/beat/tick a C client reads from `jack_position_t` in every rolling
    /// cycle is the one of the cycle's transport frame: ticks since bar 1 = ⌊(F − 4800) × 150 /
    /// (60 × 48000)⌋ beats × 1920 + the tick within the beat (truncated).
    ///
    /// But for a cycle the timebase master was late for: JACK calls the timebase callback at
    /// the end of the master's cycle, on the *next* cycle's position (jack2
    /// `JackClient::CallTimebaseCallbackAux` writes the pending position), so when the master
    /// runs after the server has already begun the next cycle the server has published that
    /// cycle with the previous cycle's bar/beat/tick and its own frame: one period behind, and
    /// nothing the master does can change a published position. Such a cycle is forgiven only
    /// when the server reported an xrun beside it (the witness's mark) **and** aqsync counted a
    /// late call of its own for it (a call reading a transport frame a period past the one it
    /// expected: `skipped`, or a double call: `late cycle(s)`, in its summary), at most as many
    /// as it counted; any other wrong cycle fails.
    @Test(.timeLimit(.minutes(2)))
    func leadPublishesBarBeatTick() throws {
        let fx = try LoopRenderTests.make(loop: "")
        let text = try String(contentsOf: fx.url, encoding: .utf8).replacingOccurrences(of: "sample_rate = 48000", with: "sample_rate = 48000\nbpm = 150\nmeter = \"3/4\"")
        try text.write(to: fx.url, atomically: true, encoding: .utf8)
        #expect(try SessionLoader.load(fx.url).tempo == SessionTempo(bpm: 150, beatsPerBar: 3, beatType: 4))
        try liveRun("leadPublishesBarBeatTick") { _, isLast in
            let server = try PrivateJackServer(sampleRate: 48000, period: 256)
            defer { server.stop() }
            let master = try TransportMaster(server: server.name, targets: [0, 0, 0, 0], directory: fx.dir.url)
            defer { master.stop() }
            let rec = try JackRecorder(server: server.name, ports: [master.port, master.bbtPort])
            defer { rec.removeFiles() }
            let r = try runTool(aqsyncURL().path, ["play", fx.url.path, "--transport", "lead", "--transport-offset", "4800", "--server", server.name,
                                                   "--no-start-server", "--no-connect"])
            rec.stop()
            #expect(r.status == 0 && r.output.contains("timebase master: 150.0 bpm, 3/4, bar 1 at transport frame 4800"), "\(r.output)")
            let ch = try rec.read().channels
            var cycles = 0
            var wrong: [Int] = []  // recorded frames of the cycles with a wrong bar/beat/tick
            var first: String?
            for j in 0..<ch[0].count {
                guard let f = TransportWitnessSample(ch[0][j]).frame else { continue }
                guard (f - 4800) % 256 == 0 else { continue }  // each cycle's first frame
                cycles += 1
                let beats = Double(f - 4800) * 150 / (60 * 48000)
                let whole = Int64(beats)
                let want = Float(Double(whole) * 1920 + Double(Int32((beats - Double(whole)) * 1920)))
                if ch[1][j] != want {
                    wrong.append(j)
                    if first == nil { first = "recorded frame \(j), transport frame \(f): \(ch[1][j]) ticks, not \(want)" }
                }
            }
            let marks = (0..<ch[0].count).filter { TransportWitnessSample(ch[0][$0]).xrunReported }
            let stretches = WitnessMarks.lateCycleStretches(wrong: wrong, xruns: marks)
            let late = Self.lateCalls(r.output, period: 256)
            let forgiven = stretches.reported.count
            if forgiven > 0 { print("leadPublishesBarBeatTick: \(forgiven) cycle(s) with the previous cycle's bar/beat/tick beside an xrun report (recorded frames \(stretches.reported.map(\.lowerBound))); aqsync counted \(late) late call(s)") }
            if !isLast && cycles > 300 && stretches.unexplained.isEmpty && forgiven > late {
                // libjack calls the timebase callback after the process callback, in the same
                // cycle: a stall of the machine between the two makes the server report an
                // xrun and the next cycle read the previous position, with no late call that
                // aqsync could count. The witness marked the xrun beside each such cycle; aqsync's
                // own figure (its late calls) goes with the request, which liveRun refuses
                // when it moved.
                return .witnessCouldNotTell(
                    reason: "\(forgiven) cycle(s) with the previous cycle's bar/beat/tick, each beside an xrun the witness recorded",
                    aqsyncFigures: ["late calls": late])
            }
            #expect(cycles > 300 && stretches.unexplained.isEmpty && forgiven <= late,
                "\(cycles) rolling cycles, \(wrong.count) with a wrong bar/beat/tick (\(stretches.unexplained.count) without an xrun report beside, \(forgiven) beside one, aqsync's late calls \(late)); first: \(first ?? "-")\n\(r.output)")
            // The bar and beat themselves, as the C client read them: 3 beats a bar.
            let p = JackTimebase(bpm: 150, beatsPerBar: 3, offset: 4800).position(frame: 4800 + 3 * 19200 + 9600, rate: 48000)
            #expect(p == (2, 1, 960) as (Int32, Int32, Int32))
            return .judged
        }
    }

    @Test func lateCallsAreReadFromTheSummary() {
        let out = "transport: 389 cycle(s) played, 0 rolling cycle(s) silent\nserver: 21 xrun(s), 2 late cycle(s) called twice back to back; transport frames played again 256, skipped 1792\n"
        #expect(Self.lateCalls(out, period: 256) == 9)
        #expect(Self.lateCalls("transport: 389 cycle(s) played\n", period: 256) == 0)
    }

    /// aqsync's own count of its late calls in a `--transport` run's summary (`server: …
    /// N late cycle(s) called twice back to back; transport frames played again R, skipped S`):
    /// N + S / period (0 without the line).
    static func lateCalls(_ output: String, period: Int) -> Int {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("server: ") && $0.contains("late cycle(s)") }) else { return 0 }
        func number(before word: String) -> Int {
            guard let r = line.range(of: word) else { return 0 }
            return Int(line[..<r.lowerBound].split(separator: " ").last ?? "") ?? 0
        }
        func number(after word: String) -> Int {
            guard let r = line.range(of: word) else { return 0 }
            return Int(line[r.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        return number(before: " late cycle(s)") + number(after: "skipped ") / period
    }
}
