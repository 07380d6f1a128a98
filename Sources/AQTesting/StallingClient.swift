import Foundation

/// A plain C JACK client that stalls inside its process callback: every `everyFrames` frames
/// it processed, it sleeps `micros` microseconds there, as a badly written plug-in would. The
/// server reports xruns to every client. Used by the xrun and soak tests.
///
/// Thread safety: `init` and `stop` from the test's thread.
package final class StallingClient: @unchecked Sendable {
    private let program: JackClientProgram

    private static let source = #"""
        #include <jack/jack.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <time.h>
        #include <unistd.h>
        static unsigned long long frames, every, next_stall;
        static long micros;
        static int process(jack_nframes_t n, void *arg) {
            (void)arg;
            frames += n;
            if (frames >= next_stall) {
                next_stall += every;
                struct timespec ts = {micros / 1000000, (micros % 1000000) * 1000L};
                nanosleep(&ts, NULL);
            }
            return 0;
        }
        int main(int argc, char **argv) {
            every = argc > 1 ? strtoull(argv[1], NULL, 10) : 12800;
            micros = argc > 2 ? atol(argv[2]) : 30000;
            next_stall = every;
            jack_status_t st;
            jack_client_t *c = jack_client_open("staller", JackNoStartServer, &st);
            if (!c) { fprintf(stderr, "staller: no server (0x%x)\n", st); return 1; }
            jack_set_process_callback(c, process, NULL);
            if (jack_activate(c)) { fprintf(stderr, "staller: cannot activate\n"); return 1; }
            for (;;) pause();
        }
        """#

    /// Compiles the client (into `directory`) and starts it on the server that `environment`
    /// names (`JACK_DEFAULT_SERVER`): a stall of `micros` µs every `everyFrames` frames.
    /// Blocks while the compiler runs.
    package init(everyFrames: Int, micros: Int, environment: [String: String], directory: URL) throws(TestingError) {
        program = try JackClientProgram(
            source: Self.source, name: "staller", arguments: ["\(everyFrames)", "\(micros)"], environment: environment, directory: directory)
    }

    /// True while the client runs.
    package var isRunning: Bool { program.isRunning }

    /// Stops the client. Idempotent.
    package func stop() { program.stop() }
}
