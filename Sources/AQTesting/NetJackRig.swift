import AQJackServer
import Foundation
import Synchronization

/// Two JACK servers joined by netjack2 across a private network, for tests (docs/netjack.md):
/// two network namespaces joined by a veth pair (10.201.0.1/24 and 10.201.0.2/24, `lo` up, a
/// multicast route so the slave finds the master on 225.3.19.154), a master `jackd` (dummy
/// backend) in the first with the `netmanager` internal client, and a slave `jackd -d net` in
/// the second. Both servers share this machine's /dev/shm, so clients of this process reach
/// either by its server name, and the names are distinct (JACK's registry is machine-wide).
///
/// With ``Options/slaves`` above 1, each slave has a namespace of its own, joined to the
/// master's by its own veth pair whose master end is in a bridge there (the bridge has
/// 10.201.0.1/24 and the multicast route, snooping off so the slaves' multicast reaches the
/// master; slave K has 10.201.0.(K + 1)): one master, several slaves, as several machines on
/// one switch.
///
/// Stopped (servers, then namespaces) by ``stop()`` or when released; a server that does not
/// exit on SIGTERM is killed and its registry slot reclaimed.
///
/// Thread safety: `init`, ``waitForSlave(timeout:)``, ``changeMasterPeriod(_:timeout:)`` and ``stop()``
/// from one control thread; the names from any thread.
package final class NetJackRig: @unchecked Sendable {
    /// How the rig is set up. A plain value.
    package struct Options: Sendable {
        /// The master's sample rate and period (the slave takes them from the master).
        package var sampleRate = 48000, period = 256
        /// The slave's network latency in cycles (`-d net -l`; netjack2's default is 5).
        package var latency = 5
        /// A synchronous slave (`jackd -S`); asynchronous otherwise (netjack2's default).
        package var sync = false
        /// Audio channels each way (`-C`, `-P`).
        package var channels = 2
        /// Try realtime scheduling (`-R`) first, falling back to `--no-realtime`. Realtime
        /// keeps the slave from losing cycles on a loaded machine.
        package var realtime = true
        /// Join by the master's address instead of multicast: netmanager listens on
        /// 10.201.0.1 (`jack_load -i "-a 10.201.0.1" netmanager`) and the slave is given it
        /// (`-d net -a 10.201.0.1`). Both are needed: a slave given the address does not find
        /// a master listening on the multicast address.
        package var masterAddress = false
        /// How many slaves join the master (each in a namespace of its own).
        package var slaves = 1
        /// netjack2's defaults: an asynchronous slave, latency 5, two channels, on a 48 kHz
        /// master with 256-frame periods.
        package init() {}
    }

    /// The options the rig was started with.
    package let options: Options
    /// The master's and the slave's JACK server names (`-n`).
    package let masterServer: String, slaveServer: String
    /// The slave's client name on the master (`-d net -n`): its ports there are
    /// `NAME:to_slave_N` (inputs, heard on the slave's `system:capture_N`) and
    /// `NAME:from_slave_N` (outputs, what the slave plays on `system:playback_N`).
    package let slaveClient: String
    /// The network namespaces (the first slave's).
    package let masterNamespace: String, slaveNamespace: String

    /// One slave of the rig: its JACK server name, its client name on the master (`NAME:to_slave_N`,
    /// `NAME:from_slave_N` there) and its network namespace. A plain value.
    package struct Slave: Sendable {
        package let server: String, client: String, namespace: String
        /// The veth pair's ends: in the master's namespace, in the slave's.
        let vethMaster: String, vethSlave: String
        /// Its address, and its server's log file's name.
        let address: String, log: String
    }
    /// Every slave, the first being ``slaveServer``, ``slaveClient``, ``slaveNamespace``.
    package private(set) var slaves: [Slave]

    private let vethMaster: String, vethSlave: String
    /// The bridge in the master's namespace (several slaves only).
    private let bridge: String
    private let directory: URL
    private var master: ChildProcess?
    private var slaveProcesses: [ChildProcess?] = []
    private var namespacesMade = false
    /// True when the servers were started with `-R`.
    package private(set) var isRealtime = false

    private static let counter = Atomic<Int>(0)
    private static let ip = "/usr/sbin/ip"

    /// Why no rig can be made on this machine (no `ip`, no netjack2 modules, no right to make
    /// network namespaces), or nil when it can: tries to make and delete a namespace. Any
    /// control thread.
    package static func unavailableReason() -> String? {
        guard FileManager.default.isExecutableFile(atPath: ip) else { return "no \(ip) (iproute2)" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jackd") else { return "no /usr/bin/jackd" }
        let probe = "aqnj-probe-\(getpid())"
        guard let r = try? JackTools.run(ip, ["netns", "add", probe], server: ""), r.status == 0 else {
            return "cannot make a network namespace (needs root or CAP_NET_ADMIN)"
        }
        _ = try? JackTools.run(ip, ["netns", "del", probe], server: "")
        return nil
    }

    /// Makes the namespaces and the veth pair, starts the master with `netmanager` and the
    /// slave, and waits (at most `timeout`) until the slave's ports are on the master.
    /// Everything made is undone when a step fails.
    /// - Throws: ``TestingError`` naming the step, with the servers' output.
    package init(_ options: Options = Options(), timeout: Duration = .seconds(20)) throws(TestingError) {
        self.options = options
        let n = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        let tag = "\(getpid())-\(n)"
        masterServer = "aqnjm-\(tag)"
        slaveServer = "aqnjs-\(tag)"
        slaveClient = "njslave-\(tag)"
        masterNamespace = "aqnj-m-\(tag)"
        slaveNamespace = "aqnj-s-\(tag)"
        // Interface names have at most 15 characters.
        vethMaster = "njm\(getpid() % 10_000_000)-\(n % 100)"
        vethSlave = "njs\(getpid() % 10_000_000)-\(n % 100)"
        bridge = "njb\(getpid() % 10_000_000)-\(n % 100)"
        let (vm, vs, ss, sc, sn) = (vethMaster, vethSlave, slaveServer, slaveClient, slaveNamespace)
        slaves = (0..<max(1, options.slaves)).map { k in
            k == 0
                ? Slave(server: ss, client: sc, namespace: sn, vethMaster: vm, vethSlave: vs, address: "10.201.0.2/24", log: "slave.log")
                : Slave(
                    server: "aqnjs\(k + 1)-\(tag)", client: "njslave\(k + 1)-\(tag)", namespace: "aqnj-s\(k + 1)-\(tag)",
                    vethMaster: "nj\(k + 1)m\(getpid() % 10_000_000)-\(n % 100)", vethSlave: "nj\(k + 1)s\(getpid() % 10_000_000)-\(n % 100)",
                    address: "10.201.0.\(k + 2)/24", log: "slave\(k + 1).log")
        }
        if n == 1 { Self.sweepStale() }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("aqnj-\(tag)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do throws(TestingError) {
            try makeNetwork()
            try startMaster(log: "master.log")
            for s in slaves {
                var net = ["-d", "net", "-n", s.client, "-l", "\(options.latency)", "-C", "\(options.channels)", "-P", "\(options.channels)"]
                if options.masterAddress { net += ["-a", "10.201.0.1"] }
                slaveProcesses.append(try startServer(
                    namespace: s.namespace, name: s.server, extra: options.sync ? ["-S"] : [], backend: net, log: s.log))
            }
            try waitForSlave(timeout: timeout)
        } catch {
            let logs = "\n--- master:\n\(masterLog)" + slaves.indices.map { "\n--- slave \($0 + 1):\n\(slaveLog(of: $0))" }.joined()
            stop()
            throw TestingError("netjack rig: \(error.message)\(logs)")
        }
    }

    deinit { stop() }

    /// The master's output (this process's side) of a slave's playback `channel` (1-based);
    /// `slave`: which (0-based, in ``slaves``).
    package func fromSlave(_ channel: Int, of slave: Int = 0) -> String { "\(slaves[slave].client):from_slave_\(channel)" }
    /// The master's input that a slave hears on its capture `channel` (1-based).
    package func toSlave(_ channel: Int, of slave: Int = 0) -> String { "\(slaves[slave].client):to_slave_\(channel)" }

    /// True while the master's and every slave's jackd run.
    package var isMasterRunning: Bool { master?.isRunning == true }
    package var isSlaveRunning: Bool { !slaveProcesses.isEmpty && slaveProcesses.allSatisfy { $0?.isRunning == true } }

    /// The master's and the (first) slave's output so far.
    package var masterLog: String { (try? String(contentsOf: directory.appendingPathComponent("master.log"), encoding: .utf8)) ?? "" }
    package var slaveLog: String { slaveLog(of: 0) }
    /// A slave's server's output so far (0-based, in ``slaves``).
    package func slaveLog(of slave: Int) -> String {
        (try? String(contentsOf: directory.appendingPathComponent(slaves[slave].log), encoding: .utf8)) ?? ""
    }

    /// Waits until the slave's ports are on the master and the slave server accepts clients,
    /// polling both port lists every 100 ms (joining has no notification a test can wait on).
    /// - Throws: ``TestingError`` when that takes longer than `timeout` or a server exited.
    package func waitForSlave(timeout: Duration = .seconds(20)) throws(TestingError) {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            guard master?.isRunning == true, isSlaveRunning else { throw TestingError("a server exited") }
            let onMaster = (try? JackTools.ports(server: masterServer)) ?? []
            if slaves.indices.allSatisfy({ onMaster.contains(toSlave(1, of: $0)) }),
               slaves.allSatisfy({ ((try? JackTools.ports(server: $0.server)) ?? []).contains("system:capture_1") }) { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let ports = ((try? JackTools.ports(server: masterServer)) ?? []).filter { !$0.hasPrefix("system:") }
        throw TestingError(
            "the slave did not join the master within \(timeout); the master's client ports: \(ports)"
                + "\n--- master jackd:\n\(masterLog.suffix(3000))"
                + slaves.indices.map { "\n--- slave \($0 + 1) jackd:\n\(slaveLog(of: $0).suffix(3000))" }.joined())
    }

    /// Changes the master's period with `jack_bufsize`: the master drops the slave (its ports
    /// leave the master), and the slave joins again at the new period. Waits for both (at most
    /// 5 s for the drop, polling every 20 ms, then up to `timeout` for the return) and returns
    /// the time from the change to the slave's ports being back.
    /// - Throws: ``TestingError`` when the change fails, or the slave is not dropped or does
    ///   not come back in time.
    package func changeMasterPeriod(_ frames: Int, timeout: Duration = .seconds(20)) throws(TestingError) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try JackTools.setBufferSize(frames, server: masterServer)
        var dropped = false
        while clock.now < start + .seconds(5) {
            if !((try? JackTools.ports(server: masterServer)) ?? []).contains(toSlave(1)) {
                dropped = true
                break
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        guard dropped else { throw TestingError("the master kept the slave after its period changed to \(frames)") }
        try waitForSlave(timeout: timeout)
        return clock.now - start
    }

    /// Restarts the master: its jackd is stopped (SIGTERM) and started again with the same
    /// name, options and `netmanager`; the slave, dropped, joins it again by itself. Waits (at
    /// most `timeout`) for the slave's ports to be back on the master, and returns the time
    /// from the stop to then.
    /// - Throws: ``TestingError`` when the master does not come back or the slave does not
    ///   rejoin in time.
    package func restartMaster(timeout: Duration = .seconds(20)) throws(TestingError) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        if let master { Self.end(master, name: masterServer) }
        try startMaster(log: "master-restarted.log")
        try waitForSlave(timeout: timeout)
        return clock.now - start
    }

    /// Restarts one slave alone: its jackd is stopped (SIGTERM, waited for), and, once the
    /// master has let go of its client (its ports leave the master: about 0.1 s when the
    /// master's sends are refused, about 2 s when it has to time out), started again with the
    /// same server name, client name and options; it joins the master again by itself. Waits
    /// (at most `timeout`) for its ports to be back on the master and its `system` ports on
    /// the slave, and returns the time from the stop to then.
    ///
    /// A slave started again while the master still holds its old client joins as another
    /// client, `NAME-01` (JACK's name for a duplicate; docs/netjack.md, "A rejoin of one
    /// slave alone"): hence the wait for the drop.
    /// - Throws: ``TestingError`` when the master keeps the old client for 10 s, or the slave
    ///   does not rejoin in time.
    ///
    /// `asClient`: the slave's jackd is started again with that client name (`-d net -n`),
    /// without waiting for the master to let go of the old client: what netjack2 does to a
    /// slave that joins while the master still holds its old client (`NAME-01`), made
    /// certain. ``slaves``, ``toSlave(_:of:)`` and ``fromSlave(_:of:)`` name the new client
    /// from then on.
    package func restartSlave(_ slave: Int = 0, asClient: String? = nil, timeout: Duration = .seconds(20)) throws(TestingError) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        if slave < slaveProcesses.count, let p = slaveProcesses[slave] { Self.end(p, name: slaves[slave].server) }
        var dropped = asClient != nil
        if let asClient {
            let s = slaves[slave]
            slaves[slave] = Slave(
                server: s.server, client: asClient, namespace: s.namespace, vethMaster: s.vethMaster, vethSlave: s.vethSlave,
                address: s.address, log: s.log)
        }
        while !dropped && clock.now < start + .seconds(10) {
            if !((try? JackTools.ports(server: masterServer)) ?? []).contains(toSlave(1, of: slave)) {
                dropped = true
                break
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        guard dropped else { throw TestingError("the master kept the stopped slave's client \(slaves[slave].client) for 10 s") }
        let s = slaves[slave]
        var net = ["-d", "net", "-n", s.client, "-l", "\(options.latency)", "-C", "\(options.channels)", "-P", "\(options.channels)"]
        if options.masterAddress { net += ["-a", "10.201.0.1"] }
        let p = try startServer(
            namespace: s.namespace, name: s.server, extra: options.sync ? ["-S"] : [], backend: net,
            log: s.log.replacingOccurrences(of: ".log", with: "-restarted.log"))
        slaveProcesses[slave] = p
        try waitForSlave(timeout: timeout)
        return clock.now - start
    }

    /// Starts the master's jackd (dummy backend) in its namespace and loads `netmanager` into it,
    /// listening on the multicast address, or (`-a`) on the master's own.
    private func startMaster(log: String) throws(TestingError) {
        master = try startServer(
            namespace: masterNamespace, name: masterServer,
            backend: ["-d", "dummy", "-r", "\(options.sampleRate)", "-p", "\(options.period)"], log: log)
        let load = try JackTools.run(
            "jack_load", (options.masterAddress ? ["-i", "-a 10.201.0.1"] : []) + ["netmanager"], server: masterServer)
        guard load.status == 0 else { throw TestingError("jack_load netmanager failed: \(load.output)") }
    }

    /// Stops the slave, then the master (SIGTERM, up to 5 s each, then SIGKILL and the
    /// registry slot reclaimed), and deletes the namespaces (and with them the veth pair).
    /// Idempotent.
    package func stop() {
        for (k, p) in slaveProcesses.enumerated() { if let p { Self.end(p, name: slaves[k].server) } }
        if let master { Self.end(master, name: masterServer) }
        slaveProcesses = []
        master = nil
        if namespacesMade {
            for s in slaves { _ = try? JackTools.run(Self.ip, ["link", "del", s.vethMaster], server: "") }  // when it never moved
            _ = try? JackTools.run(Self.ip, ["netns", "del", masterNamespace], server: "")
            for s in slaves { _ = try? JackTools.run(Self.ip, ["netns", "del", s.namespace], server: "") }
            namespacesMade = false
        }
        try? FileManager.default.removeItem(at: directory)
    }

    private func run(_ arguments: [String]) throws(TestingError) {
        let r = try JackTools.run(Self.ip, arguments, server: "")
        guard r.status == 0 else { throw TestingError("ip \(arguments.joined(separator: " ")) failed: \(r.output)") }
    }

    private func makeNetwork() throws(TestingError) {
        namespacesMade = true
        let m = masterNamespace
        try run(["netns", "add", m])
        for s in slaves { try run(["netns", "add", s.namespace]) }
        for s in slaves {
            try run(["link", "add", s.vethMaster, "type", "veth", "peer", "name", s.vethSlave])
            try run(["link", "set", s.vethMaster, "netns", m])
            try run(["link", "set", s.vethSlave, "netns", s.namespace])
        }
        var ends = slaves.map { ($0.namespace, $0.vethSlave, $0.address) }
        if slaves.count == 1 {
            ends.insert((m, vethMaster, "10.201.0.1/24"), at: 0)
        } else {
            // Several slaves: the master's ends of their veth pairs in one bridge, which has the
            // master's address; multicast snooping off (no querier here: the slaves' multicast
            // must reach the master's netmanager).
            try run(["-n", m, "link", "add", bridge, "type", "bridge", "mcast_snooping", "0"])
            for s in slaves {
                try run(["-n", m, "link", "set", s.vethMaster, "master", bridge])
                try run(["-n", m, "link", "set", s.vethMaster, "up"])
            }
            ends.insert((m, bridge, "10.201.0.1/24"), at: 0)
        }
        for (ns, dev, address) in ends {
            try run(["-n", ns, "addr", "add", address, "dev", dev])
            try run(["-n", ns, "link", "set", "lo", "up"])
            try run(["-n", ns, "link", "set", dev, "up"])
            try run(["-n", ns, "route", "add", "224.0.0.0/4", "dev", dev])
        }
    }

    /// Starts `jackd [-R|--no-realtime] EXTRA -n NAME BACKEND` in `namespace` (`ip netns exec`
    /// execs jackd itself: the child is jackd) and waits until it accepts clients; `-R` falls
    /// back to `--no-realtime` when jackd does not come up with it. A full JACK registry has
    /// the slots of dead servers reclaimed once.
    private func startServer(
        namespace: String, name: String, extra: [String] = [], backend: [String], log: String
    ) throws(TestingError) -> ChildProcess {
        let url = directory.appendingPathComponent(log)
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "JACK_DEFAULT_SERVER")
        var reclaimed = false
        for rt in options.realtime ? [true, true, false] : [false, false] {
            let args = ["netns", "exec", namespace, "/usr/bin/jackd", rt ? "-R" : "--no-realtime"] + extra + ["-n", name] + backend
            let p = try ChildProcess(path: Self.ip, arguments: args, environment: env, output: url)
            for _ in 0..<100 {
                guard p.isRunning else { break }
                if let r = try? JackTools.run("jack_lsp", [], server: name, timeout: .seconds(2)), r.status == 0 {
                    isRealtime = rt
                    return p
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
            Self.end(p, name: name)
            // JACK's registry has 8 slots for the machine; those of servers that died unclean
            // are freed by a clean start and stop of their names (as JackServer does).
            let log = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
            if !reclaimed && log.contains("Too many servers already active") {
                reclaimed = true
                for dead in JackRegistry.deadServerNames() { (try? JackServer(name: dead, timeout: .seconds(5)))?.stop() }
            }
        }
        throw TestingError("jackd -n \(name) in namespace \(namespace) did not accept clients")
    }

    /// Removes what rigs of test processes that are gone left behind (a test process killed
    /// before its rigs stopped): namespaces `aqnj-m-PID-N` and `aqnj-s-PID-N` (`aqnj-sK-PID-N`) whose PID no
    /// longer runs, after ending the jackd still running in them (SIGTERM, then SIGKILL after
    /// 5 s). Namespaces of running processes are left alone.
    private static func sweepStale() {
        guard let list = try? JackTools.run(ip, ["netns", "list"], server: ""), list.status == 0 else { return }
        for line in list.output.split(separator: "\n") {
            guard let ns = line.split(separator: " ").first.map(String.init), ns.hasPrefix("aqnj-m-") || ns.hasPrefix("aqnj-s"),
                  let pid = Int32(ns.split(separator: "-")[2]), kill(pid, 0) != 0 && errno == ESRCH
            else { continue }
            let pids = ((try? JackTools.run(ip, ["netns", "pids", ns], server: ""))?.output ?? "").split(separator: "\n").compactMap { Int32($0) }
            for p in pids { kill(p, SIGTERM) }
            for _ in 0..<50 where pids.contains(where: { kill($0, 0) == 0 }) { Thread.sleep(forTimeInterval: 0.1) }
            for p in pids where kill(p, 0) == 0 { kill(p, SIGKILL) }
            _ = try? JackTools.run(ip, ["netns", "del", ns], server: "")
            FileHandle.standardError.write(Data("NetJackRig: removed namespace \(ns) of process \(pid), which is gone\n".utf8))
        }
    }

    private static func end(_ p: ChildProcess, name: String) {
        guard p.isRunning else { return }
        p.send(SIGTERM)
        if !p.wait(timeout: .seconds(5)) {
            p.send(SIGKILL)
            p.wait(timeout: .seconds(5))
            // A killed jackd keeps its slot in JACK's registry until a server of its name
            // stops cleanly (see JackServer.kill(signal:)).
            (try? JackServer(name: name, timeout: .seconds(5)))?.stop()
        }
    }
}
