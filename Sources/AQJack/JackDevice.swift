import AQCore
import Foundation
import CJACK
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a group of the device's ports is connected when it starts.
public enum JackConnections: Sendable, Equatable {
    /// To the server's physical ports (`system:playback_1…` for outputs, `system:capture_1…`
    /// for inputs), port i to physical port i; ports beyond the physical ones stay unconnected.
    case physical
    /// To these full port names: port i to name i. Fewer names than ports leaves the rest
    /// unconnected; more names than ports is an error at start.
    case ports([String])
    /// Connected to nothing (someone else wires them).
    case none
}

/// How to open a ``JackDevice``.
public struct JackDeviceOptions: Sendable {
    /// The client name asked for; JACK may give another (see ``JackDevice/clientName``).
    public var clientName: String
    /// The server; nil: `JACK_DEFAULT_SERVER` from the environment, else `default`.
    public var serverName: String?
    /// Output ports `out_1…N`.
    public var outputChannels: Int
    /// Capture ports `in_1…M` for input queues (0: none).
    public var inputChannels: Int
    /// Where the outputs go on start.
    public var outputConnections: JackConnections
    /// What the inputs listen to on start.
    public var inputConnections: JackConnections
    /// What the device's sample time does with frames the server lost (an xrun the server
    /// accounted for, an overrun, the time a dead server took to come back). nil (the
    /// default): the libjack implementation's own (``JackImplementation/defaultLostTimePolicy``:
    /// keep every frame on jackd2, follow the wall clock on PipeWire; docs/timing.md).
    public var lostTimePolicy: LostTimePolicy?
    /// When the server goes away while the device runs, keep trying to reach a server of the
    /// same name and resume rendering when one answers (docs/jack-device.md). Default: true.
    public var reconnect: Bool
    /// Side ports: ports of the client the engine does not mix into or read, handed each
    /// cycle to the device's ``CycleHook`` (``JackDevice/setCycleHook(_:)``), e.g. the stamps
    /// of a netjack2 link (``NetJackLink``). Default: none.
    public var sidePorts: JackSidePorts

    public init(
        clientName: String, serverName: String? = nil, outputChannels: Int = 2, inputChannels: Int = 0,
        outputConnections: JackConnections = .physical, inputConnections: JackConnections = .physical,
        lostTimePolicy: LostTimePolicy? = nil, reconnect: Bool = true, sidePorts: JackSidePorts = JackSidePorts()
    ) {
        self.sidePorts = sidePorts
        self.clientName = clientName
        self.serverName = serverName
        self.outputChannels = outputChannels
        self.inputChannels = inputChannels
        self.outputConnections = outputConnections
        self.inputConnections = inputConnections
        self.lostTimePolicy = lostTimePolicy
        self.reconnect = reconnect
    }
}

/// Side ports of a ``JackDevice`` (``JackDeviceOptions/sidePorts``): registered with the
/// client's other ports, connected on every start (and return of the server) to the ports
/// given, and handed each cycle, after the engine's mix, to the device's ``CycleHook``; side
/// outputs are silence while no hook is set. A plain value.
public struct JackSidePorts: Sendable, Equatable {
    /// Output ports: short name, and the full name of the port it connects to (nil: none).
    public var outputs: [(name: String, connect: String?)]
    /// Input ports: short name, and the full name of the port it listens to (nil: none).
    public var inputs: [(name: String, connect: String?)]

    /// Side ports; none by default.
    public init(outputs: [(name: String, connect: String?)] = [], inputs: [(name: String, connect: String?)] = []) {
        self.outputs = outputs
        self.inputs = inputs
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.outputs.map(\.name) == b.outputs.map(\.name) && a.outputs.map(\.connect) == b.outputs.map(\.connect)
            && a.inputs.map(\.name) == b.inputs.map(\.name) && a.inputs.map(\.connect) == b.inputs.map(\.connect)
    }
}

/// A JACK client that drives the renderer from JACK's process callback.
///
/// Opening the device (`init`) opens a client on the server and registers its ports;
/// ``start(rendering:)`` installs the process callback, activates the client and connects the
/// ports; ``stop()`` deactivates and closes the client (a later start opens it again).
///
/// Time: each cycle's ``CycleInfo`` has JACK's 32-bit frame counter extended to 64 bits, and
/// JACK's cycle times (`jack_get_cycle_times`, microseconds on the clock named by
/// ``clockSource``, CLOCK_MONOTONIC_RAW with jackd2 1.9.21) converted to CLOCK_MONOTONIC
/// nanoseconds. Discontinuities (xrun, sample-rate, buffer-size, freewheel, shutdown, time
/// jump, device started) advance the clock's epoch.
///
/// Threads: every member may be called from any control thread, never from the render thread
/// (JACK's process thread). The process callback runs on JACK's process thread; the other
/// JACK callbacks on JACK's threads; ``onShutdown`` on the device's own event thread.
///
/// `@unchecked Sendable`: control state is behind a `Mutex`; the callback state lives in
/// unsafe memory owned by the device and shared with JACK's threads through atomics and the
/// activate/deactivate ordering described in `JackCallbackState`.
public final class JackDevice: AudioDevice, @unchecked Sendable {
    /// A connection the device made to one of its own ports (``reconnectMissingConnections()``).
    struct MadeConnection: Sendable {
        var source: String, destination: String
    }

    private struct Control {
        var open = false
        var running = false
        var clientName = ""
        var outputPortNames: [String] = []
        var inputPortNames: [String] = []
        var inPorts: [OpaquePointer?] = []
        /// The side ports' full names (outputs, then inputs), and their connections (source,
        /// destination).
        var sidePortNames: [String] = []
        var sideConnections: [[String]] = []
        /// Ports of other clients the side connections were moved to (``retargetSideConnections(_:)``),
        /// old name → new: applied again when a client is opened anew.
        var sideRetargets: [String: String] = [:]
        /// The connections the device made to its own input and output ports at its start
        /// (`outputConnections`, `inputConnections`).
        var madeConnections: [MadeConnection] = []
        var events: JackEventThread?
        var onShutdown: (@Sendable (String) -> Void)?
        var lastShutdownReason: String?
        var probe: JackCycleProbe?
        /// The renderer while started (kept across a server's absence, for the resumption).
        /// (as bits: a pointer is not `Sendable`, the lock's contents must be)
        var coreBits: UInt = 0
        var core: UnsafeMutablePointer<RenderCore>? {
            get { UnsafeMutablePointer(bitPattern: coreBits) }
            set { coreBits = UInt(bitPattern: newValue) }
        }
        var statusHandler: (@Sendable (DeviceStatus) -> Void)?
        var reconnector: JackReconnector?
        var reconnections = 0
        /// Closes of this device's clients handed to their threads (finished ones are dropped
        /// when next looked at).
        var closes: [JackClientClose] = []
        /// Counts the clients opened: a shutdown reported by an earlier client's event thread
        /// (its close had not returned yet) is not this client's.
        var generation = 0
    }

    /// A client the device let go of (``detachClient(_:muted:)``): its close, running on its
    /// own thread, and the event thread to stop once it is done.
    private struct PendingClose {
        let close: JackClientClose
        let events: JackEventThread?
    }

    /// The options the device was opened with.
    public let options: JackDeviceOptions
    /// Capture ports `in_1…` handed to the renderer each cycle. Any thread; does not block.
    public var inputChannelCount: Int { options.inputChannels }
    /// The server's name (resolved from the options, `JACK_DEFAULT_SERVER`, or `default`).
    public let serverName: String
    /// `jack:SERVER:CLIENT` with the client name JACK gave at the first open. Any thread.
    public var uid: String { "jack:\(serverName):\(firstClientName)" }
    private nonisolated(unsafe) var firstClientName = ""  // set once in init
    /// Output ports, fixed at open.
    public let outputChannelCount: Int
    /// The clock JACK's times are on, identified at open (see ``JackClockSource``).
    public private(set) var clockSource: JackClockSource = .monotonicRaw

    private let state: UnsafeMutablePointer<JackCallbackState>
    private let control = Mutex(Control())
    /// Entered by each close of this device's clients until it has finished (``deinit`` frees
    /// the callback state only then).
    private let closing = DispatchGroup()
    private let closeWaitMs = Atomic<Int64>(5000)
    /// How long ``stop()`` waits for libjack's close of the client, and an open (``start(rendering:)``)
    /// for earlier closes of the process, before giving up (5 s; tests lower it). Any thread.
    var closeWaitLimit: Duration {
        get { .milliseconds(closeWaitMs.load(ordering: .relaxed)) }
        set {
            let (s, a) = newValue.components
            closeWaitMs.store(s * 1000 + a / 1_000_000_000_000_000, ordering: .relaxed)
        }
    }

    /// The callbacks' state (for JackTransport.swift).
    var callbackState: UnsafeMutablePointer<JackCallbackState> { state }

    /// Runs `body` under the control lock with the open client (nil when closed), for
    /// JackTransport.swift. Control thread.
    func withClient<T: Sendable>(_ body: (OpaquePointer?) -> T) -> T {
        control.withLock { c in body(c.open ? state.pointee.client : nil) }
    }

    /// Opens a client named `options.clientName` on the server and registers its ports.
    /// Never starts a server. Control thread.
    ///
    /// - Throws: ``DeviceError`` naming the server when it is not reachable (reason
    ///   ``DeviceError/Reason/serverUnreachable``: a caller may start one and try again, without
    ///   a probe client first), or naming the port that could not be registered.
    public init(options: JackDeviceOptions) throws(DeviceError) {
        JackMessages.install()
        guard options.outputChannels >= 0, options.inputChannels >= 0 else {
            throw DeviceError("JACK device: channel counts must not be negative")
        }
        self.options = options
        self.serverName = JackDevice.resolveServerName(options.serverName)
        self.outputChannelCount = options.outputChannels
        state = .allocate(capacity: 1)
        state.initialize(to: JackCallbackState(
            outputCount: options.outputChannels, inputCount: options.inputChannels,
            sideOutputCount: options.sidePorts.outputs.count, sideInputCount: options.sidePorts.inputs.count))
        state.pointee.keeper.policy = options.lostTimePolicy ?? JackImplementation.current.defaultLostTimePolicy
        state.pointee.keeper.repeatedCallsAreCycles = JackImplementation.current.repeatedCallsAreCycles
        try openClient()  // on failure, deinit frees `state`
        // After the client is open: libjack sets up jack_get_time's clock when a client opens;
        // before that the call jumps through a null pointer.
        clockSource = JackClockSource.identify()
        state.pointee.clockSource = clockSource
        firstClientName = control.withLock { $0.clientName }
    }

    /// Opens a client named `clientName` with `outputChannels` outputs connected to the
    /// physical playback ports (see ``init(options:)``). Control thread.
    public convenience init(clientName: String, serverName: String? = nil, outputChannels: Int = 2) throws(DeviceError) {
        try self.init(options: JackDeviceOptions(clientName: clientName, serverName: serverName, outputChannels: outputChannels))
    }

    deinit {
        stop()
        if closing.wait(timeout: .now()) == .success {
            JackDevice.freeState(state)
        } else {
            // A close that has not returned: libjack may still call this client's callbacks,
            // whose memory this is. It goes once the close has finished (or never).
            let st = JackUnchecked(value: state)
            closing.notify(queue: .global()) { JackDevice.freeState(st.value) }
        }
    }

    private static func freeState(_ state: UnsafeMutablePointer<JackCallbackState>) {
        if let t = state.pointee.transport.load(ordering: .acquiring) { t.deallocate() }
        if let t = state.pointee.timebase.load(ordering: .acquiring) { t.deallocate() }
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The server name that `serverName` resolves to: itself, else `JACK_DEFAULT_SERVER`, else
    /// `default`. Any thread.
    public static func resolveServerName(_ serverName: String?) -> String {
        if let serverName, !serverName.isEmpty { return serverName }
        if let env = getenv("JACK_DEFAULT_SERVER"), env.pointee != 0 { return String(cString: env) }
        return "default"
    }

    /// The sample rate of the server `serverName` (resolved as in ``resolveServerName(_:)``),
    /// read through a probe client that registers nothing; nil when it is not reachable.
    /// Any control thread.
    public static func serverSampleRate(_ serverName: String? = nil) -> Int? {
        var status = jack_status_t(rawValue: 0)
        let name = resolveServerName(serverName)
        // The probe waits for pending closes like any open (docs/jack-device.md, "Closing a
        // client"); one that waited too long finds no server.
        return JackMessages.whileMuted { JackLifecycle.shared.open { () -> Int? in
            let client = name.withCString { s in "aqsync-probe".withCString { aq_jack_client_open($0, s, &status) } }
            guard let client else { return nil }
            let rate = Int(jack_get_sample_rate(client))
            jack_client_close(client)
            return rate
        } ?? nil }
    }

    /// True when a client can be opened on the server `serverName` (resolved as in
    /// ``resolveServerName(_:)``) without starting one. Opens and closes a probe client.
    /// Any control thread.
    public static func isServerReachable(_ serverName: String? = nil) -> Bool {
        var status = jack_status_t(rawValue: 0)
        let name = resolveServerName(serverName)
        return JackMessages.whileMuted { JackLifecycle.shared.open { () -> Bool in
            let client = name.withCString { s in "aqsync-probe".withCString { aq_jack_client_open($0, s, &status) } }
            guard let client else { return false }
            jack_client_close(client)
            return true
        } ?? false }
    }

    // MARK: Properties

    /// Nominal frames per second (live: follows sample-rate changes). Any control thread.
    public var sampleRate: Double { Double(state.pointee.sampleRate.load(ordering: .relaxed)) }

    /// Frames per cycle (`jack_get_buffer_size` while open, else the last known). Any control
    /// thread.
    public var framesPerCycle: Int {
        control.withLock { c in
            if c.open, let client = state.pointee.client {
                return Int(jack_get_buffer_size(client))
            }
            return Int(state.pointee.bufferSize.load(ordering: .relaxed))
        }
    }

    /// One period: a command sent during cycle k is drained at the start of cycle k+1, whose
    /// output JACK plays after cycle k's, so it reaches frames from the next cycle's first
    /// frame plus one period. Any control thread.
    public var schedulingLead: Int64 { Int64(framesPerCycle) }

    /// True between a successful ``start(rendering:)`` and ``stop()`` or a server shutdown.
    /// Any control thread.
    public var isRunning: Bool { control.withLock { $0.running } }

    /// The client name JACK gave (may differ from the one asked for). Any control thread.
    public var clientName: String { control.withLock { $0.clientName } }

    /// Full names of the output ports (`CLIENT:out_1…`). Any control thread.
    public var outputPortNames: [String] { control.withLock { $0.outputPortNames } }

    /// Full names of the capture ports (`CLIENT:in_1…`). Any control thread.
    public var inputPortNames: [String] { control.withLock { $0.inputPortNames } }

    /// Full names of the side ports (``JackDeviceOptions/sidePorts``: the outputs, then the
    /// inputs). Any control thread.
    public var sidePortNames: [String] { control.withLock { $0.sidePortNames } }

    /// Makes again the connections the device made that are missing while both ports exist:
    /// the side ports' (a netjack2 slave that rejoined its master, after a period change or a
    /// restart, has new ports there, and the old connections went with the old ones), and
    /// those of its own outputs and inputs made at its start (the slave server's
    /// `system:playback_N` are registered again when it rejoins). The caller keeps every
    /// connection the device made, one a user took away included. Returns the connections
    /// made ("SOURCE -> DESTINATION"), none when nothing was missing or the device is not
    /// running. Any control thread; blocks briefly (the device's lock, libjack's connect).
    public func reconnectMissingConnections() -> [String] {
        control.withLock { c in
            // A client whose server just went away (before the event thread let go of it):
            // libjack asserts in a port call on it.
            guard c.running, !state.pointee.shutDown.load(ordering: .acquiring), let client = state.pointee.client else { return [] }
            var made: [String] = []
            for p in c.sideConnections {
                guard let source = jack_port_by_name(client, p[0]), jack_port_by_name(client, p[1]) != nil,
                      jack_port_connected_to(source, p[1]) == 0 else { continue }
                if jack_connect(client, p[0], p[1]) == 0 { made.append("\(p[0]) -> \(p[1])") }
            }
            for m in c.madeConnections {
                guard let source = jack_port_by_name(client, m.source), jack_port_by_name(client, m.destination) != nil,
                      jack_port_connected_to(source, m.destination) == 0 else { continue }
                if jack_connect(client, m.source, m.destination) == 0 { made.append("\(m.source) -> \(m.destination)") }
            }
            return made
        }
    }

    /// Moves side connections to other ports: each connection to a port named as a key of
    /// `renames` (another client's port, e.g. a netjack2 slave's `SLAVE:to_slave_1`) is made
    /// to its value from now on (`SLAVE-01:to_slave_1`: the slave rejoined the master under
    /// another client name), by ``reconnectMissingConnections()``, and again after the
    /// server came back. The old connection is left as it is (its port is gone). Any control
    /// thread; blocks briefly (the device's lock).
    public func retargetSideConnections(_ renames: [String: String]) {
        control.withLock { c in
            for (old, new) in renames {
                // Chains (A → B, then B → C) are kept as A → C.
                for (k, v) in c.sideRetargets where v == old { c.sideRetargets[k] = new }
                c.sideRetargets[old] = new
            }
            c.sideConnections = c.sideConnections.map { $0.map { renames[$0] ?? $0 } }
        }
    }

    /// The full names of the server's ports matching `pattern` (a POSIX extended regular
    /// expression, as `jack_get_ports` takes it); none when the device is not running. Any
    /// control thread; blocks briefly (the device's lock, libjack's port list).
    public func portNames(matching pattern: String) -> [String] {
        control.withLock { c in
            guard c.running, !state.pointee.shutDown.load(ordering: .acquiring), let client = state.pointee.client else { return [] }
            return pattern.withCString { JackDevice.names(jack_get_ports(client, $0, nil, 0)) }
        }
    }

    /// True when the server has a port of that full name (false when the device is not
    /// running). Any control thread; blocks briefly.
    public func hasPort(_ name: String) -> Bool {
        control.withLock { c in
            guard c.running, !state.pointee.shutDown.load(ordering: .acquiring), let client = state.pointee.client else { return false }
            return jack_port_by_name(client, name) != nil
        }
    }

    /// Sets the function called once per cycle, after the engine's mix, with the device frame
    /// and the side ports' buffers (``CycleHook``); nil removes it (the side outputs are then
    /// silence). The previous hook may still be called during the cycle under way: its
    /// context must outlive the device's next cycle (or ``stop()``). Kept across a server's
    /// absence. Any control thread; does not block.
    public func setCycleHook(_ hook: CycleHook?) {
        let p: UnsafeMutablePointer<CycleHook>? = hook.map {
            let p = UnsafeMutablePointer<CycleHook>.allocate(capacity: 1)
            p.initialize(to: $0)
            return p
        }
        // The old one is kept (a few bytes; a hook is set once or twice in a device's life): a
        // render call may still be reading it.
        _ = state.pointee.hook.exchange(p, ordering: .acquiringAndReleasing)
    }

    /// JACK's DSP load in percent (`jack_cpu_load`); 0 when closed. Any control thread.
    public var dspLoad: Double {
        control.withLock { c in
            guard c.open, let client = state.pointee.client else { return 0 }
            return Double(jack_cpu_load(client))
        }
    }

    /// Xruns reported by JACK since the device was made. Any thread.
    public var xrunCount: UInt64 { state.pointee.xruns.load(ordering: .relaxed) }

    /// Discontinuities of `reason` this device has noted since it was made (including those
    /// noted while no renderer was started). Any thread.
    public func discontinuityCount(_ reason: DiscontinuityReason) -> UInt64 {
        let i = Int(reason.rawValue)
        return i < JackCallbackState.reasonCount ? state.pointee.counts[i].load(ordering: .relaxed) : 0
    }

    /// The latest jump of the server's frame counter beyond the previous cycle's frames (a
    /// period change, lost frames, or a move to another driver); 0 before any. The device's
    /// sample time does not follow it (see ``DeviceTimekeeper``). Any thread.
    public var lastCounterJumpFrames: Int64 { state.pointee.lastJump.load(ordering: .relaxed) }

    /// Jumps of the server's frame counter that the device followed without losing a frame
    /// (PipeWire moving the client to another driver). Any thread.
    public var counterJumpCount: UInt64 { state.pointee.counterJumps.load(ordering: .relaxed) }

    /// Cycles the server called a second time with the position of the cycle just rendered
    /// (pipewire-jack catching up on a late client's wake-ups, or moving it to another driver):
    /// each was left silent and did not advance the device's sample time
    /// (``CycleContinuity/repeated``). Any thread.
    public var repeatedCycleCount: UInt64 { state.pointee.repeatedCycles.load(ordering: .relaxed) }

    /// Calls that repeated the previous call's counter and cycle time and were rendered as the
    /// next cycle (jackd2 catching up on this client after it was late:
    /// ``CycleContinuity/lateCycle``). Any thread.
    public var lateCycleCount: UInt64 { state.pointee.lateCycles.load(ordering: .relaxed) }

    /// Frames the server lost since the device was made: xruns the server accounted for and
    /// the time a dead server took to come back. Any thread.
    public var lostFrames: Int64 { state.pointee.lostFrames.load(ordering: .relaxed) }

    /// Of ``lostFrames``, those the device's sample time skipped (all of them under
    /// ``LostTimePolicy/followWallClock``, none under ``LostTimePolicy/keepEveryFrame``).
    /// Any thread.
    public var skippedFrames: Int64 { state.pointee.skippedFrames.load(ordering: .relaxed) }

    /// The policy for lost frames in force (the options', else the implementation's default).
    /// Any thread.
    public var lostTimePolicy: LostTimePolicy { options.lostTimePolicy ?? JackImplementation.current.defaultLostTimePolicy }

    /// Where the device stands with its server. Any control thread.
    public var connectionState: JackConnectionState {
        control.withLock { c in
            if c.running { return .running }
            if c.reconnector != nil { return .reconnecting }
            return .stopped
        }
    }

    /// How many times the device resumed after its server came back. Any control thread.
    public var reconnectionCount: Int { control.withLock { $0.reconnections } }

    /// Installs the engine's status handler (see ``AudioDevice/setStatusHandler(_:)``); it is
    /// called on the device's event or reconnection thread. ``onShutdown`` stays the user's.
    /// Control thread.
    public func setStatusHandler(_ handler: (@Sendable (DeviceStatus) -> Void)?) {
        control.withLock { $0.statusHandler = handler }
    }

    /// True after JACK reported that the server went away, until the next start. Any thread.
    public var serverHasShutDown: Bool { state.pointee.shutDown.load(ordering: .acquiring) }

    /// JACK's reason for the latest server shutdown, if any. Any control thread.
    public var lastShutdownReason: String? { control.withLock { $0.lastShutdownReason } }

    /// Called once when the server shuts down or drops the client, with JACK's reason.
    /// Runs on the device's event thread (a plain thread the device owns, never a JACK thread
    /// and never the render thread), after the clock has noted `.serverShutdown` and
    /// ``isRunning`` has become false. It may call ``stop()``. Set from any control thread.
    public var onShutdown: (@Sendable (String) -> Void)? {
        get { control.withLock { $0.onShutdown } }
        set { control.withLock { $0.onShutdown = newValue } }
    }

    /// Full names of the ports output `channel` (0-based) is connected to
    /// (`jack_port_get_connections`); empty when closed. Any control thread.
    public func connections(ofOutput channel: Int) -> [String] {
        control.withLock { c in
            guard c.open, channel >= 0, channel < outputChannelCount, let port = state.pointee.outPorts[channel] else {
                return []
            }
            return JackDevice.names(jack_port_get_connections(port))
        }
    }

    /// Full names of the ports input `channel` (0-based) is connected to; empty when closed.
    /// Any control thread.
    public func connections(ofInput channel: Int) -> [String] {
        control.withLock { c in
            guard c.open, channel >= 0, channel < c.inPorts.count, let port = c.inPorts[channel] else { return [] }
            return JackDevice.names(jack_port_get_connections(port))
        }
    }

    // MARK: Latency

    /// The latencies of the device's ports (see ``DeviceLatency``), as JACK last reported them:
    /// `capture` is the largest capture latency of the input ports `in_1…` (frames from the
    /// graph's edge — a physical capture port, or a client that declares one — to them),
    /// `playback` the largest playback latency of the outputs `out_1…` (frames from them to a
    /// physical playback port); per port: ``captureLatency(ofInput:)``,
    /// ``playbackLatency(ofOutput:)``. Read in JACK's latency callback, which libjack calls on its
    /// notification thread whenever connections change, and once more right after the device
    /// connects its ports (start, reconnection). Zero for unconnected ports and before the
    /// first start; a stopped device keeps the last values. Any thread; does not block (two
    /// atomic loads).
    public var latency: DeviceLatency {
        DeviceLatency(
            capture: Int(state.pointee.captureLatency.load(ordering: .relaxed)),
            playback: Int(state.pointee.playbackLatency.load(ordering: .relaxed)))
    }

    /// The capture latency of input port `in_(channel+1)` (`channel` 0-based), as JACK last
    /// reported it (`jack_port_get_latency_range(in, JackCaptureLatency)`, range maximum): frames
    /// from the graph's edge to that port. Read in the latency callback with ``latency``; 0 for
    /// an unconnected port, before the first start, and for a channel the device does not have.
    /// Any thread; does not block (one atomic load).
    public func captureLatency(ofInput channel: Int) -> Int {
        guard channel >= 0 && channel < state.pointee.inputCount else { return 0 }
        return Int(state.pointee.inputLatencies[channel].load(ordering: .relaxed))
    }

    /// The playback latency of output port `out_(channel+1)` (`channel` 0-based), as JACK last
    /// reported it (`JackPlaybackLatency`, range maximum): frames from that port to a physical
    /// playback port. 0 for an unconnected port, before the first start, and for a channel the
    /// device does not have. Any thread; does not block (one atomic load).
    public func playbackLatency(ofOutput channel: Int) -> Int {
        guard channel >= 0 && channel < state.pointee.outputCount else { return 0 }
        return Int(state.pointee.outputLatencies[channel].load(ordering: .relaxed))
    }

    /// Reads the ports' latencies now (as the latency callback does) into the atomics; the
    /// callback keeps them current afterwards. Control thread, client open.
    private func refreshLatency() {
        state.pointee.readLatencies(JackCaptureLatency)
        state.pointee.readLatencies(JackPlaybackLatency)
    }

    // MARK: Measurement

    /// Makes the process callback record every cycle's timing into a ring of `capacity`
    /// cycles (see ``JackCycleProbe``), from the next cycle on; a second call returns the same
    /// probe. The device keeps the probe until it is released. Control thread.
    public func installCycleProbe(capacity: Int = 1 << 16) -> JackCycleProbe {
        control.withLock { c in
            if let p = c.probe { return p }
            let p = JackCycleProbe(capacity: max(capacity, 2))
            c.probe = p
            state.pointee.probe.store(p.storage, ordering: .releasing)
            return p
        }
    }

    /// Connects output `i` to input `first + i` (`out_(i+1)` to `in_(first+i+1)`), so that what
    /// the device sends comes back through its own inputs (aqsync's `--capture`, recorded by an
    /// input queue like any input). The device must be running with at least `first` +
    /// outputs input channels. Blocks until the connections carry data: JACK reports them
    /// connected, then two more cycles run (2 s at most). A server that goes away and comes
    /// back gets the device's `inputConnections` again, not these. Control thread.
    ///
    /// - Throws: ``DeviceError`` when the device is not running, has too few inputs, or a
    ///   connection is refused.
    public func connectOutputsToInputs(from first: Int = 0) throws(DeviceError) {
        let (client, ins, outNames, inNames): (OpaquePointer, [OpaquePointer?], [String], [String]) = try control.withLock { c throws(DeviceError) in
            guard c.running, let client = state.pointee.client else {
                throw DeviceError("JACK device \(uid): connecting its outputs to its inputs needs a running device")
            }
            guard first >= 0, c.inPorts.count >= first + outputChannelCount else {
                throw DeviceError("JACK device \(uid): \(outputChannelCount) outputs need inputs \(first + 1)…\(first + outputChannelCount), it has \(c.inPorts.count)")
            }
            let ins = Array(c.inPorts[first..<(first + outputChannelCount)])
            return (client, ins, c.outputPortNames, Array(c.inputPortNames[first...]))
        }
        for (o, i) in zip(outNames, inNames) {
            let r = jack_connect(client, o, i)
            guard r == 0 || r == EEXIST else { throw DeviceError("JACK device \(uid): cannot connect \(o) to \(i)") }
        }
        // The connections take effect in a later cycle: wait until JACK reports them (and two
        // cycles more) so that what the inputs carry from then on is what went out.
        let deadline = ContinuousClock.now + .seconds(2)
        while ins.contains(where: { jack_port_connected($0) == 0 }) && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.002)
        }
        if let core = state.pointee.core.load(ordering: .acquiring) {
            let target = core.pointee.clock.cycleCount + 2
            while core.pointee.clock.cycleCount < target && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.001) }
        }
    }

    /// The thread JACK runs the process callback on (`jack_client_thread_id`), while the
    /// device is running; nil otherwise. For tools that watch the render thread (e.g. count its
    /// allocations). Control thread.
    public var processThread: pthread_t? {
        control.withLock { c in
            guard c.running, let client = state.pointee.client else { return nil }
            let t = jack_client_thread_id(client)
            return t == 0 ? nil : t
        }
    }

    /// The realtime priority of JACK's process thread (`jack_client_real_time_priority`),
    /// nil when the server runs without realtime scheduling or the client is not open. Any
    /// thread but the render thread; does not block.
    public var renderPriority: Int32? {
        control.withLock { c in
            guard c.open, let client = state.pointee.client else { return nil }
            let p = jack_client_real_time_priority(client)
            return p > 0 ? p : nil
        }
    }

    // MARK: Start and stop

    /// Installs the process callback, activates the client and connects the ports; from the
    /// next cycle on, `core.pointee.render` is called on JACK's process thread. Reopens the
    /// client when ``stop()`` closed it or the server shut down. Notes `.deviceStarted`.
    /// Control thread.
    ///
    /// A client of this process still closing (libjack's close of a dead client can take as
    /// long as the dying server keeps it waiting) is waited for first, at most 5 s, without the
    /// device's lock: a new client never opens while an old one is still open.
    ///
    /// - Throws: ``DeviceError`` when already running, when the server is not reachable, when
    ///   activation fails, when a close of an earlier client has not finished within 5 s
    ///   (naming it), or naming the port that could not be connected (then the device is left
    ///   stopped).
    public func start(rendering target: RenderTarget) throws(DeviceError) {
        let core = target.core
        var dead: PendingClose?
        let (running, mustOpen): (Bool, Bool) = control.withLock { c in
            if c.running { return (true, false) }
            if c.open && state.pointee.shutDown.load(ordering: .acquiring) { dead = detachClient(&c) }
            return (false, !c.open)
        }
        if running { throw DeviceError("JACK device \(uid) is already running") }
        // Outside the lock: closes (this device's dead client, any other client of the
        // process) finish before a new client opens, which waits for them in openClient at
        // most as long again; usually they are done by then.
        if let dead, !finish(dead) { throw unfinishedCloseError() }
        if mustOpen, !JackLifecycle.shared.waitForCloses(limit: closeWaitLimit) { throw unfinishedCloseError() }
        var retired: PendingClose?
        let result: Result<Void, DeviceError> = control.withLock { c in
            do throws(DeviceError) {
                guard !c.running else { throw DeviceError("JACK device \(uid) is already running") }
                if c.open && state.pointee.shutDown.load(ordering: .acquiring) {
                    // The server went away again between the two steps.
                    retired = detachClient(&c)
                    throw DeviceError("JACK server “\(serverName)” went away while device \(uid) was starting")
                }
                if !c.open { try openClient(&c) }
                guard let client = state.pointee.client else { throw DeviceError("JACK device \(uid): no client") }
                // A restart continues the device's sample time after the wall-clock gap.
                state.pointee.keeper.resume()
                state.pointee.resumedLostFrames.store(-1, ordering: .relaxed)
                let rate = jack_get_sample_rate(client)
                state.pointee.keeper.sampleRate = Double(rate)
                state.pointee.sampleRate.store(rate, ordering: .relaxed)
                core.pointee.clock.setNominalSampleRate(Double(rate))
                state.pointee.core.store(core, ordering: .sequentiallyConsistent)
                state.pointee.note(.deviceStarted)
                guard jack_set_process_callback(client, jackProcess, UnsafeMutableRawPointer(state)) == 0 else {
                    state.pointee.core.store(nil, ordering: .sequentiallyConsistent)
                    throw DeviceError("JACK device \(uid): cannot set the process callback")
                }
                registerTransportSync(client)
                guard jack_activate(client) == 0 else {
                    state.pointee.core.store(nil, ordering: .sequentiallyConsistent)
                    throw DeviceError("JACK device \(uid): cannot activate the client on server “\(serverName)”")
                }
                do throws(DeviceError) {
                    c.madeConnections = try connect(c.outputPortNames, options.outputConnections, output: true, client: client)
                    c.madeConnections += try connect(c.inputPortNames, options.inputConnections, output: false, client: client)
                    try connectSide(c.sideConnections, client: client)
                } catch {
                    jack_deactivate(client)
                    state.pointee.core.store(nil, ordering: .sequentiallyConsistent)
                    throw error
                }
                c.running = true
                c.coreBits = UInt(bitPattern: core)
                refreshLatency()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        if let retired { _ = finish(retired) }  // outside the lock
        try result.get()
    }

    /// Deactivates and closes the client. When it returns, no render call is under way and no
    /// callback of this device reaches the renderer any more; JACK calls nothing of this device
    /// once libjack's close of the client has returned, which `stop` waits for, at most 5 s.
    /// A close that takes longer (libjack blocked in `jack_client_close`: a server that died
    /// mid-close) is reported (``JackMessages``, ``unfinishedClose``) and left to finish on its
    /// own thread; no client of this process opens until it has. Does nothing more when already
    /// stopped. Never holds the device's lock across a libjack close: ``isRunning`` and the
    /// other queries answer meanwhile. Control thread, or the ``onShutdown`` handler.
    public func stop() {
        let reconnector = control.withLock { c in
            let r = c.reconnector
            c.reconnector = nil
            return r
        }
        reconnector?.cancelAndWait()  // outside the lock: it takes the lock to close or resume
        let retired = control.withLock { c in
            c.core = nil
            return detachClient(&c)
        }
        // Outside the lock: the renderer was taken away under it; wait until no callback still
        // holds it (at most the rest of one cycle), then for the close.
        waitForCallbacksToLeave()
        if let retired {
            _ = finish(retired)
        } else if closing.wait(timeout: .now()) == .timedOut {
            // A close begun earlier (the server's shutdown) is still under way.
            if !waitForClosing() { reportUnfinishedClose() }
        }
    }

    /// What this device is still closing (a libjack `jack_client_close` that has not
    /// returned), and for how long; nil when nothing. Any control thread.
    public var unfinishedClose: String? {
        control.withLock { c in
            c.closes.removeAll { $0.isFinished }
            return c.closes.first?.progress
        }
    }

    // MARK: Internals

    /// Waits until no callback uses the renderer (``JackCallbackState/callbacksInside``), after
    /// `core` was set to nil. At most the rest of one render call. Control thread, not under
    /// the lock.
    private func waitForCallbacksToLeave() {
        while state.pointee.callbacksInside.load(ordering: .sequentiallyConsistent) != 0 { sched_yield() }
    }

    /// Waits for every close of this device's clients, at most ``closeWaitLimit``.
    private func waitForClosing() -> Bool {
        let limit = closeWaitLimit
        let ns = limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000
        return closing.wait(timeout: .now() + .nanoseconds(Int(ns))) == .success
    }

    /// Waits (at most ``closeWaitLimit``) for a detached client's close, then stops its
    /// event thread; true when done. A close that takes longer is reported, and its event
    /// thread is stopped by the closing thread once it is over. Not under the control lock.
    private func finish(_ p: PendingClose) -> Bool {
        if p.close.wait(limit: closeWaitLimit) {
            p.events?.stop()  // joins it, unless this is that thread (then it ends by itself)
            return true
        }
        reportUnfinishedClose()
        let events = p.events
        p.close.whenFinished { events?.stop(join: false) }
        return false
    }

    private func reportUnfinishedClose() {
        guard let what = unfinishedClose else { return }
        JackMessages.report(
            "JACK device \(uid): \(what) (libjack's jack_client_close has not returned); "
                + "no JACK client opens in this process until it does")
    }

    private func unfinishedCloseError() -> DeviceError {
        let what = JackLifecycle.shared.pendingDescription ?? "a JACK client close"
        return DeviceError(
            "JACK device \(uid): cannot open a client while an earlier one of this process is still closing: "
                + "\(what) (libjack's jack_client_close has not returned)")
    }

    private func openClient() throws(DeviceError) {
        let r: Result<Void, DeviceError> = control.withLock { c in
            do throws(DeviceError) { try openClient(&c); return .success(()) } catch { return .failure(error) }
        }
        try r.get()
    }

    private func openClient(_ c: inout Control) throws(DeviceError) {
        var status = jack_status_t(rawValue: 0)
        // Waits for the closes announced before (usually done: callers wait for them first,
        // without the control lock).
        let opened = JackLifecycle.shared.open(limit: closeWaitLimit) {
            serverName.withCString { s in options.clientName.withCString { aq_jack_client_open($0, s, &status) } }
        }
        guard let opened else { throw unfinishedCloseError() }
        guard let client = opened else {
            throw DeviceError(
                "JACK server “\(serverName)” is not reachable (client “\(options.clientName)”: "
                    + "\(JackDevice.describe(status))); is jackd running with -n \(serverName)?",
                reason: status.rawValue & JackServerFailed.rawValue != 0 ? .serverUnreachable : .other)
        }
        var ok = false
        defer {
            if !ok {
                // Closed like any other: on its own thread, before any later open.
                let close = JackClientClose(
                    client: client, deactivate: false, what: "closing JACK client “\(c.clientName)” (failed open)",
                    device: closing, cleanup: clientStateCleanup())
                c.closes.append(close)
            }
        }
        c.clientName = String(cString: jack_get_client_name(client))
        // Its process thread shows as "aqsync-render", jackd2's other threads of the client
        // as "aqsync-jack" (names only: nothing depends on them).
        _ = aq_jack_set_render_thread_name(client)
        let st = UnsafeMutableRawPointer(state)
        state.pointee.shutDown.store(false, ordering: .relaxed)
        state.pointee.sampleRate.store(jack_get_sample_rate(client), ordering: .relaxed)
        state.pointee.bufferSize.store(jack_get_buffer_size(client), ordering: .relaxed)
        // A new client's ports are connected to nothing yet: no latency until JACK says.
        state.pointee.clearLatencies()

        var outNames: [String] = []
        for i in 0..<outputChannelCount {
            let port = "out_\(i + 1)".withCString {
                jack_port_register(client, $0, aq_jack_default_audio_type(), UInt(JackPortIsOutput.rawValue), 0)
            }
            guard let port else {
                throw DeviceError("JACK device: cannot register port “\(c.clientName):out_\(i + 1)”")
            }
            state.pointee.outPorts[i] = port
            outNames.append(String(cString: jack_port_name(port)))
        }
        var inPorts: [OpaquePointer?] = []
        var inNames: [String] = []
        for i in 0..<options.inputChannels {
            let port = "in_\(i + 1)".withCString {
                jack_port_register(client, $0, aq_jack_default_audio_type(), UInt(JackPortIsInput.rawValue), 0)
            }
            guard let port else {
                throw DeviceError("JACK device: cannot register port “\(c.clientName):in_\(i + 1)”")
            }
            inPorts.append(port)
            state.pointee.inPorts[i] = port
            inNames.append(String(cString: jack_port_name(port)))
        }
        var sideNames: [(String, String?, Bool)] = []
        for (i, p) in options.sidePorts.outputs.enumerated() {
            let port = p.name.withCString {
                jack_port_register(client, $0, aq_jack_default_audio_type(), UInt(JackPortIsOutput.rawValue), 0)
            }
            guard let port else { throw DeviceError("JACK device: cannot register port “\(c.clientName):\(p.name)”") }
            state.pointee.sideOutPorts[i] = port
            sideNames.append((String(cString: jack_port_name(port)), p.connect, true))
        }
        for (i, p) in options.sidePorts.inputs.enumerated() {
            let port = p.name.withCString {
                jack_port_register(client, $0, aq_jack_default_audio_type(), UInt(JackPortIsInput.rawValue), 0)
            }
            guard let port else { throw DeviceError("JACK device: cannot register port “\(c.clientName):\(p.name)”") }
            state.pointee.sideInPorts[i] = port
            sideNames.append((String(cString: jack_port_name(port)), p.connect, false))
        }
        c.sidePortNames = sideNames.map { $0.0 }
        c.sideConnections = sideNames.compactMap { n in
            n.1.map { theirs in
                let t = c.sideRetargets[theirs] ?? theirs
                return n.2 ? [n.0, t] : [t, n.0]
            }
        }
        c.generation += 1
        let generation = c.generation
        let events = try JackEventThread { [weak self] reason, code in
            self?.serverDidShutDown(reason: reason, code: code, generation: generation)
        }
        state.pointee.events = events.signal
        guard jack_set_xrun_callback(client, jackXrun, st) == 0,
            jack_set_sample_rate_callback(client, jackSampleRate, st) == 0,
            jack_set_buffer_size_callback(client, jackBufferSize, st) == 0,
            jack_set_freewheel_callback(client, jackFreewheel, st) == 0,
            jack_set_latency_callback(client, jackLatency, st) == 0
        else {
            state.pointee.events = nil
            events.stop()
            throw DeviceError("JACK device: cannot install callbacks on server “\(serverName)”")
        }
        jack_on_info_shutdown(client, jackShutdown, st)
        state.pointee.client = client
        c.events = events
        c.outputPortNames = outNames
        c.inputPortNames = inNames
        c.inPorts = inPorts
        c.open = true
        ok = true
    }

    /// What a finished close does to the callback state, on the closing thread (libjack calls
    /// nothing of the client any more, and no other client opens before this has run).
    private func clientStateCleanup() -> @Sendable () -> Void {
        let st = JackUnchecked(value: state)
        return {
            let state = st.value
            state.pointee.client = nil
            state.pointee.events = nil
            for i in 0..<state.pointee.outputCount {
                state.pointee.outPorts[i] = nil
                state.pointee.outputs[i] = state.pointee.dummy
            }
            for i in 0..<state.pointee.inputCount {
                state.pointee.inPorts[i] = nil
                state.pointee.inputs[i] = state.pointee.dummy
            }
            for i in 0..<state.pointee.sideOutputCount { state.pointee.sideOutPorts[i] = nil }
            for i in 0..<state.pointee.sideInputCount { state.pointee.sideInPorts[i] = nil }
        }
    }

    /// Lets go of the client, under the control lock, without a libjack call: takes the
    /// renderer away from the callbacks, marks the device closed and stopped, and hands the
    /// client to a ``JackClientClose`` (which announces itself to the process-wide gate here,
    /// so no client of this process opens before it has closed this one, and deactivates and
    /// closes it on its own thread). Returns it with the event thread, to be finished
    /// (``finish(_:)``) once the lock is released. `muted`: libjack's messages are discarded
    /// during the close (a dead server's client). Nil when no client is open.
    private func detachClient(_ c: inout Control, muted: Bool = false) -> PendingClose? {
        guard c.open, let client = state.pointee.client else { return nil }
        state.pointee.core.store(nil, ordering: .sequentiallyConsistent)
        let close = JackClientClose(
            client: client, deactivate: c.running, muted: muted,
            what: "closing JACK client “\(c.clientName)” on server “\(serverName)”", device: closing,
            cleanup: clientStateCleanup())
        c.closes.removeAll { $0.isFinished }
        c.closes.append(close)
        c.inPorts = []
        let events = c.events
        c.events = nil
        c.running = false
        c.open = false
        return PendingClose(close: close, events: events)
    }

    /// On the event thread: the server went away. Lets go of the dead client, tells the user's
    /// handler and the engine's; when the device was rendering and may reconnect, starts the
    /// reconnection thread. `generation`: the client whose event thread this is.
    private func serverDidShutDown(reason: String, code: UInt32, generation: Int) {
        var retired: PendingClose?
        let (handler, status, reconnecting): ((@Sendable (String) -> Void)?, (@Sendable (DeviceStatus) -> Void)?, Bool) = control.withLock { c in
            // An earlier client's (let go of already, its close had not returned): a newer one
            // is open, and this is not its news.
            guard c.generation == generation else { return (nil, nil, false) }
            let wasRunning = c.running
            c.running = false
            c.lastShutdownReason = reason
            // The dead client is let go of first, before anyone in this process can open
            // another: its close is announced to the process-wide gate here, under the lock,
            // and every open waits for it (libjack keeps one set of per-server globals for all
            // its clients, and a new client opened while a dead one is still open reuses the
            // dead server's shared memory: it crashed in jack_client_close). The close itself
            // runs on its own thread: it may block for as long as the dying server keeps it
            // waiting.
            retired = detachClient(&c, muted: true)
            // The process's other clients of this server (a netjack master's echo reader) are
            // let go of too, before the reconnection below can open anything.
            JackLifecycle.shared.letGoOfCompanions(of: serverName)
            var reconnecting = false
            if wasRunning, options.reconnect, c.core != nil, c.reconnector == nil {
                c.reconnector = JackReconnector(device: self, lostAt: ContinuousClock.now)
                reconnecting = true
            }
            return (c.onShutdown, c.statusHandler, reconnecting)
        }
        if let retired {
            // This very thread: it ends after this handler returns, once the close is done.
            let events = retired.events
            retired.close.whenFinished { events?.stop(join: false) }
        }
        status?(.lost(reason: "JACK server “\(serverName)” went away: \(reason)", reconnecting: reconnecting))
        handler?(reason)
    }

    // MARK: Reconnection (on the reconnector's thread)

    /// One attempt to reach the server again and resume rendering. Returns nil when the server
    /// is not there yet, else the outcome. Reconnection thread.
    func tryResume(awaySince: ContinuousClock.Instant) -> DeviceStatus? {
        // The rate is read through a plain probe client first: a server at another rate is
        // never met with the device's own client (whose ports and callbacks would then have to
        // be torn down at once; libjack crashed doing that on a server just started).
        guard let rate = JackDevice.serverSampleRate(serverName) else { return nil }
        let was = state.pointee.keeper.sampleRate
        if Double(rate) != was {
            control.withLock { $0.core = nil }
            return .failed(reason: "JACK server “\(serverName)” came back at \(rate) Hz; the engine runs at \(Int(was)) Hz")
        }
        // The dead client's close (and any other of the process) first, without the lock.
        guard JackLifecycle.shared.waitForCloses(limit: closeWaitLimit) else { return nil }
        var retired: PendingClose?
        let outcome: DeviceStatus? = control.withLock { c in
            guard let core = c.core, !c.running else { return nil }
            if !c.open {
                do throws(DeviceError) { try openClient(&c) } catch { return nil }
            }
            guard let client = state.pointee.client else { return nil }
            if Double(jack_get_sample_rate(client)) != was {
                return nil  // restarted again between the probe and now: the next try tells
            }
            state.pointee.keeper.resume()
            state.pointee.resumedLostFrames.store(-1, ordering: .relaxed)
            state.pointee.core.store(core, ordering: .sequentiallyConsistent)
            state.pointee.note(.serverReturned)
            registerTransportSync(client)
            guard jack_set_process_callback(client, jackProcess, UnsafeMutableRawPointer(state)) == 0,
                jack_activate(client) == 0
            else {
                retired = detachClient(&c)
                return nil
            }
            do throws(DeviceError) {
                c.madeConnections = try connect(c.outputPortNames, options.outputConnections, output: true, client: client)
                c.madeConnections += try connect(c.inputPortNames, options.inputConnections, output: false, client: client)
                try connectSide(c.sideConnections, client: client)
            } catch {
                // A port we were connected to is not there (yet): play unconnected rather than
                // not at all; the message says so.
                c.lastShutdownReason = "reconnected, but: \(error.message)"
            }
            c.running = true
            c.reconnections += 1
            refreshLatency()
            return .restored(seconds: 0, lostFrames: 0, skipped: false)
        }
        if let retired { _ = finish(retired) }  // outside the lock
        guard case .restored = outcome else { return outcome }
        // The frames lost are known once the first cycle has run.
        let deadline = ContinuousClock.now + .seconds(2)
        var lost: Int64 = -1
        while ContinuousClock.now < deadline {
            lost = state.pointee.resumedLostFrames.load(ordering: .acquiring)
            if lost >= 0 { break }
            Thread.sleep(forTimeInterval: 0.002)
        }
        let away = ContinuousClock.now - awaySince
        let seconds = Double(away.components.seconds) + Double(away.components.attoseconds) / 1e18
        return .restored(seconds: seconds, lostFrames: max(lost, 0), skipped: lostTimePolicy == .followWallClock)
    }

    /// The reconnector is done (resumed, failed or cancelled): tells the engine. Reconnection
    /// thread.
    func reconnectorFinished(_ r: JackReconnector, outcome: DeviceStatus?) {
        let handler: (@Sendable (DeviceStatus) -> Void)? = control.withLock { c in
            if c.reconnector === r { c.reconnector = nil }
            return c.statusHandler
        }
        if let outcome { handler?(outcome) }
    }

    /// Connects `ours` as `how` says; returns the connections made (or there already).
    @discardableResult
    private func connect(_ ours: [String], _ how: JackConnections, output: Bool, client: OpaquePointer) throws(DeviceError) -> [MadeConnection] {
        let targets: [String]
        switch how {
        case .none:
            return []
        case .ports(let names):
            guard names.count <= ours.count else {
                throw DeviceError(
                    "JACK device: \(names.count) \(output ? "output" : "input") connections given for \(ours.count) ports")
            }
            targets = names
        case .physical:
            let flags = UInt(JackPortIsPhysical.rawValue | (output ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue))
            targets = JackDevice.names(jack_get_ports(client, nil, aq_jack_default_audio_type(), flags))
        }
        var made: [MadeConnection] = []
        for (mine, theirs) in zip(ours, targets) {
            let (src, dst) = output ? (mine, theirs) : (theirs, mine)
            let rc = src.withCString { s in dst.withCString { jack_connect(client, s, $0) } }
            if rc != 0 && rc != EEXIST {
                throw DeviceError("JACK device: cannot connect “\(src)” to “\(dst)” (port “\(theirs)” missing or incompatible?)")
            }
            made.append(MadeConnection(source: src, destination: dst))
        }
        return made
    }

    /// Makes the side ports' connections (source, destination pairs).
    private func connectSide(_ pairs: [[String]], client: OpaquePointer) throws(DeviceError) {
        for p in pairs {
            let rc = p[0].withCString { s in p[1].withCString { jack_connect(client, s, $0) } }
            if rc != 0 && rc != EEXIST {
                throw DeviceError("JACK device: cannot connect “\(p[0])” to “\(p[1])” (port missing or incompatible?)")
            }
        }
    }

    /// Copies and frees a NULL-terminated array of names from libjack.
    private static func names(_ list: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> [String] {
        guard let list else { return [] }
        defer { jack_free(list) }
        var out: [String] = []
        var i = 0
        while let p = list[i] {
            out.append(String(cString: p))
            i += 1
        }
        return out
    }

    /// A readable list of the bits of a `jack_status_t`.
    static func describe(_ status: jack_status_t) -> String {
        let bits: [(JackStatus, String)] = [
            (JackFailure, "failure"), (JackInvalidOption, "invalid option"), (JackNameNotUnique, "name not unique"),
            (JackServerStarted, "server started"), (JackServerFailed, "cannot connect to server"),
            (JackServerError, "server error"), (JackNoSuchClient, "no such client"), (JackLoadFailure, "load failure"),
            (JackInitFailure, "init failure"), (JackShmFailure, "shared memory failure"),
            (JackVersionError, "protocol version mismatch"), (JackBackendError, "backend error"),
            (JackClientZombie, "client zombie"),
        ]
        let names = bits.filter { status.rawValue & $0.0.rawValue != 0 }.map(\.1)
        return names.isEmpty ? "status 0" : names.joined(separator: ", ")
    }
}
