import AQCore
import AQJack
import AQJackServer
import AQTesting
import Foundation
import Testing

/// Device time checked against an independent recorder (jack-record): each track's clicks keep
/// their exact spacing from the file, and the offset between tracks stays exact, through what
/// a real server does: period changes, and a server killed and restarted.
///
/// The recorder counts its own frames; the engine is not asked anything. A run during which the
/// server lost frames (an xrun on this shared 2-core machine without realtime scheduling) moves
/// the recorder's timeline against the engine's by the frames lost, so it proves nothing about
/// placement: such a run is repeated, at most `liveRunAttempts` times, and says so in the test output.
/// Any other failure is not retried.
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

    /// What the recording shows: per track the clicks, the gaps that are not `spacing`, and
    /// the clicks of b that are not `offset` after one of a's.
    struct Findings: CustomStringConvertible {
        var a: [Int], b: [Int]
        var badGapsA: [Int], badGapsB: [Int], unpaired: [Int]
        /// The reference client's clicks (third channel), when recorded.
        var reference: [Int] = []
        var description: String {
            "a: \(a.count) clicks, gaps ≠ \(WallClockOnJACKTests.spacing): \(badGapsA); b: \(b.count) clicks, gaps: \(badGapsB); b not \(WallClockOnJACKTests.offset) after a: \(unpaired); reference client \(faithful ? "exact" : "moved: \(zip(reference.dropFirst(), reference).map { $0 - $1 }.filter { $0 != WallClockOnJACKTests.spacing })")"
        }
        var exact: Bool { badGapsA.isEmpty && badGapsB.isEmpty && unpaired.isEmpty }
        /// The recording itself is faithful: the plain C reference client's clicks, recorded
        /// beside aqsync's, are exactly `spacing` apart. When they are not, the recorder or the
        /// machine lost frames and the run proves nothing about aqsync.
        var faithful: Bool { ReferenceClicker.isFaithful(reference, interval: WallClockOnJACKTests.spacing) }
    }

    static func examine(_ channels: [[Float]]) -> Findings {
        let found = ImpulseFinder.find(channels: channels, threshold: 0.25)
        let a = found[0], b = found[1]
        let gaps = { (x: [Int]) in zip(x.dropFirst(), x).map { $0 - $1 }.filter { $0 != spacing } }
        let setA = Set(a)
        // A b click before the first recorded a click has no partner in the recording.
        let unpaired = b.filter { !setA.contains($0 - offset) && $0 - offset >= (a.first ?? 0) }
        return Findings(a: a, b: b, badGapsA: gaps(a), badGapsB: gaps(b), unpaired: unpaired, reference: found.count > 2 ? found[2] : [])
    }

    /// A reference clicker on `server` and a recorder of aqsync's two outputs and the
    /// reference's.
    private func record(server: String, dir: TempDir) throws -> (JackRecorder, ReferenceClicker) {
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server
        let clicker = try ReferenceClicker(interval: Self.spacing, environment: env, connectTo: [], directory: dir.url)
        try waitForPorts([clicker.port], server: server)
        let rec = try JackRecorder(server: server, ports: ["aqt:out_1", "aqt:out_2", clicker.port])
        return (rec, clicker)
    }

    /// Starts `aqsync play` on `server` as client `aqt`, unconnected; returns the process and
    /// its log file.
    private func play(_ session: URL, server: String, dir: TempDir, extra: [String] = []) throws -> (Process, URL) {
        let log = dir.file("play-\(UUID().uuidString.prefix(6)).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let fh = try FileHandle(forWritingTo: log)
        let p = Process()
        p.executableURL = aqsyncURL()
        p.arguments = [session.path, "--server", server, "--client-name", "aqt", "--no-connect", "--lead", "1.0", "--no-start-server", "--allow-loss"] + extra
        p.standardOutput = fh
        p.standardError = fh
        p.standardInput = FileHandle.nullDevice
        try p.run()
        try? fh.close()
        return (p, log)
    }

    private func waitForPorts(_ ports: [String], server: String) throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Set((try? JackTools.ports(server: server)) ?? []).isSuperset(of: ports) { return }
            usleep(20_000)
        }
        throw TestingError("ports \(ports) did not appear on \(server)")
    }

    private func finish(_ p: Process, seconds: Double) {
        let end = Date().addingTimeInterval(seconds)
        while p.isRunning && Date() < end { usleep(20_000) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
    }

    /// `aqsync play` through `jack_bufsize` 256 → 128 → 1024 → 64: every click of each track
    /// exactly `spacing` frames after the previous one in the recording, and every click of b
    /// exactly `offset` after one of a's.
    @Test(.timeLimit(.minutes(5)))
    func periodChangesKeepEveryTrackOnItsFrames() throws {
        for attempt in 1...liveRunAttempts {
            let (done, note) = try periodChangeRun(lastAttempt: attempt == liveRunAttempts)
            if done { return }
            print("periodChangesKeepEveryTrackOnItsFrames: run \(attempt) repeated because the machine xrunned or the recorder lost frames: \(note)")
        }
    }

    private func periodChangeRun(lastAttempt: Bool) throws -> (Bool, String) {
        let dir = try TempDir()
        let session = try clickSession(dir, seconds: 14)
        // Realtime scheduling when the system grants it: fewer xruns on a shared machine.
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let (p, log) = try play(session, server: server.name, dir: dir)
        defer { if p.isRunning { p.terminate() }; p.waitUntilExit() }
        try waitForPorts(["aqt:out_1", "aqt:out_2"], server: server.name)
        let (rec, clicker) = try record(server: server.name, dir: dir)
        defer { rec.removeFiles(); clicker.stop() }
        var sizes: [Int] = []
        for size in [128, 1024, 64] {
            Thread.sleep(forTimeInterval: 3)  // playing time between the changes, not synchronisation
            try JackTools.setBufferSize(size, server: server.name)
            sizes.append(try JackTools.bufferSize(server: server.name))
        }
        finish(p, seconds: 20)
        rec.stop()
        let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(sizes == [128, 1024, 64])
        let f = Self.examine(try rec.read().channels)
        let lost = out.contains("frames lost") || out.contains("xrun")
        if !f.exact && (lost || !f.faithful) && !lastAttempt { return (false, out.split(separator: "\n").filter { $0.contains("discontinuity") }.joined(separator: "; ")) }
        #expect(p.terminationStatus == 0, "\(out)")
        #expect(out.split(separator: "\n").filter { $0.contains("period-size change") }.count == 3, "\(out)")
        #expect(f.a.count >= 40 && f.b.count >= 40, "\(f)")
        #expect(f.exact, "\(f)\n\(out)")
        print("periodChangesKeepEveryTrackOnItsFrames: \(f.a.count) + \(f.b.count) clicks recorded through periods 256 → 128 → 1024 → 64; gaps all \(Self.spacing), offsets all \(Self.offset)")
        return (true, "")
    }

    /// `aqsync play` survives `kill -9` of its server and a restart under the same name: it
    /// says what happened, reconnects by itself, and finishes the session; a recorder started
    /// after the restart finds every click of each track exactly `spacing` apart and every
    /// click of b exactly `offset` after one of a's.
    @Test(.timeLimit(.minutes(5)))
    func serverKilledAndRestartedKeepsTracksInStep() throws {
        for attempt in 1...liveRunAttempts {
            let (done, note) = try restartRun(lastAttempt: attempt == liveRunAttempts)
            if done { return }
            print("serverKilledAndRestartedKeepsTracksInStep: run \(attempt) repeated because the machine xrunned or the recorder lost frames: \(note)")
        }
    }

    private func restartRun(lastAttempt: Bool) throws -> (Bool, String) {
        let dir = try TempDir()
        let session = try clickSession(dir, seconds: 12)
        let first = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { first.stop() }
        let (p, log) = try play(session, server: first.name, dir: dir)
        defer { if p.isRunning { p.terminate() }; p.waitUntilExit() }
        try waitForPorts(["aqt:out_1", "aqt:out_2"], server: first.name)
        Thread.sleep(forTimeInterval: 3)  // playing time before the crash, not synchronisation
        first.kill()
        Thread.sleep(forTimeInterval: 1)  // the server stays away for a while
        let second = try JackServer(name: first.name, sampleRate: 48000, period: 256, realtime: first.isRealtime)
        defer { second.stop() }
        try waitForPorts(["aqt:out_1", "aqt:out_2"], server: second.name)
        let (rec, clicker) = try record(server: second.name, dir: dir)
        defer { rec.removeFiles(); clicker.stop() }
        finish(p, seconds: 30)
        rec.stop()
        let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(out.contains("went away") && out.contains("waiting for it to come back"), "\(out)")
        #expect(out.contains("JACK server back after"), "\(out)")
        #expect(p.terminationStatus == 0, "\(out)")  // --allow-loss: the outage is a loss
        #expect(out.contains("track 'a.wav' finished") && out.contains("track 'b.wav' finished"), "\(out)")
        let f = Self.examine(try rec.read().channels)
        let xrun = out.contains("xrun")
        if !f.exact && (xrun || !f.faithful) && !lastAttempt { return (false, out.split(separator: "\n").filter { $0.contains("discontinuity") }.joined(separator: "; ")) }
        #expect(f.a.count >= 10 && f.b.count >= 10, "\(f)\n\(out)")
        #expect(f.exact, "\(f)\n\(out)")
        print("serverKilledAndRestartedKeepsTracksInStep: after the restart \(f.a.count) + \(f.b.count) clicks recorded; gaps all \(Self.spacing), offsets all \(Self.offset)")
        return (true, "")
    }

    /// A client that sleeps 30 ms in its process callback every 50 cycles (a period is 5.3 ms)
    /// makes the server report xruns to every client. `aqsync play` counts them in its report;
    /// the recording keeps every click of each track exactly `spacing` apart and every click of
    /// b exactly `offset` after one of a's.
    @Test(.timeLimit(.minutes(5)))
    func xrunsAreCountedAndTracksStayInStep() throws {
        let dir = try TempDir()
        let sleeper = try buildSleeper(dir)
        for attempt in 1...liveRunAttempts {
            let (done, note) = try xrunRun(dir: dir, sleeper: sleeper, lastAttempt: attempt == liveRunAttempts)
            if done { return }
            print("xrunsAreCountedAndTracksStayInStep: run \(attempt) repeated because the machine itself lost frames (beyond the provoked xruns): \(note)")
        }
    }

    /// A plain C JACK client that sleeps in its process callback every EVERY cycles.
    private func buildSleeper(_ dir: TempDir) throws -> URL {
        let src = try dir.write("sleeper.c", """
            #include <jack/jack.h>
            #include <signal.h>
            #include <stdio.h>
            #include <stdlib.h>
            #include <time.h>
            #include <unistd.h>
            static int cycles, every, sleepus;
            static int process(jack_nframes_t n, void *arg) {
                (void)n; (void)arg;
                if (++cycles % every == 0) { struct timespec ts = {0, sleepus * 1000L}; nanosleep(&ts, NULL); }
                return 0;
            }
            int main(int argc, char **argv) {
                sigset_t all; sigfillset(&all); sigprocmask(SIG_UNBLOCK, &all, NULL);  /* the test process blocks some */
                every = argc > 1 ? atoi(argv[1]) : 50;
                sleepus = argc > 2 ? atoi(argv[2]) : 30000;
                jack_status_t st;
                jack_client_t *c = jack_client_open("sleeper", JackNoStartServer, &st);
                if (!c) { fprintf(stderr, "sleeper: no server\\n"); return 1; }
                jack_set_process_callback(c, process, NULL);
                if (jack_activate(c)) return 1;
                for (;;) pause();
            }
            """)
        let exe = dir.file("sleeper")
        let flags = try runTool("/usr/bin/pkg-config", ["--cflags", "--libs", "jack"])
        #expect(flags.status == 0, "\(flags.output)")
        let cc = try runTool("/usr/bin/cc", ["-O2", "-o", exe.path, src.path] + flags.output.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty })
        guard cc.status == 0 else { throw ToolFailure(description: "cc sleeper.c: \(cc.output)") }
        return exe
    }

    private func xrunRun(dir: TempDir, sleeper: URL, lastAttempt: Bool) throws -> (Bool, String) {
        let session = try clickSession(dir, seconds: 10)
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let (p, log) = try play(session, server: server.name, dir: dir)
        defer { if p.isRunning { p.terminate() }; p.waitUntilExit() }
        try waitForPorts(["aqt:out_1", "aqt:out_2"], server: server.name)
        let (rec, clicker) = try record(server: server.name, dir: dir)
        defer { rec.removeFiles(); clicker.stop() }
        let s = Process()
        s.executableURL = sleeper
        s.arguments = ["50", "30000"]
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server.name
        s.environment = env
        s.standardOutput = FileHandle.nullDevice
        try s.run()
        defer { if s.isRunning { kill(s.processIdentifier, SIGKILL) }; s.waitUntilExit() }
        finish(p, seconds: 30)
        rec.stop()
        let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let f = Self.examine(try rec.read().channels)
        let machineLost = out.contains("frames lost")
        if !f.exact && (machineLost || !f.faithful) && !lastAttempt { return (false, out.split(separator: "\n").filter { $0.contains("lost") }.joined(separator: "; ")) }
        #expect(p.terminationStatus == 0, "\(out)")
        let report = out.split(separator: "\n").first { $0.hasPrefix("server: ") }.map(String.init) ?? ""
        let xruns = Int(report.dropFirst("server: ".count).prefix { $0.isNumber }) ?? 0
        #expect(xruns >= 5, "the report counts the xruns: \(report)\n\(out)")
        #expect(f.a.count >= 20 && f.b.count >= 20, "\(f)")
        #expect(f.exact, "\(f)\n\(out)")
        print("xrunsAreCountedAndTracksStayInStep: \(xruns) xruns reported; \(f.a.count) + \(f.b.count) clicks recorded, gaps all \(Self.spacing), offsets all \(Self.offset)")
        return (true, "")
    }

    /// aqsync's own process stopped (SIGSTOP) for 12 ms, more than two periods, eight times
    /// while it plays, as a slow callback would be: jackd2 reports xruns and moves its counter
    /// on, but every client still processes every cycle, so by default (jackd2: keep every
    /// frame) the recording of aqsync's outputs keeps every click exactly `spacing` apart and
    /// every click of b exactly `offset` after one of a's; the report counts the xruns.
    @Test(.timeLimit(.minutes(5)))
    func stalledClientKeepsEveryFrameOnJackd() throws {
        for attempt in 1...liveRunAttempts {
            if try stallRun(lastAttempt: attempt == liveRunAttempts) { return }
            print("stalledClientKeepsEveryFrameOnJackd: run \(attempt) repeated because the recorder itself lost frames (the reference client's clicks moved)")
        }
    }

    private func stallRun(lastAttempt: Bool) throws -> Bool {
        let dir = try TempDir()
        let session = try clickSession(dir, seconds: 10)
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let (p, log) = try play(session, server: server.name, dir: dir)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) }; p.waitUntilExit() }
        try waitForPorts(["aqt:out_1", "aqt:out_2"], server: server.name)
        let (rec, clicker) = try record(server: server.name, dir: dir)
        defer { rec.removeFiles(); clicker.stop() }
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
        if !f.exact && !f.faithful && !lastAttempt { return false }
        #expect(out.contains("jackd2's libjack"), "\(out)")
        #expect(f.a.count >= 20 && f.b.count >= 20, "\(f)")
        #expect(f.exact, "\(f)\n\(out)")
        print("stalledClientKeepsEveryFrameOnJackd: \(out.split(separator: "\n").first { $0.hasPrefix("server: ") } ?? "no loss reported"); \(f.a.count) + \(f.b.count) clicks, gaps all \(Self.spacing), offsets all \(Self.offset)")
        return true
    }
}
