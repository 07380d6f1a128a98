import AQCore
import CJACK
import Foundation

/// An in-process JACK client that reads ``FrameStamp``s on its input `in`, measures their
/// offset to its own server's frames (``FrameStampMeter``), and echoes every sample unchanged
/// on its output `out`: on a netjack2 slave, with `in` fed by a capture port that carries the
/// master's frame stamps, the offset is the slave's frame offset D to the master (the
/// master→slave latency is 0), and `out` sends the stamps back to the master
/// (docs/netjack.md). This process must have no client on another JACK server (libjack keeps
/// one server's shared memory per process).
///
/// Thread safety: `init` and ``close()`` from a control thread; ``meter`` from any thread; the
/// process callback runs on JACK's thread.
package final class StampEchoClient: @unchecked Sendable {
    /// The offset of each stamp read to the client's frame (receiver frame − stamped frame).
    package let meter = FrameStampMeter()
    /// The client's name on the server.
    package let name: String
    private let state: UnsafeMutablePointer<State>

    fileprivate struct State {
        var client: OpaquePointer?
        var input: OpaquePointer?
        var output: OpaquePointer?
        var meter: Unmanaged<FrameStampMeter>
    }

    /// Opens `name` on JACK server `server`, activates it, and connects `from` to its input and
    /// its output to `to` (full port names; nil: left unconnected).
    /// - Throws: ``TestingError`` when the client cannot be opened, activated or connected.
    package init(server: String, name: String, from: String?, to: String?) throws(TestingError) {
        self.name = name
        state = .allocate(capacity: 1)
        state.initialize(to: State(meter: .passUnretained(meter)))
        var status = jack_status_t(rawValue: 0)
        guard let client = aq_jack_client_open(name, server, &status) else {
            // Every stored property is set, so deinit runs after this throw: it frees `state`
            // (freeing it here too made deinit read freed memory as a client and crash the
            // test process, the JACK pass of 2026-11-27 15:27 after "Cannot open shm segment").
            throw TestingError("cannot open JACK client \(name) on “\(server)” (status 0x\(String(status.rawValue, radix: 16)))")
        }
        state.pointee.client = client
        state.pointee.input = jack_port_register(client, "in", aq_jack_default_audio_type(), UInt(JackPortIsInput.rawValue), 0)
        state.pointee.output = jack_port_register(client, "out", aq_jack_default_audio_type(), UInt(JackPortIsOutput.rawValue), 0)
        guard state.pointee.input != nil, state.pointee.output != nil,
              jack_set_process_callback(client, stampEchoProcess, UnsafeMutableRawPointer(state)) == 0,
              jack_activate(client) == 0
        else {
            close()
            throw TestingError("cannot register or activate JACK client \(name) on “\(server)”")
        }
        if let from, jack_connect(client, from, "\(name):in") != 0 {
            close()
            throw TestingError("cannot connect \(from) to \(name):in on “\(server)”")
        }
        if let to, jack_connect(client, "\(name):out", to) != 0 {
            close()
            throw TestingError("cannot connect \(name):out to \(to) on “\(server)”")
        }
    }

    /// Closes the client (idempotent). Control thread.
    package func close() {
        guard let client = state.pointee.client else { return }
        jack_deactivate(client)
        jack_client_close(client)
        state.pointee.client = nil
    }

    deinit {
        close()
        state.deallocate()
    }
}

/// The process callback: measure, then copy `in` to `out`. JACK's thread; no lock, no
/// allocation.
private func stampEchoProcess(_ frames: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let st = arg?.assumingMemoryBound(to: StampEchoClient.State.self),
          let client = st.pointee.client,
          let i = jack_port_get_buffer(st.pointee.input, frames)?.assumingMemoryBound(to: Float.self),
          let o = jack_port_get_buffer(st.pointee.output, frames)?.assumingMemoryBound(to: Float.self)
    else { return 0 }
    let n = Int(frames)
    st.pointee.meter.takeUnretainedValue().record(i, count: n, firstFrame: UInt64(jack_last_frame_time(client)))
    o.update(from: i, count: n)
    return 0
}
