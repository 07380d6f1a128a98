import AQCore
import CJACK
import Foundation

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
/// Not reopened when the server goes away (the link's L then stops moving; the device's
/// own reconnection is unaffected). Thread safety: `init` and ``close()`` from a control
/// thread (both block for libjack's open or close); the process callback runs on JACK's thread.
public final class JackEchoReader: @unchecked Sendable {
    /// The client's full name on the server.
    public let clientName: String
    private let state: UnsafeMutablePointer<State>
    private let link: NetJackLink
    /// The port the echo comes from.
    private let from: String

    fileprivate struct State {
        var client: OpaquePointer?
        var input: OpaquePointer?
        var link: UnsafeMutablePointer<NetJackLinkState>
    }

    /// Opens a client named `name` on server `server` (nil: the default), activates it and
    /// connects `from` to its input. `link` (a master link) is kept for as long as the
    /// reader. Control thread; blocks for libjack's open.
    /// - Throws: ``DeviceError`` when the client cannot be opened, registered, activated or
    ///   connected (the message names the port).
    public init(server: String?, name: String, from: String, link: NetJackLink) throws(DeviceError) {
        self.link = link
        self.from = from
        state = .allocate(capacity: 1)
        state.initialize(to: State(client: nil, input: nil, link: link.state))
        let serverName = JackDevice.resolveServerName(server)
        var status = jack_status_t(rawValue: 0)
        let opened = JackLifecycle.shared.open {
            serverName.withCString { s in name.withCString { aq_jack_client_open($0, s, &status) } }
        }
        guard let opened, let client = opened else {
            clientName = name
            throw DeviceError("cannot open JACK client “\(name)” on “\(serverName)” for the slave's echo (\(JackDevice.describe(status)))")
        }
        clientName = String(cString: jack_get_client_name(client))
        state.pointee.client = client
        state.pointee.input = jack_port_register(client, "in", aq_jack_default_audio_type(), UInt(JackPortIsInput.rawValue), 0)
        guard state.pointee.input != nil,
              jack_set_process_callback(client, jackEchoReaderProcess, UnsafeMutableRawPointer(state)) == 0,
              jack_activate(client) == 0
        else {
            close()
            throw DeviceError("cannot register or activate JACK client “\(name)” on “\(serverName)” for the slave's echo")
        }
        let rc = from.withCString { s in "\(clientName):in".withCString { jack_connect(client, s, $0) } }
        if rc != 0 && rc != EEXIST {
            close()
            throw DeviceError("cannot connect “\(from)” to “\(clientName):in” on “\(serverName)” (no such port?)")
        }
    }

    /// Connects the echo's port to the input again when it is not connected and the port
    /// exists (a slave that rejoined the master has new ports there). True when it did.
    /// Control thread (not with ``close()``); blocks briefly (libjack's connect).
    public func reconnect() -> Bool {
        guard let client = state.pointee.client, let input = state.pointee.input, jack_port_connected(input) == 0,
              jack_port_by_name(client, from) != nil else { return false }
        return from.withCString { s in "\(clientName):in".withCString { jack_connect(client, s, $0) } } == 0
    }

    /// Deactivates and closes the client (idempotent). Control thread; blocks for libjack's close.
    public func close() {
        guard let client = state.pointee.client else { return }
        let ticket = JackLifecycle.shared.announceClose("closing JACK client “\(clientName)”")
        JackLifecycle.shared.close(ticket) {
            jack_deactivate(client)
            jack_client_close(client)
        }
        state.pointee.client = nil
    }

    deinit {
        close()
        state.deallocate()
    }
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
