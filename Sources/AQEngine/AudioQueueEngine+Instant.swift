import AQCore

/// Starting at an instant of a system clock (issue 26): the instant is taken to host time
/// (CLOCK_MONOTONIC) through an offset measured at the call, then to a device frame through
/// the device's latest cycle (``AudioQueueEngine/timebase``). Unlike a start at an
/// ``AudioTimeStamp``, an instant the device can no longer honour is refused, never moved.
extension AudioQueueEngine {
    /// The device time of `instant`: its host time (through `offset`, or an offset between
    /// the clocks measured now when nil) and the device sample time the latest cycle's
    /// timebase gives it (fractional). Nil before the device's first cycle. The nearer the
    /// instant, the less the device's rate estimate is extrapolated: call it shortly before.
    /// `rateSince`: an earlier ``timebase`` (taken a second or more before, in the same
    /// discontinuity epoch): the rate is measured between its anchor and the latest
    /// (``DeviceTimebase/refined(since:minimumSeconds:tolerance:)``) instead of the one
    /// cycle's estimate, when that refinement is sure (it never is for a rate more than
    /// ``DeviceTimebase/plausibleRateDeviation`` off nominal); else the one cycle's estimate,
    /// whatever it is: a caller that must not use an implausible rate judges it first with
    /// ``BaselineRate``. Any thread but the render thread; does not block.
    public func deviceTime(at instant: SystemInstant, offset: SystemClockOffset? = nil, rateSince earlier: DeviceTimebase? = nil) -> AudioTimeStamp? {
        guard let latest = timebase else { return nil }
        let tb = earlier.flatMap { latest.refined(since: $0, minimumSeconds: 0.1) } ?? latest
        let host = instant.hostTime(offset: offset ?? SystemClockOffset.measure(instant.clock))
        var ts = tb.timeStamp(forSampleTime: tb.sampleTime(forHostTime: host))
        ts.hostTime = host
        return ts
    }

    /// The device frame of `instant` (its device time rounded to the nearest frame, `rateSince`
    /// as in ``deviceTime(at:offset:rateSince:)``), checked against ``nearestStartTime(_:)``:
    /// a frame the device can still start on.
    /// Any thread but the render thread; does not block.
    /// - Throws: `.cannotStart` before the first cycle, or when the frame is earlier than the
    ///   nearest start time (the message says by how much).
    public func startFrame(at instant: SystemInstant, offset: SystemClockOffset? = nil, rateSince earlier: DeviceTimebase? = nil) throws(AudioQueueError) -> Int64 {
        guard let ts = deviceTime(at: instant, offset: offset, rateSince: earlier) else {
            throw AudioQueueError(.cannotStart, "the device has run no cycle yet: there is no timeline to place \(instant) on")
        }
        let frame = Int64(ts.sampleTime.rounded())
        let earliest = Int64(nearestStartTime().sampleTime)
        if frame < earliest {
            let late = Double(earliest - frame) / device.sampleRate * 1000
            throw AudioQueueError(.cannotStart, "\(instant) is device frame \(frame), \(earliest - frame) frames (\(late.formatted3) ms) before the earliest frame a start can still honour (\(earliest))")
        }
        return frame
    }

    /// Starts every queue of `queues` on the device frame of `instant`, or none of them
    /// (``start(_:at:)`` at ``startFrame(at:offset:rateSince:)``); one queue: `start([queue], atInstant:)`.
    /// Queues that start at different frames relative to the instant (a session's tracks)
    /// take ``startFrame(at:offset:rateSince:)`` and add their offsets. Any thread but the render
    /// thread; does not block.
    /// - Returns: the device frame at which every queue's frame 0 plays.
    /// - Throws: what ``startFrame(at:offset:rateSince:)`` and ``start(_:at:)`` throw.
    @discardableResult
    public func start(_ queues: [AudioQueue], atInstant instant: SystemInstant, offset: SystemClockOffset? = nil, rateSince earlier: DeviceTimebase? = nil) throws(AudioQueueError) -> Int64 {
        let frame = try startFrame(at: instant, offset: offset, rateSince: earlier)
        return try start(queues, at: AudioTimeStamp(sampleTime: Double(frame)))
    }
}

extension Double {
    /// Three decimals, without Foundation.
    fileprivate var formatted3: String {
        let v = (self * 1000).rounded() / 1000
        return "\(v)"
    }
}
