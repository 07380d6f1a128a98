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
