import AQEngine

/// Moving a playing session on the device's timeline (issue 26): the part on a netjack2 slave
/// whose start the master's stamps now place elsewhere (the slave lost a cycle, or rejoined the
/// master after a period change or a restart) is moved back into step.
extension SessionPlayer {
    /// Moves the whole session `delta` device frames later (earlier when negative) from now
    /// on, as if it had started that much later: every track stops at once and restarts, as a
    /// seek does (``seek(to:lead:)``), on one common device frame R (now + `lead` or later), at
    /// the session frame that plays at R − `delta` on the player's current timeline (its seeks
    /// and its loop followed, the loop pass continued). When the session would not have begun
    /// by then (R − `delta` before the player's start), it restarts from its starting position
    /// at its new start frame instead.
    ///
    /// - Parameters:
    ///   - delta: device frames; 0 does nothing.
    ///   - lead: device frames from now to R at least (nil: 250 ms at the device's rate). A
    ///     refill that takes longer than the lead makes R later than asked: the session is
    ///     then moved by more than `delta`, and the result says by how much.
    /// - Returns: the frames the session was moved by (`delta`, or more when R came late: call
    ///   again with the difference and a longer lead), and what the seek did (nil when `delta`
    ///   was 0).
    /// - Throws: ``SessionError`` `.invalidValue` for a session with `[[record]]` takes, a
    ///   player paused or already stopped (nothing is moved); `.playback` when a queue cannot be
    ///   stopped or restarted (that track is then reported stopped with the error).
    ///
    /// Thread safety: any control thread, not the render thread nor the engine's output
    /// callbacks. Blocks as a seek does; seeks, pauses, shifts and ``stop()`` run one after
    /// another.
    package func shift(by delta: Int64, lead: Int64? = nil) throws(SessionError) -> (moved: Int64, result: SeekResult?) {
        guard delta != 0 else { return (0, nil) }
        if !session.takes.isEmpty { throw Self.refusal("moving the session", session: session) }
        beginExclusive()
        defer { endExclusive() }
        let rate = engine.device.sampleRate
        let now = Int64(engine.deviceCurrentTime().sampleTime)
        let r = Int64(engine.nearestStartTime(AudioTimeStamp(sampleTime: Double(now + (lead ?? Int64((0.25 * rate).rounded()))))).sampleTime)
        cond.lock()
        if stopping || pausedAt != nil {
            let why = stopping ? "the player has stopped: nothing to move" : "the player is paused: nothing plays to be moved"
            cond.unlock()
            throw SessionError(.invalidValue, file: session.url.path, why)
        }
        let timeline = currentTimeline
        let offset = passOffset
        // The player frame that plays at R once moved; before 0, the start is later than R.
        let frame = r - delta - (startFrame ?? r)
        cond.unlock()
        let at = r + max(0, -frame)
        guard let place = Self.sessionFrame(atPlayerFrame: max(0, frame), on: timeline) else {
            // Past the end once moved: it ends, as reaching the end does.
            return (delta, try seekLocked(to: timeline.end, lead: nil, passesLeft: nil, passOffset: 0, halt: true))
        }
        // Inside the loop, in pass k of this timeline: the passes left, this one included (as a
        // resume continues its pass).
        let pass = place.pass > 0 ? place.pass + offset : 0
        var left: Int?
        if pass > 0, let total = timeline.passes?.total { left = max(1, total - place.pass + 1) }
        let result = try seekLocked(
            to: place.frame, lead: nil, passesLeft: pass > 0 ? .some(left) : nil, passOffset: pass > 0 ? pass - 1 : 0, halt: true, at: at)
        if case .playing(_, let started) = result { return (delta + (started - at), result) }
        return (delta, result)
    }
}
