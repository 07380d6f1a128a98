import AQCore
import CJACK

/// JACK's slow-sync callback: asks the installed follower (``JackDevice/setTransportFollower(_:)``)
/// whether it is ready to roll at the transport's new frame; ready when none is installed.
/// JACK calls it on the process thread, before the process callback of a cycle in which the
/// transport is starting or was repositioned.
@_noLocks
func jackSync(_ state: jack_transport_state_t, _ pos: UnsafeMutablePointer<jack_position_t>?, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg, let pos else { return 1 }
    let st = arg.assumingMemoryBound(to: JackCallbackState.self)
    guard let follower = st.pointee.transport.load(ordering: .acquiring) else { return 1 }
    let frame = Int64(pos.pointee.frame)
    return _unsafePerformance { follower.pointee.sync(follower.pointee.context, frame) }
}

extension JackDevice {
    /// Makes this client follow JACK's transport: from the next cycle on the process callback
    /// reads the transport (`jack_transport_query`) every cycle with the cycle's times, before
    /// the engine's mix (read later it can already be the next cycle's position: pipewire-jack
    /// reads the driver's live position), and after the mix calls `callbacks.process` with its
    /// state and frame; the client becomes a slow-sync
    /// client (`jack_set_sync_callback`) whose readiness `callbacks.sync` answers, so the
    /// transport does not roll after a start or a locate until the follower says it is ready.
    /// Kept across a server's absence (registered again when the client is). One follower per
    /// device: a second call is refused.
    ///
    /// Control thread; blocks briefly (the device's control lock).
    ///
    /// - Throws: ``DeviceError`` when a follower is already installed, or JACK refuses the
    ///   sync callback.
    public func setTransportFollower(_ callbacks: TransportCallbacks) throws(DeviceError) {
        let st = callbackState
        let r: Result<Void, DeviceError> = withClient { client in
            guard st.pointee.transport.load(ordering: .acquiring) == nil else {
                return .failure(DeviceError("JACK device \(uid): a transport follower is already installed"))
            }
            let p = UnsafeMutablePointer<TransportCallbacks>.allocate(capacity: 1)
            p.initialize(to: callbacks)
            st.pointee.transport.store(p, ordering: .releasing)
            if let client, jack_set_sync_callback(client, jackSync, UnsafeMutableRawPointer(st)) != 0 {
                return .failure(DeviceError("JACK device \(uid): the server refused the sync callback"))
            }
            return .success(())
        }
        try r.get()
    }

    /// Registers the sync callback on a newly opened or reactivated client when a follower is
    /// installed. Under the control lock, before `jack_activate`.
    func registerTransportSync(_ client: OpaquePointer) {
        let st = callbackState
        if st.pointee.transport.load(ordering: .acquiring) != nil { _ = jack_set_sync_callback(client, jackSync, UnsafeMutableRawPointer(st)) }
    }
}

/// What JACK's transport is doing (`jack_transport_state_t`).
///
/// Thread safety: a plain value; any thread.
public enum JackTransportState: Sendable, Equatable {
    case stopped, rolling, starting, looping, other
}

extension JackDevice {
    /// The transport's state and frame now (`jack_transport_query`), or nil while the client is
    /// closed. Control thread; blocks briefly (the device's control lock).
    public func transportPosition() -> (state: JackTransportState, frame: Int64)? {
        withClient { client -> (state: JackTransportState, frame: Int64)? in
            guard let client else { return nil }
            var pos = jack_position_t()
            let s = jack_transport_query(client, &pos)
            let state: JackTransportState
            switch s {
            case JackTransportStopped: state = .stopped
            case JackTransportRolling: state = .rolling
            case JackTransportStarting: state = .starting
            case JackTransportLooping: state = .looping
            default: state = .other
            }
            return (state, Int64(pos.frame))
        }
    }

    /// Asks JACK's transport to move to transport frame `frame` (`jack_transport_locate`): it
    /// moves at the start of a later cycle, once every slow-sync client is ready. Control
    /// thread; blocks briefly.
    ///
    /// - Throws: ``DeviceError`` while the client is closed, for a frame outside 0…2^32 − 1, or
    ///   when JACK refuses.
    public func locateTransport(to frame: Int64) throws(DeviceError) {
        guard frame >= 0 && frame <= Int64(UInt32.max) else { throw DeviceError("JACK device \(uid): transport frame \(frame) is outside 0…\(UInt32.max)") }
        let ok = withClient { client -> Bool in
            guard let client else { return false }
            return jack_transport_locate(client, jack_nframes_t(frame)) == 0
        }
        if !ok { throw DeviceError("JACK device \(uid): the transport cannot be located to frame \(frame)") }
    }

    /// Starts (`rolling` true) or stops JACK's transport (`jack_transport_start`/`_stop`).
    /// Control thread; blocks briefly. Throws while the client is closed.
    public func setTransportRolling(_ rolling: Bool) throws(DeviceError) {
        let ok = withClient { client -> Bool in
            guard let client else { return false }
            if rolling { jack_transport_start(client) } else { jack_transport_stop(client) }
            return true
        }
        if !ok { throw DeviceError("JACK device \(uid): no client to \(rolling ? "start" : "stop") the transport") }
    }
}
