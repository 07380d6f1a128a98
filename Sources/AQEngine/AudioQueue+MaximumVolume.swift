import AQCore
import AQTypes

/// Volumes above unity for Swift players (a session's track gains): the C API never raises the
/// range, so C programs keep Apple's 0…1.
extension AudioQueue {
    /// The largest linear volume a Swift caller may set (``setMaximumVolume(_:)``): +24 dB.
    public static let loudestVolume: Float = 15.848932

    /// Raises (or lowers back) the largest volume ``setParameter(_:_:)`` and volume parameter
    /// events take, from Apple's 1 up to ``loudestVolume`` (+24 dB): for a Swift player whose
    /// tracks have gains above unity (a session's `gain_db`). The C API never calls it, so C
    /// programs keep Apple's 0…1. The current volume is not changed. Throws `.invalidParameter`
    /// for a value outside 1…``loudestVolume``. Any thread but the render thread; does not
    /// block.
    public func setMaximumVolume(_ value: Float) throws(AudioQueueError) {
        guard value.isFinite, value >= 1, value <= Self.loudestVolume else {
            throw AudioQueueError(.invalidParameter, "a maximum volume of \(value) is outside 1…\(Self.loudestVolume)")
        }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        maximumVolume = value
    }
}
