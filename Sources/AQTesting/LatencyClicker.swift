import Foundation

/// A plain C JACK client (no aqsync code) that plays a click (1.0) every `interval` frames of
/// its own count from its first cycle, and declares a capture latency of `captureLatency`
/// frames on its output port, as a capture device whose converter is that far behind would: a
/// click it writes at JACK frame F was "played into the microphone" at F − L. For each click it
/// logs F and the host time of F − L (CLOCK_MONOTONIC nanoseconds, aqsync's host time), so that
/// a recording can be checked against both. It also reports the latency ranges of the ports it
/// is asked to watch, as any client sees them (`jack_port_get_latency_range`).
///
/// The latency is declared in its latency callback (`JackCaptureLatency` mode:
/// `jack_port_set_latency_range(out, JackCaptureLatency, {L, L})`), as JACK asks of clients
/// whose ports' latencies are not the default.
///
/// Host times: the click's frame time comes from `jack_get_cycle_times` (the cycle's first
/// frame and its microsecond time, and the next cycle's: the frame's time is interpolated
/// between them), on libjack's clock (`jack_get_time`, CLOCK_MONOTONIC_RAW with jackd2 1.9.21);
/// the client converts it to CLOCK_MONOTONIC with the offset between the two clocks measured
/// in the same cycle (the narrowest of three pairs of CLOCK_MONOTONIC reads around one
/// `jack_get_time`: about 0.5 µs of error, from JACK's microsecond resolution).
///
/// Thread safety: any thread; `stop()` once.
package final class LatencyClicker: @unchecked Sendable {
    /// Its output port's full name (`latclicker-PID:out`).
    package let port: String
    /// The capture latency it declares, in frames.
    package let captureLatency: Int
    private let process: ChildProcess
    private let clickLog: URL
    private let portLog: URL

    /// One click as the client logged it.
    package struct Click: Sendable, Equatable {
        /// The JACK frame (the server's 32-bit counter) the click was written at.
        package var writtenFrame: UInt32
        /// Host time (CLOCK_MONOTONIC ns) of the frame the click was "captured" at: the written
        /// frame minus the declared capture latency.
        package var captureHostNs: UInt64
    }

    /// A port's latency ranges as the client read them.
    package struct PortLatency: Sendable, Equatable, CustomStringConvertible {
        package var capture: ClosedRange<Int>
        package var playback: ClosedRange<Int>
        package var description: String { "capture \(capture), playback \(playback)" }
    }

    private static let source = #"""
        #include <jack/jack.h>
        #include <signal.h>
        #include <stdatomic.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <time.h>
        #include <unistd.h>
        static jack_client_t *client;
        static jack_port_t *out;
        static unsigned long long frame, interval;
        static jack_nframes_t latency;
        #define RING 4096
        static struct { jack_nframes_t written; long long host_ns; } ring[RING];
        static atomic_ulong head;
        static volatile sig_atomic_t quit;
        static void on_term(int sig) { (void)sig; quit = 1; }
        static long long mono_ns(void) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
        }
        static int process(jack_nframes_t n, void *arg) {
            (void)arg;
            float *a = jack_port_get_buffer(out, n);
            jack_nframes_t cf = 0; jack_time_t cu = 0, nu = 0; float pu = 0;
            int ok = jack_get_cycle_times(client, &cf, &cu, &nu, &pu) == 0 && nu > cu;
            /* The narrowest of three windows around one jack_get_time (a preempted read is
               wide); jack_get_time truncates to the microsecond, so its middle is j + 500. */
            long long offset = 0, width = -1;
            for (int k = 0; k < 3; k++) {
                long long m0 = mono_ns(), j = (long long)jack_get_time() * 1000LL + 500, m1 = mono_ns();
                if (width < 0 || m1 - m0 < width) { width = m1 - m0; offset = (m0 + m1) / 2 - j; }
            }
            for (jack_nframes_t i = 0; i < n; i++, frame++) {
                int click = frame % interval == 0;
                a[i] = click ? 1.0f : 0.0f;
                if (click && ok) {
                    unsigned long h = atomic_load_explicit(&head, memory_order_relaxed);
                    double us = (double)cu + ((double)i - (double)latency) * (double)(nu - cu) / (double)n;
                    ring[h % RING].written = cf + i;
                    ring[h % RING].host_ns = (long long)(us * 1000.0 + 0.5) + offset;
                    atomic_store_explicit(&head, h + 1, memory_order_release);
                }
            }
            return 0;
        }
        static void on_latency(jack_latency_callback_mode_t mode, void *arg) {
            (void)arg;
            if (mode == JackCaptureLatency) {
                jack_latency_range_t r = { latency, latency };
                jack_port_set_latency_range(out, JackCaptureLatency, &r);
            }
        }
        int main(int argc, char **argv) {
            if (argc < 5) { fprintf(stderr, "usage: latclicker INTERVAL LATENCY CLICKLOG PORTLOG [+CONNECT|?WATCH]...\n"); return 2; }
            interval = strtoull(argv[1], NULL, 10);
            latency = (jack_nframes_t)strtoul(argv[2], NULL, 10);
            const char *clicklog = argv[3], *portlog = argv[4];
            char name[64], tmp[4096];
            snprintf(name, sizeof name, "latclicker-%d", (int)getpid());
            snprintf(tmp, sizeof tmp, "%s.tmp", portlog);
            signal(SIGTERM, on_term);
            jack_status_t st;
            client = jack_client_open(name, JackNoStartServer, &st);
            if (!client) { fprintf(stderr, "latclicker: no server (0x%x)\n", st); return 1; }
            out = jack_port_register(client, "out", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
            jack_set_process_callback(client, process, NULL);
            jack_set_latency_callback(client, on_latency, NULL);
            if (jack_activate(client)) { fprintf(stderr, "latclicker: cannot activate\n"); return 1; }
            for (int i = 5; i < argc; i++)
                if (argv[i][0] == '+' && jack_connect(client, jack_port_name(out), argv[i] + 1))
                    fprintf(stderr, "latclicker: cannot connect to %s\n", argv[i] + 1);
            FILE *clicks = fopen(clicklog, "a");
            if (!clicks) { fprintf(stderr, "latclicker: cannot open %s\n", clicklog); return 1; }
            unsigned long tail = 0;
            while (!quit) {
                unsigned long h = atomic_load_explicit(&head, memory_order_acquire);
                for (; tail < h; tail++)
                    fprintf(clicks, "%u %lld\n", ring[tail % RING].written, ring[tail % RING].host_ns);
                fflush(clicks);
                FILE *ports = fopen(tmp, "w");
                if (ports) {
                    for (int i = 5; i < argc; i++) {
                        if (argv[i][0] != '?') continue;
                        jack_port_t *p = jack_port_by_name(client, argv[i] + 1);
                        if (!p) continue;
                        jack_latency_range_t c, pl;
                        jack_port_get_latency_range(p, JackCaptureLatency, &c);
                        jack_port_get_latency_range(p, JackPlaybackLatency, &pl);
                        fprintf(ports, "%s %u %u %u %u\n", argv[i] + 1, c.min, c.max, pl.min, pl.max);
                    }
                    fclose(ports);
                    rename(tmp, portlog);
                }
                usleep(5000);
            }
            /* A client that leaves without closing makes the server wait for it: lost cycles. */
            jack_deactivate(client);
            jack_client_close(client);
            fclose(clicks);
            return 0;
        }
        """#

    /// Compiles the client and starts it on the server that `environment` names
    /// (`JACK_DEFAULT_SERVER`), its output connected to `connectTo`, watching the latencies of
    /// `watch` (full port names). Its files go in `directory`. Control thread; blocks while cc
    /// runs (about a second).
    package init(
        interval: Int, captureLatency: Int, environment: [String: String], connectTo: [String], watch: [String] = [],
        directory: URL
    ) throws(TestingError) {
        let bin = FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("latclicker").path)
            ? directory.appendingPathComponent("latclicker")
            : try compileJackClient(Self.source, name: "latclicker", directory: directory)
        let log = directory.appendingPathComponent("latclicker.log")
        let tag = UInt32.random(in: 0...UInt32.max)
        clickLog = directory.appendingPathComponent("clicks-\(tag).txt")
        portLog = directory.appendingPathComponent("ports-\(tag).txt")
        self.captureLatency = captureLatency
        process = try ChildProcess(
            path: bin.path,
            arguments: ["\(interval)", "\(captureLatency)", clickLog.path, portLog.path]
                + connectTo.map { "+" + $0 } + watch.map { "?" + $0 },
            environment: environment, output: log)
        port = "latclicker-\(process.processIdentifier):out"
    }

    /// True while the client runs. Any thread; does not block.
    package var isRunning: Bool { process.isRunning }

    /// The clicks logged so far (the client writes them out every 5 ms). Any thread.
    package var clicks: [Click] {
        guard let text = try? String(contentsOf: clickLog, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ")
            guard f.count == 2, let w = UInt32(f[0]), let h = UInt64(f[1]) else { return nil }
            return Click(writtenFrame: w, captureHostNs: h)
        }
    }

    /// The latency ranges of the watched port `name` as the client last read them (every 5 ms);
    /// nil before the first report or when the port does not exist. Any thread.
    package func latency(of name: String) -> PortLatency? {
        guard let text = try? String(contentsOf: portLog, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ")
            guard f.count == 5, f[0] == name, let a = Int(f[1]), let b = Int(f[2]), let c = Int(f[3]), let d = Int(f[4]),
                a <= b, c <= d
            else { continue }
            return PortLatency(capture: a...b, playback: c...d)
        }
        return nil
    }

    /// Stops the client and waits for its exit: SIGTERM, on which it deactivates and closes its
    /// JACK client (one killed outright makes the server wait for it, and the graph loses
    /// cycles); SIGKILL after 5 s. Control thread; blocks until the client has exited.
    package func stop() {
        process.stop(signal: SIGTERM, grace: .seconds(5))
    }

    deinit { stop() }
}
