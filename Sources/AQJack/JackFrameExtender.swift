/// Extends JACK's 32-bit frame counter (`jack_nframes_t`, wrapping after 2^32 frames, about
/// 24.9 hours at 48 kHz) to a 64-bit device sample time that never wraps.
///
/// The first frame seen is taken as is; every later frame adds the wrapping difference to the
/// previous one, so a wrap of the 32-bit counter carries into the high part. JACK's frame time
/// only moves forward, so any difference is read as a forward step.
///
/// Thread safety: a plain value owned by one thread (the render thread, in ``JackDevice``).
public struct JackFrameExtender: Sendable, BitwiseCopyable {
    private var last: UInt32 = 0
    private var value: Int64 = 0
    private var started = false

    public init() {}

    /// The 64-bit frame count of the last frame passed to ``extend(_:)``; nil before the first.
    public var current: Int64? { started ? value : nil }

    /// Returns the 64-bit frame count for the 32-bit JACK frame `frame`.
    @_noLocks
    public mutating func extend(_ frame: UInt32) -> Int64 {
        if started {
            value &+= Int64(frame &- last)
        } else {
            value = Int64(frame)
            started = true
        }
        last = frame
        return value
    }

    /// Forgets the history: the next frame starts a new count. Owner thread only.
    public mutating func reset() { self = JackFrameExtender() }
}
