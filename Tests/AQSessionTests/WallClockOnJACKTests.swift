import AQCore
import AQJack
import AQJackServer
import AQTesting
import Foundation
import Testing

/// Device time checked against an independent recorder (jack-record): each track's clicks keep
/// their exact spacing from the file, and the offset between tracks stays exact, through what
/// a real server does: period changes, xruns, a stalled client, and a server killed and
/// restarted.
///
/// The engine is not asked anything. Every run records an in-run witness beside aqsync's
/// outputs (``FrameCountWitness``: a plain C client writing its own frame count into its
/// output). A click is exact when it is on its place in recorded frames (jackd2's default keeps
/// every frame: what a client downstream of aqsync hears is continuous even where the server
/// skips aqsync and that downstream client with it) or in the witness's frames (aqsync did
/// what the plain client beside it did, where the recorder lost or repeated frames of both);
/// the witness shows where the recorder itself lost or repeated frames (its count breaks) or
/// where the witness was called twice or skipped. A run is repeated (through ``liveRun(_:attempts:_:)``,
/// at most 3 runs, printed) only where a click was off in a window the witness marked so, and
/// never when aqsync's own figures (late frames) moved.
@Suite("Device time against jack-record on a private JACK server", .serialized)
struct WallClockOnJACKTests {
    static let spacing = 12_000
    static let offset = 6_001

    /// Two click tracks: a click every `spacing` frames from frame 0; the second track starts
    /// `offset` frames after the first.
    private func clickSession(_ dir: TempDir, seconds: Int) throws -> URL {
        let frames = seconds * 48000
        let clicks = Array(stride(from: 0, to: frames, by: Self.spacing))
        _ = try makeImpulseFile(dir, "a.wav", rate: 48000, frames: frames, impulses: [clicks], encoding: ["-e", "signed-integer", "-b", "16"])
        _ = try makeImpulseFile(dir, "b.wav", rate: 48000, frames: frames, impulses: [clicks], encoding: ["-e", "signed-integer", "-b", "16"])
        return try dir.write("clicks.toml", """
            [output]
            channels = 2
            [[track]]
            file = "a.wav"
            outputs = [1]
            [[track]]
            file = "b.wav"
            start = \(Self.offset)
            outputs = [2]
            """)
    }

    /// Judges a recording of aqsync's two outputs and the witness (third channel; the server's
    /// counter fourth, when recorded): every click of each track `spacing` frames after the
    /// previous one, every click of b `offset` after one of a's, in recorded frames, the
    /// witness's or the server's (``WitnessedClicks``).
    static func examine(_ channels: [[Float]]) -> WitnessedClicks {
        let found = ImpulseFinder.find(channels: Array(channels.prefix(2)), threshold: 0.25)
        let witness = WitnessTimeline(channel: channels.count > 2 ? channels[2] : [], serverChannel: channels.count > 3 ? channels[3] : nil)
        return WitnessedClicks(clicks: found, witness: witness, spacing: spacing, offsets: [offset])
    }

    /// The verdict of a run that was not exact: repeat only where the witness could not tell.
    /// The judgement of a run: every click exact where the witness vouched for its window
    /// (``WitnessedClicks/offWhereVouched`` empty), and 20 windows at least judged (``WitnessedClicks/windowsJudged``)
    /// (the xrun and stall tests make it slip on purpose). A run reaches it with windows the witness
    /// could not tell only as the last of three (``liveRun(_:attempts:_:)``); those windows are
    /// printed, never counted as aqsync's: the machine lost frames there three runs in a row.
    static func expectExactWhereVouched(_ f: WitnessedClicks, _ out: String) {
        #expect(f.offWhereVouched.isEmpty, "\(f)\n\(out)")
        // Judged in 20 windows at least (exact in some measure, or where the witness vouched),
        // or the run says little. (On this machine, with the host stealing time from the VM,
        // the witness marked 87 of 114 windows in the xrun test three runs in a row; the CI run
        // of ffacb4b judged only 17 in the stall test before windows exact in a measure despite
        // a mark were counted as judged.)
        #expect(f.windowsJudged >= 20, "judged \(f.windowsJudged) of \(f.windows) windows (the witness marked \(f.windowsWitnessCouldNotTell)): \(f)")
        if !f.exact && f.offWhereVouched.isEmpty {
            print("judged where the witness vouched (every window it could tell exact); windows it could not tell: \(f)")
        }
    }

    static func unjudged(_ f: WitnessedClicks, _ out: String, isLast: Bool) -> LiveRunVerdict? {
        guard !f.exact, f.witnessCouldNotTell, !isLast else { return nil }
        return .witnessCouldNotTell(reason: f.description, aqsyncFigures: aqsyncPlayFigures(out))
    }

    /// A witness on `server` and a recorder of aqsync's two outputs and the witness's (both
    /// SCHED_FIFO at `realtimePriority` when given).
    private func record(server: String, dir: TempDir, realtimePriority: Int32? = nil) throws -> (JackRecorder, FrameCountWitness) {
        try FrameCountWitness.recording(
            ["aqt:out_1", "aqt:out_2"], server: server, directory: dir.url, serverCounter: true, realtimePriority: realtimePriority)
    }

    /// Starts `aqsync play` on `server` as client `aqt`, unconnected; returns the process and
    /// its log file.
    private func play(_ session: URL, server: String, dir: TempDir, extra: [String] = []) throws -> (Process, URL) {
        let log = dir.file("play-\(UUID().uuidString.prefix(6)).log")
        let p = try startAqsync([session.path, "--server", server, "--client-name", "aqt", "--no-connect", "--lead", "1.0", "--no-start-server", "--allow-loss"] + extra, log: log)
        return (p, log)
    }

    private func finish(_ p: Process, seconds: Double) {
        let end = Date().addingTimeInterval(seconds)
        while p.isRunning && Date() < end { usleep(20_000) }
        p.terminateAndReap()
    }

    /// `aqsync play` through `jack_bufsize` 256 → 128 → 1024 → 64: every click of each track
    /// exactly `spacing` frames after the previous one in the recording, and every click of b
    /// exactly `offset` after one of a's.
    @Test(.timeLimit(.minutes(5)))
    func periodChangesKeepEveryTrackOnItsFrames() throws {
        try liveRun("periodChangesKeepEveryTrackOnItsFrames") { _, isLast in try periodChangeRun(isLast: isLast) }
    }

    private func periodChangeRun(isLast: Bool) throws -> LiveRunVerdict {
        // Realtime scheduling when the system grants it: fewer xruns on a shared machine.
        let (f, out, status, sizes, _) = try periodChange(realtime: true, sizes: [128, 1024, 64])
        #expect(sizes == [128, 1024, 64])
        if let again = Self.unjudged(f, out, isLast: isLast) { return again }
        #expect(status == 0, "\(out)")
        #expect(out.split(separator: "\n").filter { $0.contains("period-size change") }.count == 3, "\(out)")
        #expect(f.frames[0].count >= 40 && f.frames[1].count >= 40, "\(f)")
        Self.expectExactWhereVouched(f, out)
        print("periodChangesKeepEveryTrackOnItsFrames: through periods 256 → 128 → 1024 → 64: \(f)")
        return .judged
    }

    /// What jackd's log said of a run: how many times it reported the witness, the recorder
    /// and aqsync late (``PrivateJackServer/clientsReportedLate``).
    struct ServerSaidLate: CustomStringConvertible {
        var witness = 0, recorder = 0, aqsync = 0
        var description: String { "jackd reported late: the witness \(witness)×, the recorder \(recorder)×, aqsync \(aqsync)×" }
    }

    /// One run of issue 21's scenario: `aqsync play` of the two click tracks from period 256
    /// through `jack_bufsize` to each of `sizes`, 3 s apart, recorded beside the witness (the
    /// witness and the recorder SCHED_FIFO at `witnessPriority` when given).
    private func periodChange(
        realtime: Bool, sizes wanted: [Int], witnessPriority: Int32? = nil
    ) throws -> (WitnessedClicks, String, Int32, [Int], ServerSaidLate) {
        let dir = try TempDir()
        let session = try clickSession(dir, seconds: 14)
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: realtime)
        defer { server.stop() }
        let (p, log) = try play(session, server: server.name, dir: dir)
        defer { p.terminateAndReap() }
        try JackTools.waitForPorts(["aqt:out_1", "aqt:out_2"], server: server.name)
        let (rec, witness) = try record(server: server.name, dir: dir, realtimePriority: witnessPriority)
        defer { rec.removeFiles(); witness.stop() }
        var sizes: [Int] = []
        for size in wanted {
            Thread.sleep(forTimeInterval: 3)  // playing time between the changes, not synchronisation
            try JackTools.setBufferSize(size, server: server.name)
            sizes.append(try JackTools.bufferSize(server: server.name))
        }
        finish(p, seconds: 20)
        rec.stop()
        let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let late = server.clientsReportedLate
        let said = ServerSaidLate(
            witness: late[witness.clientName] ?? 0, recorder: late["jack-record-\(rec.processIdentifier)"] ?? 0, aqsync: late["aqt"] ?? 0)
        return (Self.examine(try rec.read().channels), out, p.terminationStatus, sizes, said)
    }

    /// Issue 21's battery, run by hand (`AQSYNC_BATTERY_RUNS=20 swift test --filter
    /// periodChangeBattery`; results in docs/timing.md): N runs in a row of the period-change
    /// scenario on a non-realtime jackd (256 → 128 → 1024), each judged beside the witness.
    /// The witness and the recorder run SCHED_FIFO (aqsync does not: the scenario's server is
    /// non-realtime), so that the machine does not leave them unscheduled for a cycle that
    /// aqsync plays.
    ///
    /// Every run: no click off where the witness vouched. Every run in which the witness stayed
    /// **faithful** — the recording never broke (the witness's count is continuous: the
    /// recorder lost no frame of it) and jackd never reported the witness late (it was called
    /// for every cycle: its clicks are the issue's C clicker's, exactly in place) — every click
    /// exact. Nothing is repeated. (The stricter count of earlier batteries, no slip marked
    /// either, is printed beside it: a slip is also where jackd's counter jumped for every
    /// client, which non-realtime jackd does around the changes.)
    @Test(.enabled(if: ProcessInfo.processInfo.environment["AQSYNC_BATTERY_RUNS"] != nil), .timeLimit(.minutes(60)))
    func periodChangeBattery() throws {
        let runs = Int(ProcessInfo.processInfo.environment["AQSYNC_BATTERY_RUNS"] ?? "") ?? 20
        var faithful = 0, exactFaithful = 0, clean = 0, exactClean = 0, exact = 0, vouchedOff = 0
        for run in 1...runs {
            let (f, out, _, _, late) = try periodChange(realtime: false, sizes: [128, 1024], witnessPriority: 70)
            let report = out.split(separator: "\n").first { $0.hasPrefix("server: ") } ?? "no loss reported"
            let isFaithful = f.recorderBreaks == 0 && late.witness == 0
            let isClean = f.recorderBreaks == 0 && f.witnessSlips == 0
            if isFaithful { faithful += 1; if f.exact { exactFaithful += 1 } }
            if isClean { clean += 1; if f.exact { exactClean += 1 } }
            if f.exact { exact += 1 }
            vouchedOff += f.offWhereVouched.count
            print("periodChangeBattery run \(run): \(f); \(late); witness \(isFaithful ? "faithful" : "not faithful"); \(report)")
            #expect(f.offWhereVouched.isEmpty, "run \(run): \(f)\n\(out)")
            if isFaithful { #expect(f.exact, "run \(run): \(f); \(late)\n\(out)") }
        }
        print(
            "periodChangeBattery: \(runs) runs, \(exact) exact; witness faithful in \(faithful), aqsync exact in \(exactFaithful) of those; "
                + "no slip either in \(clean), aqsync exact in \(exactClean) of those; \(vouchedOff) clicks off where the witness vouched")
    }

    /// `aqsync play` survives `kill -9` of its server and a restart under the same name: it
    /// says what happened, reconnects by itself, and finishes the session; a recorder started
    /// after the restart finds every click of each track exactly `spacing` apart and every
    /// click of b exactly `offset` after one of a's.
    @Test(.timeLimit(.minutes(5)))
    func serverKilledAndRestartedKeepsTracksInStep() throws {
        try liveRun("serverKilledAndRestartedKeepsTracksInStep") { _, isLast in try restartRun(isLast: isLast) }
    }

    private func restartRun(isLast: Bool) throws -> LiveRunVerdict {
        let dir = try TempDir()
        let session = try clickSession(dir, seconds: 12)
        let first = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { first.stop() }
        let (p, log) = try play(session, server: first.name, dir: dir)
        defer { p.terminateAndReap() }
        try JackTools.waitForPorts(["aqt:out_1", "aqt:out_2"], server: first.name)
        Thread.sleep(forTimeInterval: 3)  // playing time before the crash, not synchronisation
        first.kill()
        Thread.sleep(forTimeInterval: 1)  // the server stays away for a while
        let second = try JackServer(name: first.name, sampleRate: 48000, period: 256, realtime: first.isRealtime)
        defer { second.stop() }
        try JackTools.waitForPorts(["aqt:out_1", "aqt:out_2"], server: second.name)
        let (rec, witness) = try record(server: second.name, dir: dir)
        defer { rec.removeFiles(); witness.stop() }
        finish(p, seconds: 30)
        rec.stop()
        let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(out.contains("went away") && out.contains("waiting for it to come back"), "\(out)")
        #expect(out.contains("JACK server back after"), "\(out)")
        #expect(p.terminationStatus == 0, "\(out)")  // --allow-loss: the outage is a loss
        #expect(out.contains("track 'a.wav' finished") && out.contains("track 'b.wav' finished"), "\(out)")
        let f = Self.examine(try rec.read().channels)
        if let again = Self.unjudged(f, out, isLast: isLast) { return again }
        #expect(f.frames[0].count >= 10 && f.frames[1].count >= 10, "\(f)\n\(out)")
        Self.expectExactWhereVouched(f, out)
        print("serverKilledAndRestartedKeepsTracksInStep: after the restart \(f)")
        return .judged
    }

    /// A client that sleeps 30 ms in its process callback every 50 cycles (a period is 5.3 ms;
    /// ``StallingClient``)
    /// makes the server report xruns to every client. `aqsync play` counts them in its report;
    /// the recording keeps every click of each track exactly `spacing` apart and every click of
    /// b exactly `offset` after one of a's.
    @Test(.timeLimit(.minutes(5)))
    func xrunsAreCountedAndTracksStayInStep() throws {
        let dir = try TempDir()
        try liveRun("xrunsAreCountedAndTracksStayInStep") { _, isLast in try xrunRun(dir: dir, isLast: isLast) }
    }

    private func xrunRun(dir: TempDir, isLast: Bool) throws -> LiveRunVerdict {
        let session = try clickSession(dir, seconds: 10)
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let (p, log) = try play(session, server: server.name, dir: dir)
        defer { p.terminateAndReap() }
        try JackTools.waitForPorts(["aqt:out_1", "aqt:out_2"], server: server.name)
        let (rec, witness) = try record(server: server.name, dir: dir)
        defer { rec.removeFiles(); witness.stop() }
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server.name
        // 30 ms every 50 cycles of 256 frames.
        let staller = try StallingClient(everyFrames: 50 * 256, micros: 30_000, environment: env, directory: dir.url)
        defer { staller.stop() }
        finish(p, seconds: 30)
        rec.stop()
        let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let f = Self.examine(try rec.read().channels)
        if let again = Self.unjudged(f, out, isLast: isLast) { return again }
        #expect(p.terminationStatus == 0, "\(out)")
        let report = out.split(separator: "\n").first { $0.hasPrefix("server: ") }.map(String.init) ?? ""
        let xruns = Int(report.dropFirst("server: ".count).prefix { $0.isNumber }) ?? 0
        #expect(xruns >= 5, "the report counts the xruns: \(report)\n\(out)")
        #expect(f.frames[0].count >= 20 && f.frames[1].count >= 20, "\(f)")
        Self.expectExactWhereVouched(f, out)
        print("xrunsAreCountedAndTracksStayInStep: \(xruns) xruns reported; \(f)")
        return .judged
    }

    /// aqsync's own process stopped (SIGSTOP) for 12 ms, more than two periods, eight times
    /// while it plays, as a slow callback would be: jackd2 reports xruns, moves its counter on,
    /// and skips aqsync and the recorder downstream of it for the cycles aqsync missed, while
    /// the witness, which depends on nobody, goes on (measured: it is 256–512 frames ahead of
    /// aqsync after each stall, and the recording breaks exactly there). So by default
    /// (jackd2: keep every frame) the recording of aqsync's outputs keeps every click exactly
    /// `spacing` recorded frames apart and every click of b exactly `offset` after one of a's:
    /// judged in recorded frames (content continuity downstream), not witness frames.
    @Test(.timeLimit(.minutes(5)))
    func stalledClientKeepsEveryFrameOnJackd() throws {
        try liveRun("stalledClientKeepsEveryFrameOnJackd") { _, isLast in try stallRun(isLast: isLast) }
    }

    private func stallRun(isLast: Bool) throws -> LiveRunVerdict {
        let dir = try TempDir()
        let session = try clickSession(dir, seconds: 10)
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let (p, log) = try play(session, server: server.name, dir: dir)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) }; p.waitUntilExit() }
        try JackTools.waitForPorts(["aqt:out_1", "aqt:out_2"], server: server.name)
        let (rec, witness) = try record(server: server.name, dir: dir)
        defer { rec.removeFiles(); witness.stop() }
        Thread.sleep(forTimeInterval: 1.5)  // into the session (lead 1 s), not synchronisation
        for _ in 0..<8 where p.isRunning {
            kill(p.processIdentifier, SIGSTOP)
            usleep(12_000)
            kill(p.processIdentifier, SIGCONT)
            Thread.sleep(forTimeInterval: 0.6)
        }
        finish(p, seconds: 30)
        rec.stop()
        let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let f = Self.examine(try rec.read().channels)
        if let again = Self.unjudged(f, out, isLast: isLast) { return again }
        #expect(out.contains("jackd2's libjack"), "\(out)")
        #expect(f.frames[0].count >= 20 && f.frames[1].count >= 20, "\(f)")
        Self.expectExactWhereVouched(f, out)
        print("stalledClientKeepsEveryFrameOnJackd: \(out.split(separator: "\n").first { $0.hasPrefix("server: ") } ?? "no loss reported"); \(f)")
        return .judged
    }
}
