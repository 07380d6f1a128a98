import Foundation

/// The in-run witness of the live tests (docs/timing.md, "Live tests"): a plain C JACK client
/// that writes its own frame count into its output, recorded by `jack-record` in the same
/// file as what a test judges.
///
/// Every sample of the output is `±(count mod 2^24 + 1)` (exact in a float; 0 only before the
/// client runs): `count` is the number of frames the client had produced before that sample,
/// so a recorded frame says which frame of the witness's own stream the recorder got there. A
/// recorder that loses frames, or a server that skips a cycle for every client, moves the
/// witness's frames exactly as it moves aqsync's: clicks judged in witness frames
/// (``WitnessTimeline``) need no repeat when that happens.
///
/// The sign marks where the witness itself cannot vouch for the graph, as a run of negative
/// samples at the start of a cycle:
/// - one (a **slip**): the server called the witness again for the cycle it had just processed
///   (same counter and cycle time) or moved its counter by anything but the previous cycle's
///   frames outside a period change (frames lost to the server, or a cycle the witness was not
///   called for). Only there may the witness and aqsync have been treated differently.
/// - two (an **xrun**): the server reported an xrun (its xrun callback) since the witness's
///   previous cycle: a client (perhaps aqsync) was not finished in time, and what a client
///   downstream of it read from its ports in that cycle is the server's doing. The report
///   arrives on the witness's notification thread, so the mark lands one or a few cycles after
///   the late cycle.
/// - three: both.
///
/// A second port (`server`) writes the server's frame counter instead: `counter + i` for the
/// cycle's i-th frame (mod 2^24, plus 1), `counter` being the cycle's first frame as the server
/// counts it. A recorded frame of it says which server frame the recorder got there, whatever
/// the server skipped for the witness or the recorder (``WitnessTimeline/serverFrames``).
///
/// Thread safety: `init` and `stop` from the test's thread.
package final class FrameCountWitness: @unchecked Sendable {
    /// Its output port's full name (`witness-PID:out`).
    package let port: String
    /// The port carrying the server's frame counter (`witness-PID:server`).
    package let serverPort: String
    private let program: JackClientProgram

    private static let source = #"""
        #include <jack/jack.h>
        #include <stdatomic.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        #include <pthread.h>
        #include <sched.h>
        static jack_client_t *client;
        static int fifo_priority;
        static jack_port_t *out, *server;
        static unsigned long long count;
        static jack_nframes_t last_counter, last_n;
        static jack_time_t last_usecs;
        static int started;
        static atomic_int period_changed, xrun_reported;
        static int on_xrun(void *arg) { (void)arg; atomic_store(&xrun_reported, 1); return 0; }
        static int bufsize(jack_nframes_t n, void *arg) { (void)n; (void)arg; atomic_store(&period_changed, 1); return 0; }
        static void thread_init(void *arg) {
            (void)arg;
            int policy; struct sched_param now;
            if (fifo_priority <= 0 || pthread_getschedparam(pthread_self(), &policy, &now) != 0 || policy != SCHED_OTHER) return;
            struct sched_param sp = { .sched_priority = fifo_priority };
            if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0) fprintf(stderr, "witness: SCHED_FIFO %d refused\n", fifo_priority);
        }
        static int process(jack_nframes_t n, void *arg) {
            (void)arg;
            jack_nframes_t counter = 0; jack_time_t usecs = 0, next = 0; float period = 0;
            if (jack_get_cycle_times(client, &counter, &usecs, &next, &period) != 0) { counter = jack_last_frame_time(client); usecs = 0; }
            int changed = atomic_exchange(&period_changed, 0);
            int slip = started && ((counter == last_counter && usecs == last_usecs)
                                   || (counter != last_counter + last_n && !changed && n == last_n));
            started = 1; last_counter = counter; last_usecs = usecs; last_n = n;
            float *a = jack_port_get_buffer(out, n);
            for (jack_nframes_t i = 0; i < n; i++, count++) a[i] = (float)((count & 0xFFFFFF) + 1);
            int xrun = atomic_exchange(&xrun_reported, 0);
            int marks = (slip ? 1 : 0) + (xrun ? 2 : 0);
            for (int i = 0; i < marks && (jack_nframes_t)i < n; i++) a[i] = -a[i];
            float *b = jack_port_get_buffer(server, n);
            for (jack_nframes_t i = 0; i < n; i++) b[i] = (float)(((counter + i) & 0xFFFFFF) + 1);
            return 0;
        }
        int main(int argc, char **argv) {
            char name[64];
            const char *fifo = getenv("AQ_WITNESS_FIFO");
            if (fifo) fifo_priority = atoi(fifo);
            snprintf(name, sizeof name, "witness-%d", (int)getpid());
            jack_status_t st;
            client = jack_client_open(name, JackNoStartServer, &st);
            if (!client) { fprintf(stderr, "witness: no server (0x%x)\n", st); return 1; }
            out = jack_port_register(client, "out", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
            server = jack_port_register(client, "server", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
            jack_set_thread_init_callback(client, thread_init, NULL);
            jack_set_process_callback(client, process, NULL);
            jack_set_buffer_size_callback(client, bufsize, NULL);
            jack_set_xrun_callback(client, on_xrun, NULL);
            if (jack_activate(client)) { fprintf(stderr, "witness: cannot activate\n"); return 1; }
            for (int i = 1; i < argc; i++) jack_connect(client, jack_port_name(out), argv[i]);
            for (;;) pause();
        }
        """#

    /// Compiles the client (into `directory`) and starts it on the server that `environment`
    /// names (`JACK_DEFAULT_SERVER`, or PipeWire's library path), its output connected to
    /// `connectTo`. Blocks until the compiler is done; the port may appear a little later.
    ///
    /// `realtimePriority`: the client runs SCHED_FIFO at that priority: the process is started
    /// so (pipewire-jack's threads inherit it, among them the one that takes a quantum change),
    /// and its process thread takes it itself (libjack's thread init callback) where the
    /// library made it an ordinary thread (a non-realtime jackd; a realtime thread keeps its
    /// priority); refused, it says so on its log and runs as it is.
    package init(
        environment: [String: String], connectTo: [String] = [], directory: URL, realtimePriority: Int32? = nil
    ) throws(TestingError) {
        var environment = environment
        if let realtimePriority { environment["AQ_WITNESS_FIFO"] = "\(realtimePriority)" }
        program = try JackClientProgram(
            source: Self.source, name: "witness", arguments: connectTo, environment: environment, directory: directory,
            realtimePriority: realtimePriority)
        port = "witness-\(program.process.processIdentifier):out"
        serverPort = "witness-\(program.process.processIdentifier):server"
    }

    /// True while the client runs.
    package var isRunning: Bool { program.isRunning }

    /// Its JACK client name (`witness-PID`), as the server names it in its log.
    package var clientName: String { "witness-\(program.process.processIdentifier)" }

    /// Blocks until the witness's port exists on jackd `server` (at most 5 s, polling its port
    /// list every 20 ms: a port's appearance has no notification a test can wait on).
    package func waitForPort(server: String) throws(TestingError) {
        for _ in 0..<250 {
            if Set((try? JackTools.ports(server: server)) ?? []).isSuperset(of: [port, serverPort]) { return }
            usleep(20_000)
        }
        throw TestingError("the witness's port \(port) did not appear on “\(server)”")
    }

    /// Stops the client. Idempotent.
    package func stop() { program.stop() }

    /// Starts a witness on jackd `server` (its program built in `directory`), waits for its
    /// ports, and records `ports` with the witness as the last channel, or (`serverCounter`)
    /// the last two: its own count, then the server's counter (`seconds`: nil until the
    /// recorder is stopped). Blocks while the client compiles and the ports appear.
    ///
    /// `realtimePriority`: the witness's process thread and every thread of the recorder run
    /// SCHED_FIFO at that priority (on a non-realtime jackd, where libjack makes them ordinary
    /// threads that the machine may leave unscheduled for a cycle while the client judged is
    /// called); the recorder's are raised once its connections are made.
    /// - Throws: ``TestingError`` also when the recorder's threads cannot be raised.
    package static func recording(
        _ ports: [String], server: String, directory: URL, seconds: Double? = nil, serverCounter: Bool = false,
        realtimePriority: Int32? = nil
    ) throws(TestingError) -> (JackRecorder, FrameCountWitness) {
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server
        let witness = try FrameCountWitness(environment: env, directory: directory, realtimePriority: realtimePriority)
        try witness.waitForPort(server: server)
        let recorder = try JackRecorder(
            server: server, ports: ports + [witness.port] + (serverCounter ? [witness.serverPort] : []), seconds: seconds)
        if let realtimePriority {
            do throws(TestingError) {
                try RealtimeThreads.raise(pid: recorder.processIdentifier, priority: realtimePriority)
            } catch {
                recorder.stop()
                witness.stop()
                throw error
            }
        }
        return (recorder, witness)
    }
}

/// A recorded ``FrameCountWitness`` channel read back: which witness frame each recorded frame
/// holds, where the recording broke, and where the witness marked that it cannot vouch for
/// the graph.
///
/// Thread safety: a plain value.
package struct WitnessTimeline: Sendable {
    /// The witness's frame at each recorded frame (nil before the witness ran).
    package let frames: [Int?]
    /// Recorded frames at which the witness's count did not continue the previous recorded
    /// frame's: the recorder (or the server, for every client) lost or repeated frames there.
    package let breaks: [Int]
    /// Recorded frames at which the witness marked a cycle it cannot vouch for.
    package let slips: [Int]
    /// Recorded frames at which the witness marked that the server had reported an xrun since
    /// its previous cycle (one or a few cycles after the late one).
    package let xruns: [Int]
    /// The server's frame at each recorded frame, unwrapped past 2^24 (nil before the witness
    /// ran, and everywhere when its server channel was not recorded).
    package let serverFrames: [Int?]

    /// Reads a recorded witness channel, and its server channel when recorded.
    package init(channel: [Float], serverChannel: [Float]? = nil) {
        var frames: [Int?] = []
        frames.reserveCapacity(channel.count)
        var breaks: [Int] = [], marks = WitnessMarks()
        var previous: Int?
        for (i, v) in channel.enumerated() {
            marks.read(v, at: i)
            guard v != 0 else { frames.append(nil); continue }
            let f = Int(abs(v)) - 1
            if let p = previous, f != (p + 1) & 0xFFFFFF { breaks.append(i) }
            frames.append(f)
            previous = f
        }
        marks.finish()
        self.frames = frames
        self.breaks = breaks
        slips = marks.slips
        xruns = marks.xruns
        var server = [Int?](repeating: nil, count: channel.count)
        if let serverChannel {
            var unwrap = Unwrapped24()
            for (i, v) in serverChannel.prefix(channel.count).enumerated() where v > 0 {
                server[i] = unwrap(Int(v) - 1)
            }
        }
        serverFrames = server
    }

    /// The witness frames of the recorded frames `positions` (those recorded before the
    /// witness ran are left out), unwrapped past 2^24 in order.
    package func witnessFrames(of positions: [Int]) -> [Int] {
        var unwrap = Unwrapped24()
        return positions.compactMap { p in p < frames.count ? frames[p].map { unwrap($0) } : nil }
    }

    /// True when the witness marked a slip in recorded frames `range`.
    package func slipped(in range: ClosedRange<Int>) -> Bool {
        slips.contains { range.contains($0) }
    }
}

/// A count written mod 2^24 (the witness's channels), read in order and unwrapped: a value
/// more than 2^23 below the previous one has wrapped. Thread safety: a plain value.
struct Unwrapped24 {
    private var wraps = 0, last = -1
    mutating func callAsFunction(_ f: Int) -> Int {
        if f < last - (1 << 23) { wraps += 1 }
        last = f
        return f + wraps << 24
    }
}

/// Reads the witness's marks (runs of negative samples at the start of a cycle, see
/// ``FrameCountWitness``) sample by sample: a run of one is a slip, two an xrun report, three
/// both. Each is placed at the run's first recorded frame.
///
/// Thread safety: a plain value.
package struct WitnessMarks: Sendable {
    package private(set) var slips: [Int] = [], xruns: [Int] = []
    private var runStart = 0, runLength = 0

    package init() {}

    /// The witness's sample at recorded frame `index` (frames in order).
    package mutating func read(_ v: Float, at index: Int) {
        if v < 0 {
            if runLength == 0 { runStart = index }
            runLength += 1
        } else {
            finish()
        }
    }

    /// Ends a run the recording ended in.
    package mutating func finish() {
        guard runLength > 0 else { return }
        if runLength != 2 { slips.append(runStart) }
        if runLength >= 2 { xruns.append(runStart) }
        runLength = 0
    }

    /// Frames after the late cycle within which the server's xrun report lands as a mark (the
    /// report travels through the witness's notification thread: up to a few of the longest
    /// periods).
    package static let reportDelay = 4096

    /// Stretches of wrong recorded frames (`wrong`, ascending; gaps under 64 frames joined),
    /// each either **reported**: no longer than the longest period (1024 frames), with one of
    /// `xruns` (the witness's xrun marks) from a period before it to ``reportDelay`` after —
    /// what a downstream client read of a late client's ports in a cycle the server reported —
    /// or **unexplained**. Pure function; any thread.
    package static func lateCycleStretches(wrong: [Int], xruns: [Int]) -> (reported: [ClosedRange<Int>], unexplained: [ClosedRange<Int>]) {
        var reported: [ClosedRange<Int>] = [], unexplained: [ClosedRange<Int>] = []
        for r in stretches(wrong) {
            let s = r.lowerBound, e = r.upperBound
            if e - s < 1024 && xruns.contains(where: { $0 >= s - 1024 && $0 <= e + reportDelay }) {
                reported.append(r)
            } else {
                unexplained.append(r)
            }
        }
        return (reported, unexplained)
    }

    /// `wrong` (recorded frames, ascending) as stretches, gaps of up to 64 frames joined: the
    /// unit every judgement beside the witness sets aside or counts whole. Pure function.
    package static func stretches(_ wrong: [Int]) -> [ClosedRange<Int>] {
        var out: [ClosedRange<Int>] = []
        var i = 0
        while i < wrong.count {
            var j = i
            while j + 1 < wrong.count && wrong[j + 1] - wrong[j] <= 64 { j += 1 }
            out.append(wrong[i]...wrong[j])
            i = j + 1
        }
        return out
    }
}

/// Click tracks judged beside a recorded witness: every click of each track `spacing` frames
/// after the previous one, and each click of a later track `offsets[i]` after one of the first
/// track's, in either of two measures, window by window (the frames between a click and the one
/// it is judged against):
///
/// - **recorded frames**: what a client downstream of aqsync heard, in order. Right where the
///   server skipped aqsync and its downstream together while the witness went on (jackd2
///   keeps every frame: the recording breaks there and aqsync's content stays continuous).
/// - **witness frames**: placement beside a plain C client counting its own frames. Right
///   where the recorder lost or repeated frames of every client alike, or took only the second
///   of jackd2's two calls of a late cycle from aqsync and the witness alike.
/// - **server frames** (when the witness's server channel was recorded): the server's counter.
///   Right where the server gave aqsync a cycle it did not give the recorder and the witness
///   (their counts go on together, the witness marks a slip).
///
/// A window exact in any measure is exact: aqsync did what the plain client beside it did,
/// or what its downstream heard is continuous. A window off in all is off; the witness vouches
/// for it (aqsync's doing) unless the recording broke or the witness marked a slip inside it.
///
/// Thread safety: a plain value.
package struct WitnessedClicks: Sendable, CustomStringConvertible {
    /// A click off in every measure: its track, recorded position, and how far off it is in
    /// recorded frames, in witness frames and (when recorded) in server frames.
    package struct Off: Sendable {
        package let track: Int
        package let position: Int
        package let byRecorded: Int
        package let byWitness: Int
        /// And in server frames (nil: the server channel was not recorded).
        package let byServer: Int?
    }
    /// Per track, the recorded positions of its clicks (those recorded before the witness ran
    /// are left out).
    package let recorded: [[Int]]
    /// Per track, the witness frames of its clicks (aligned with ``recorded``).
    package let frames: [[Int]]
    /// Clicks not `spacing` after the previous one, or not on their offset from the first
    /// track, in every measure.
    package let off: [Off]
    /// True when a click was off in a window where the recording broke or the witness marked a
    /// slip: there, the witness cannot tell.
    package let witnessCouldNotTell: Bool
    /// The clicks of ``off`` in windows the witness vouched for: aqsync's doing.
    package let offWhereVouched: [Off]
    /// Windows exact only in witness frames (the recorder lost or repeated frames of aqsync and
    /// the witness alike), and only in recorded frames (the server skipped aqsync and its
    /// downstream while the witness went on): printed, never failures.
    package let exactOnlyInWitnessFrames: Int, exactOnlyInRecordedFrames: Int
    /// Windows exact only in server frames: printed, never failures.
    package let exactOnlyInServerFrames: Int
    /// Windows judged (each click against the one before it, and each later track's click
    /// against the first track's), and of those, the ones where the recording broke or the
    /// witness slipped (exact or not).
    package let windows: Int, windowsWitnessCouldNotTell: Int
    /// Windows judged: exact in some measure, or off where the witness vouched (every window
    /// but those off in every measure where it could not tell).
    package let windowsJudged: Int
    /// Recorder breaks in the recording (frames lost or repeated by the recorder or server).
    package let recorderBreaks: Int
    /// Cycles the witness marked as slipped in the recording.
    package let witnessSlips: Int

    /// Judges `clicks` (per track, recorded click positions) beside `witness`.
    package init(clicks: [[Int]], witness: WitnessTimeline, spacing: Int, offsets: [Int]) {
        let positions = clicks.map { $0.filter { $0 < witness.frames.count && witness.frames[$0] != nil } }
        let frames = positions.map { witness.witnessFrames(of: $0) }
        recorded = positions
        self.frames = frames
        var off: [Off] = [], vouchedOff: [Off] = []
        var unvouched = false, onlyWitness = 0, onlyRecorded = 0, onlyServer = 0, windows = 0, unsureWindows = 0, unsureOff = 0
        // Per track, the server frames of its clicks (nil where not recorded).
        let server = positions.map { $0.map { witness.serverFrames.indices.contains($0) ? witness.serverFrames[$0] : nil } }
        let serverOff = { (t: Int, i: Int, u: Int, j: Int, by: Int) -> Int? in
            guard let a = server[t][i], let b = server[u][j] else { return nil }
            return a - b - by
        }
        // A later track's click `by` after the first track's click nearest to it in server
        // frames (its own nearest: in other measures another click may be nearest).
        let firstServer = (server.first ?? []).compactMap { $0 }
        let nearestInServerFrames = { (t: Int, i: Int, by: Int) -> Int? in
            guard let x = server[t][i] else { return nil }
            return firstServer.map { x - by - $0 }.min { abs($0) < abs($1) }
        }
        let unsure = { (r: ClosedRange<Int>) in witness.slipped(in: r) || witness.breaks.contains { r.contains($0) } }
        // One window: `rec` and `wit` are how far off it is in each measure.
        let judge = { (track: Int, from: Int, to: Int, rec: Int, wit: Int, srv: Int?) in
            windows += 1
            if unsure(min(from, to)...max(from, to)) { unsureWindows += 1 }
            if rec == 0 && wit == 0 { return }
            if wit == 0 { onlyWitness += 1; return }
            if rec == 0 { onlyRecorded += 1; return }
            if srv == 0 { onlyServer += 1; return }
            let o = Off(track: track, position: to, byRecorded: rec, byWitness: wit, byServer: srv)
            off.append(o)
            if unsure(min(from, to)...max(from, to)) { unvouched = true; unsureOff += 1 } else { vouchedOff.append(o) }
        }
        for t in positions.indices {
            let p = positions[t], f = frames[t]
            for i in 1..<max(p.count, 1) {
                judge(t, p[i - 1], p[i], p[i] - p[i - 1] - spacing, f[i] - f[i - 1] - spacing, serverOff(t, i, t, i - 1, spacing))
            }
        }
        if let firstP = positions.first, let firstF = frames.first, let start = firstP.first {
            let atP = Dictionary(firstP.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            let atF = Dictionary(firstF.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            for t in positions.indices.dropFirst() {
                let o = t - 1 < offsets.count ? offsets[t - 1] : 0
                for i in positions[t].indices where positions[t][i] - o >= start {
                    let p = positions[t][i], f = frames[t][i]
                    if let j = atP[p - o] { judge(t, firstP[j], p, 0, f - o - firstF[j], nil); continue }
                    if let j = atF[f - o] { judge(t, firstP[j], p, p - o - firstP[j], 0, nil); continue }
                    // The nearest earlier click of the first track says how far off it is.
                    let j = (firstP.lastIndex { $0 <= p - o }) ?? 0
                    judge(t, firstP[j], p, p - o - firstP[j], f - o - firstF[j], nearestInServerFrames(t, i, o))
                }
            }
        }
        self.off = off
        self.windows = windows
        windowsWitnessCouldNotTell = unsureWindows
        windowsJudged = windows - unsureOff
        offWhereVouched = vouchedOff
        witnessCouldNotTell = unvouched
        exactOnlyInWitnessFrames = onlyWitness
        exactOnlyInRecordedFrames = onlyRecorded
        exactOnlyInServerFrames = onlyServer
        recorderBreaks = witness.breaks.count
        witnessSlips = witness.slips.count
    }

    /// Every window exact in one measure or the other.
    package var exact: Bool { off.isEmpty }

    package var description: String {
        let counts = frames.map { "\($0.count)" }.joined(separator: " + ")
        let notes = "recorder breaks: \(recorderBreaks), witness slips: \(witnessSlips), "
            + "windows exact only in witness frames: \(exactOnlyInWitnessFrames), only in recorded frames: \(exactOnlyInRecordedFrames), only in server frames: \(exactOnlyInServerFrames)"
        if exact { return "\(counts) clicks, exact (\(notes))" }
        let sign = { (n: Int) in n > 0 ? "+\(n)" : "\(n)" }
        let shown = off.prefix(12).map { "track \($0.track) at \($0.position): \(sign($0.byRecorded)) recorded, \(sign($0.byWitness)) witness\($0.byServer.map { ", \(sign($0)) server" } ?? "")" }
        return "\(counts) clicks, \(off.count) off in every measure (\(shown.joined(separator: "; "))\(off.count > 12 ? "; …" : "")); "
            + "\(notes); witness \(witnessCouldNotTell ? "marked a slip or a break where clicks were off" : "vouched for every window")"
    }
}
