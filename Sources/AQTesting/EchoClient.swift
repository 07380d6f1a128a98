import Foundation

/// A plain C JACK client (no aqsync code) that plays back what it hears `delay` frames later,
/// and says so in JACK's latency callback: the performer of an overdub test. Its input `in`
/// listens to a session's output, its output `out` feeds a take.
///
/// Declared latencies: playback latency `period` on `in` (in the loop engine out → echo in →
/// echo out → engine in, jackd2 runs one edge as a feedback edge whose data arrives one
/// period later: the engine's output is heard one period after it wrote it) and capture
/// latency `delay` on `out` (a frame leaving `out` at f was heard at f − delay). The declared
/// sum is the loop's true delay, `delay` + one period; a test checks the raw loop first.
///
/// Thread safety: any thread; `stop()` once.
package final class EchoClient: @unchecked Sendable {
    /// Its input port's full name (`echo-PID:in`).
    package let input: String
    /// Its output port's full name (`echo-PID:out`).
    package let output: String
    private let process: ChildProcess

    private static let source = #"""
        #include <jack/jack.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        static jack_port_t *in, *out;
        static float *line;
        static unsigned long delay, pos, period;
        static int process(jack_nframes_t n, void *arg) {
            (void)arg;
            const float *a = jack_port_get_buffer(in, n);
            float *b = jack_port_get_buffer(out, n);
            for (jack_nframes_t i = 0; i < n; i++) {
                // line holds the last `delay` input frames; out = the frame heard `delay` ago.
                float x = a[i];
                if (delay == 0) { b[i] = x; continue; }
                b[i] = line[pos];
                line[pos] = x;
                pos = (pos + 1) % delay;
            }
            return 0;
        }
        static void latency(jack_latency_callback_mode_t mode, void *arg) {
            (void)arg;
            jack_latency_range_t r;
            if (mode == JackCaptureLatency) { r.min = r.max = delay; jack_port_set_latency_range(out, mode, &r); }
            else { r.min = r.max = period; jack_port_set_latency_range(in, mode, &r); }
        }
        int main(int argc, char **argv) {
            delay = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
            line = calloc(delay ? delay : 1, sizeof *line);
            char name[64];
            snprintf(name, sizeof name, "echo-%d", (int)getpid());
            jack_status_t st;
            jack_client_t *c = jack_client_open(name, JackNoStartServer, &st);
            if (!c) { fprintf(stderr, "echo: no server (0x%x)\n", st); return 1; }
            period = jack_get_buffer_size(c);
            in = jack_port_register(c, "in", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
            out = jack_port_register(c, "out", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
            jack_set_process_callback(c, process, NULL);
            jack_set_latency_callback(c, latency, NULL);
            if (jack_activate(c)) { fprintf(stderr, "echo: cannot activate\n"); return 1; }
            for (;;) pause();
        }
        """#

    /// Compiles the client (in `directory`) and starts it on the server that `environment`
    /// names (`JACK_DEFAULT_SERVER`), echoing `delay` frames late. Its ports are not
    /// connected: connect them with ``JackTools/connect(_:_:server:)``.
    package init(delay: Int, environment: [String: String], directory: URL) throws(TestingError) {
        let bin = try compileJackClient(Self.source, name: "echo", directory: directory)
        let log = directory.appendingPathComponent("echo.log")
        process = try ChildProcess(path: bin.path, arguments: ["\(delay)"], environment: environment, output: log)
        input = "echo-\(process.processIdentifier):in"
        output = "echo-\(process.processIdentifier):out"
    }

    /// True while the client runs.
    package var isRunning: Bool { process.isRunning }

    /// Stops the client (SIGKILL: it holds nothing worth finishing).
    package func stop() {
        process.send(SIGKILL)
        _ = process.wait(timeout: .seconds(5))
    }

    deinit { stop() }
}
