import AQEngine
import AQJackServer
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 26: two `aqsync play` processes, each on its own private jackd (dummy backend, one
/// with period 256, the other 128), each playing one part of a click session, both with the
/// same `--start-at` instant about 3 s ahead. On each server a plain C client (the *instant
/// probe*, no aqsync code) reads, in the cycle that contains the instant, the server's cycle
/// times (`jack_get_cycle_times`) and the wall clock (CLOCK_REALTIME bracketed by two
/// `jack_get_time` reads), computes the server frame of the instant, and logs the server's
/// cycles of the 1.2 s before it. A `FrameCountWitness` records the server's frame counter
/// beside aqsync's output (jack-record). Each server plays only its part's clicks, and the
/// first click of each part must be within one frame of:
/// - the probe's frame of the instant, when the server's clock at the instant lies within
///   ``straightClock`` µs of the line through its cycles where aqsync measured the rate and
///   converted (the baseline and lead aqsync's log gives);
/// - else the frame that line gives the instant: the server's clock bent after aqsync's
///   conversion (its DLL correcting a run of late wake-ups: up to hundreds of µs on this
///   loaded VM), which no prediction made before can follow. Both figures are printed.
///
/// A start aqsync refuses because the server's clock ran more than 1000 ppm off nominal
/// (`BaselineRate`) is judged against the probe's cycles over the window aqsync's log gives:
/// the refusal must be justified by them. A run whose every start was refused so is repeated.
///
/// A part is not judged when the server re-anchored its clock (an xrun resets its DLL to a
/// late wake-up: a cycle whose times do not continue the previous one's) between where aqsync
/// measured the rate and the instant, when aqsync converted without a baseline, or when the
/// witness's server counter is missing at the click; the run is then repeated
/// (``liveRun(_:attempts:_:)``), and the last of three prints such a part. Every part that can
/// be judged is, in whichever run; the test fails when none could be in three runs.
@Suite("--start-at on two private JACK servers", .serialized)
struct StartAtOnJACKTests {
    static let spacing = 12_000
    /// The most the server's clock at the instant may be off the line through its cycles where
    /// aqsync measured the rate and converted (µs) for the test to judge against the instant's
    /// frame itself (beyond it, against the line's): a quarter of a frame at 48 kHz (JACK's
    /// microsecond cycle times alone give about ±2 µs here).
    static let straightClock = 5.0

    /// The probe: waits for the instant (ns of CLOCK_REALTIME) to appear in the file `argv[1]`,
    /// then, in the first cycle whose next cycle starts after it, prints the server frame of
    /// the instant and whether the cycle times continued from the previous cycle.
    static let probeSource = #"""
        #include <jack/jack.h>
        #include <stdatomic.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <time.h>
        #include <unistd.h>
        static jack_client_t *client;
        static _Atomic long long instant_ns;
        static atomic_int done;
        static jack_time_t last_next;
        static int have_last;
        static double frame_of_instant;
        static jack_nframes_t c_frames, c_n;
        static jack_time_t c_usecs, c_next, c_bracket;
        static int c_continuous, c_inside, resets;
        static long long pmin = 1LL << 40, pmax = 0;
        static int have_a, have_b;
        static jack_nframes_t a_frames, b_frames;
        static jack_time_t a_usecs, b_usecs;
        static double bend_us, c_t_us;
        static jack_nframes_t ring_frames[2048];
        static jack_time_t ring_usecs[2048];
        static char ring_continuous[2048];
        static int ring_n;
        static int process(jack_nframes_t n, void *arg) {
            (void)arg;
            jack_nframes_t frames; jack_time_t usecs, next; float period;
            if (jack_get_cycle_times(client, &frames, &usecs, &next, &period) != 0) return 0;
            int continuous = have_last && usecs == last_next;
            have_last = 1; last_next = next;
            long long instant = atomic_load(&instant_ns);
            if (instant == 0 || atomic_load(&done)) return 0;
            jack_time_t j0 = jack_get_time();
            struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts);
            jack_time_t j1 = jack_get_time();
            long long wall = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
            double t = (double)(j0 + j1) * 500.0 + (double)(instant - wall);  /* the instant on JACK's clock, ns */
            /* In the last 0.9 s before the instant (aqsync measures the rate from 0.8 s before
               and converts 0.3 s before): did the server's clock re-anchor (an xrun resets its
               DLL to a late wake-up), and how far did its period estimate wander? */
            if (t - (double)usecs * 1000.0 < 0.9e9) {
                if (!continuous) resets++;
                long long p = (long long)(next - usecs);
                if (p < pmin) pmin = p;
                if (p > pmax) pmax = p;
            }
            ring_frames[ring_n % 2048] = frames; ring_usecs[ring_n % 2048] = usecs; ring_continuous[ring_n % 2048] = (char)continuous; ring_n++;
            /* The server's clock 0.8 s and 0.3 s before the instant (where aqsync measures the
               rate and converts): the instant's cycle must lie on their line. */
            if ((double)usecs * 1000.0 <= t - 0.8e9) { have_a = 1; a_frames = frames; a_usecs = usecs; }
            if ((double)usecs * 1000.0 <= t - 0.3e9) { have_b = 1; b_frames = frames; b_usecs = usecs; }
            if (t >= (double)next * 1000.0) return 0;
            if (have_a && have_b && b_frames != a_frames) {
                double slope = (double)(b_usecs - a_usecs) / (double)(jack_nframes_t)(b_frames - a_frames);
                bend_us = (double)usecs - ((double)b_usecs + (double)(jack_nframes_t)(frames - b_frames) * slope);
            } else {
                bend_us = 1e9;
            }
            frame_of_instant = (double)frames + (t - (double)usecs * 1000.0) * (double)n / ((double)(next - usecs) * 1000.0);
            c_frames = frames; c_n = n; c_usecs = usecs; c_next = next; c_bracket = j1 - j0;
            c_continuous = continuous; c_inside = t >= (double)usecs * 1000.0;
            c_t_us = t / 1000.0;
            atomic_store(&done, 1);
            return 0;
        }
        int main(int argc, char **argv) {
            char name[64];
            snprintf(name, sizeof name, "probe-%d", (int)getpid());
            jack_status_t st;
            client = jack_client_open(name, JackNoStartServer, &st);
            if (!client) { fprintf(stderr, "probe: no server (0x%x)\n", st); return 1; }
            jack_set_process_callback(client, process, NULL);
            if (jack_activate(client)) { fprintf(stderr, "probe: cannot activate\n"); return 1; }
            printf("ready\n"); fflush(stdout);
            for (;;) {
                FILE *f = fopen(argv[1], "r");
                long long v = 0;
                if (f) { if (fscanf(f, "%lld", &v) != 1) v = 0; fclose(f); }
                if (v > 0) { atomic_store(&instant_ns, v); break; }
                usleep(2000);
            }
            while (!atomic_load(&done)) usleep(1000);
            printf("instant-frame %.3f cycle %u n %u usecs %llu next %llu continuous %d inside %d resets %d period-us %lld %lld bend-us %.2f bracket-us %llu\n",
                   frame_of_instant, c_frames, c_n, (unsigned long long)c_usecs, (unsigned long long)c_next,
                   c_continuous, c_inside, resets, pmin, pmax, bend_us, (unsigned long long)c_bracket);
            printf("instant-us %.3f\n", c_t_us);
            int first = ring_n > 2048 ? ring_n - 2048 : 0;
            for (int i = first; i < ring_n; i++)
                if ((double)ring_usecs[i % 2048] >= c_t_us - 1.2e6)
                    printf("cycle %u %llu %d\n", ring_frames[i % 2048], (unsigned long long)ring_usecs[i % 2048], ring_continuous[i % 2048]);
            fflush(stdout);
            for (;;) pause();
        }
        """#

    /// What a probe printed.
    struct ProbeReading {
        var frame: Double
        var continuous: Bool
        var inside: Bool
        /// Cycles in the last 0.6 s before the instant whose times did not continue the
        /// previous cycle's (the server re-anchored its clock after aqsync converted).
        var resets: Int
        /// The spread (µs) of the server's period estimate (`next − usecs`) over those 0.9 s:
        /// 1 when its clock ran straight (the microsecond rounding), more while its DLL
        /// corrected a run of late wake-ups.
        var periodWander: Int
        /// How far (µs) the server's clock at the instant's cycle was off the line through its
        /// cycles 0.8 s and 0.3 s before the instant: what no prediction made there can know.
        var bend: Double
        /// The instant on JACK's clock (µs).
        var instantUs: Double
        /// The server's cycles (first frame, unwrapped; µs) in the 1.2 s before the instant.
        var cycles: [(frame: Double, usecs: Double, continuous: Bool)]
        var line: String

        init?(log: String) {
            guard let line = log.split(separator: "\n").first(where: { $0.hasPrefix("instant-frame ") }) else { return nil }
            let w = line.split(separator: " ")
            func value(_ key: String) -> Substring? { w.firstIndex(of: Substring(key)).flatMap { $0 + 1 < w.count ? w[$0 + 1] : nil } }
            guard let f = value("instant-frame").flatMap({ Double($0) }) else { return nil }
            frame = f
            continuous = value("continuous") == "1"
            inside = value("inside") == "1"
            resets = value("resets").flatMap { Int($0) } ?? -1
            bend = value("bend-us").flatMap { Double($0) } ?? .infinity
            let lines = log.split(separator: "\n")
            instantUs = lines.first { $0.hasPrefix("instant-us ") }.flatMap { Double($0.dropFirst(11)) } ?? .nan
            var cycles: [(frame: Double, usecs: Double, continuous: Bool)] = []
            var wraps = 0.0, last = -1.0
            for l in lines where l.hasPrefix("cycle ") {
                let p = l.split(separator: " ")
                guard p.count == 4, let f = Double(p[1]), let u = Double(p[2]) else { continue }
                if f < last { wraps += 4_294_967_296 }
                last = f
                cycles.append((f + wraps, u, p[3] == "1"))
            }
            self.cycles = cycles
            if let i = w.firstIndex(of: "period-us"), i + 2 < w.count, let lo = Int(w[i + 1]), let hi = Int(w[i + 2]) {
                periodWander = hi - lo
            } else {
                periodWander = -1
            }
            self.line = String(line)
        }
    }

    /// The server frame of the instant on the line through the server's cycles `baseline + lead`
    /// and `lead` seconds before it (where aqsync measured the rate and converted, as its log
    /// says): what the server's clock gave the instant as of aqsync's conversion. Nil when the
    /// probe logged no such cycles.
    static func lineFrame(_ p: ProbeReading, lead: Double, baseline: Double) -> Double? {
        guard let b = p.cycles.last(where: { $0.usecs <= p.instantUs - lead * 1e6 }),
              let a = p.cycles.last(where: { $0.usecs <= p.instantUs - (lead + baseline) * 1e6 }),
              b.frame > a.frame else { return nil }
        // A cycle whose times do not continue the previous one's, from A to the instant: the
        // server re-anchored its clock there (an xrun resets its DLL), the line says nothing.
        if p.cycles.contains(where: { $0.usecs > a.usecs && !$0.continuous }) { return nil }
        let usPerFrame = (b.usecs - a.usecs) / (b.frame - a.frame)
        return b.frame + (p.instantUs - b.usecs) / usPerFrame
    }

    /// The server's clock over aqsync's baseline (from `baseline + lead` to `lead` seconds
    /// before the instant), from the probe's cycles: the rate of the line through the two
    /// cycles there (ppm off nominal), the rate of the cycle at the conversion (its frames over
    /// the time to the next cycle), and whether a cycle in between re-anchored. Nil when the
    /// probe logged no such cycles.
    static func serverRate(_ p: ProbeReading, lead: Double, baseline: Double) -> (line: Double, cycle: Double, reanchored: Bool)? {
        guard let bi = p.cycles.lastIndex(where: { $0.usecs <= p.instantUs - lead * 1e6 }), bi + 1 < p.cycles.count,
              let a = p.cycles.last(where: { $0.usecs <= p.instantUs - (lead + baseline) * 1e6 }) else { return nil }
        let b = p.cycles[bi], next = p.cycles[bi + 1]
        guard b.frame > a.frame, next.frame > b.frame else { return nil }
        func ppm(_ frames: Double, _ us: Double) -> Double { (frames / (us * 1e-6) / 48000 - 1) * 1e6 }
        let reanchored = p.cycles.contains { $0.usecs > a.usecs && $0.usecs <= b.usecs && !$0.continuous }
        return (ppm(b.frame - a.frame, b.usecs - a.usecs), ppm(next.frame - b.frame, next.usecs - b.usecs), reanchored)
    }

    /// When aqsync took its reference cycles and its anchors (the middles of the windows its
    /// start line gives, `references A–B s, anchors C–D s before the instant`): the lead of the
    /// anchors and the baseline back to the references, in seconds.
    static func conversion(_ out: String, refused: Bool = false) -> (baseline: Double, lead: Double)? {
        guard let line = out.split(separator: "\n").first(where: { $0.contains(refused ? ") refused; " : "start at ") }),
              refused || line.contains(" over ") else { return nil }
        func window(after key: String) -> (Double, Double)? {
            guard let r = line.range(of: key) else { return nil }
            let text = line[r.upperBound...].prefix { $0 != " " }
            let parts = text.split(separator: "–")
            guard parts.count == 2, let a = Double(parts[0]), let b = Double(parts[1]) else { return nil }
            return (a, b)
        }
        guard let refs = window(after: "; references "), let anchors = window(after: ", anchors ") else { return nil }
        let lead = (anchors.0 + anchors.1) / 2
        return ((refs.0 + refs.1) / 2 - lead, lead)
    }

    /// One server's rig: jackd, jack-record (aqsync's output, the witness's count and the
    /// server's counter), the witness, the probe.
    struct Rig {
        let server: PrivateJackServer
        let recorder: JackRecorder
        let witness: FrameCountWitness
        let probe: JackClientProgram
        let folder: URL
        let instantFile: URL

        init(period: Int, folder: URL) throws {
            self.folder = folder
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            server = try PrivateJackServer(sampleRate: 48000, period: period, realtime: true)
            var env = ProcessInfo.processInfo.environment
            env["JACK_DEFAULT_SERVER"] = server.name
            recorder = try JackRecorder(server: server.name, channels: 3, url: folder.appendingPathComponent("rec.wav"))
            let inputs = recorder.inputPortNames
            witness = try FrameCountWitness(environment: env, connectTo: [inputs[1]], directory: folder)
            try witness.waitForPort(server: server.name)
            try JackTools.connect(witness.serverPort, inputs[2], server: server.name)
            instantFile = folder.appendingPathComponent("instant")
            probe = try JackClientProgram(source: StartAtOnJACKTests.probeSource, name: "probe", arguments: [instantFile.path], environment: env, directory: folder)
            let deadline = Date().addingTimeInterval(10)
            while !probeLog.contains("ready") {
                guard Date() < deadline, probe.isRunning else { throw TestingError("the probe did not start: \(probeLog)") }
                usleep(10_000)
            }
        }

        var probeLog: String { (try? String(contentsOf: folder.appendingPathComponent("probe.log"), encoding: .utf8)) ?? "" }

        func stop() {
            probe.stop()
            witness.stop()
            recorder.stop()
            server.stop()
        }
    }

    /// Parts A (clicks of 0.5) and B (clicks of 0.8), a click every `spacing` frames from
    /// session frame 0, 2 s each, on the one output.
    static func session(_ dir: TempDir) throws -> URL {
        try writeTwoPartClickSession(dir, spacing: spacing)
    }

    /// Opt-in (`AQSYNC_START_AT_TESTS=1`): aqsync now refuses a start whose server clock runs
    /// more than 1000 ppm off nominal (the CI of 18d5d55 judged a part 1.36 frames off after
    /// such a rate), and on a loaded VM jackd's dummy backend runs so often enough that a run
    /// with no part to judge is common (docs/multi-machine.md, "The live test is opt-in").
    static var wanted: Bool { ProcessInfo.processInfo.environment["AQSYNC_START_AT_TESTS"] == "1" }

    @Test(.enabled(if: wanted, "opt-in (AQSYNC_START_AT_TESTS=1): on a loaded machine the server's clock runs beyond ±1000 ppm too often for a part to be judged, docs/multi-machine.md"), .timeLimit(.minutes(4)))
    func twoServersStartTheirPartsOnTheFrameOfTheInstant() throws {
        // Every part a probe vouches for is judged, in whichever run; the runs are repeated for
        // the others, and the test fails when no part at all could be judged in three runs.
        var judged = 0, refused = 0
        try liveRun("twoServersStartTheirPartsOnTheFrameOfTheInstant") { _, isLast in try run(isLast: isLast, judged: &judged, refused: &refused) }
    }

    private func run(isLast: Bool, judged: inout Int, refused: inout Int) throws -> LiveRunVerdict {
        let dir = try TempDir()
        let session = try Self.session(dir)
        let rigs = [try Rig(period: 256, folder: dir.file("s1")), try Rig(period: 128, folder: dir.file("s2"))]
        defer { for r in rigs { r.stop() } }
        // The instant: 3 s from now, written as ISO 8601 (the form machines are given).
        let instant = SystemInstant.now(.realtime).adding(seconds: 3)
        let text = StartInstant.format(instant.nanoseconds)
        for r in rigs { try "\(instant.nanoseconds)\n".write(to: r.instantFile, atomically: true, encoding: .utf8) }
        var players: [(Process, URL)] = []
        // Client names of their own: libjack names a client's socket after the client, not the
        // server, so two clients of one name on two servers at once collide (seen here: "Cannot
        // connect to client name = aqt" while another test's "aqt" ran).
        for (i, r) in rigs.enumerated() {
            let log = dir.file("play-\(i).log")
            let p = try startAqsync([session.path, "--server", r.server.name, "--client-name", "startat\(i)-\(getpid())", "--connect", r.recorder.inputPortNames[0],
                                     "--no-start-server", "--allow-loss", "--part", i == 0 ? "A" : "B", "--start-at", text], log: log)
            players.append((p, log))
        }
        for (p, _) in players {
            let end = Date().addingTimeInterval(20)
            while p.isRunning && Date() < end { usleep(20_000) }
            p.terminateAndReap()
        }
        // A refused start exits at once: the probes print once the instant has come.
        let probesDone = Date().addingTimeInterval(max(0, Double(instant.nanoseconds - SystemInstant.now(.realtime).nanoseconds) / 1e9) + 5)
        while rigs.contains(where: { !$0.probeLog.contains("instant-frame") }) && Date() < probesDone { usleep(20_000) }
        var verdict = LiveRunVerdict.judged
        let judgedBefore = judged, refusedBefore = refused
        for (i, r) in rigs.enumerated() {
            let out = (try? String(contentsOf: players[i].1, encoding: .utf8)) ?? ""
            r.recorder.stop()
            let wav = try r.recorder.read()
            let part = i == 0 ? "A" : "B"
            guard let probe = ProbeReading(log: r.probeLog) else {
                Issue.record("part \(part): the probe printed no frame: \(r.probeLog)\naqsync: \(out)")
                continue
            }
            // aqsync refused the start because the server's clock read more than 1000 ppm off
            // nominal over its baseline, or its latest cycle disagreed with that line
            // (BaselineRate): the refusal is judged against the server's own cycles over the
            // same window, never taken on trust.
            if out.contains("cannot start at the instant") && out.contains("ppm") {
                #expect(players[i].0.terminationStatus == 1, "part \(part): \(out)")
                let refusal = out.split(separator: "\n").first { $0.contains("cannot start at the instant") } ?? ""
                guard let window = Self.conversion(out, refused: true), let server = Self.serverRate(probe, lead: window.lead, baseline: window.baseline) else {
                    Issue.record("part \(part): refused, and the probe's cycles do not cover its window to check it: \(refusal)\n\(probe.line)")
                    continue
                }
                // 800: the probe's line has two cycles' microseconds (7 ppm over 0.15 s), one
                // cycle's rate 375 ppm at 128 frames; aqsync's are medians.
                let vouched = server.reanchored || abs(server.line) > 800 || abs(server.cycle - server.line) > 800
                print("twoServersStartTheirPartsOnTheFrameOfTheInstant: part \(part) (period \(r.server.period)): refused; the server's clock over aqsync's window (baseline \(String(format: "%.3f", window.baseline)) s, lead \(String(format: "%.3f", window.lead)) s): line \(String(format: "%+.1f", server.line)) ppm off nominal, the cycle at the conversion \(String(format: "%+.1f", server.cycle)) ppm, re-anchored: \(server.reanchored): \(vouched ? "vouched" : "NOT vouched"); aqsync: \(refusal)")
                #expect(vouched, "part \(part): aqsync refused a start the server's clock did not justify: line \(server.line) ppm, cycle \(server.cycle) ppm\n\(out)")
                refused += 1
                continue
            }
            #expect(players[i].0.terminationStatus == 0, "part \(part): \(out)\njackd: \(r.server.log)")
            let clicks = peaks(wav.channels[0], threshold: 0.25)
            let witness = WitnessTimeline(channel: wav.channels[1], serverChannel: wav.channels[2])
            guard let first = clicks.first else {
                Issue.record("part \(part): no click recorded\n\(out)")
                continue
            }
            let serverFrame = witness.serverFrames[first]
            let conversion = Self.conversion(out)
            let line = conversion.flatMap { Self.lineFrame(probe, lead: $0.lead, baseline: $0.baseline) }
            guard probe.continuous, probe.inside, let serverFrame, let line else {
                let reason = "part \(part): the probe cannot vouch for its frame (the server re-anchored its clock between where aqsync measured the rate and the instant, or aqsync's log gives no baseline to draw the server's line through: \(probe.line); aqsync: \(out.split(separator: "\n").first { $0.contains("start at") } ?? "")), or the server counter is missing at the click"
                if !isLast {
                    verdict = .witnessCouldNotTell(reason: reason, aqsyncFigures: aqsyncPlayFigures(out))
                    continue
                }
                // The last run judges what the probes vouch for; a part they cannot is printed.
                print("twoServersStartTheirPartsOnTheFrameOfTheInstant: not judged (third run in a row): \(reason)")
                continue
            }
            // The frame the server's clock gives the instant, when its clock ran on the line
            // through its cycles where aqsync measured the rate and converted; when it bent after
            // that (its DLL correcting late wake-ups: up to hundreds of µs here), the frame that
            // line gives: no prediction made before the bend can know it.
            judged += 1
            let bendUs = (probe.frame - line) * 1e6 / 48000
            let straight = abs(bendUs) <= Self.straightClock
            let reference = straight ? probe.frame : line
            // The probe's frames are the server's counter; the witness's server channel is mod 2^24.
            let got = Double(serverFrame & 0xFFFFFF)
            func mod24(_ x: Double) -> Double { x.truncatingRemainder(dividingBy: Double(1 << 24)) }
            let error = got - mod24(reference)
            let againstInstant = got - mod24(probe.frame)
            print("twoServersStartTheirPartsOnTheFrameOfTheInstant: part \(part) (period \(r.server.period)): first click at server frame \(Int(got)), "
                  + (straight ? "the instant's frame \(String(format: "%.3f", mod24(probe.frame))) (the server's clock straight: \(String(format: "%+.1f", bendUs)) µs off its line)"
                              : "the server's line as of aqsync's conversion \(String(format: "%.3f", mod24(line))) (the clock bent by \(String(format: "%+.1f", bendUs)) µs after it; \(String(format: "%+.3f", againstInstant)) frames from the instant's frame)")
                  + ": \(String(format: "%+.3f", error)) frames; \(probe.line); aqsync: \(out.split(separator: "\n").filter { $0.contains("start at") || $0.contains("at the instant") }.joined(separator: " / "))")
            #expect(abs(error) <= 1, "part \(part): first click at server frame \(got), \(straight ? "the instant's frame" : "the server's line as of the conversion") \(mod24(reference))\n\(probe.line)\n\(out)")
            // Only the part's clicks, every one of them, each `spacing` after the previous.
            let amplitude: Float = i == 0 ? 0.5 : 0.8
            #expect(clicks.allSatisfy { abs(abs(wav.channels[0][$0]) - amplitude) < 0.05 }, "part \(part): clicks of another part: \(clicks.map { wav.channels[0][$0] })")
            #expect(clicks.count == 8, "part \(part): \(clicks.count) clicks recorded, 8 expected\n\(out)")
            // After the first click, jackd may skip aqsync for a late cycle (it keeps every frame:
            // later clicks then come a period later in server frames): each spacing is judged in
            // recorded, witness or server frames, as the device-time tests judge (docs/timing.md).
            let witnessFrames = clicks.map { witness.frames[$0] }
            for (k, (a, b)) in zip(clicks, clicks.dropFirst()).enumerated() {
                let recorded = b - a == Self.spacing
                let own = witnessFrames[k].flatMap { fa in witnessFrames[k + 1].map { ($0 - fa) & 0xFFFFFF == Self.spacing } } ?? false
                let server = witness.serverFrames[a].flatMap { fa in witness.serverFrames[b].map { $0 - fa == Self.spacing } } ?? false
                // Off in every measure: aqsync's doing, unless the witness marked the window (the
                // recorder broke, the witness slipped, or the server reported an xrun).
                let window = a...(b + 4096)
                let marked = witness.breaks.contains { window.contains($0) } || witness.slips.contains { window.contains($0) } || witness.xruns.contains { window.contains($0) }
                if !(recorded || own || server) && marked {
                    print("twoServersStartTheirPartsOnTheFrameOfTheInstant: part \(part): spacing \(b - a) at recorded frame \(a) not judged (the witness marked the window)")
                    continue
                }
                #expect(recorded || own || server, "part \(part): clicks at recorded frames \(a), \(b) are \(b - a) apart, witness \(String(describing: witnessFrames[k])) → \(String(describing: witnessFrames[k + 1])), server \(String(describing: witness.serverFrames[a])) → \(String(describing: witness.serverFrames[b]))")
            }
            #expect(out.contains("start at \(text)"), "\(out)")
        }
        // Every start of the run refused, each vouched for by its probe: the server's clock
        // left nothing to judge a start by, as when it re-anchored; the run is repeated.
        if judged == judgedBefore && refused > refusedBefore && !isLast, case .judged = verdict {
            verdict = .witnessCouldNotTell(reason: "no start to judge: aqsync refused \(refused - refusedBefore) part(s), the probe vouching that the server's clock ran more than 1000 ppm off nominal or bent", aqsyncFigures: [:])
        }
        if isLast { #expect(judged > 0, "no part could be judged in three runs (\(refused) refusals vouched for)") }
        return verdict
    }
}
