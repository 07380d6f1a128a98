import AQEngine
import AQJack
import AQJackServer
import AQSession
import ArgumentParser
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `aqsync play SESSION` (also `aqsync SESSION`): every track of the session through JACK,
/// each on its exact frame. Exits when the last track has played; Ctrl-C stops at once.
/// Several sessions are a set list: played in turn, each where the previous one ended (after
/// its `[session] gap`), as `aqsync render A B C` renders them (``SetListPlayback``).
struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a session (or a set list of sessions, in turn) through JACK, every track on its exact frame (the default command).",
        discussion: """
            Exit status: 0 when every track played to its end with no frame lost; 1 when the \
            session or the server was refused (nothing plays), a track, a take or the capture failed \
            (its file keeps what was written), or the server went away for good; 3 when frames were lost \
            (a track played late or not at all, a take or the capture missed frames, the server lost frames, or it \
            went away and came back, or a session of a set list started late) and --allow-loss was not given; 128 + the \
            signal after SIGINT (Ctrl-C, 130), SIGTERM (143) or SIGHUP (129), each a clean stop.
            """)

    @Argument(help: "The session file (TOML, see docs/session-format.md); several: a set list, played one after another, each where the previous one ended (after its [session] gap), as 'aqsync render' renders them.")
    var sessions: [String]

    @Option(help: ArgumentHelp("Connect output i to port i (overrides the session's [output] connect).", valueName: "PORT,PORT,..."))
    var connect: String?

    @Flag(help: "Connect the outputs to nothing.")
    var noConnect = false

    @Option(help: "JACK server name (default: JACK_DEFAULT_SERVER, else \"default\").")
    var server: String?

    @Option(help: "JACK client name (overrides the session's [output] client_name).")
    var clientName: String?

    @Option(help: ArgumentHelp("Record every capture port of the client to this float WAV file: the takes' ports, then what the engine sent, taken back through inputs of its own (raw, file frame 0 at the device frame the log names).", valueName: "FILE.wav"))
    var capture: String?

    @Flag(help: "Refuse to play when no JACK server is reachable, instead of starting a private one.")
    var noStartServer = false

    @Option(help: "Seconds between the command and the session start (time to fill every track's buffers).")
    var lead: Double = 0.25

    @Flag(help: "Exit 0 even when frames were lost (xruns, a server that went away and came back).")
    var allowLoss = false

    @Flag(help: ArgumentHelp(
        "When the server loses time (an xrun or overrun, a server that went away and came back), skip those frames so that every track stays with the wall clock.",
        discussion: "The default depends on the server: kept on jackd2 (every client still processed every cycle), skipped on PipeWire (its overrun really drops the cycle). docs/timing.md"))
    var followWallClock = false

    @Flag(help: "When the server loses time, keep every frame: the tracks stay in step with the other JACK clients and fall behind the wall clock.")
    var keepEveryFrame = false

    @Flag(help: "When the JACK server goes away, stop instead of waiting for it to come back.")
    var noReconnect = false

    @Option(help: "Seconds to wait for a JACK server that went away to come back before giving up.")
    var reconnectTimeout: Double = 60

    @Option(help: ArgumentHelp("Start at this session position: seconds (90), m:ss.sss (1:30), frames:N (at the session rate) or a marker's name.", valueName: "POSITION"))
    var from: String?

    @Option(help: ArgumentHelp("follow: the session plays where JACK's transport is (slow-sync: it rolls once every track is primed), silent while it is stopped; lead: the same, after locating the transport to the session's start and starting it, stopping it at the session's end (docs/transport.md).", valueName: "follow|lead"))
    var transport: String?

    @Option(help: ArgumentHelp("With --transport follow: session frame 0 is this transport frame (default 0).", valueName: "FRAMES"))
    var transportOffset: Int64 = 0

    @Flag(help: "With --transport follow: exit (status 0) once the transport rolls past the session's end.")
    var exitAtEnd = false

    @Option(help: ArgumentHelp("Play only the tracks (and record only the takes) of this part: those with part = \"NAME\" (tracks without a part play only when no part is chosen; docs/multi-machine.md).", valueName: "NAME"))
    var part: String?

    @Option(help: ArgumentHelp("Start the session (frame 0, or --from's position) on the device frame of this wall-clock (CLOCK_REALTIME) instant: ISO 8601 with a zone (2026-11-27T12:00:03.250Z) or seconds from now (+3, +2.5s); at least --lead ahead, else refused; refused too when the server's clock runs more than 1000 ppm off nominal (docs/multi-machine.md).", valueName: "INSTANT"))
    var startAt: String?

    @Option(help: ArgumentHelp("On a netjack2 master: write the frame stamps of this aqsync's device frames to a slave's TO1, the stamp of the master frame the slave's part must render at (the session start minus that slave's slave→master latency L) to TO2, and measure L from the slave's echo on FROM; the slave's aqsync (--netjack-slave) then leaves its part on the master's outputs on the same frame as this one's. Give it once per slave (each slave's own to_slave/from_slave ports): every link has its own stamps, L and start stamp, and the master starts once every slave's L is known (docs/netjack.md).", valueName: "TO1,TO2,FROM"))
    var netjackMaster: [String] = []

    @Option(help: ArgumentHelp("On a netjack2 slave: read the master's frame stamps on capture port CAP1 and its start stamp on CAP2, echo the stamps on playback port PLAY, and start the session on the slave frame the master's start stamp gives (instead of --lead or --start-at); refused if it comes too late (docs/netjack.md).", valueName: "CAP1,CAP2,PLAY"))
    var netjackSlave: String?

    @Option(help: ArgumentHelp("Take OSC commands on this UDP port (docs/control.md).", valueName: "PORT"))
    var osc: Int?

    @Option(help: ArgumentHelp("With --osc: the IPv4 address to listen on (default 127.0.0.1: this machine only).", valueName: "ADDRESS"))
    var oscHost: String = "127.0.0.1"

    func validate() throws {
        if sessions.isEmpty { throw ValidationError("give a session file") }
        if sessions.count > 1 {
            // A set list: options that apply to one session only are refused.
            if from != nil { throw ValidationError("--from applies to one session, not to a set list") }
            if let transport { throw ValidationError("--transport \(transport) plays one session (the transport's position is one session's): not a set list") }
        }
        if let from { try checkFromOption(from) }
        try validateStartAtAndPart()
        try validateNetJack()
        if let osc, !(1...65535).contains(osc) { throw ValidationError("--osc must be a UDP port from 1 to 65535") }
        if let transport {
            guard transport == "follow" || transport == "lead" else {
                throw ValidationError("--transport must be 'follow' or 'lead', not '\(transport)'")
            }
            if from != nil { throw ValidationError("--from and --transport \(transport) exclude each other: the transport says where the session plays") }
        } else if transportOffset != 0 {
            throw ValidationError("--transport-offset needs --transport follow or lead")
        } else if exitAtEnd {
            throw ValidationError("--exit-at-end needs --transport follow (plain play and --transport lead always end at the session's end)")
        }
        if transportOffset < 0 { throw ValidationError("--transport-offset must be 0 or more frames") }
        if noConnect && connect != nil { throw ValidationError("--connect and --no-connect exclude each other") }
        if followWallClock && keepEveryFrame { throw ValidationError("--follow-wall-clock and --keep-every-frame exclude each other") }
        if let clientName, clientName.isEmpty { throw ValidationError("--client-name must not be empty") }
        guard lead >= 0 && lead <= 10 else { throw ValidationError("--lead must be 0 to 10 seconds") }
        guard reconnectTimeout > 0 else { throw ValidationError("--reconnect-timeout must be positive") }
    }

    func run() throws {
        let list = try sessions.map { try selectPart(of: loadSession($0), part: part) }
        let startAt = try startInstant()
        if list.count > 1 {
            do throws(SessionError) {
                try SetList.checkLive(list, connectOverridden: connect != nil || noConnect, clientNameOverridden: clientName != nil)
            } catch {
                printError(error.description)
                throw ExitCode(1)
            }
        }
        let from = try parseFromOption(self.from ?? "0", session: list[0])
        let code = Player(command: self, sessions: list, from: from, startAt: startAt).run()
        if code != 0 { throw ExitCode(code) }
    }
}

/// Everything `play` runs, and its clean-up.
final class Player: @unchecked Sendable {
    let command: PlayCommand
    /// The session (the first of a set list: its `[output]` is the set list's).
    let session: Session
    /// Every session: one, or a set list.
    let sessions: [Session]
    let tty = isatty(STDOUT_FILENO) != 0
    /// The stop signal caught (0: none).
    let caughtSignal = Atomic<Int32>(0)
    /// What a stop signal does now (stop the player, once there is one).
    let onSignal = Mutex<(@Sendable () -> Void)?>(nil)
    /// The device cannot play any more (its server went away for good).
    let goneForGood = Atomic<Bool>(false)
    /// Lines from the engine's events thread, printed by the monitor loop.
    let notices = Mutex<[String]>([])
    /// The netjack2 link while the device may call its hook (``startNetJack(device:)``): kept
    /// by the player, which outlives the engine, so that its render-thread state is never
    /// freed under a cycle.
    let netJackKeep = Mutex<NetJackSides?>(nil)

    /// The session position playback starts at (`--from`).
    let from: SessionTime
    /// `--start-at`: the instant the session starts at (nil: `--lead` from now).
    let startAt: SystemInstant?
    /// Where OSC messages go (set by the mode that plays; nil: dropped).
    let oscTarget = Mutex<(@Sendable (OSCMessage) -> Void)?>(nil)
    /// The position OSC replies and subscriptions send (set by the mode that plays; nil:
    /// nothing playing yet).
    let oscStatus = Mutex<(@Sendable () -> OSCMessage?)?>(nil)
    /// The meters OSC replies and subscriptions send after the position (set by the mode that
    /// plays; nil: none).
    let oscMeterStatus = Mutex<(@Sendable () -> OSCMessage?)?>(nil)

    init(command: PlayCommand, sessions: [Session], from: SessionTime, startAt: SystemInstant? = nil) {
        self.command = command
        self.startAt = startAt
        self.session = sessions[0]
        self.sessions = sessions
        self.from = from
    }

    /// Plays; returns the exit status.
    func run() -> Int32 {
        // SIGINT (Ctrl-C), SIGTERM (`kill`, `timeout`, a service manager) and SIGHUP (the
        // terminal closed) stop playback cleanly: captures finish, the private server stops.
        // The handlers run on a dispatch queue, not in a signal handler. Signals are unblocked
        // first: a parent may have blocked them, and posix_spawn passes the mask on.
        var all = sigset_t()
        sigemptyset(&all)
        for sig in Self.stopSignals { sigaddset(&all, sig) }
        sigprocmask(SIG_UNBLOCK, &all, nil)
        // A take past the file size limit (ulimit -f) is a write error the take reports, not a
        // kill that would leave its header unwritten.
        signal(SIGXFSZ, SIG_IGN)
        let sources = Self.stopSignals.map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [self] in
                caughtSignal.store(sig, ordering: .relaxed)
                onSignal.withLock { $0 }?()
            }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
            for sig in Self.stopSignals { signal(sig, SIG_DFL) }
        }
        return play()
    }

    static let stopSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    private func play() -> Int32 {
        // OSC (--osc): the port is bound before anything plays, so one in use is refused first.
        var oscServer: OSCServer?
        let oscReplies = OSCReplies(
            status: { [self] in oscStatus.withLock { $0 }?() }, meters: { [self] in oscMeterStatus.withLock { $0 }?() }, note: { [self] line in notices.withLock { $0.append(line) } })
        if let port = command.osc {
            do throws(OSCServerError) {
                oscServer = try OSCServer(host: command.oscHost, port: port) { [self] m, peer in
                    if oscReplies.handle(m, from: peer) { return }
                    oscTarget.withLock { $0 }?(m)
                }
                log("OSC: listening on \(command.oscHost):\(port) (UDP)")
            } catch {
                printError(error.message)
                return 1
            }
            oscReplies.start(sending: oscServer!)
        }
        defer {
            oscReplies.stop()
            oscServer?.stop()
        }
        let outputs: JackConnections
        if command.noConnect { outputs = .none }
        else if let c = command.connect { outputs = .ports(c.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }) }
        else if let c = session.output.connect { outputs = .ports(c) }
        else { outputs = .physical }
        let channels = session.output.channels
        let outputsUnconnected: Bool
        if case .none = outputs { outputsUnconnected = true } else { outputsUnconnected = false }
        // Takes ([[record]]): capture ports in_1… as the session lays them out (those with a
        // connect list first, so the list has no gap).
        let takeLayout = session.takeInputLayout
        // --capture: the outputs come back on the ports after the takes' (out_i on
        // in_(takes+i)), and the capture records every capture port, the takes' included.
        let inputChannels = takeLayout.total + (command.capture == nil ? 0 : channels)
        // Meters for the terminal's display and for OSC's /aqsync/meters.
        let playerOptions = SessionPlayer.Options(metering: tty || command.osc != nil, recordTakes: true)
        // The first session's tracks (files opened, first sources made) are prepared on other
        // threads while the client opens and activates, for the rate it is expected to run at
        // (the player makes them again if it runs at another; docs/benchmarking.md, "Time to
        // the first frame"). Not with --transport, whose follower reads the files itself.
        let preparation = command.transport == nil ? TrackPreparation(session: session, from: from, bufferFrames: playerOptions.bufferFrames) : nil
        // Every way out waits for it: no file is being opened as the process exits.
        defer { _ = preparation?.take() }
        // The server: the one asked for (or the default) when a client opens on it, else a
        // private one. No probe client first: the client aqsync plays through is the first it
        // opens (a probe opened and closed on a server that has just started is one more
        // libjack close, and libjack's close has been seen to hang there).
        var privateServer: JackServer?
        defer { privateServer?.stop() }
        let serverName = JackDevice.resolveServerName(command.server)
        func openDevice(on server: String?) throws(DeviceError) -> JackDevice {
            try JackDevice(options: JackDeviceOptions(
                clientName: command.clientName ?? session.output.clientName, serverName: server,
                outputChannels: channels, inputChannels: inputChannels,
                outputConnections: outputs, inputConnections: takeLayout.connections.isEmpty ? .none : .ports(takeLayout.connections),
                lostTimePolicy: command.followWallClock ? .followWallClock : command.keepEveryFrame ? .keepEveryFrame : nil,
                reconnect: !command.noReconnect, sidePorts: command.netJackSidePorts))
        }
        let device: JackDevice
        // Quietly: libjack prints several lines each time a client cannot reach a server.
        let first: Result<JackDevice, DeviceError> = quietly {
            do throws(DeviceError) { return .success(try openDevice(on: command.server)) } catch { return .failure(error) }
        }
        switch first {
        case .success(let d): device = d
        case .failure(let error) where error.reason == .serverUnreachable:
            if command.noStartServer {
                printError("no JACK server '\(serverName)' is reachable (and --no-start-server was given)")
                return 1
            }
            let name = "aqsync-\(getpid())"
            // Quietly: libjack complains on stderr each time the launcher probes a server
            // that is not up yet.
            let started: Result<JackServer, DeviceError> = quietly {
                do throws(DeviceError) { return .success(try JackServer.startPrivate(name: name, sampleRate: Int(session.sampleRate ?? 48000))) } catch { return .failure(error) }
            }
            switch started {
            case .success(let srv):
                privateServer = srv
                log("no JACK server '\(serverName)' was reachable: started a \(srv.summary); it stops when aqsync exits")
            case .failure(let error):
                printError("no JACK server '\(serverName)' is reachable and a private one could not start: \(error.message)")
                return 1
            }
            do { device = try openDevice(on: name) } catch {
                printError(error.message)
                return 1
            }
        case .failure(let error):
            printError(error.message)
            return 1
        }
        // The client is open (its rate known) but not activated: the player's queues are made
        // and primed while it activates, on another thread (docs/benchmarking.md, "Time to the
        // first frame"). The device starts first with --transport (its follower plays on the
        // running device), and when the first session records takes (the player creates their
        // files: a device that cannot start leaves none behind, as before).
        let startsDeviceFirst = command.transport != nil || !session.takes.isEmpty
        let engine: AudioQueueEngine
        do {
            engine = try AudioQueueEngine(device: device, capacities: sessions.count > 1
                ? SessionPlayer.engineCapacities(forSetList: sessions, options: playerOptions, inputChannels: max(8, inputChannels))
                : SessionPlayer.engineCapacities(for: session, options: playerOptions, inputChannels: max(8, inputChannels)),
                startsDevice: startsDeviceFirst)
        } catch {
            printError(error.message)
            return 1
        }
        defer { engine.close() }
        let activation = startsDeviceFirst ? nil : DeviceActivation(engine: engine)
        // Every way out waits for it (before the engine closes).
        defer { _ = activation?.wait() }
        let rate = device.sampleRate
        if let mode = command.transport {
            if !session.takes.isEmpty {
                printError("--transport \(mode) and [[record]] takes cannot be used together yet")
                return 1
            }
            return followTransport(device: device, engine: engine, rate: rate)
        }
        let setList: SetListPlayback
        do throws(SessionError) {
            let prepared = preparation?.take()
            setList = sessions.count > 1
                ? try SetListPlayback(sessions: sessions, engine: engine, options: playerOptions, leadSeconds: command.lead, prepared: prepared)
                : try SetListPlayback(session: session, engine: engine, options: playerOptions, from: from, leadSeconds: command.lead, prepared: prepared)
        } catch {
            // A device that could not start says so, as when it started before the player.
            if let e = activation?.wait() {
                printError(e.message)
                return 1
            }
            printError(error.description)
            return 1
        }
        defer { setList.closeAll() }
        let player = setList.current

        // From now on a stop signal stops the player; one that came earlier does so now.
        onSignal.withLock { $0 = { setList.stopAll() } }
        defer { onSignal.withLock { $0 = nil } }
        if caughtSignal.load(ordering: .relaxed) != 0 { setList.stopAll() }

        // The client activated and its ports connected.
        if let e = activation?.wait() {
            printError(e.message)
            return 1
        }
        // Wait for the first cycle: the session start is taken from the device's timeline.
        guard engine.waitForFirstCycle(timeout: 3) else {
            printError("the JACK server runs no cycles for client \(device.clientName)")
            return 1
        }
        // Then for a settled clock: PipeWire runs a new client on its dummy driver until its
        // ports are connected, then moves it to the sink's driver (docs/pipewire.md). The
        // session start is chosen once the connections are live and, on PipeWire, 8 cycles in
        // a row have run on one driver (at most 2 s). jackd has one driver: no wait for cycles
        // (it cost 40 ms of the time to the first frame, docs/benchmarking.md).
        waitForSettledClock(device: device, engine: engine, connecting: !outputsUnconnected)
        // --capture: an input queue on the capture ring, as the takes record (docs/recording.md).
        var capture: CaptureRecorder?
        defer { capture?.close() }  // before the engine closes
        if let path = command.capture {
            do throws(DeviceError) { try device.connectOutputsToInputs(from: takeLayout.total) } catch {
                printError("--capture \(path): \(error.message)")
                return 1
            }
            do throws(SessionError) {
                let recorder = try CaptureRecorder(url: URL(fileURLWithPath: path), engine: engine, channels: inputChannels)
                capture = recorder
                try recorder.start()
            } catch {
                printError("--capture \(path): \(error.description)")
                return 1
            }
        }
        let connected = (0..<channels).map { device.connections(ofOutput: $0) }
        // --netjack-master / --netjack-slave: the links' hook, the master's echo readers.
        var netJack: NetJackSides?
        if !command.netjackMaster.isEmpty || command.netjackSlave != nil {
            guard let sides = startNetJack(device: device) else { return 1 }
            netJack = sides
        }
        defer { netJack?.stop() }
        let epoch0 = engine.discontinuity.epoch
        let sessionStart: Int64
        do {
            if let sides = netJack, !sides.isMaster {
                guard let s = try netJackSlaveStart(sides.sides[0], player: player, engine: engine, rate: rate) else { return 128 + caughtSignal.load(ordering: .relaxed) }
                sessionStart = s
            } else {
                // The master: every slave's L is known before the start is decided (by 0.9 s
                // before the instant, when the conversion's references are taken; 5 s without one).
                var latencies: [Int] = []
                if let sides = netJack {
                    let deadline = startAt.map { Date(timeIntervalSince1970: Double($0.nanoseconds) / 1e9 - 0.9) } ?? Date().addingTimeInterval(5)
                    guard let l = netJackLatencies(sides, until: deadline) else { return caughtSignal.load(ordering: .relaxed) != 0 ? 128 + caughtSignal.load(ordering: .relaxed) : 1 }
                    latencies = l
                }
                guard let s = try startSession(player, engine: engine, rate: rate) else { return 128 + caughtSignal.load(ordering: .relaxed) }
                sessionStart = s
                if let sides = netJack { netJackMasterPlaced(sides, start: s, latencies: latencies) }
            }
        } catch {
            printError(error.description)
            return 1
        }
        netJack?.watch(device: device, player: player)
        if setList.isSetList {
            log("set list of \(sessions.count) sessions: " + sessions.map { "'\($0.name)'" }.joined(separator: ", ") + " (n / p and /aqsync/next, /aqsync/previous skip)")
        }
        log("playing '\(session.name)'\(setList.isSetList ? " (1/\(sessions.count))" : ""): \(session.tracks.count) track(s), \(player.lengthFrames == .max ? "looping until released (the l key, /aqsync/loop) or stopped" : formatSeconds(Double(player.lengthFrames) / rate)) at \(Int(rate)) Hz on \(device.uid), session start at device frame \(sessionStart)\(player.position > 0 ? " (from session frame \(player.position), \(formatSeconds(Double(player.position) / rate)))" : ""); \(JackImplementation.current), lost time: \(device.lostTimePolicy == .followWallClock ? "skipped (--keep-every-frame keeps it)" : "kept (--follow-wall-clock skips it)")")
        for (i, c) in connected.enumerated() {
            log("  \(device.outputPortNames[i]) -> \(c.isEmpty ? "(not connected)" : c.joined(separator: ", "))")
        }
        for (i, take) in session.takes.enumerated() {
            let ports = (0..<take.channels).map { device.inputPortNames[takeLayout.offsets[i] + $0] }
            let from = take.connect.isEmpty ? "(not connected)" : take.connect.joined(separator: ", ")
            // The take's own latencies (its ports' capture latency, the playback latency of
            // the outputs its tracks play on), as they are at the start; the take line at the
            // end says which it was placed by.
            let latency = i < player.takes.count ? "; latency now: \(player.takes[i].currentLatency)" : ""
            log("  recording \(take.name) (\(take.format), \(take.compensate ? "compensated" : "raw")): \(ports.joined(separator: ", ")) <- \(from)\(latency)")
        }
        if let capture, let path = command.capture {
            log("  capturing \(capture.portsText) into \(path) (32-bit float WAV, raw), outputs back on \(CaptureRecorder.Report.ports("in_", Array(takeLayout.total..<inputChannels)))")
        }

        // libjack's own messages (a few lines when a server dies) as log lines of ours.
        JackMessages.setHandler { [self] line in notices.withLock { $0.append("libjack: " + line) } }
        defer { JackMessages.setHandler { FileHandle.standardError.write(Data(("libjack: " + $0 + "\n").utf8)) } }
        let lost0 = device.lostFrames
        let xruns0 = device.discontinuityCount(.xrun)
        let repeated0 = device.repeatedCycleCount
        let lateCycles0 = device.lateCycleCount
        engine.onDeviceStatus = { [self] status in
            switch status {
            case .lost(let reason, let reconnecting):
                notices.withLock { $0.append("\(reason); " + (reconnecting ? "waiting for it to come back (Ctrl-C stops)" : "stopping")) }
            case .restored(let seconds, let lost, let skipped):
                notices.withLock {
                    $0.append(String(format: "JACK server back after %.2f s (%lld frames of wall-clock time): ", seconds, lost)
                        + (skipped ? "skipped, every track is where the wall clock says" : "every track resumes where it stopped, all in step"))
                }
            case .failed(let reason):
                notices.withLock { $0.append("the device cannot play any more: \(reason)") }
                goneForGood.store(true, ordering: .relaxed)
                setList.stopAll()
            }
        }
        // Session after session (one without a set list): the controls and the monitor on the
        // one playing; the set list makes and schedules the next one from the monitor's tick.
        var current = player
        var status: Int32 = 0
        var reports: [SessionPlayer.TrackReport] = []
        var silent: [String] = []
        var takeReports: [TakeRecorder.Report] = []
        while true {
            let i = setList.currentIndex
            let stopControls = plainControls(player: current, setList: setList)
            let s = monitor(
                player: current, engine: engine, device: device, sessionStart: sessionStart, epoch0: i == 0 ? epoch0 : engine.discontinuity.epoch, rate: rate,
                title: setList.isSetList ? setList.label(i) + "  " : "", tick: setList.isSetList ? { [self] in
                    setList.tick()
                    notices.withLock { $0 += setList.takeLines() }
                } : nil)
            // The keys' reader is stopped once its last action returned: its line is not lost (a
            // seek past the end ends playback before the key's line is queued).
            let more = setList.hasMore
            stopControls(!more)
            for line in notices.withLock({ n in defer { n.removeAll() }; return n }) { log(line) }
            status = max(status, s)
            let r = current.report()
            reports += r
            takeReports += current.takeReports()
            let skipped = setList.isSkipping
            // A session skipped before a track's start: that track's silence is the skip's.
            if !skipped { silent += r.filter { $0.framesPlayed == 0 }.map(\.name) }
            if setList.isSetList {
                log("session \(setList.label(i)) \(skipped ? "skipped" : "ended")")
                printReport(r)
            }
            guard status == 0, caughtSignal.load(ordering: .relaxed) == 0, !goneForGood.load(ordering: .relaxed),
                  let following = setList.advance() else {
                if more { stopControls(true) }  // the subscribers' last word: ended
                break
            }
            for line in setList.takeLines() { log(line) }
            let n = setList.currentIndex
            log("playing '\(sessions[n].name)' (\(n + 1)/\(sessions.count)): \(sessions[n].tracks.count) track(s), \(formatSeconds(Double(following.lengthFrames) / rate))\(following.sessionStartFrame.map { ", session start at device frame \($0)" } ?? "")")
            current = following
        }
        for line in setList.takeLines() { log(line) }
        if let failure = setList.failure {
            printError(failure)
            status = 1
        }
        var captureReport: CaptureRecorder.Report?
        if let capture {
            capture.finish()
            let r = capture.report()
            captureReport = r
            log(r.summary(name: command.capture!, sessionStart: sessionStart))
        }
        if !setList.isSetList { printReport(reports) }
        for t in takeReports { log(t.summary) }
        if let netJack { for line in netJack.report { log(line) } }
        let deviceLost = device.lostFrames - lost0
        let xruns = device.discontinuityCount(.xrun) - xruns0
        let skipped = device.lostTimePolicy == .followWallClock
        let repeated = device.repeatedCycleCount - repeated0
        if deviceLost > 0 || device.reconnectionCount > 0 || xruns > 0 || repeated > 0 {
            var line = "server: \(xruns) xrun(s), \(device.reconnectionCount) return(s) after going away, \(deviceLost) frames of wall-clock time lost"
            if deviceLost > 0 {
                line += skipped ? " (skipped: every track stayed with the wall clock)" : " (kept: every track stayed in step with what it plays into, behind the wall clock by them)"
            }
            let late = device.lateCycleCount - lateCycles0
            if late > 0 {
                // jackd2 calling aqsync twice back to back after it was late (docs/timing.md).
                line += "; \(late) late cycle(s) the server caught up on (called twice back to back, both played)"
            }
            if repeated > 0 {
                // pipewire-jack calling again with the cycle just played (docs/pipewire.md (d2)).
                line += "; \(repeated) cycle(s) called twice by the server, the second left silent and not counted"
            }
            log(line)
        }
        let sig = caughtSignal.load(ordering: .relaxed)
        if sig != 0 {
            log("stopped by \(sig == SIGINT ? "Ctrl-C (SIGINT)" : sig == SIGTERM ? "SIGTERM" : "SIGHUP")")
            return 128 + sig
        }
        if let bad = takeReports.first(where: { $0.error != nil }) {
            printError("take \(bad.file.lastPathComponent) stopped early: \(bad.error!) (the file holds the \(bad.frames) frames written before)")
            return 1
        }
        if let error = captureReport?.error {
            printError("--capture \(command.capture!) stopped early: \(error) (the file holds the \(captureReport!.frames) frames written before)")
            return 1
        }
        if reports.contains(where: { $0.error != nil }) || status != 0 || goneForGood.load(ordering: .relaxed) { return 1 }
        let late = reports.reduce(Int64(0)) { $0 + $1.lateFrames }
        let lateSessions = setList.lateFrames
        let takeLost = takeReports.reduce(Int64(0)) { $0 + $1.lostFrames + $1.leadingSilence }
        let captureLost = captureReport?.lostFrames ?? 0
        if late > 0 || deviceLost > 0 || !silent.isEmpty || takeLost > 0 || captureLost > 0 || lateSessions > 0 {
            var what: [String] = []
            if late > 0 { what.append("\(late) frames of the tracks were skipped (late)") }
            if lateSessions > 0 { what.append("sessions of the set list started \(lateSessions) frames after where the previous ended (not scheduled in time)") }
            if takeLost > 0 { what.append("\(takeLost) frames of the takes were not recorded (silence in their place)") }
            if captureLost > 0 { what.append("\(captureLost) frames of the capture were not recorded (silence in their place)") }
            if deviceLost > 0 { what.append("the server lost \(deviceLost) frames") }
            if !silent.isEmpty { what.append("played nothing: \(silent.joined(separator: ", "))") }
            if command.allowLoss {
                log("frames lost (\(what.joined(separator: "; "))); exit status 0 because of --allow-loss")
            } else {
                printError("frames lost: \(what.joined(separator: "; ")) (exit status 3; --allow-loss accepts it)")
                return 3
            }
        }
        return 0
    }

    /// Shows progress until the player is finished; logs every discontinuity and every change
    /// of the device's availability. Returns 1 when the server went away for good.
    /// `title` heads the position line (the set list's session); `tick` runs on every turn.
    func monitor(
        player: SessionPlayer, engine: AudioQueueEngine, device: JackDevice, sessionStart: Int64, epoch0: UInt64, rate: Double,
        title: String = "", tick: (() -> Void)? = nil
    ) -> Int32 {
        var epoch = epoch0
        var discontinuities = 0
        var drawn = 0
        var lastPlain = Date()
        let names = player.trackNames
        let width = max(5, names.map(\.count).max() ?? 5)
        var doneLogged = Set<Int>()
        // Terminal meters: per track, per channel (fed with the peak since the last redraw).
        var meters = [[PeakMeter]](repeating: [], count: names.count)
        var page = 0
        var pageTurned = monotonicSeconds()
        var status: Int32 = 0
        var awaySince: Date?
        var lostSeen = device.lostFrames
        let reasons: [DiscontinuityReason] = [.xrun, .sampleRateChange, .bufferSizeChange, .freewheel, .serverShutdown, .framesLost, .serverReturned]
        var reasonCounts: [DiscontinuityReason: UInt64] = [:]
        for r in reasons { reasonCounts[r] = device.discontinuityCount(r) }
        while !player.waitUntilFinished(timeout: tty ? 0.1 : 0.05) {
            tick?()
            let now = engine.deviceCurrentTime().sampleTime
            for line in notices.withLock({ n in defer { n.removeAll() }; return n }) {
                if tty { clear(&drawn) }
                log(line)
            }
            let d = engine.discontinuity
            if d.epoch != epoch {
                epoch = d.epoch
                let pos = player.positionText(atDeviceFrame: Int64(now))
                // Several may have happened since the last look: one line per cause.
                var causes: [String] = []
                for r in reasons {
                    let n = device.discontinuityCount(r)
                    let seen = reasonCounts[r] ?? 0
                    if n > seen {
                        causes.append(n - seen > 1 ? "\(r) ×\(n - seen)" : r.description)
                        reasonCounts[r] = n
                    }
                }
                if causes.isEmpty { causes = [d.reason.description] }
                discontinuities += causes.count
                let lost = device.lostFrames
                var line = "discontinuity (\(causes.joined(separator: ", "))) at device frame \(Int64(now)), session position \(pos)"
                if lost != lostSeen {
                    line += ": the server lost \(lost - lostSeen) frames, " + (device.lostTimePolicy == .followWallClock ? "skipped" : "kept")
                    lostSeen = lost
                }
                line += "; tracks keep their frames"
                if tty { clear(&drawn) }
                log(line)
            }
            // The session position (loops unrolled), the session's end, the loop pass, the marker.
            let late = player.lateFrames
            // Seeks and pauses (the keys, OSC) move the player's start: the player maps the frame.
            let head = "\(title)\(player.positionText(atDeviceFrame: Int64(now)))  discontinuities \(discontinuities)  late frames \(late)"
            if tty {
                let size = terminalSize()
                let finished = player.report().map { $0.completed || $0.error != nil }
                let t = monotonicSeconds()
                for (i, lv) in player.levels().enumerated() {
                    let peaks = lv ?? []
                    if meters[i].count != peaks.count { meters[i] = Array(repeating: PeakMeter(), count: peaks.count) }
                    for c in peaks.indices { meters[i][c].update(peakDB: peaks[c], at: t) }
                }
                // Every track's bars the same width, so that the scale lines up with them.
                let channels = max(1, meters.map(\.count).max() ?? 1)
                let cells = max(4, min(32, (size.width - 1 - width - 3 - 16) / channels - 3))
                var trackLines: [String] = []
                for i in names.indices {
                    let name = names[i].padding(toLength: width, withPad: " ", startingAt: 0)
                    if finished[i] {
                        trackLines.append("  \(name) done")
                        continue
                    }
                    let bars = meters[i].map { "[" + $0.bar(cells: cells) + "]" }.joined(separator: " ")
                    let hold = meters[i].map(\.hold).max() ?? PeakMeter.floorDB
                    let db = hold <= PeakMeter.floorDB ? " -inf" : String(format: "%5.1f", hold)
                    let clip = meters[i].contains(where: \.clipped) ? " CLIP" : ""
                    trackLines.append("  \(name) \(bars) \(db) dB\(clip)")
                }
                let scale = "  " + String(repeating: " ", count: width) + "  " + PeakMeter.scale(cells: cells) + "  dBFS"
                if t - pageTurned >= 3 {
                    page += 1
                    pageTurned = t
                }
                let lines = StatusScreen.layout(head: (player.isPaused ? "■ " : "▶ ") + head, scale: scale, tracks: trackLines, width: size.width, height: size.height, page: page)
                redraw(lines, &drawn)
            } else {
                let reports = player.report()
                for (i, r) in reports.enumerated() where !doneLogged.contains(i) && (r.completed || r.error != nil) {
                    doneLogged.insert(i)
                    log("track '\(r.name)' \(r.completed ? "finished" : "stopped: \(r.error ?? "")")")
                }
                if Date().timeIntervalSince(lastPlain) >= 5 {
                    lastPlain = Date()
                    log("position " + head)
                }
            }
            if engine.deviceAwayReason != nil {
                let since = awaySince ?? Date()
                awaySince = since
                if Date().timeIntervalSince(since) > command.reconnectTimeout {
                    let why = String(format: "the JACK server did not come back within %g s", command.reconnectTimeout)
                    if tty { clear(&drawn) }
                    log(why + "; stopping")
                    device.stop()
                    engine.deviceLost(why)
                    status = 1
                }
            } else {
                awaySince = nil
            }
            if device.serverHasShutDown && device.connectionState == .stopped && engine.deviceAwayReason == nil {
                // Gone, and not coming back (no reconnection, or it gave up).
                status = 1
                player.stop()
            }
        }
        if tty { clear(&drawn) }
        // Lines that came with the end (a seek past the session's end ends playback).
        for line in notices.withLock({ n in defer { n.removeAll() }; return n }) { log(line) }
        if !tty {
            for (i, r) in player.report().enumerated() where !doneLogged.contains(i) && (r.completed || r.error != nil) {
                log("track '\(r.name)' \(r.completed ? "finished" : "stopped: \(r.error ?? "")")")
            }
        }
        return status
    }

    /// Waits (at most 2 s) until every output that should be connected is, and the device has
    /// run 8 cycles in a row without its server's counter jumping (a driver change).
    func waitForSettledClock(device: JackDevice, engine: AudioQueueEngine, connecting: Bool) {
        let deadline = Date().addingTimeInterval(2)
        if connecting {
            while Date() < deadline && (0..<device.outputChannelCount).contains(where: { device.connections(ofOutput: $0).isEmpty }) {
                usleep(2000)
            }
        }
        guard JackImplementation.current == .pipewire else { return }
        var jumps = device.counterJumpCount
        var quietSince = engine.statistics.cycles
        while Date() < deadline {
            let j = device.counterJumpCount
            let c = engine.statistics.cycles
            if j != jumps { jumps = j; quietSince = c }
            if c >= quietSince + 8 { return }
            usleep(2000)
        }
    }

    /// The terminal's columns and rows (80 × 24 when it does not say).
    func terminalSize() -> (width: Int, height: Int) {
        var ws = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0 {
            return (Int(ws.ws_col), Int(ws.ws_row))
        }
        return (80, 24)
    }

    func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Replaces the lines drawn last with `lines` (each fits the terminal: none wraps).
    func redraw(_ lines: [String], _ drawn: inout Int) {
        FileHandle.standardOutput.write(Data(StatusScreen.redraw(lines, replacing: drawn).utf8))
        drawn = lines.count
    }

    func clear(_ drawn: inout Int) {
        guard drawn > 0 else { return }
        // Line by line, not "erase to the end of the screen": from the top-left corner that
        // erases the whole screen, which tmux first copies into its history (scroll-on-clear).
        let erase = String(repeating: "\r\u{1B}[2K\n", count: drawn)
        FileHandle.standardOutput.write(Data("\u{1B}[\(drawn)A\(erase)\u{1B}[\(drawn)A".utf8))
        drawn = 0
    }

    func log(_ line: String) { say(line) }

    /// Runs `body` with stderr sent to /dev/null: libjack prints several lines when a probe
    /// finds no server, which is an expected answer here, not an error.
    func quietly<T>(_ body: () -> T) -> T {
        let saved = dup(STDERR_FILENO)
        let null = open("/dev/null", O_WRONLY)
        if saved >= 0 && null >= 0 { dup2(null, STDERR_FILENO) }
        defer {
            if saved >= 0 { dup2(saved, STDERR_FILENO); close(saved) }
            if null >= 0 { close(null) }
        }
        return body()
    }
}
