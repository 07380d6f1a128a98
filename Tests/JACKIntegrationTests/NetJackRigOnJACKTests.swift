import AQTesting
import Foundation
import Testing

/// netjack2 measured in-band (issue 26, docs/netjack.md): a master `jackd` (dummy, 48 kHz,
/// period 256, `netmanager`) and a slave `jackd -d net` in two network namespaces. The master's
/// frame stamps reach the slave with no latency, so the slave reads its frame offset D to the
/// master, a whole number of periods and constant for the connection; the slave echoes them,
/// and the master sees them L frames later: (latency + 1) × period for an asynchronous slave,
/// latency × period for a synchronous one. Skipped, with a message, where network namespaces
/// cannot be made.
@Suite(.serialized) struct NetJackRigOnJACKTests {
    static let unavailable = NetJackRig.unavailableReason()

    static func directory() -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqnj-test-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Runs `body` on a rig with `options` and its measurement, then stops both (the slave's
    /// client first); prints why and returns when no rig can be made here.
    func withRig(_ options: NetJackRig.Options, _ body: (NetJackRig, NetJackMeasurement) throws -> Void) throws {
        if let reason = Self.unavailable {
            print("NetJackRigOnJACKTests: skipped: \(reason)")
            return
        }
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rig = try NetJackRig(options)
        defer { rig.stop() }
        do {
            let m = try NetJackMeasurement(rig: rig, directory: dir)
            defer { m.stop() }
            try body(rig, m)
        } catch {
            print("--- master \(rig.masterServer) (running: \(rig.isMasterRunning)):\n\(rig.masterLog.suffix(3000))\n--- slave \(rig.slaveServer) (running: \(rig.isSlaveRunning)):\n\(rig.slaveLog.suffix(3000))")
            throw error
        }
    }

    /// Lets the connection settle, measures for `seconds`, and checks D (a whole number of
    /// `offsetUnit` frames: the period, or the smallest period the servers have had, since
    /// the counters moved by those) and L.
    @discardableResult
    func check(
        _ rig: NetJackRig, _ m: NetJackMeasurement, period: Int, offsetUnit: Int? = nil, seconds: Double, expectedLatency: Int
    ) throws -> NetJackMeasurement.Result {
        let unit = offsetUnit ?? period
        Thread.sleep(forTimeInterval: 1)  // the first cycles of a connection may still move
        let r = try m.measure(seconds: seconds)
        let o = rig.options
        print("netjack \(o.sync ? "sync" : "async") -l \(o.latency), period \(period)\(o.masterAddress ? ", by address" : "")\(rig.isRealtime ? ", realtime" : ""): \(r)")
        let d = try #require(r.offset.latest, "the slave read no stamps: \(r)")
        let range = try #require(r.offset.range)
        #expect([d, range.lowerBound, range.upperBound].allSatisfy { $0 % unit == 0 }, "D is not a whole number of \(unit) frames: \(r)")
        #expect(r.usualLatency == expectedLatency, "\(r)")
        // D and L move (by whole periods) only where a server reported a cycle gone wrong:
        // on a loaded machine the slave may lose one.
        if !r.steady {
            #expect(!r.trouble.isEmpty, "D or L moved with no xrun reported: \(r)")
            let periods = r.latencies.keys.allSatisfy { ($0 - expectedLatency) % period == 0 }
            #expect(periods, "L moved by other than whole periods: \(r)")
        }
        return r
    }

    /// And a transport start on the master stalls while the slave is joined (by hand: 10 s).
    @Test(.timeLimit(.minutes(1))) func asyncSlaveDefaultLatency() throws {
        try withRig(NetJackRig.Options()) { rig, m in
            try check(rig, m, period: 256, seconds: 5, expectedLatency: 6 * 256)
            let dir = Self.directory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let rolled = try TransportStartProbe.timeToRoll(server: rig.masterServer, seconds: 3, directory: dir)
            print("netjack: the master's transport \(rolled.map { "rolled \($0) after its start" } ?? "still did not roll 3 s after its start")")
            #expect(rolled == nil, "the transport was expected to stall with a slave joined")
        }
    }

    @Test(.timeLimit(.minutes(1))) func asyncSlaveShortLatencyAndSyncSlave() throws {
        var o = NetJackRig.Options()
        o.latency = 2
        try withRig(o) { rig, m in try check(rig, m, period: 256, seconds: 2, expectedLatency: 3 * 256) }
        o.latency = 5
        o.sync = true
        o.masterAddress = true  // and joined by the master's address rather than multicast
        try withRig(o) { rig, m in try check(rig, m, period: 256, seconds: 2, expectedLatency: 5 * 256) }
    }

    /// A period change on the master drops the slave, which joins again at the new period
    /// (issue 26: ~2.1 s later); D and L are then learned again: L = (l + 1) × the new period.
    @Test(.timeLimit(.minutes(1))) func masterPeriodChangeDropsTheSlaveWhichRejoins() throws {
        try withRig(NetJackRig.Options()) { rig, m in
            let before = try check(rig, m, period: 256, seconds: 2, expectedLatency: 6 * 256)
            let rejoin = try rig.changeMasterPeriod(512)
            try m.reconnect()
            // The slave's counter went on from where it was, in 256-frame periods: D is a
            // whole number of 256 frames, not always of 512.
            let after = try check(rig, m, period: 512, offsetUnit: 256, seconds: 2, expectedLatency: 6 * 512)
            print("netjack period 256 → 512: the slave was back on the master after \(rejoin); D \(before.offset.latest.map(String.init) ?? "?") → \(after.offset.latest.map(String.init) ?? "?")")
            #expect(rejoin < .seconds(10))
        }
    }
}
