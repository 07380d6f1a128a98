import Foundation

/// A plain C JACK client (no aqsync code) that plays the same click (1.0 every `interval`
/// frames of its own count) on two output ports, `early` and `late`, and declares capture
/// latency 0 on `early` and `lateLatency` frames on `late` (in its latency callback,
/// `JackCaptureLatency` mode): one sound, two paths that say they are differently far behind.
/// A recording of `late` compensated by its port's latency lands `lateLatency` frames before
/// one of `early`; raw, on the same frames. The test source of issue 21 (latency per port).
///
/// Thread safety: any thread; `stop()` once.
package final class TwoPortClicker: @unchecked Sendable {
    /// Full names of its ports (`twoclicker-PID:early`, `…:late`).
    package let early: String
    package let late: String
    private let process: ChildProcess

    private static let source = #"""
        #include <jack/jack.h>
        #include <signal.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        static jack_client_t *client;
        static jack_port_t *early, *late;
        static unsigned long long frame, interval;
        static jack_nframes_t latency;
        static volatile sig_atomic_t quit;
        static void on_term(int sig) { (void)sig; quit = 1; }
        static int process(jack_nframes_t n, void *arg) {
            (void)arg;
            float *a = jack_port_get_buffer(early, n), *b = jack_port_get_buffer(late, n);
            for (jack_nframes_t i = 0; i < n; i++, frame++) a[i] = b[i] = frame % interval == 0 ? 1.0f : 0.0f;
            return 0;
        }
        static void on_latency(jack_latency_callback_mode_t mode, void *arg) {
            (void)arg;
            if (mode != JackCaptureLatency) return;
            jack_latency_range_t zero = { 0, 0 }, r = { latency, latency };
            jack_port_set_latency_range(early, JackCaptureLatency, &zero);
            jack_port_set_latency_range(late, JackCaptureLatency, &r);
        }
        int main(int argc, char **argv) {
            if (argc < 3) { fprintf(stderr, "usage: twoclicker INTERVAL LATENCY\n"); return 2; }
            interval = strtoull(argv[1], NULL, 10);
            latency = (jack_nframes_t)strtoul(argv[2], NULL, 10);
            char name[64];
            snprintf(name, sizeof name, "twoclicker-%d", (int)getpid());
            signal(SIGTERM, on_term);
            jack_status_t st;
            client = jack_client_open(name, JackNoStartServer, &st);
            if (!client) { fprintf(stderr, "twoclicker: no server (0x%x)\n", st); return 1; }
            early = jack_port_register(client, "early", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
            late = jack_port_register(client, "late", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
            jack_set_process_callback(client, process, NULL);
            jack_set_latency_callback(client, on_latency, NULL);
            if (jack_activate(client)) { fprintf(stderr, "twoclicker: cannot activate\n"); return 1; }
            while (!quit) usleep(5000);
            /* A client that leaves without closing makes the server wait for it: lost cycles. */
            jack_deactivate(client);
            jack_client_close(client);
            return 0;
        }
        """#

    /// Compiles the client (in `directory`) and starts it on the server that `environment`
    /// names (`JACK_DEFAULT_SERVER`); its ports are connected to nothing (the recorder
    /// connects them). Control thread; blocks while cc runs (about a second).
    package init(interval: Int, lateLatency: Int, environment: [String: String], directory: URL) throws(TestingError) {
        let bin = try compileJackClient(Self.source, name: "twoclicker", directory: directory)
        process = try ChildProcess(
            path: bin.path, arguments: ["\(interval)", "\(lateLatency)"], environment: environment,
            output: directory.appendingPathComponent("twoclicker.log"))
        early = "twoclicker-\(process.processIdentifier):early"
        late = "twoclicker-\(process.processIdentifier):late"
    }

    /// Stops the client and waits for its exit (SIGTERM, on which it closes its JACK client;
    /// SIGKILL after 5 s). Control thread; blocks until the client has exited.
    package func stop() {
        process.stop(signal: SIGTERM, grace: .seconds(5))
    }

    deinit { stop() }
}
