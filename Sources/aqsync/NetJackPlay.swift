import AQCore
import AQEngine
import AQJack
import AQSession
import ArgumentParser
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `--netjack-master` and `--netjack-slave` of `aqsync play`: a part on a netjack2 slave that
/// leaves the master's outputs on the same frame as the master's part (issue 26,
/// docs/netjack.md "A part on a slave").
extension PlayCommand {
    /// The three full port names of `--netjack-master` / `--netjack-slave`, or a
    /// ValidationError naming the option.
    static func netJackPorts(_ value: String, option: String, what: String) throws -> [String] {
        let names = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard names.count == 3, names.allSatisfy({ n in
            guard let colon = n.firstIndex(of: ":") else { return false }
            return colon != n.startIndex && n.index(after: colon) != n.endIndex
        }) else {
            throw ValidationError("\(option) takes three full JACK port names, CLIENT:PORT, separated by commas (\(what)), not '\(value)'")
        }
        return names
    }

    /// Checks `--netjack-master` (each given) and `--netjack-slave`: their ports, that no
    /// port serves two slaves' links, and the options they exclude. Part of ``validate()``: a
    /// ValidationError (status 64).
    func validateNetJack() throws {
        if !netjackMaster.isEmpty && netjackSlave != nil { throw ValidationError("--netjack-master and --netjack-slave exclude each other (one aqsync is one side of the link)") }
        let option = netjackMaster.isEmpty ? "--netjack-slave" : "--netjack-master"
        let values = netjackMaster.isEmpty ? (netjackSlave.map { [$0] } ?? []) : netjackMaster
        guard !values.isEmpty else { return }
        var seen: [String: Int] = [:]
        for (k, value) in values.enumerated() {
            let ports = try Self.netJackPorts(
                value, option: option,
                what: netjackMaster.isEmpty
                    ? "the capture port the master's frame stamps arrive on, the capture port of its start stamp, the playback port the stamps are echoed on"
                    : "the slave's to_slave port for the frame stamps, its to_slave port for the start stamp, its from_slave port the slave echoes the stamps on")
            for port in ports {
                if let other = seen[port] {
                    throw ValidationError(other == k
                        ? "\(option) '\(value)' names \(port) twice: each of its three ports is another"
                        : "--netjack-master '\(value)' names \(port), which the \(ordinal(other + 1)) --netjack-master names too: each slave's link has its own to_slave and from_slave ports (two echoes on one port add up, and L reads nonsense)")
                }
                seen[port] = k
            }
        }
        if sessions.count > 1 { throw ValidationError("\(option) starts one session, not a set list") }
        if let transport { throw ValidationError("\(option) and --transport \(transport) exclude each other: the transport would say when the session plays") }
        if netjackSlave != nil, startAt != nil {
            throw ValidationError("--netjack-slave and --start-at exclude each other: the master's start stamp says when the part plays (give --start-at to the master)")
        }
    }

    private func ordinal(_ n: Int) -> String { n == 1 ? "1st" : n == 2 ? "2nd" : n == 3 ? "3rd" : "\(n)th" }

    /// The master's links, one per `--netjack-master` (in the order given): its three ports,
    /// the names of its side ports on this aqsync's client (`netjack_stamp`, `netjack_start`
    /// for one slave; `netjack_stamp_K`, `netjack_start_K` for several), the suffix of its
    /// echo reader's client name (`-echo`; `-echoK`) and the name the logs give it (`slave
    /// CLIENT`, the slave's client on the master; `link K (CLIENT)` when two links name the
    /// same client).
    var netJackMasterLinks: [(ports: [String], stamp: String, start: String, echo: String, label: String)] {
        let triples = netjackMaster.compactMap { try? Self.netJackPorts($0, option: "", what: "") }
        let clients = triples.map { String($0[0].prefix { $0 != ":" }) }
        return triples.enumerated().map { k, p in
            let n = triples.count == 1 ? "" : "_\(k + 1)"
            let label = clients.filter { $0 == clients[k] }.count > 1 ? "link \(k + 1) (\(clients[k]))" : "slave \(clients[k])"
            return (p, "netjack_stamp\(n)", "netjack_start\(n)", triples.count == 1 ? "-echo" : "-echo\(k + 1)", label)
        }
    }

    /// The device's side ports for the netjack2 links (none without one): on the master two
    /// outputs per slave, in the order of the options; on the slave two inputs and one output.
    var netJackSidePorts: JackSidePorts {
        if !netjackMaster.isEmpty {
            return JackSidePorts(outputs: netJackMasterLinks.flatMap { [($0.stamp, $0.ports[0]), ($0.start, $0.ports[1])] })
        }
        if let v = netjackSlave, let p = try? Self.netJackPorts(v, option: "", what: "") {
            return JackSidePorts(outputs: [("netjack_echo", p[2])], inputs: [("netjack_stamp", p[0]), ("netjack_start", p[1])])
        }
        return JackSidePorts()
    }
}

/// One running link: its state, on the master its echo reader, and where its start was
/// placed. A master has one per slave (``NetJackSides``), a slave one.
final class NetJackSide: @unchecked Sendable {
    let link: NetJackLink
    let reader: JackEchoReader?
    /// The name the logs give the link on a master (`slave CLIENT`); "" on a slave.
    let label: String
    /// The value of D (slave) or L (master) the start was placed by.
    let placedBy = Atomic<Int>(0)
    let placed = Atomic<Bool>(false)
    /// Master: the session's start (master device frame), for the start stamp carried anew
    /// when L changes. Slave: the device frame the part is placed on now (moved back into
    /// step by ``keepInStep(_:_:)``).
    let placedFrame = Atomic<Int64>(0)

    /// Master: the link's three ports on the master (TO1, TO2, FROM) as connected now: those
    /// given, or those of the client the slave rejoined as (``follow(on:others:)``). Slave:
    /// none. Watcher thread (and the report).
    let ports: Mutex<[String]>

    init(link: NetJackLink, reader: JackEchoReader?, label: String = "", ports: [String] = []) {
        self.link = link
        self.reader = reader
        self.label = label
        self.ports = Mutex(ports)
    }

    /// The client part of a full port name (`CLIENT` of `CLIENT:PORT`).
    static func client(of port: String) -> String { String(port.prefix { $0 != ":" }) }

    /// `s` with the characters of a POSIX extended regular expression escaped.
    static func regexEscaped(_ s: String) -> String {
        var out = ""
        for ch in s {
            if ".[]()*+?{}|^$\\".contains(ch) { out.append("\\") }
            out.append(ch)
        }
        return out
    }

    /// Master, watcher thread: when the link's slave client is gone from the master and the
    /// slave has joined again under another name, moves the link there. netjack2 names a slave
    /// that joins while the master still holds a client of its name (a slave restarted before
    /// the master let go of it) `NAME-01` (JACK's rule for a duplicate client name), and the
    /// old client goes about 2 s later: the link's ports are then on no client. A client named
    /// `BASE` or `BASE-NN` (BASE: the client the link was given) that has the link's three
    /// ports and that no other link (`others`: their clients now) names is the slave; when
    /// exactly one is, the device's side connections and the echo reader move to its ports
    /// (connected by the next ``JackDevice/reconnectMissingConnections()``). Returns what to
    /// report, or nil.
    func follow(on device: JackDevice, others: Set<String>, base: String, ambiguous: inout Set<String>) -> String? {
        let now = ports.withLock { $0 }
        guard now.count == 3, !device.hasPort(now[0]) else { return nil }
        let current = Self.client(of: now[0])
        let shorts = now.map { String($0.drop { $0 != ":" }.dropFirst()) }
        let pattern = "^\(Self.regexEscaped(base))(-[0-9]+)?:\(Self.regexEscaped(shorts[0]))$"
        let candidates = Set(device.portNames(matching: pattern).map(Self.client(of:)))
            .filter { c in c != current && !others.contains(c) && shorts.allSatisfy { device.hasPort("\(c):\($0)") } }
            .sorted()
        guard let new = candidates.first else { return nil }
        guard candidates.count == 1 else {
            let key = candidates.joined(separator: ",")
            if ambiguous.contains(key) { return nil }
            ambiguous.insert(key)
            return "\(tag): its client \(current) is gone from the master and \(candidates.joined(separator: ", ")) joined there: which is this slave cannot be told; the link is not moved (give --netjack-master the slave's client by name)"
        }
        let moved = shorts.map { "\(new):\($0)" }
        device.retargetSideConnections([now[0]: moved[0], now[1]: moved[1]])
        reader?.retarget(from: moved[2])
        ports.withLock { $0 = moved }
        return "\(tag): its client \(current) is gone from the master and \(new) joined there (netjack2's name for a slave that joined again while the master still held its old client): the link follows it to \(moved.joined(separator: ", "))"
    }

    var name: String { link.role == .master ? "L" : "D" }
    /// What this link's lines begin with: `netjack` (a slave), `netjack (slave CLIENT)` (a
    /// master's link).
    var tag: String { label.isEmpty ? "netjack" : "netjack (\(label))" }

    /// What ``keepInStep(_:_:)`` remembers between turns of the watcher.
    struct InStep {
        /// Master: the L the start stamp carries. Slave: the start frame the stamps gave and
        /// for how many turns it has stayed.
        var carried: Int?
        var seen: Int64?
        var steady = 0
        /// Slave: the start frame a move to failed for (not tried again for the same frame:
        /// the player has ended, stopped or is paused).
        var failed: Int64?
    }

    /// The line reporting that D or L moved since `seen` (the watcher's previous reading), or
    /// nil when it did not; `seen` becomes the reading compared.
    func change(since seen: inout NetJackLink.Watch) -> String? {
        let w = link.watch
        defer { seen = w }
        guard w.changes != seen.changes || w.latest != seen.latest, let now = w.latest else { return nil }
        let was = seen.latest ?? now
        let n = w.changes - seen.changes
        var line = was == now
            ? "\(tag): \(name) moved and came back to \(now) (\(n) changes within 20 ms; a lost cycle)"
            : "\(tag): \(name) changed from \(was) to \(now) (\(n) change(s); a lost cycle or the slave rejoining)"
        if placed.load(ordering: .acquiring), was != now {
            // What the slave plays at its frame s leaves the master at s − D + L.
            let by = placedBy.load(ordering: .relaxed)
            let off = link.role == .master ? now - by : -(now - by)
            line += ": the slave's part now leaves the master's outputs \(off == 0 ? "on its frame again" : "\(abs(off)) frames \(off > 0 ? "late" : "early")")"
        }
        return line
    }

    /// One turn of keeping the parts in step, on the watcher thread; returns what to report.
    ///
    /// - Master: when L (the latest echo of this link's slave) differs from the L its start
    ///   stamp carries, the stamp carries the start by the new L from the next cycle on
    ///   (``NetJackLink/setRenderStamp(masterStart:latency:)``): only this slave's.
    /// - Slave: when the start frame the stamps give (the new D's, the master's new L's) has
    ///   differed from where the part is placed for 10 turns in a row (200 ms: a rejoin
    ///   settles D and then L), the part is moved there (``SessionPlayer/shift(by:lead:)``);
    ///   compared on the stamps' 24-bit circle, so a part playing longer than the stamps'
    ///   ±175 s still compares right.
    func keepInStep(_ player: SessionPlayer, _ state: inout InStep) -> String? {
        guard placed.load(ordering: .acquiring) else { return nil }
        if link.role == .master {
            guard let l = link.watch.latest else { return nil }
            let carried = state.carried ?? placedBy.load(ordering: .relaxed)
            state.carried = carried
            guard l != carried else { return nil }
            state.carried = l
            link.setRenderStamp(masterStart: placedFrame.load(ordering: .relaxed), latency: l)
            return "\(tag): the start stamp now carries the start by L = \(l) (was \(carried)): the slave moves its part back into step"
        }
        guard let (frame, _) = link.slaveStart else { return nil }
        let placedAt = placedFrame.load(ordering: .relaxed)
        let delta = Int64(FrameStamp.offset(from: Int(UInt64(bitPattern: placedAt) & 0xFF_FFFF), to: UInt64(bitPattern: frame)))
        guard delta != 0, state.failed != frame else {
            state.steady = 0
            return nil
        }
        if state.seen == frame { state.steady += 1 } else { state.seen = frame; state.steady = 1 }
        guard state.steady >= 10 else { return nil }
        state.steady = 0
        do throws(SessionError) {
            let (moved, _) = try player.shift(by: delta)
            placedFrame.store(placedAt + moved, ordering: .relaxed)
            let how = moved == delta ? "" : " (\(moved) frames: the refill took longer than its lead; moved again next)"
            return "\(tag): the part moved back into step: \(abs(delta)) frames \(delta > 0 ? "later" : "earlier")\(how), where the master's stamps place it (slave device frame \(placedAt + moved) for its start)"
        } catch {
            state.failed = frame
            return "\(tag): the part could not be moved back into step (\(abs(delta)) frames \(delta > 0 ? "later" : "earlier")): \(error.description)"
        }
    }

    /// The end-of-run line.
    var report: String {
        let w = link.watch
        let what = link.role == .master ? "L (slave→master latency, master device frames)" : "D (slave device frame − master device frame)"
        var line = "netjack \(link.role == .master ? "master" : "slave")\(label.isEmpty ? "" : " (\(label))"): \(what): \(w)"
        if placed.load(ordering: .acquiring) { line += "; the start was placed by \(name) = \(placedBy.load(ordering: .relaxed))" }
        if let now = ports.withLock({ $0.first }), !label.isEmpty, !label.contains(Self.client(of: now)) {
            line += "; the link followed the slave to its client \(Self.client(of: now))"
        }
        return line
    }
}

/// Every link of this aqsync (a master: one per slave; a slave: one), the hook that drives
/// them (``NetJackLinks``, fixed before the device calls it), and the watcher that reports D
/// or L moving while the session plays and keeps each link's part in step.
final class NetJackSides: @unchecked Sendable {
    let sides: [NetJackSide]
    /// The hook's group of links: kept with the sides until the device no longer calls it.
    let group: NetJackLinks
    /// What the links did, for the end of the run (watcher thread; read at the end).
    let changes = Mutex<[String]>([])
    private let stopping = Atomic<Bool>(false)
    private var thread: Thread?

    init(_ sides: [NetJackSide]) {
        self.sides = sides
        group = NetJackLinks(sides.map(\.link))
    }

    var isMaster: Bool { sides.first?.link.role == .master }

    /// Watches each link's D or L every 20 ms from now on: a change (a cycle lost, a slave
    /// rejoining) is printed on stderr at once, naming the link, and kept for the report.
    /// Every 100 ms, the links' connections that went missing are made again (a slave that
    /// rejoined the master, after a period change or a restart, has new ports there), and
    /// said so. The parts are kept in step link by link: the master carries a slave's start
    /// stamp by that slave's new L (``NetJackSide/keepInStep(_:_:)``), the slave moves its part
    /// (`player`) to where the stamps place it.
    func watch(device: JackDevice, player: SessionPlayer) {
        let t = Thread { [self] in
            var seen = sides.map { $0.link.watch }
            var steppers = sides.map { _ in NetJackSide.InStep() }
            var turn = 0
            let name = isMaster ? "L" : "D"
            var reconnections = device.reconnectionCount
            let bases = sides.map { NetJackSide.client(of: $0.ports.withLock { $0.first ?? "" }) }
            var ambiguous = Set<String>()
            func say(_ line: String) {
                printError(line)
                changes.withLock { $0.append(line) }
            }
            while !stopping.load(ordering: .relaxed) {
                usleep(20_000)
                turn += 1
                for (k, side) in sides.enumerated() {
                    if let line = side.keepInStep(player, &steppers[k]) { say(line) }
                }
                if turn % 5 == 0 {
                    // This side's own server came back (restarted): the device resumed and made
                    // its own connections again itself; the link is then learnt afresh in-band.
                    let n = device.reconnectionCount
                    if n != reconnections {
                        reconnections = n
                        say(isMaster
                            ? "netjack: the master's server came back: each link is connected again once its slave has rejoined, L is read afresh"
                            : "netjack: the slave's server came back (restarted; it rejoins the master by itself): the link's connections are made again, D is read afresh from the master's stamps and the part is moved back into step once they settle")
                    }
                    if isMaster {
                        // A slave that rejoined under another client name (NAME-01): followed.
                        for (k, side) in sides.enumerated() {
                            let others = Set(sides.enumerated().filter { $0.offset != k }.map { NetJackSide.client(of: $0.element.ports.withLock { $0.first ?? "" }) })
                            if let line = side.follow(on: device, others: others, base: bases[k], ambiguous: &ambiguous) { say(line) }
                        }
                    }
                    var made = device.reconnectMissingConnections()
                    for side in sides {
                        let reader = side.reader
                        switch reader?.reconnect() {
                        case .connected?: made.append("(the echo\(side.label.isEmpty ? "" : " of \(side.label)")) -> \(reader?.clientName ?? ""):in")
                        case .reopened?: made.append("(the echo reader reopened: the server came back) -> \(reader?.clientName ?? ""):in")
                        default: break
                        }
                    }
                    if !made.isEmpty {
                        say("netjack: connected again (the slave rejoined?): \(made.joined(separator: ", ")); \(name) is read afresh")
                    }
                }
                for (k, side) in sides.enumerated() {
                    if let line = side.change(since: &seen[k]) { say(line) }
                }
            }
        }
        t.name = "aqsync netjack watch"
        thread = t
        t.start()
    }

    /// Stops the watcher and the readers.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        while let t = thread, !t.isFinished { usleep(5_000) }
        for side in sides { side.reader?.close() }
    }

    /// The end-of-run lines, one per link.
    var report: [String] {
        let n = changes.withLock { $0.count }
        return sides.enumerated().map { k, side in side.report + (k == sides.count - 1 && n > 0 ? "; \(n) change(s) reported while playing" : "") }
    }
}

extension Player {
    /// Sets the links up on a started device: on the master one link and one echo reader per
    /// `--netjack-master`, all made before the hook is set (the hook's table of links is fixed
    /// then); on the slave its link. Prints and returns nil when a reader cannot be opened.
    func startNetJack(device: JackDevice) -> NetJackSides? {
        var sides: [NetJackSide] = []
        if !command.netjackMaster.isEmpty {
            for spec in command.netJackMasterLinks {
                let link = NetJackLink(role: .master)
                do throws(DeviceError) {
                    let reader = try JackEchoReader(server: command.server ?? device.serverName, name: "\(device.clientName)\(spec.echo)", from: spec.ports[2], link: link)
                    sides.append(NetJackSide(link: link, reader: reader, label: spec.label, ports: spec.ports))
                } catch {
                    printError("--netjack-master (\(spec.label)): \(error.message)")
                    for side in sides { side.reader?.close() }
                    return nil
                }
            }
        } else {
            sides = [NetJackSide(link: NetJackLink(role: .slave), reader: nil)]
        }
        let all = NetJackSides(sides)
        netJackKeep.withLock { $0 = all }  // before the device can call the hook
        device.setCycleHook(all.group.hook)
        let names = device.sidePortNames
        if all.isMaster {
            for (k, side) in sides.enumerated() where 2 * k + 1 < names.count {
                log("netjack master, \(side.label): frame stamps on \(names[2 * k]), the start stamp on \(names[2 * k + 1]); the slave's echo read by \(side.reader?.clientName ?? "?"):in")
            }
        } else {
            log("netjack slave: the master's stamps read on \(names[1]) and \(names[2]), echoed on \(names[0])")
        }
        return all
    }

    /// Master: waits until every slave's echo gives its L (at most until `deadline`), and
    /// returns them in the links' order; nil (printed, naming each slave whose echo did not
    /// come) when one did not, or a stop signal came.
    func netJackLatencies(_ all: NetJackSides, until deadline: Date) -> [Int]? {
        // Two periods of echo at least: the first stamps may still be settling.
        func ready(_ s: NetJackSide) -> Bool { s.link.watch.latest != nil && s.link.watch.stamps >= 1024 }
        while Date() < deadline {
            if caughtSignal.load(ordering: .relaxed) != 0 { return nil }
            if all.sides.allSatisfy(ready) { return all.sides.map { $0.link.watch.latest ?? 0 } }
            usleep(5_000)
        }
        let missing = all.sides.filter { $0.link.watch.latest == nil }
        if missing.isEmpty { return all.sides.map { $0.link.watch.latest ?? 0 } }
        let which = missing.map { "\($0.reader.map { "\($0.clientName):in" } ?? "the echo port") (\($0.label))" }.joined(separator: ", ")
        let heard = all.sides.count > missing.count
            ? " (the echo of \(all.sides.filter { $0.link.watch.latest != nil }.map(\.label).joined(separator: ", ")) came)" : ""
        printError("--netjack-master: no echo of the master's frame stamps came back on \(which) before the start had to be decided\(heard): each slave's aqsync must run (--netjack-slave, echoing the stamps on the playback port that reaches its from_slave port) before the master starts; nothing started")
        return nil
    }

    /// Master: the session started on master device frame `start`: each link's start stamp
    /// carries it by that slave's own L (read again now; `latencies` when none), and is logged.
    func netJackMasterPlaced(_ all: NetJackSides, start s: Int64, latencies: [Int]) {
        for (k, side) in all.sides.enumerated() {
            // L again, at the decision (it moves only with a lost cycle).
            let latency = side.link.watch.latest ?? latencies[k]
            side.link.setRenderStamp(masterStart: s, latency: latency)
            side.placedBy.store(latency, ordering: .relaxed)
            side.placedFrame.store(s, ordering: .relaxed)
            side.placed.store(true, ordering: .releasing)
            log("netjack master: L = \(latency) for \(side.label) (slave→master, measured from the echo: \(side.link.watch)); it renders its part at master frame \(s - Int64(latency)) (start stamp \(Int(NetJackStart.renderStamp(masterStart: s, latency: latency))))")
        }
    }

    /// Slave: waits for the master's start stamp, then, `--lead` before the frame it gives,
    /// starts the session there (the latest D's: a cycle the slave loses while waiting moves D
    /// and the frame by a period). Returns the frame, or nil when a stop signal came while
    /// waiting.
    /// - Throws: ``SessionError`` when the stamp came too late for that frame (nothing starts),
    ///   or a track cannot start.
    func netJackSlaveStart(_ side: NetJackSide, player: SessionPlayer, engine: AudioQueueEngine, rate: Double) throws(SessionError) -> Int64? {
        log("netjack slave: waiting for the master's start stamp")
        var dLogged = false
        var first: (frame: Int64, d: Int)?
        let lead = Int64((command.lead * rate).rounded(.up))
        while true {
            if caughtSignal.load(ordering: .relaxed) != 0 { return nil }
            if !dLogged, let d = side.link.watch.latest {
                log("netjack slave: D = \(d) (slave device frame − master device frame)")
                dLogged = true
            }
            guard let (frame, _) = side.link.slaveStart else {
                usleep(1_000)
                continue
            }
            let earliest = Int64(engine.nearestStartTime().sampleTime)
            if let why = NetJackStart.refusal(frame: frame, earliest: earliest, sampleRate: rate) {
                throw SessionError(.playback, file: session.url.path, why)
            }
            let d = side.link.watch.latest ?? 0
            if first == nil {
                first = (frame, d)
                log("netjack slave: the master's start stamp gives slave device frame \(frame) (D = \(d): master frame \(frame - Int64(d)) rendered there), \(String(format: "%.3f", Double(frame - Int64(engine.deviceCurrentTime().sampleTime)) / rate)) s ahead; placed --lead (\(command.lead) s) before it")
            }
            // Placed `--lead` before the frame, by the latest D.
            if frame - Int64(engine.deviceCurrentTime().sampleTime) > lead {
                usleep(1_000)
                continue
            }
            side.placedBy.store(d, ordering: .relaxed)
            side.placedFrame.store(frame, ordering: .relaxed)
            side.placed.store(true, ordering: .releasing)
            let s = try player.start(at: AudioTimeStamp(sampleTime: Double(frame)))
            if s != frame {
                player.stop()
                throw SessionError(.playback, file: session.url.path, "the master's start stamp came too late: the part had to start at slave device frame \(frame) and the engine could start it only at \(s); nothing plays")
            }
            if let first, first.frame != frame {
                log("netjack slave: D moved from \(first.d) to \(d) while waiting (a lost cycle): the part starts at slave device frame \(frame), the same master frame")
            }
            return s
        }
    }
}
