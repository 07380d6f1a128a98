import AQEngine
import AQJack
import AQJackServer
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24 live: ``SessionPlayer/seek(to:lead:)`` while playing on a private jackd, without
/// the transport, recorded by jack-record beside a ``FrameCountWitness``: what played before
/// the seek is the offline render from the start, what plays from the restart frame on is the
/// offline render from the new position, sample for sample, on every output.
@Suite("Plain seek live on a private JACK server", .serialized)
struct PlainSeekOnJACKTests {
    /// The impulse session played from its start; 0.25 s in, a seek to session frame 20000
    /// (inside the first track, before the second's start, past two tracks' ends). A run whose
    /// recording differs where the witness shows the recorder broke or slipped is repeated
    /// (``liveRun(_:attempts:_:)``).
    @Test(.timeLimit(.minutes(3)))
    func seekLiveEqualsOfflineRenderFromThePosition() throws {
        let fx = try ImpulseSession.make()
        let session = try SessionLoader.load(fx.url)
        let render = { (from: Int64) throws -> [[Float]] in
            let url = fx.dir.file("offline-\(from).wav")
            try OfflineRenderer.render(session: session, to: url, from: .frames(from))
            return try WAVReader.read(url).channels
        }
        let full = try render(0), fromP = try render(20_000)
        try liveRun("seekLiveEqualsOfflineRenderFromThePosition") { _, isLast in
            try playSeekAndCompare(fx: fx, session: session, full: full, fromP: fromP, isLast: isLast)
        }
    }

    private func playSeekAndCompare(fx: ImpulseSession, session: Session, full: [[Float]], fromP: [[Float]], isLast: Bool) throws -> LiveRunVerdict {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsession-test", serverName: server.name, outputChannels: 5, outputConnections: .none))
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine)
        defer { player.close() }
        let (rec, witness) = try FrameCountWitness.recording(device.outputPortNames, server: server.name, directory: fx.dir.url, serverCounter: true)
        defer { rec.removeFiles(); witness.stop() }
        let start = try player.start(at: AudioTimeStamp(sampleTime: engine.deviceCurrentTime().sampleTime + 14_400))
        while Int64(engine.deviceCurrentTime().sampleTime) < start + 12_000 { usleep(2_000) }
        let seekAt = Int64(engine.deviceCurrentTime().sampleTime)
        let result = try player.seek(to: 20_000)
        guard case .playing(20_000, let restart) = result else {
            Issue.record("seek: \(result)")
            return .judged
        }
        #expect(restart >= seekAt + 4800, "restart \(restart), seek at \(seekAt)")
        #expect(player.waitUntilFinished(timeout: 15))
        let end = engine.deviceCurrentTime().sampleTime + 4_800
        while engine.deviceCurrentTime().sampleTime < end { usleep(5_000) }
        rec.stop()
        let recorded = try rec.read().channels
        let outputs = device.outputPortNames.count
        let live = Array(recorded.prefix(outputs))
        let timeline = WitnessTimeline(
            channel: recorded.count > outputs ? recorded[outputs] : [], serverChannel: recorded.count > outputs + 1 ? recorded[outputs + 1] : nil)
        let kept = Int(device.lostFrames - device.skippedFrames)
        let report = player.report()
        // Where device frame `start` is in the recording: lined up on the first impulse.
        let origin = (live[0].firstIndex { $0 != 0 } ?? -1) - (full[0].firstIndex { $0 != 0 } ?? 0)
        let before = Int(seekAt - start)
        let origin2 = origin + Int(restart - start)
        let n = fromP[0].count
        let covered = origin >= 0 && origin2 + n <= live[0].count
        let head = full.map { Array($0.prefix(before)) }
        let equal = covered
            && live.indices.allSatisfy { c in (0..<before).allSatisfy { live[c][origin + $0] == head[c][$0] } }
            && live.indices.allSatisfy { c in (0..<n).allSatisfy { live[c][origin2 + $0] == fromP[c][$0] } }
        if !equal && !isLast {
            let span = max(0, origin)...(max(0, origin2) + n)
            let breaks = timeline.breaks.filter { span.contains($0) }, slips = timeline.slips.filter { span.contains($0) }
            if !breaks.isEmpty || !slips.isEmpty || !covered {
                return .witnessCouldNotTell(
                    reason: "the recording differs from the render; the recorder broke \(breaks.count) time(s), the witness slipped \(slips.count) time(s) (origin \(origin))",
                    aqsyncFigures: ["late frames": report.reduce(0) { $0 + Int($1.lateFrames) }])
            }
        }
        try #require(covered, "the recording covers both stretches (origin \(origin), restart at recorded frame \(origin2))")
        // Before the seek: the render from the start; between the stops and the restart:
        // silence; from the restart: the render from 20000.
        let m1 = LiveRenderMatch(live: live, witness: timeline, offline: head, origin: origin, keptLostFrames: kept)
        #expect(m1.mismatches == 0 && m1.judgedFrames * 2 >= before, "before the seek: \(m1)")
        for c in live.indices {
            #expect(live[c][(origin2 - 1000)..<origin2].allSatisfy { $0 == 0 }, "output \(c + 1) silent before the restart")
        }
        let m2 = LiveRenderMatch(live: live, witness: timeline, offline: fromP, origin: origin2, keptLostFrames: kept)
        #expect(m2.mismatches == 0 && m2.judgedFrames * 2 >= n, "from the restart: \(m2)")
        #expect(report.allSatisfy { $0.completed && $0.lateFrames == 0 && $0.error == nil }, "\(report)")
        #expect(report.map(\.scheduledStartFrame) == [0, 4000, 0, 0, 10011].map { restart + $0 })
        return .judged
    }

    /// `aqsync play` without `--transport`, driven by `oscsend` (liblo-tools): stop pauses
    /// (before the start: at 0), a marker and a locate while paused move the paused position,
    /// play resumes there, a locate in frames seeks while playing, a track's gain is set, bad
    /// input is answered; the
    /// session then plays to its end, status 0 (`--allow-loss`: a non-realtime server on a
    /// busy machine may lose frames, which is not what this test is about). Judged on aqsync's
    /// log lines; the frames are judged by the test above.
    @Test(.timeLimit(.minutes(2)))
    func oscsendSeeksAndPausesPlainPlay() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/oscsend"), "oscsend (Debian's liblo-tools) is missing")
        let fx = try LoopRenderTests.make(loop: "")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let port = Int.random(in: 20000...60000)
        let log = fx.dir.file("plain-osc.log")
        let p = try startAqsync(["play", fx.url.path, "--server", server.name, "--no-connect", "--no-start-server", "--osc", "\(port)",
                       "--client-name", "aqplainosc", "--lead", "1", "--allow-loss"], log: log)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) }; p.waitUntilExit() }
        let aqLog = AqsyncLog(url: log), send = OSCSend(port: port)
        func waitFor(_ want: String) -> Bool { aqLog.waitFor(want) }
        func text() -> String { aqLog.text }
        try #require(waitFor("OSC: listening on 127.0.0.1:\(port) (UDP)") && waitFor("playing '"))
        // --lead 1: the start is a second away, so the pause comes before it: at 0.
        try send(["/aqsync/stop"])
        #expect(waitFor("osc /aqsync/stop: paused at session 0:00.000"))
        try send(["/aqsync/stop"])
        #expect(waitFor("osc /aqsync/stop: already paused"))
        try send(["/aqsync/marker", "s", "chorus"])
        #expect(waitFor("osc /aqsync/marker 'chorus': paused at session 0:01.200 (space or /aqsync/play plays on from there)"))
        try send(["/aqsync/locate", "f", "0.5"])
        #expect(waitFor("osc /aqsync/locate 0.5 s: paused at session 0:00.500"))
        try send(["/aqsync/play"])
        #expect(waitFor("osc /aqsync/play: resume at session 0:00.500 (plays from device frame "))
        try send(["/aqsync/locate", "i", "1001"])
        #expect(waitFor("osc /aqsync/locate 1001 frames: seek to session 0:00.021 (plays from device frame "))
        try send(["/aqsync/locate", "s", "soon"])
        #expect(waitFor("osc /aqsync/locate: give seconds (a float) or frames (an int)"))
        try send(["/aqsync/marker", "s", "bridge"])
        #expect(waitFor("osc /aqsync/marker: no such marker (markers: a, chorus, b)"))
        try send(["/aqsync/play"])
        #expect(waitFor("osc /aqsync/play: already playing"))
        // Gain by track number, then a track the session does not have (the gain's frames are
        // judged by TrackGainTests, hand-driven).
        try send(["/aqsync/gain", "if", "1", "-6"])
        #expect(waitFor(" at -6.0 dB (ramped over 5.0 ms from the next cycle)"))
        try send(["/aqsync/gain", "if", "99", "0"])
        #expect(waitFor("osc /aqsync/gain: give a track (name, or number from 1) and decibels (at most +24)"))
        #expect(p.waitUntilExit(within: 60), "aqsync did not exit at the session's end")
        #expect(p.terminationStatus == 0, "\(text())")
        #expect(!text().contains("played nothing"))
    }

    /// The keys of plain play on a terminal (a tmux pane): space pauses (before the start, at
    /// 0), `]`/`[` and ←, Home move the paused position (the display shows it, `paused`),
    /// space resumes, → past the end ends playback, status 0. Judged on the display and the log.
    @Test(.timeLimit(.minutes(2)))
    func keysSeekAndPausePlainPlay() throws {
        let fx = try LoopRenderTests.make(loop: "")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let tmux = TerminalDisplayOnJACKTests.Tmux()
        defer { tmux.kill() }
        // --lead 5: the first space comes before the start. --allow-loss: the keys are judged,
        // not frames a loaded machine's server loses.
        let command = [aqsyncURL().path, "play", fx.url.path, "--server", server.name, "--no-connect", "--no-start-server",
                       "--allow-loss", "--lead", "5"]
            .map { "'\($0)'" }.joined(separator: " ")
        _ = try tmux.run(["new-session", "-d", "-s", "t", "-x", "160", "-y", "30", "\(command); echo EXIT=$?; exec sleep 600"])
        func waitFor(_ text: String, history: Bool = false) throws -> Bool { try tmux.waitFor(text, history: history) }
        try #require(try waitFor("▶ 0:00.000 / 0:02.021"))
        for (key, line, shown) in [
            ("Space", "key space: paused at session 0:00.000", "■ 0:00.000 / 0:02.021  paused"),
            ("]", "key ]: marker 'a': paused at session 0:00.500", "■ 0:00.500 / 0:02.021  [a]  paused"),
            ("]", "key ]: marker 'chorus': paused at session 0:01.200", "■ 0:01.200 / 0:02.021  [chorus]  paused"),
            ("[", "key [: marker 'a': paused at session 0:00.500", "■ 0:00.500 / 0:02.021  [a]  paused"),
            ("Left", "key ←: paused at session 0:00.000 (clamped to the session start)", "■ 0:00.000 / 0:02.021  paused"),
            ("]", "key ]: marker 'a': paused at session 0:00.500", "■ 0:00.500 / 0:02.021  [a]  paused"),
            ("Space", "key space: resume at session 0:00.500 (plays from device frame ", "▶ 0:00.5"),
        ] as [(String, String, String)] {
            _ = try tmux.run(["send-keys", "-t", "t", key])
            #expect(try waitFor(line), "after \(key)")
            #expect(try waitFor(shown), "after \(key)")
        }
        _ = try tmux.run(["send-keys", "-t", "t", "Right"])
        #expect(try waitFor("EXIT=0"))
        let history = try tmux.capture(history: true).joined(separator: "\n")
        #expect(history.contains("is at or past the session's end (0:02.021): playback ends") || history.contains("key →: seek to session"), "\(history)")
        #expect(!history.contains("■ 0:0") && !history.contains("▶ 0:0"), "display lines left behind:\n\(history)")
    }
}
