/// A realtime follower of a transport (JACK's): two C functions and their context, called by
/// a device on its render thread. ``process`` is called once per cycle after the engine has
/// mixed the cycle, with the transport's state and frame read that cycle, and may add to the
/// outputs; ``sync`` answers the transport's "are you ready to roll at this frame?" (JACK's
/// slow-sync callback). Both must be realtime-safe: no allocation, lock, wait, print or throw.
///
/// Thread safety: a plain value; the functions run on the device's render (process) thread.
/// The context must stay valid until the device no longer calls them (removed, device
/// stopped).
public struct TransportCallbacks: @unchecked Sendable {
    /// Called once per cycle: `rolling` 1 while the transport rolls, else 0; `frame`: the
    /// transport frame of the cycle's first frame; `frames`: the cycle's length; `outputs`:
    /// the device's output buffers (`channels` of them, `frames` long), already holding the
    /// engine's mix.
    public typealias Process = @convention(c) (
        _ context: UnsafeMutableRawPointer?, _ rolling: Int32, _ frame: Int64, _ frames: UInt32,
        _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>?, _ channels: Int
    ) -> Void
    /// Called when the transport wants to start or was repositioned: `frame` is where it will
    /// roll from; returns non-zero when ready to play that frame on the first rolling cycle.
    public typealias Sync = @convention(c) (_ context: UnsafeMutableRawPointer?, _ frame: Int64) -> Int32

    /// What both functions get as `context`.
    public var context: UnsafeMutableRawPointer
    /// The per-cycle function.
    public var process: Process
    /// The readiness function.
    public var sync: Sync

    /// Callbacks with their context.
    public init(context: UnsafeMutableRawPointer, process: Process, sync: Sync) {
        self.context = context
        self.process = process
        self.sync = sync
    }
}
