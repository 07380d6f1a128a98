import AQCore
import CJACK
import Foundation
import Synchronization

/// The master side's second client of a netjack2 link (docs/netjack.md, "A part on a slave"):
/// reads the slave's echo of the master's frame stamps on one input port (`in`, connected
/// from the slave's `from_slave_N` on the master) and records L, the slave→master latency,
/// into a master ``NetJackLink`` (``NetJackLinkState/recordEcho(_:_:count:counter:)``).
///
/// It is a client of its own, not a port of the device that writes the stamps: one client
/// that feeds the slave's `to_slave_N` and reads its `from_slave_N` closes a loop through the
/// slave's client in the master's graph, which JACK breaks with a period of delay (L then
/// reads one period too many). This client only reads: it runs after the slave's client in
/// the graph, in the same cycle as any other reader of `from_slave_N` (a recorder).
///
/// When the server goes away (a master restarted), the client is reopened by ``reconnect()``
/// once the server is back. Thread safety: `init`, ``reconnect()`` and ``close()`` from one
/// control thread at a time (they block for libjack's open, connect or close); the process
/// and shutdown callbacks run on JACK's threads.
public final class JackEchoReader: @unchecked Sendable {
    /// The client's full name on the server.
    public private(set) var clientName: String
    private let state: UnsafeMutablePointer<State>
    private let link: NetJackLink
    /// The port the echo comes from, the server and the name asked for.
    private let serverName: String, name: String
    /// The port the echo comes from (``retarget(from:)`` moves it); `lock` held.
    private var from: String
    /// Guards the client's life (open, the dead client let go of, close) and `events`.
    private let lock = NSLock()
    /// The thread JACK's shutdown callback wakes (one per client opened).
    private var events: JackEventThread?
    /// The server went away and the dead client was let go of: ``reconnect()`` opens another.
    private var gone = false
    /// Entered while a dead client's close runs.
    private let closing = DispatchGroup()

    fileprivate struct State: ~Copyable {
        var client: OpaquePointer?
        var input: OpaquePointer?
        var link: UnsafeMutablePointer<NetJackLinkState>
        /// The event thread's signal, for the shutdown callback.
        var events: UnsafeMutablePointer<JackEventSignal>?
        /// Set by the shutdown callback itself: no libjack call may touch the client any more
        /// (libjack asserts in a port call on a client whose server has gone).
        let dead = Atomic<Bool>(false)
    }

    /// Opens a client named `name` on server `server` (nil: the default), activates it and
    /// connects `from` to its input. `link` (a master link) is kept for as long as the
    /// reader. Control thread; blocks for libjack's open.
    /// - Throws: ``DeviceError`` when the client cannot be opened, registered, activated or
    ///   connected (the message names the port).
    public init(server: String?, name: String, from: String, link: NetJackLink) throws(DeviceError) {
        self.link = link
        self.from = from
        self.name = name
        clientName = name
        serverName = JackDevice.resolveServerName(server)
        state = .allocate(capacity: 1)
        state.initialize(to: State(client: nil, input: nil, link: link.state))
        lock.lock()
        defer { lock.unlock() }
        try open()
        JackLifecycle.shared.addCompanion(ObjectIdentifier(self), server: serverName) { [weak self] in self?.serverWentAway() }
    }

    /// Opens, activates and connects the client (``init(server:name:from:link:)``); when
    /// `connecting` is false, a connection that cannot be made yet is left to ``reconnect()``.
    /// `lock` held.
    private func open(connecting: Bool = true) throws(DeviceError) {
        let events = try JackEventThread { [weak self] _, _ in self?.serverWentAway() }
        var status = jack_status_t(rawValue: 0)
        let opened = JackLifecycle.shared.open {
            serverName.withCString { s in name.withCString { aq_jack_client_open($0, s, &status) } }
        }
        guard let opened, let client = opened else {
            events.stop()
            throw DeviceError("cannot open JACK client “\(name)” on “\(serverName)” for the slave's echo (\(JackDevice.describe(status)))")
        }
        clientName = String(cString: jack_get_client_name(client))
        self.events = events
        gone = false
        state.pointee.events = events.signal
        state.pointee.dead.store(false, ordering: .relaxed)
        state.pointee.client = client
        state.pointee.input = jack_port_register(client, "in", aq_jack_default_audio_type(), UInt(JackPortIsInput.rawValue), 0)
        jack_on_info_shutdown(client, jackEchoReaderShutdown, UnsafeMutableRawPointer(state))
        guard state.pointee.input != nil,
              jack_set_process_callback(client, jackEchoReaderProcess, UnsafeMutableRawPointer(state)) == 0,
              jack_activate(client) == 0
        else {
            closeLocked()
            throw DeviceError("cannot register or activate JACK client “\(name)” on “\(serverName)” for the slave's echo")
        }
        let rc = from.withCString { s in "\(clientName):in".withCString { jack_connect(client, s, $0) } }
        if rc != 0 && rc != EEXIST && connecting {
            closeLocked()
            throw DeviceError("cannot connect “\(from)” to “\(clientName):in” on “\(serverName)” (no such port?)")
        }
    }

    /// What ``reconnect()`` did.
    public enum Reconnection: Sendable, Equatable {
        /// Nothing was missing, or what is missing is not there yet.
        case none
        /// The echo's port was connected to the input again (a slave that rejoined the master
        /// has new ports there).
        case connected
        /// The server had gone away (a master restarted): the client was opened again on it,
        /// and connected when the echo's port is there (else by a later call).
        case reopened
    }

    /// Connects the echo's port to the input again when it is not connected and the port
    /// exists; when the server went away, first opens the client again once the server and
    /// the port are back (each call tries once). Control thread (not with ``close()``); blocks
    /// for libjack's close and open (a server that is not back fails the open at once).
    public func reconnect() -> Reconnection {
        lock.lock()
        defer { lock.unlock() }
        if gone {
            // The dead client's close (and any other of the process's) first: libjack must not
            // meet a new client of a server while a dead one of it is still open.
            guard JackLifecycle.shared.waitForCloses(limit: .milliseconds(50)) else { return .none }
            do throws(DeviceError) { try open(connecting: false) } catch { return .none }
            return .reopened
        }
        guard !state.pointee.dead.load(ordering: .acquiring), let client = state.pointee.client, let input = state.pointee.input,
              jack_port_connected(input) == 0,
              jack_port_by_name(client, from) != nil else { return .none }
        return from.withCString { s in "\(clientName):in".withCString { jack_connect(client, s, $0) } } == 0 ? .connected : .none
    }

    /// The port the echo comes from now. Control thread.
    public var source: String {
        lock.lock()
        defer { lock.unlock() }
        return from
    }

    /// Reads the echo from `port` from now on (a netjack2 slave that rejoined the master under
    /// another client name echoes on that client's `from_slave_N`): the input is disconnected
    /// from the old port (when both are there) and ``reconnect()`` connects the new one.
    /// Control thread (not with ``close()``).
    public func retarget(from port: String) {
        lock.lock()
        defer { lock.unlock() }
        let old = from
        from = port
        guard !state.pointee.dead.load(ordering: .acquiring), let client = state.pointee.client,
              jack_port_by_name(client, old) != nil else { return }
        _ = old.withCString { s in "\(clientName):in".withCString { jack_disconnect(client, s, $0) } }
    }

    /// Deactivates and closes the client (idempotent); waits for a dead client's close under
    /// way. Control thread; blocks for libjack's close.
    public func close() {
        JackLifecycle.shared.removeCompanion(ObjectIdentifier(self))
        lock.lock()
        defer { lock.unlock() }
        closeLocked()
        gone = false
        closing.wait()
    }

    /// `lock` held.
    private func closeLocked() {
        if let client = state.pointee.client {
            let ticket = JackLifecycle.shared.announceClose("closing JACK client “\(clientName)”")
            JackLifecycle.shared.close(ticket) {
                jack_deactivate(client)
                jack_client_close(client)
            }
            state.pointee.client = nil
            state.pointee.input = nil
        }
        events?.stop()
        events = nil
        state.pointee.events = nil
    }

    /// The server went away: on the reader's event thread (its own shutdown notice), or
    /// earlier on the device's (``JackLifecycle/letGoOfCompanions(of:)``). The dead client is
    /// let go of at once (its close announced to the process-wide gate before anyone here
    /// opens another client: libjack crashed closing a dead client after a new one had
    /// opened), on a thread of its own; ``reconnect()`` opens another once the server is back.
    /// The first call does it; later ones find no client.
    private func serverWentAway() {
        lock.lock()
        defer { lock.unlock() }
        guard let client = state.pointee.client else { return }
        let close = JackClientClose(
            // Not deactivated: jack_deactivate on a client of a dead server dereferences the
            // server's shared memory (it crashed here); the close alone lets go of it.
            client: client, deactivate: false, muted: true,
            what: "closing JACK client “\(clientName)” (the slave's echo) on server “\(serverName)”", device: closing, cleanup: {})
        state.pointee.client = nil
        state.pointee.input = nil
        state.pointee.events = nil
        gone = true
        let ev = events
        events = nil
        // This very thread: it ends after this handler returns, once the close is done.
        close.whenFinished { ev?.stop(join: false) }
    }

    deinit {
        close()
        state.deallocate()
    }
}

/// JACK's shutdown callback: the server went away (any JACK thread, as a signal handler):
/// wakes the reader's event thread.
@_noLocks
private func jackEchoReaderShutdown(_ code: jack_status_t, _ reason: UnsafePointer<CChar>?, _ arg: UnsafeMutableRawPointer?) {
    guard let st = arg?.assumingMemoryBound(to: JackEchoReader.State.self) else { return }
    st.pointee.dead.store(true, ordering: .releasing)
    if let events = st.pointee.events { signalShutdown(events, code: code.rawValue, reason: reason) }
}

/// The reader's process callback: L from the echoed stamps. JACK's thread; no lock, no
/// allocation.
@_noLocks
private func jackEchoReaderProcess(_ frames: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let st = arg?.assumingMemoryBound(to: JackEchoReader.State.self), let client = st.pointee.client, let input = st.pointee.input else { return 0 }
    // jack_port_get_buffer, jack_last_frame_time: realtime-safe (shared memory).
    _unsafePerformance {
        if let buf = jack_port_get_buffer(input, frames) {
            NetJackLinkState.recordEcho(st.pointee.link, buf.assumingMemoryBound(to: Float.self), count: Int(frames), counter: jack_last_frame_time(client))
        }
    }
    return 0
}
