import Foundation

/// A plain C JACK client that starts the transport and times how long it takes to roll
/// (slow-sync clients hold a start back until they are ready, or until the server gives up on
/// them), then stops it again. On a netjack2 master with a slave joined the start waits about
/// 10 s (docs/netjack.md, "The transport stall").
///
/// Thread safety: from the test's thread.
package enum TransportStartProbe {
    private static let source = #"""
        #include <jack/jack.h>
        #include <jack/transport.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <time.h>
        #include <unistd.h>
        static long long ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000LL + t.tv_nsec / 1000000; }
        int main(int argc, char **argv) {
            jack_status_t st;
            jack_client_t *c = jack_client_open("tstart", JackNoStartServer, &st);
            if (!c || jack_activate(c)) { fprintf(stderr, "tstart: no server (0x%x)\n", st); return 1; }
            long long limit = atof(argv[1]) * 1000, t0 = ms();
            jack_transport_start(c);
            for (;;) {
                if (jack_transport_query(c, NULL) == JackTransportRolling) { printf("rolling %lld\n", ms() - t0); break; }
                if (ms() - t0 > limit) { printf("starting\n"); break; }
                usleep(5000);
            }
            fflush(stdout);
            jack_transport_stop(c);
            jack_client_close(c);
            return 0;
        }
        """#

    /// Starts the transport on JACK server `server`, watches it for at most `seconds`, and stops
    /// it: the time it took to roll, or nil when it did not roll in that time. Compiles the
    /// client into `directory`; blocks for up to `seconds` and the compiler.
    /// - Throws: ``TestingError`` when the client cannot be built or run.
    package static func timeToRoll(server: String, seconds: Double, directory: URL) throws(TestingError) -> Duration? {
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server
        let program = try JackClientProgram(source: source, name: "tstart", arguments: ["\(seconds)"], environment: env, directory: directory)
        defer { program.stop() }
        guard program.process.wait(timeout: .seconds(seconds + 10)) else { throw TestingError("tstart did not finish") }
        let out = (try? String(contentsOf: directory.appendingPathComponent("tstart.log"), encoding: .utf8)) ?? ""
        guard program.process.terminationStatus == 0 else { throw TestingError("tstart failed: \(out)") }
        let words = out.split(whereSeparator: \.isWhitespace)
        if let i = words.firstIndex(of: "rolling"), i + 1 < words.count, let n = Int(words[i + 1]) { return .milliseconds(n) }
        return nil
    }
}
