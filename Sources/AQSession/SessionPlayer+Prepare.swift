import AQEngine
import Foundation

/// Preparing a session's tracks before the device is there (issue 25, "time to the first
/// frame"): `aqsync play` opens every track's file and makes its first source while the JACK
/// client opens and activates, then hands the result to the player
/// (``SessionPlayer/init(session:engine:options:from:prepared:)``), which uses it only when it
/// was made for the device's actual rate and the same position and buffering, and otherwise
/// makes every feed anew (the prepared ones are then closed unused).
extension SessionPlayer {
    /// Every track's feed, made ahead of the player for a rate the device is expected to run
    /// at. Holds the tracks' open files until the player takes it or it is released.
    ///
    /// Thread safety: made on one thread (``prepare(_:deviceRate:from:bufferFrames:)``),
    /// immutable afterwards; handed to the player's init on another thread once the making
    /// returned (the hand-over must be ordered, e.g. by a semaphore or a group's wait). Used
    /// by one player at most.
    package final class Preparation: @unchecked Sendable {
        /// The device rate the feeds were made for.
        package let deviceRate: Double
        let bufferFrames: Int
        let trackCount: Int
        /// In track order, as ``makeFeeds(for:deviceRate:timeline:bufferFrames:)`` returns them.
        let feeds: [Result<TrackFeed?, SessionError>]
        /// The timeline the feeds were made on (its position: where they start): the player
        /// must take this one (its loop passes are a shared reference the feeds follow).
        let timeline: PlayTimeline

        init(deviceRate: Double, bufferFrames: Int, trackCount: Int, timeline: PlayTimeline, feeds: [Result<TrackFeed?, SessionError>]) {
            self.deviceRate = deviceRate
            self.bufferFrames = bufferFrames
            self.trackCount = trackCount
            self.timeline = timeline
            self.feeds = feeds
        }

        /// The feeds and their timeline, when they were made for this rate, position,
        /// buffering and number of tracks (nil: the player makes its own).
        func feeds(deviceRate: Double, position: Int64, bufferFrames: Int, trackCount: Int) -> (timeline: PlayTimeline, feeds: [Result<TrackFeed?, SessionError>])? {
            guard deviceRate == self.deviceRate, position == timeline.position, bufferFrames == self.bufferFrames, trackCount == self.trackCount else { return nil }
            return (timeline, feeds)
        }
    }

    /// The rate a device is expected to play `session` at, before it is open: the session's
    /// `sample_rate`, else its first track's file's (nil: no tracks).
    ///
    /// Thread safety: pure function; any thread.
    package static func likelyDeviceRate(of session: Session) -> Double? {
        session.sampleRate ?? session.tracks.first.map { $0.audio.format.sampleRate }
    }

    /// The player's timeline at `rate` from the session position `from`, and the loop's device
    /// range (unchecked: ``init(session:engine:options:from:prepared:)`` refuses a position or
    /// a loop past the end).
    ///
    /// Thread safety: pure function; any thread.
    static func timeline(of session: Session, deviceRate rate: Double, from: SessionTime)
        -> (timeline: PlayTimeline, loop: Range<Int64>?, full: Int64)
    {
        let full = session.deviceLength(deviceRate: rate)
        let position = from.deviceFrames(sessionRate: session.sampleRate ?? rate, deviceRate: rate)
        let loop = session.loop?.deviceRange(sessionRate: session.sampleRate ?? rate, deviceRate: rate)
        return (PlayTimeline(position: position, end: full, loop: loop, count: session.loop?.count), loop, full)
    }

    /// Opens every track's file and makes its first source for a device at `deviceRate`
    /// (``makeFeeds(for:deviceRate:timeline:bufferFrames:)``, on up to as many threads as the
    /// machine has cores). Blocks until all are made. Errors are kept, per track, for the
    /// player to report as it would its own. Nil when the position or the loop lies at or past
    /// the session's end (the player refuses those itself).
    ///
    /// Thread safety: any thread but the render thread (reads files, allocates).
    package static func prepare(_ session: Session, deviceRate: Double, from: SessionTime, bufferFrames: Int) -> Preparation? {
        let t = timeline(of: session, deviceRate: deviceRate, from: from)
        guard t.timeline.position < t.full, (t.loop?.upperBound ?? 0) <= t.full else { return nil }
        let feeds = makeFeeds(for: session, deviceRate: deviceRate, timeline: t.timeline, bufferFrames: bufferFrames)
        return Preparation(deviceRate: deviceRate, bufferFrames: bufferFrames, trackCount: session.tracks.count, timeline: t.timeline, feeds: feeds)
    }
}
