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
/// The sign marks where the witness itself cannot vouch for the graph: the first sample of a
/// cycle is negative when the server called the witness again for the cycle it had just
/// processed (same counter and cycle time) or moved its counter by anything but the previous
/// cycle's frames outside a period change (frames lost to the server, or a cycle the witness
/// was not called for). Only there may the witness and aqsync have been treated differently.
///
/// Thread safety: `init` and `stop` from the test's thread.
public final class FrameCountWitness: @unchecked Sendable {
    /// Its output port's full name (`witness-PID:out`).
    public let port: String
    private let program: JackClientProgram

    private static let source = #"""
        #include <jack/jack.h>
        #include <stdatomic.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        static jack_client_t *client;
        static jack_port_t *out;
        static unsigned long long count;
        static jack_nframes_t last_counter, last_n;
        static jack_time_t last_usecs;
        static int started;
        static atomic_int period_changed;
        static int bufsize(jack_nframes_t n, void *arg) { (void)n; (void)arg; atomic_store(&period_changed, 1); return 0; }
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
            if (slip && n > 0) a[0] = -a[0];
            return 0;
        }
        int main(int argc, char **argv) {
            char name[64];
            snprintf(name, sizeof name, "witness-%d", (int)getpid());
            jack_status_t st;
            client = jack_client_open(name, JackNoStartServer, &st);
            if (!client) { fprintf(stderr, "witness: no server (0x%x)\n", st); return 1; }
            out = jack_port_register(client, "out", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
            jack_set_process_callback(client, process, NULL);
            jack_set_buffer_size_callback(client, bufsize, NULL);
            if (jack_activate(client)) { fprintf(stderr, "witness: cannot activate\n"); return 1; }
            for (int i = 1; i < argc; i++) jack_connect(client, jack_port_name(out), argv[i]);
            for (;;) pause();
        }
        """#

    /// Compiles the client (into `directory`) and starts it on the server that `environment`
    /// names (`JACK_DEFAULT_SERVER`, or PipeWire's library path), its output connected to
    /// `connectTo`. Blocks until the compiler is done; the port may appear a little later.
    public init(environment: [String: String], connectTo: [String] = [], directory: URL) throws(TestingError) {
        program = try JackClientProgram(source: Self.source, name: "witness", arguments: connectTo, environment: environment, directory: directory)
        port = "witness-\(program.process.processIdentifier):out"
    }

    /// True while the client runs.
    public var isRunning: Bool { program.isRunning }

    /// Blocks until the witness's port exists on jackd `server` (at most 5 s, polling its port
    /// list every 20 ms: a port's appearance has no notification a test can wait on).
    public func waitForPort(server: String) throws(TestingError) {
        for _ in 0..<250 {
            if ((try? JackTools.ports(server: server)) ?? []).contains(port) { return }
            usleep(20_000)
        }
        throw TestingError("the witness's port \(port) did not appear on “\(server)”")
    }

    /// Stops the client. Idempotent.
    public func stop() { program.stop() }

    /// Starts a witness on jackd `server` (its program built in `directory`), waits for its
    /// port, and records `ports` with the witness as the last channel (`seconds`: nil until
    /// the recorder is stopped). Blocks while the client compiles and the ports appear.
    public static func recording(
        _ ports: [String], server: String, directory: URL, seconds: Double? = nil
    ) throws(TestingError) -> (JackRecorder, FrameCountWitness) {
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server
        let witness = try FrameCountWitness(environment: env, directory: directory)
        try witness.waitForPort(server: server)
        let recorder = try JackRecorder(server: server, ports: ports + [witness.port], seconds: seconds)
        return (recorder, witness)
    }
}

/// A recorded ``FrameCountWitness`` channel read back: which witness frame each recorded frame
/// holds, where the recording broke, and where the witness marked that it cannot vouch for
/// the graph.
///
/// Thread safety: a plain value.
public struct WitnessTimeline: Sendable {
    /// The witness's frame at each recorded frame (nil before the witness ran).
    public let frames: [Int?]
    /// Recorded frames at which the witness's count did not continue the previous recorded
    /// frame's: the recorder (or the server, for every client) lost or repeated frames there.
    public let breaks: [Int]
    /// Recorded frames at which the witness marked a cycle it cannot vouch for.
    public let slips: [Int]

    /// Reads a recorded witness channel.
    public init(channel: [Float]) {
        var frames: [Int?] = []
        frames.reserveCapacity(channel.count)
        var breaks: [Int] = [], slips: [Int] = []
        var previous: Int?
        for (i, v) in channel.enumerated() {
            guard v != 0 else { frames.append(nil); continue }
            if v < 0 { slips.append(i) }
            let f = Int(abs(v)) - 1
            if let p = previous, f != (p + 1) & 0xFFFFFF { breaks.append(i) }
            frames.append(f)
            previous = f
        }
        self.frames = frames
        self.breaks = breaks
        self.slips = slips
    }

    /// The witness frames of the recorded frames `positions` (those recorded before the
    /// witness ran are left out), unwrapped past 2^24 in order.
    public func witnessFrames(of positions: [Int]) -> [Int] {
        var out: [Int] = []
        var wraps = 0
        var last = -1
        for p in positions where p < frames.count {
            guard let f = frames[p] else { continue }
            if f < last - (1 << 23) { wraps += 1 }
            last = f
            out.append(f + wraps << 24)
        }
        return out
    }

    /// True when the witness marked a slip in recorded frames `range`.
    public func slipped(in range: ClosedRange<Int>) -> Bool {
        slips.contains { range.contains($0) }
    }
}

/// Click tracks judged beside a recorded witness: every click of each track `spacing` frames
/// after the previous one, and each click of a later track `offsets[i]` after one of the first
/// track's. What was off, and whether the witness vouched for the windows it was off in.
///
/// Thread safety: a plain value.
public struct WitnessedClicks: Sendable, CustomStringConvertible {
    /// Which frames the clicks are counted in.
    public enum Measure: Sendable {
        /// The witness's own frames: placement on the graph's timeline, the same for every
        /// client the server treats alike (a recorder's losses do not move it). The witness
        /// cannot tell where it marked a slip.
        case witnessFrames
        /// The recorder's frames: what a client downstream of aqsync heard, in order (content
        /// continuity; right where aqsync itself is skipped by the server and its downstream
        /// with it, as keeping every frame means). The witness cannot tell where the recording
        /// broke or it marked a slip.
        case recordedFrames
    }
    /// Per track, the recorded positions of its clicks.
    public let recorded: [[Int]]
    /// Per track, the witness frames of its clicks.
    public let frames: [[Int]]
    /// (track, recorded position) of each click that is not `spacing` after the previous one,
    /// or not on its offset from the first track.
    public let off: [(track: Int, position: Int, by: Int)]
    /// True when the witness marked a slip in a window where a click was off (between the
    /// click and the one it is judged against): there, the witness cannot tell.
    public let witnessCouldNotTell: Bool
    /// The clicks of ``off`` in windows the witness vouched for: aqsync's doing.
    public let offWhereVouched: [(track: Int, position: Int, by: Int)]
    /// Recorder breaks in the recording (frames lost or repeated by the recorder or server).
    public let recorderBreaks: Int
    /// Cycles the witness marked as slipped in the recording.
    public let witnessSlips: Int

    /// Judges `clicks` (per track, recorded click positions) beside `witness`, in `measure`.
    public init(clicks: [[Int]], witness: WitnessTimeline, spacing: Int, offsets: [Int], measure: Measure = .witnessFrames) {
        recorded = clicks
        // Clicks recorded before the witness ran are left out in both measures.
        let positions = clicks.map { $0.filter { $0 < witness.frames.count && witness.frames[$0] != nil } }
        let frames = measure == .witnessFrames ? clicks.map { witness.witnessFrames(of: $0) } : positions
        self.frames = frames
        var off: [(track: Int, position: Int, by: Int)] = []
        var vouchedOff: [(track: Int, position: Int, by: Int)] = []
        var unvouched = false
        let breaks = measure == .recordedFrames ? witness.breaks : []
        let unsure = { (r: ClosedRange<Int>) in witness.slipped(in: r) || breaks.contains { r.contains($0) } }
        for (t, f) in frames.enumerated() {
            for i in 1..<max(f.count, 1) where f[i] - f[i - 1] != spacing {
                off.append((t, positions[t][i], f[i] - f[i - 1] - spacing))
                if unsure(positions[t][i - 1]...positions[t][i]) { unvouched = true } else { vouchedOff.append(off[off.count - 1]) }
            }
        }
        if let first = frames.first, let firstPositions = positions.first {
            let set = Set(first)
            for t in frames.indices.dropFirst() {
                let o = t - 1 < offsets.count ? offsets[t - 1] : 0
                for (i, f) in frames[t].enumerated() where f - o >= (first.first ?? 0) && !set.contains(f - o) {
                    // The nearest earlier click of the first track says how far off it is.
                    let j = (first.lastIndex { $0 <= f - o }) ?? 0
                    off.append((t, positions[t][i], f - o - first[j]))
                    let from = min(firstPositions[j], positions[t][i]), to = max(firstPositions[j], positions[t][i])
                    if unsure(from...to) { unvouched = true } else { vouchedOff.append(off[off.count - 1]) }
                }
            }
        }
        self.off = off
        offWhereVouched = vouchedOff
        self.measure = measure
        witnessCouldNotTell = unvouched
        recorderBreaks = witness.breaks.count
        witnessSlips = witness.slips.count
    }

    /// Every click exact, in the measure judged.
    public var exact: Bool { off.isEmpty }
    /// The measure judged.
    public let measure: Measure
    private var measureName: String { measure == .witnessFrames ? "witness frames" : "recorded frames" }

    public var description: String {
        let counts = frames.map { "\($0.count)" }.joined(separator: " + ")
        if exact { return "\(counts) clicks, exact in \(measureName) (recorder breaks: \(recorderBreaks), witness slips: \(witnessSlips))" }
        let shown = off.prefix(12).map { "track \($0.track) at \($0.position): \($0.by > 0 ? "+" : "")\($0.by)" }
        return "\(counts) clicks, \(off.count) off in \(measureName) (\(shown.joined(separator: ", "))\(off.count > 12 ? ", …" : "")); "
            + "recorder breaks: \(recorderBreaks), witness slips: \(witnessSlips); witness \(witnessCouldNotTell ? "marked a slip or a break where clicks were off" : "vouched for every window")"
    }
}
