import Foundation

/// A plain C JACK client (no aqsync code) that writes the server's frame counter into its
/// output, one value a frame: sample `i` of a cycle whose counter is `f` (`jack_last_frame_time`)
/// is `1/64 + ((f + i) mod 65536) / 2^20`, in [1/64, 5/64): exact in 32-bit float, never 0, and
/// small enough to be mixed into a channel that carries clicks (≥ 0.5) without hiding them.
///
/// Mixed into a sink's input beside a player's output and recorded from the sink's monitor,
/// every recorded frame says which frame of the server's clock the sink played there, on that
/// very channel: a frame of the player and the witness's frame beside it travel together
/// through the sink, its monitor and the recorder. So a recording shows (``Reading``) where
/// that path lost, repeated or silenced frames (``Reading/breaks``), and at which frame of the
/// server's clock each of the player's clicks was played (``Reading/counter(at:)``), whatever
/// the path did.
///
/// Thread safety: any thread; `stop()` once.
package final class SinkClockWitness: @unchecked Sendable {
    /// Its output port's full name (`witness-PID:out`).
    package let port: String
    private let program: JackClientProgram

    private static let source = #"""
        #include <jack/jack.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        static jack_port_t *out;
        static jack_client_t *client;
        static int process(jack_nframes_t n, void *arg) {
            (void)arg;
            float *a = jack_port_get_buffer(out, n);
            jack_nframes_t f = jack_last_frame_time(client);
            for (jack_nframes_t i = 0; i < n; i++) a[i] = 0.015625f + (float)((f + i) & 0xFFFF) / 1048576.0f;
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
            if (jack_activate(client)) { fprintf(stderr, "witness: cannot activate\n"); return 1; }
            for (int i = 1; i < argc; i++) jack_connect(client, jack_port_name(out), argv[i]);
            for (;;) pause();
        }
        """#

    /// Compiles the client and starts it on the server that `environment` names, its output
    /// connected to `connectTo`; with SCHED_FIFO at `realtimePriority` when given and allowed.
    package init(
        environment: [String: String], connectTo: [String], directory: URL, realtimePriority: Int32? = 20
    ) throws(TestingError) {
        program = try JackClientProgram(
            source: Self.source, name: "witness", arguments: connectTo, environment: environment, directory: directory,
            realtimePriority: realtimePriority)
        port = "witness-\(program.process.processIdentifier):out"
    }

    /// True while the client runs.
    package var isRunning: Bool { program.isRunning }

    /// Stops the client (SIGKILL: it holds nothing worth finishing).
    package func stop() { program.stop() }

    /// A recorded channel that carries the witness, decoded.
    package struct Reading: Sendable {
        /// Each recorded frame's counter value, unwrapped (made increasing across the 65536
        /// wrap, taking the nearest value to the previous one), or nil where the frame is not a
        /// witness value alone: silence (exactly 0) or something mixed in (a click).
        package let counters: [Int?]
        /// Frames that were exactly 0.
        private let silent: [Bool]

        package init(_ samples: [Float]) {
            var last: Int?
            counters = samples.map { v -> Int? in
                guard v >= 1.0 / 64, v < 5.0 / 64 else { return nil }
                let k = Int(((Double(v) - 1.0 / 64) * 1_048_576).rounded())
                guard let l = last else {
                    last = k
                    return k
                }
                var d = (k - l) % 65536
                if d < 0 { d += 65536 }
                if d >= 32768 { d -= 65536 }
                last = l + d
                return l + d
            }
            silent = samples.map { $0 == 0 }
            var found: [Break] = []
            var previous: (index: Int, counter: Int)?
            var quiet = 0
            for (i, c) in counters.enumerated() {
                guard let c else {
                    if previous != nil && silent[i] { quiet += 1 }
                    continue
                }
                if let p = previous, c - p.counter != i - p.index || quiet != 0 {
                    found.append(Break(index: i, frames: i - p.index, counterStep: c - p.counter, silent: quiet))
                }
                previous = (i, c)
                quiet = 0
            }
            breaks = found
        }

        /// Where the recording is not one counter frame after the other, from the first witness
        /// frame to the last (frames of something mixed in are skipped over, not breaks).
        package let breaks: [Break]

        /// The counter of the frame the sink played at recorded frame `index`: read there, or
        /// counted on from the witness frame before it when a click is mixed in there; nil
        /// when `index` is not between two witness frames joined without a break.
        package func counter(at index: Int) -> Int? {
            guard counters.indices.contains(index) else { return nil }
            if let c = counters[index] { return c }
            guard let before = counters[..<index].lastIndex(where: { $0 != nil }),
                let after = counters[(index + 1)...].firstIndex(where: { $0 != nil }),
                let p = counters[before], let n = counters[after],
                n - p == after - before, !silent[before...after].contains(true)
            else { return nil }
            return p + (index - before)
        }
    }

    /// A place where a recording of the witness is not one counter frame after the other: at
    /// recorded frame `index`, the counter moved by `counterStep` since the witness frame
    /// `frames` recorded frames earlier, with `silent` frames of silence between.
    package struct Break: Equatable, Sendable, CustomStringConvertible {
        package var index: Int
        package var frames: Int
        package var counterStep: Int
        package var silent: Int
        /// Counter frames more than recorded frames: > 0 when the path lost frames (or the sink
        /// played them early), < 0 when it repeated some (or played them late); 0 when only
        /// silence took the place of frames.
        package var shift: Int { counterStep - frames }
        package var description: String {
            "at recorded frame \(index): counter +\(counterStep) over \(frames) frames" + (silent > 0 ? " (\(silent) silent)" : "")
        }
    }
}
