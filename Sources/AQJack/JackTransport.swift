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
    /// reads the transport (`jack_transport_query`) every cycle, after the engine's mix, and
    /// calls `callbacks.process` with its state and frame; the client becomes a slow-sync
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
