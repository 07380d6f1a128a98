import Foundation

/// A plain C JACK client that drives the transport on a script and witnesses it: its output
/// `tmaster-PID:frame` holds, for every frame of a cycle in which the transport rolls, that
/// frame's transport frame + 1 (`pos.frame + i`, mod 2^24, exact in a float), and 0 in every
/// cycle it does not roll (stopped or starting). Recorded beside a follower's outputs, each
/// recorded frame says which transport frame the graph was at there: the in-run witness of the
/// transport tests (docs/transport.md).
///
/// The first sample of a cycle after the server reported an xrun (its xrun callback: a client
/// not finished in time) is negative: `-(frame + 1)` while rolling, −0.5 while not
/// (``TransportWitnessSample``).
///
/// The script starts on ``go()`` and counts the client's own cycles from there: cycle 10
/// `jack_transport_locate(A)` (stopped), 30 start, 150 locate(B) (rolling), 300 stop, 320
/// locate(C) (stopped), 340 start, 460 locate(D) (rolling), 580 stop; at 600 the client
/// closes and exits 0 (``waitUntilDone(timeout:)``). Locate and start are realtime-safe calls
/// of jack/transport.h, made from the process callback; slow-sync clients hold the start
/// back until they are ready, the script's cycle count goes on regardless.
///
/// Thread safety: `init`, `go`, `waitUntilDone` and `stop` from the test's thread.
package final class TransportMaster: @unchecked Sendable {
    /// The witness port's full name.
    package let port: String
    /// A second port: in every frame of a cycle, the bar/beat/tick the cycle's `jack_position_t`
    /// holds, as ticks since bar 1 beat 1 (`(bar − 1) × beats_per_bar × ticks_per_beat +
    /// (beat − 1) × ticks_per_beat + tick`), or −1 when it holds none (no timebase master).
    package var bbtPort: String { port.replacingOccurrences(of: ":frame", with: ":bbt") }
    private let program: JackClientProgram

    private static let source = #"""
        #include <jack/jack.h>
        #include <jack/transport.h>
        #include <signal.h>
        #include <stdatomic.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        static jack_client_t *client;
        static jack_port_t *out, *bbt;
        static volatile sig_atomic_t go, done;
        static atomic_int xrun_reported;
        static int on_xrun(void *arg) { (void)arg; atomic_store(&xrun_reported, 1); return 0; }
        static long cycle;
        static jack_nframes_t at[4];
        static void on_go(int s) { (void)s; go = 1; }
        static int process(jack_nframes_t n, void *arg) {
            (void)arg;
            jack_position_t pos;
            jack_transport_state_t st = jack_transport_query(client, &pos);
            float *a = jack_port_get_buffer(out, n), *b = jack_port_get_buffer(bbt, n);
            for (jack_nframes_t i = 0; i < n; i++)
                a[i] = st == JackTransportRolling ? (float)(((pos.frame + i) & 0xFFFFFF) + 1) : 0.0f;
            if (atomic_exchange(&xrun_reported, 0) && n > 0) a[0] = a[0] > 0 ? -a[0] : -0.5f;
            float ticks = -1.0f;
            if (pos.valid & JackPositionBBT)
                ticks = (float)((double)(pos.bar - 1) * pos.beats_per_bar * pos.ticks_per_beat + (pos.beat - 1) * pos.ticks_per_beat + pos.tick);
            for (jack_nframes_t i = 0; i < n; i++) b[i] = ticks;
            if (!go) return 0;
            switch (cycle++) {
            case 10: jack_transport_locate(client, at[0]); break;
            case 30: jack_transport_start(client); break;
            case 150: jack_transport_locate(client, at[1]); break;
            case 300: jack_transport_stop(client); break;
            case 320: jack_transport_locate(client, at[2]); break;
            case 340: jack_transport_start(client); break;
            case 460: jack_transport_locate(client, at[3]); break;
            case 580: jack_transport_stop(client); break;
            case 600: done = 1; break;
            }
            return 0;
        }
        int main(int argc, char **argv) {
            if (argc != 5) { fprintf(stderr, "usage: tmaster A B C D\n"); return 2; }
            for (int i = 0; i < 4; i++) at[i] = (jack_nframes_t)strtoul(argv[i + 1], NULL, 10);
            signal(SIGUSR1, on_go);
            char name[64];
            snprintf(name, sizeof name, "tmaster-%d", (int)getpid());
            jack_status_t s;
            client = jack_client_open(name, JackNoStartServer, &s);
            if (!client) { fprintf(stderr, "tmaster: no server (0x%x)\n", s); return 1; }
            out = jack_port_register(client, "frame", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
            bbt = jack_port_register(client, "bbt", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
            jack_set_process_callback(client, process, NULL);
            jack_set_xrun_callback(client, on_xrun, NULL);
            if (jack_activate(client)) { fprintf(stderr, "tmaster: cannot activate\n"); return 1; }
            while (!done) usleep(10000);
            jack_client_close(client);
            printf("done\n");
            return 0;
        }
        """#

    /// Compiles the client (into `directory`) and starts it on jackd `server` with the
    /// script's four locate targets (transport frames), then waits for its port (at most 5 s).
    package convenience init(server: String, targets: [UInt32], directory: URL) throws(TestingError) {
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server
        try self.init(environment: env, targets: targets, directory: directory) { (try? JackTools.ports(server: server)) ?? [] }
    }

    /// Compiles the client and starts it with `environment` (a PipeWire's
    /// ``PipeWireServer/childEnvironment``, or a jackd's), then waits for its port to be among
    /// `ports()` (polled every 20 ms, at most 5 s: a port's appearance has no notification a
    /// test can wait on).
    package init(environment: [String: String], targets: [UInt32], directory: URL, ports: () -> [String]) throws(TestingError) {
        guard targets.count == 4 else { throw TestingError("TransportMaster needs 4 locate targets") }
        program = try JackClientProgram(source: Self.source, name: "tmaster", arguments: targets.map(String.init), environment: environment, directory: directory)
        port = "tmaster-\(program.process.processIdentifier):frame"
        for _ in 0..<250 {
            if ports().contains(port) { return }
            usleep(20_000)
        }
        program.stop()
        throw TestingError("the transport master's port \(port) did not appear")
    }

    /// Starts the script.
    package func go() { program.process.send(SIGUSR1) }

    /// Blocks until the script has ended and the client exited (at most `timeout`). Returns
    /// whether it did.
    package func waitUntilDone(timeout: Duration) -> Bool { program.process.wait(timeout: timeout) && program.process.terminationStatus == 0 }

    /// Stops the client. Idempotent.
    package func stop() { program.stop() }
}

/// One recorded sample of ``TransportMaster``'s frame port read back.
///
/// Thread safety: a plain value.
package struct TransportWitnessSample: Sendable {
    /// The transport frame there (nil: the transport was not rolling).
    package let frame: Int64?
    /// True on the first sample of a cycle after the server reported an xrun.
    package let xrunReported: Bool

    package init(_ v: Float) {
        xrunReported = v < 0
        let m = abs(v)
        frame = m >= 1 ? Int64(m) - 1 : nil
    }
}

/// The breaks of a recorded ``TransportMaster`` witness channel, and the bounded windows beside
/// them in which a transport test sets wrong frames aside instead of repeating the run
/// (docs/transport.md, "Judging beside a break").
///
/// A **break** is a rolling run of the witness that begins at a transport frame other than the
/// script's locate targets: the witness's own frames did not continue there (the recorder lost
/// or repeated a cycle, the witness and aqsync were called late, or the witness read a cycle
/// as not rolling inside a rolling run). Its **extent** is the not-rolling frames just before
/// it inside a rolling run (at most ``maxGap``; none for a jump from one rolling frame to
/// another, or after a stop). Its **size**, the witness's own break in frames: for a jump from
/// rolling frame p to f, |f − (p + 1)|; after g not-rolling frames inside a run, g + |f − (p + 1
/// + g)|; after a stop (or the recording's start), f minus the nearest target below it; never
/// more than the not-rolling frames plus f minus that target (a late first cycle after a
/// locate while rolling), nor than ``maxGap``. Its **window**: ``periodsBeside`` periods before the extent to as many after it.
///
/// The rule (``setAside(_:wrongFrames:skippedFrames:)``): a stretch of wrong frames
/// (``WitnessMarks/stretches(_:)``) is set aside only when it lies wholly inside one window,
/// and only while the wrong frames set aside in the run stay within the budget: the transport
/// frames aqsync reported it skipped (its late calls) plus the sizes of every break. Every
/// other stretch counts, whole. When the windows cover more than ``maxShare`` of the recorded
/// rolling frames the run is not judgeable beside its breaks (``judgeable`` false) and nothing
/// is set aside.
///
/// Thread safety: a plain value.
package struct TransportWitnessBreaks: Sendable, CustomStringConvertible {
    /// One break of the witness's frames.
    package struct Break: Sendable, CustomStringConvertible {
        /// The recorded frame of the first rolling frame after the break, and its transport frame.
        package let at: Int, transportFrame: Int64
        /// The first recorded frame of the extent (`at` when it has none).
        package let from: Int
        /// The witness's own break, in frames.
        package let size: Int
        /// The recorded frames in which wrong frames may be set aside.
        package let window: ClosedRange<Int>
        package var description: String { "recorded \(at) (transport frame \(transportFrame), \(size) frame(s) broken\(from < at ? ", \(at - from) not rolling before it" : ""))" }
    }
    /// Not-rolling frames inside a rolling run still read as one break (2 periods of 256; more
    /// is a stop).
    package static let maxGap = 512
    /// Periods set aside on either side of a break's extent.
    package static let periodsBeside = 2
    /// The largest share of the recorded rolling frames the windows may cover.
    package static let maxShare = 0.05

    package let breaks: [Break]
    /// Recorded frames inside some window (overlaps counted once), and recorded rolling frames.
    package let windowFrames: Int, rollingFrames: Int

    /// Reads `frames` (per recorded frame, the transport frame there; nil: not rolling) against
    /// the script's locate `targets`; `period`: the server's period in frames.
    package init(frames: [Int64?], targets: [Int64], period: Int = 256) {
        var breaks: [Break] = []
        var previous: (k: Int, f: Int64)?
        var rolling = 0
        let w = Self.periodsBeside * period
        for k in frames.indices {
            guard let f = frames[k] else { continue }
            rolling += 1
            defer { previous = (k, f) }
            if let p = previous, p.k == k - 1, f == p.f + 1 { continue }
            if targets.contains(f) { continue }
            // After a target the witness missed (a late first cycle after a locate), the
            // frames since it are the break; never more than maxGap.
            let sinceTarget = targets.filter { $0 <= f }.map { Int(f - $0) }.min() ?? Self.maxGap
            let from: Int, size: Int
            if let p = previous, k - p.k - 1 <= Self.maxGap {
                let g = Int64(k - p.k - 1)
                from = p.k + 1
                size = min(Int(g + abs(f - (p.f + 1 + g))), Int(g) + sinceTarget, Self.maxGap)
            } else {
                from = k
                size = min(sinceTarget, Self.maxGap)
            }
            breaks.append(Break(at: k, transportFrame: f, from: from, size: size,
                                window: max(0, from - w)...min(max(frames.count - 1, 0), k - 1 + w)))
        }
        var covered = 0, end = -1
        for b in breaks {
            let lo = max(b.window.lowerBound, end + 1)
            if b.window.upperBound >= lo { covered += b.window.upperBound - lo + 1 }
            end = max(end, b.window.upperBound)
        }
        self.breaks = breaks
        windowFrames = covered
        rollingFrames = rolling
    }

    /// The share of the recorded rolling frames inside the windows.
    package var share: Double { rollingFrames == 0 ? (breaks.isEmpty ? 0 : 1) : Double(windowFrames) / Double(rollingFrames) }
    /// Whether the run can be judged beside its breaks (the windows within ``maxShare``).
    package var judgeable: Bool { share <= Self.maxShare }
    /// Frames the breaks themselves allow to be set aside (the sum of their sizes).
    package var brokenFrames: Int { breaks.reduce(0) { $0 + $1.size } }

    /// Splits `stretches` (ascending) into those set aside and those that count. `wrongFrames`:
    /// the wrong recorded frames in a stretch; `skippedFrames`: the transport frames aqsync
    /// reported it skipped in the run. Pure function.
    package func setAside(_ stretches: [ClosedRange<Int>], wrongFrames: (ClosedRange<Int>) -> Int, skippedFrames: Int)
        -> (setAside: [ClosedRange<Int>], counted: [ClosedRange<Int>], frames: Int, budget: Int)
    {
        let budget = judgeable ? max(0, skippedFrames) + brokenFrames : 0
        var aside: [ClosedRange<Int>] = [], counted: [ClosedRange<Int>] = []
        var used = 0
        for r in stretches {
            let n = wrongFrames(r)
            if judgeable, breaks.contains(where: { $0.window.contains(r.lowerBound) && $0.window.contains(r.upperBound) }), used + n <= budget {
                aside.append(r)
                used += n
            } else {
                counted.append(r)
            }
        }
        return (aside, counted, used, budget)
    }

    package var description: String {
        "\(breaks.count) break(s) of the witness's frames\(breaks.isEmpty ? "" : " at \(breaks.prefix(8).map(\.description).joined(separator: "; "))\(breaks.count > 8 ? "; …" : "")"), windows \(windowFrames) of \(rollingFrames) rolling frames (\(String(format: "%.1f", share * 100)) %, at most \(String(format: "%.0f", Self.maxShare * 100)) %)"
    }
}
