import AQSession
import Dispatch
import Synchronization

/// `aqsync play`'s first session's tracks prepared while the JACK client opens and activates
/// (issue 25, "time to the first frame"): every track's file opened and its first source made
/// (``SessionPlayer/prepare(_:deviceRate:from:bufferFrames:)``) for the rate the device is
/// expected to run at (``SessionPlayer/likelyDeviceRate(of:)``). The player takes the result
/// and uses it only if the device runs at that rate (else it makes every feed again, as
/// before); a track's error is reported by the player, in its place, as before.
///
/// Threads: made on the main thread, which it does not block; the work runs on a global
/// dispatch queue (and ``SessionPlayer/makeFeeds`` spreads it over the cores). ``take()``
/// blocks its caller until the work is done.
final class TrackPreparation: Sendable {
    private let done = DispatchGroup()
    private let result = Mutex<SessionPlayer.Preparation?>(nil)

    /// Starts preparing `session`'s tracks from `from`; nothing when no rate can be expected
    /// (a session without tracks).
    init(session: Session, from: SessionTime, bufferFrames: Int) {
        guard let rate = SessionPlayer.likelyDeviceRate(of: session) else { return }
        done.enter()
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let p = SessionPlayer.prepare(session, deviceRate: rate, from: from, bufferFrames: bufferFrames)
            result.withLock { $0 = p }
            done.leave()
        }
    }

    /// Waits for the work to finish and hands its result over, once (nil afterwards, and when
    /// nothing could be prepared). Called before the player is made, and on every way out of
    /// `play` (so that no file is still being opened as the process exits).
    func take() -> SessionPlayer.Preparation? {
        done.wait()
        return result.withLock { r in
            defer { r = nil }
            return r
        }
    }
}
