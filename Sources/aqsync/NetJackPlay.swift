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

    /// Checks `--netjack-master` and `--netjack-slave`: their ports, and the options they
    /// exclude. Part of ``validate()``: a ValidationError (status 64).
    func validateNetJack() throws {
        let master = netjackMaster.map { ("--netjack-master", $0) }, slave = netjackSlave.map { ("--netjack-slave", $0) }
        if master != nil && slave != nil { throw ValidationError("--netjack-master and --netjack-slave exclude each other (one aqsync is one side of the link)") }
        guard let (option, value) = master ?? slave else { return }
        _ = try Self.netJackPorts(
            value, option: option,
            what: master != nil
                ? "the slave's to_slave port for the frame stamps, its to_slave port for the start stamp, its from_slave port the slave echoes the stamps on"
                : "the capture port the master's frame stamps arrive on, the capture port of its start stamp, the playback port the stamps are echoed on")
        if sessions.count > 1 { throw ValidationError("\(option) starts one session, not a set list") }
        if let transport { throw ValidationError("\(option) and --transport \(transport) exclude each other: the transport would say when the session plays") }
        if slave != nil, startAt != nil {
            throw ValidationError("--netjack-slave and --start-at exclude each other: the master's start stamp says when the part plays (give --start-at to the master)")
        }
    }

    /// The device's side ports for the netjack2 link (none without one).
    var netJackSidePorts: JackSidePorts {
        if let v = netjackMaster, let p = try? Self.netJackPorts(v, option: "", what: "") {
            return JackSidePorts(outputs: [("netjack_stamp", p[0]), ("netjack_start", p[1])])
        }
        if let v = netjackSlave, let p = try? Self.netJackPorts(v, option: "", what: "") {
            return JackSidePorts(outputs: [("netjack_echo", p[2])], inputs: [("netjack_stamp", p[0]), ("netjack_start", p[1])])
        }
        return JackSidePorts()
    }
}

/// The running link: its state, the master's echo reader, and the watcher that reports D or L
/// moving while the session plays.
final class NetJackSide: @unchecked Sendable {
    let link: NetJackLink
    let reader: JackEchoReader?
    /// What the link did, for the end of the run (watcher thread; read at the end).
    let changes = Mutex<[String]>([])
    private let stopping = Atomic<Bool>(false)
    private var thread: Thread?
    /// The value of D (slave) or L (master) the start was placed by.
    let placedBy = Atomic<Int>(0)
    let placed = Atomic<Bool>(false)
    /// Master: the session's start (master device frame), for the start stamp carried anew
    /// when L changes. Slave: the device frame the part is placed on now (moved back into
    /// step by ``keepInStep(_:)``).
    let placedFrame = Atomic<Int64>(0)

    init(link: NetJackLink, reader: JackEchoReader?) {
        self.link = link
        self.reader = reader
    }

    var name: String { link.role == .master ? "L" : "D" }

    /// Watches D or L every 20 ms from now on: a change (a cycle lost, the slave rejoining) is
    /// printed on stderr at once and kept for the report. Every 100 ms, the link's
    /// connections that went missing are made again (a slave that rejoined the master, after a
    /// period change or a restart, has new ports there), and said so. The parts are kept in
    /// step: the master carries the start stamp by the new L (``keepInStep(_:)``), the slave
    /// moves its part (`player`) to where the stamps place it.
    func watch(device: JackDevice, player: SessionPlayer) {
        let t = Thread { [self] in
            var seen = link.watch
            var turn = 0
            var stepper = InStep()
            while !stopping.load(ordering: .relaxed) {
                usleep(20_000)
                turn += 1
                if let line = keepInStep(player, &stepper) {
                    printError(line)
                    changes.withLock { $0.append(line) }
                }
                if turn % 5 == 0 {
                    var made = device.reconnectMissingConnections()
                    switch reader?.reconnect() {
                    case .connected?: made.append("(the echo) -> \(reader?.clientName ?? ""):in")
                    case .reopened?: made.append("(the echo reader reopened: the server came back) -> \(reader?.clientName ?? ""):in")
                    default: break
                    }
                    if !made.isEmpty {
                        let line = "netjack: connected again (the slave rejoined?): \(made.joined(separator: ", ")); \(name) is read afresh"
                        printError(line)
                        changes.withLock { $0.append(line) }
                    }
                }
                let w = link.watch
                guard w.changes != seen.changes || w.latest != seen.latest, let now = w.latest else {
                    seen = w
                    continue
                }
                let was = seen.latest ?? now
                let n = w.changes - seen.changes
                var line = was == now
                    ? "netjack: \(name) moved and came back to \(now) (\(n) changes within 20 ms; a lost cycle)"
                    : "netjack: \(name) changed from \(was) to \(now) (\(n) change(s); a lost cycle or the slave rejoining)"
                if placed.load(ordering: .acquiring), was != now {
                    // What the slave plays at its frame s leaves the master at s − D + L.
                    let by = placedBy.load(ordering: .relaxed)
                    let off = link.role == .master ? now - by : -(now - by)
                    line += ": the slave's part now leaves the master's outputs \(off == 0 ? "on its frame again" : "\(abs(off)) frames \(off > 0 ? "late" : "early")")"
                }
                printError(line)
                changes.withLock { $0.append(line) }
                seen = w
            }
        }
        t.name = "aqsync netjack watch"
        thread = t
        t.start()
    }

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

    /// One turn of keeping the parts in step, on the watcher thread; returns what to report.
    ///
    /// - Master: when L (the latest echo) differs from the L the start stamp carries, the
    ///   stamp carries the start by the new L from the next cycle on (``NetJackLink/setRenderStamp(masterStart:latency:)``).
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
            return "netjack: the start stamp now carries the start by L = \(l) (was \(carried)): the slave moves its part back into step"
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
            return "netjack: the part moved back into step: \(abs(delta)) frames \(delta > 0 ? "later" : "earlier")\(how), where the master's stamps place it (slave device frame \(placedAt + moved) for its start)"
        } catch {
            state.failed = frame
            return "netjack: the part could not be moved back into step (\(abs(delta)) frames \(delta > 0 ? "later" : "earlier")): \(error.description)"
        }
    }

    /// Stops the watcher and the reader.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        while let t = thread, !t.isFinished { usleep(5_000) }
        reader?.close()
    }

    /// The end-of-run line.
    var report: String {
        let w = link.watch
        let what = link.role == .master ? "L (slave→master latency, master device frames)" : "D (slave device frame − master device frame)"
        var line = "netjack \(link.role == .master ? "master" : "slave"): \(what): \(w)"
        if placed.load(ordering: .acquiring) { line += "; the start was placed by \(name) = \(placedBy.load(ordering: .relaxed))" }
        let n = changes.withLock { $0.count }
        if n > 0 { line += "; \(n) change(s) reported while playing" }
        return line
    }
}

extension Player {
    /// Sets the link up on a started device: the hook, and on the master the echo reader.
    /// Prints and returns nil when the reader cannot be opened.
    func startNetJack(device: JackDevice) -> NetJackSide? {
        let master = command.netjackMaster != nil
        let link = NetJackLink(role: master ? .master : .slave)
        var reader: JackEchoReader?
        if master, let v = command.netjackMaster, let p = try? PlayCommand.netJackPorts(v, option: "", what: "") {
            do throws(DeviceError) {
                reader = try JackEchoReader(server: command.server ?? device.serverName, name: "\(device.clientName)-echo", from: p[2], link: link)
            } catch {
                printError("--netjack-master: \(error.message)")
                return nil
            }
        }
        let side = NetJackSide(link: link, reader: reader)
        netJackKeep.withLock { $0 = side }  // before the device can call the hook
        device.setCycleHook(link.hook)
        let names = device.sidePortNames
        if master {
            log("netjack master: frame stamps on \(names[0]), the start stamp on \(names[1]); the slave's echo read by \(reader?.clientName ?? "?"):in")
        } else {
            log("netjack slave: the master's stamps read on \(names[1]) and \(names[2]), echoed on \(names[0])")
        }
        return side
    }

    /// Master: waits until the slave's echo gives L (at most until `deadline`), and returns it;
    /// nil (printed) when none came or a stop signal came.
    func netJackLatency(_ side: NetJackSide, until deadline: Date) -> Int? {
        while Date() < deadline {
            if caughtSignal.load(ordering: .relaxed) != 0 { return nil }
            // Two periods of echo at least: the first stamps may still be settling.
            if let l = side.link.watch.latest, side.link.watch.stamps >= 1024 { return l }
            usleep(5_000)
        }
        if let l = side.link.watch.latest { return l }
        printError("--netjack-master: no echo of the master's frame stamps came back on \(side.reader.map { "\($0.clientName):in" } ?? "the echo port") before the start had to be decided: the slave's aqsync must run (--netjack-slave, echoing the stamps on the playback port that reaches this from_slave port) before the master starts; nothing started")
        return nil
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
