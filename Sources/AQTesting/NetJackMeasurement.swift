import AQCore
import Foundation

/// Measures a ``NetJackRig``'s connection in-band with ``FrameStamp``s (docs/netjack.md):
///
/// - on the master, a ``FrameCountWitness`` writes the master's frame stamps (its `server`
///   port) into the slave's `to_slave_1`;
/// - on the slave, a ``StampEchoClient`` in this process reads them on `system:capture_1`:
///   their offset to the slave's frames is **D** (slave frame − master frame; the
///   master→slave latency is 0), and it echoes them on `system:playback_1`;
/// - on the master, `jack-record` records the witness's stamps beside the slave's
///   `from_slave_1`: at each recorded frame, master frame − echoed stamp is **L**, the
///   slave→master latency.
///
/// The stamper and the recorder are separate clients: one client both feeding and reading
/// the slave's ports on the master would close a loop in the master's graph, which JACK
/// breaks with a period of delay.
///
/// Thread safety: `init`, ``measure(seconds:)`` and ``reconnect()`` from one control thread.
package final class NetJackMeasurement: @unchecked Sendable {
    /// What one measurement saw. A plain value.
    package struct Result: Sendable, CustomStringConvertible {
        /// D as the slave's meter saw it while the master recorded.
        package var offset: FrameStampMeter.Snapshot
        /// L: how many recorded frames showed each latency (frames → count).
        package var latencies: [Int: Int]
        /// The single latency seen, or nil when none or several were.
        package var latency: Int? { latencies.count == 1 ? latencies.first?.key : nil }
        /// The latency seen most often.
        package var usualLatency: Int? { latencies.max { $0.value < $1.value }?.key }
        /// What the servers reported while it was measured that says a cycle went wrong (an
        /// xrun, a late client, a lost packet): lines of their output.
        package var trouble: [String]
        /// True when D held one value and L was one value throughout.
        package var steady: Bool { offset.changes == 0 && offset.range?.count == 1 && latency != nil }

        package var description: String {
            let l = latencies.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value) frames" }.joined(separator: ", ")
            let t = trouble.isEmpty ? "" : "; the servers reported \(trouble.count) line(s) of trouble: \(trouble.prefix(4).joined(separator: " | "))"
            return "D: \(offset); L: \(l.isEmpty ? "no echo" : l)\(t)"
        }
    }

    private let rig: NetJackRig
    private let directory: URL
    private let witness: FrameCountWitness
    /// The slave-side client (D, and the echo).
    package let echo: StampEchoClient

    /// Starts the witness on the master and the echo client on the slave, and connects them.
    /// Blocks while the witness compiles (into `directory`).
    package init(rig: NetJackRig, directory: URL) throws(TestingError) {
        self.rig = rig
        self.directory = directory
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = rig.masterServer
        witness = try FrameCountWitness(environment: env, directory: directory)
        try witness.waitForPort(server: rig.masterServer)
        echo = try StampEchoClient(server: rig.slaveServer, name: "aqnj-echo", from: nil, to: nil)
        try reconnect()
    }

    /// (Re)makes the connections: after the slave rejoined the master, its ports on the master
    /// are new. Each connection is undone first (jack_connect fails on one that exists).
    package func reconnect() throws(TestingError) {
        for (a, b, server) in [
            (witness.serverPort, rig.toSlave(1), rig.masterServer),
            ("system:capture_1", "\(echo.name):in", rig.slaveServer),
            ("\(echo.name):out", "system:playback_1", rig.slaveServer),
        ] {
            _ = try? JackTools.run("jack_disconnect", [a, b], server: server)
            let r = try JackTools.run("jack_connect", [a, b], server: server)
            guard r.status == 0 else {
                throw TestingError("jack_connect \(a) \(b) on “\(server)” failed: \(r.output)")
            }
        }
    }

    /// Resets the slave's meter, records `seconds` on the master, and reads D and L.
    package func measure(seconds: Double) throws(TestingError) -> Result {
        echo.meter.reset()
        let logged = (rig.masterLog.count, rig.slaveLog.count)
        let recorder = try JackRecorder(
            server: rig.masterServer, ports: [witness.serverPort, rig.fromSlave(1)], seconds: seconds,
            url: directory.appendingPathComponent("netjack-\(UUID().uuidString.prefix(8)).wav"))
        defer { recorder.removeFiles() }
        try recorder.wait(timeout: .seconds(seconds + 10))
        let offset = echo.meter.snapshot()
        let wav = try recorder.read()
        let trouble = Self.trouble(in: String(rig.masterLog.dropFirst(logged.0))).map { "master: \($0)" }
            + Self.trouble(in: String(rig.slaveLog.dropFirst(logged.1))).map { "slave: \($0)" }
        return Result(offset: offset, latencies: Self.latencies(master: wav.channels[0], echoed: wav.channels[1]), trouble: trouble)
    }

    /// The lines of a server's output that say a cycle went wrong. Any thread.
    package static func trouble(in log: String) -> [String] {
        let words = ["xrun", "error", "not finished", "missing", "late", "lost", "timeout", "timed out"]
        return log.split(separator: "\n").map(String.init).filter { line in
            let l = line.lowercased()
            return words.contains { l.contains($0) }
        }
    }

    /// L from a recording: at every frame where both channels carry a stamp, the master's
    /// frame (`master`) minus the echoed frame (`echoed`), counted. Any thread.
    package static func latencies(master: [Float], echoed: [Float]) -> [Int: Int] {
        var counts: [Int: Int] = [:]
        for (m, e) in zip(master, echoed) {
            guard let f = FrameStamp.frame(in: m), let s = FrameStamp.frame(in: e) else { continue }
            counts[FrameStamp.offset(from: s, to: UInt64(f)), default: 0] += 1
        }
        return counts
    }

    /// Stops the witness and closes the echo client.
    package func stop() {
        echo.close()
        witness.stop()
    }

    deinit { stop() }
}
