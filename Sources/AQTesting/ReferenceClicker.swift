import Foundation

/// A plain C JACK client (no aqsync code) that writes a click (1.0) every `interval` frames of
/// its own count from its first cycle: the reference a recording is checked against. When its
/// clicks, recorded beside aqsync's, are not exactly `interval` apart, the recorder itself (or
/// the machine) lost or repeated frames, and the recording says nothing about aqsync.
///
/// Thread safety: any thread; `stop()` once.
package final class ReferenceClicker: @unchecked Sendable {
    /// Its output port's full name (`clicker-PID:out`).
    package let port: String
    private let program: JackClientProgram

    private static let source = #"""
        #include <jack/jack.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        static jack_port_t *out;
        static unsigned long long frame, interval;
        static int process(jack_nframes_t n, void *arg) {
            (void)arg;
            float *a = jack_port_get_buffer(out, n);
            for (jack_nframes_t i = 0; i < n; i++, frame++) a[i] = (frame % interval == 0) ? 1.0f : 0.0f;
            return 0;
        }
        int main(int argc, char **argv) {
            interval = argc > 1 ? strtoull(argv[1], NULL, 10) : 12000;
            char name[64];
            snprintf(name, sizeof name, "clicker-%d", (int)getpid());
            jack_status_t st;
            jack_client_t *c = jack_client_open(name, JackNoStartServer, &st);
            if (!c) { fprintf(stderr, "clicker: no server (0x%x)\n", st); return 1; }
            out = jack_port_register(c, "out", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
            jack_set_process_callback(c, process, NULL);
            if (jack_activate(c)) { fprintf(stderr, "clicker: cannot activate\n"); return 1; }
            for (int i = 2; i < argc; i++) jack_connect(c, jack_port_name(out), argv[i]);
            for (;;) pause();
        }
        """#

    /// Compiles the client (once per process) and starts it on the server that `environment`
    /// names (`JACK_DEFAULT_SERVER`, or PipeWire's library path), its output connected to
    /// `connectTo`. Waits until its port exists (at most 5 s).
    package init(interval: Int, environment: [String: String], connectTo: [String], directory: URL) throws(TestingError) {
        program = try JackClientProgram(
            source: Self.source, name: "clicker", arguments: ["\(interval)"] + connectTo, environment: environment, directory: directory)
        port = "clicker-\(program.process.processIdentifier):out"
    }

    /// True while the client runs.
    package var isRunning: Bool { program.isRunning }

    /// Stops the client. Idempotent.
    package func stop() { program.stop() }

    /// True when `clicks` (recorded positions of the reference's clicks) are all exactly
    /// `interval` apart: the recording is faithful over their span.
    package static func isFaithful(_ clicks: [Int], interval: Int) -> Bool {
        clicks.count >= 2 && zip(clicks.dropFirst(), clicks).allSatisfy { $0 - $1 == interval }
    }
}
