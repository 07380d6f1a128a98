import AQEngine
import Foundation

/// Starting a session at an instant of a system clock (`aqsync play --start-at`, issue 26).
extension SessionPlayer {
    /// Schedules every track against the session start frame of `instant`: session frame 0
    /// (or the `from` position) plays on the device frame of the instant
    /// (``AudioQueueEngine/startFrame(at:offset:)``), each track on its own frame after it.
    /// An instant the device can no longer honour is refused: nothing starts. Call it shortly
    /// before the instant (the timeline is extrapolated from the latest cycle). Any control
    /// thread; does not block.
    ///
    /// - Returns: the session start frame (device frames).
    /// - Throws: ``SessionError`` `.playback`: the instant is too close or past (the message
    ///   says by how much), or a queue cannot start.
    @discardableResult
    package func start(atInstant instant: SystemInstant, offset: SystemClockOffset? = nil) throws(SessionError) -> Int64 {
        let frame: Int64
        do throws(AudioQueueError) {
            frame = try engine.startFrame(at: instant, offset: offset)
        } catch {
            throw SessionError(.playback, file: session.url.path, "cannot start at the instant: \(error.message)")
        }
        return try start(at: AudioTimeStamp(sampleTime: Double(frame)))
    }
}
