import AQEngine
import Foundation

extension SessionPlayer {
    /// The loudest gain ``setGain(track:decibels:)`` takes, in decibels.
    package static let maximumGainDB = 24.0

    /// Sets track `track`'s gain (0-based, in the session's order) to `decibels`, replacing its
    /// `gain_db` for the rest of the run (`/aqsync/gain` in plain play). As
    /// `AudioQueueSetParameter(kAudioQueueParam_Volume)` on a playing queue, it ramps linearly
    /// over the engine's ``AudioQueueEngine/volumeRampSeconds`` (5 ms by default: never a
    /// step, which clicks) from the first render cycle that starts after the change reaches
    /// the renderer, and stays through seeks, pauses and loops (the first buffer after a
    /// restart carries it, exactly from its first frame). Fades are applied to the track's
    /// frames before the gain, so a fade goes on under the new gain.
    ///
    /// Returns false, changing nothing, for a track the session does not have, a gain that is
    /// not finite or above ``maximumGainDB``. Any control thread; does not block (the queue's
    /// lock, briefly).
    @discardableResult
    package func setGain(track: Int, decibels: Double) -> Bool {
        guard tracks.indices.contains(track), decibels.isFinite, decibels <= Self.maximumGainDB else { return false }
        let t = tracks[track]
        let linear = Float(pow(10, decibels / 20))
        // Under the player's lock, so that a restart's first buffer (read under it) and the
        // queue's volume agree.
        cond.lock()
        defer { cond.unlock() }
        t.gain = linear
        return (try? t.queue.setParameter(.volume, linear)) != nil
    }

    /// Track `track`'s gain now, in decibels (nil for a track the session does not have). Any
    /// control thread; does not block.
    package func gainDB(track: Int) -> Double? {
        guard tracks.indices.contains(track) else { return nil }
        cond.lock()
        defer { cond.unlock() }
        return 20 * log10(Double(tracks[track].gain))
    }

    /// Ramps every track to silence over the engine's ``AudioQueueEngine/volumeRampSeconds``
    /// (5 ms by default), from the first render cycle that starts after the change reaches the
    /// renderer, as ``setGain(track:decibels:)`` does: a skip in a set list (`aqsync play A B`,
    /// the `n` key) fades the session out this way, then stops it, so it ends without a click.
    /// Returns the ramp's length in seconds. Any control thread; does not block.
    @discardableResult
    package func fadeOut() -> Double {
        cond.lock()
        defer { cond.unlock() }
        for t in tracks {
            t.gain = 0
            try? t.queue.setParameter(.volume, 0)
        }
        return engine.volumeRampSeconds
    }
}
