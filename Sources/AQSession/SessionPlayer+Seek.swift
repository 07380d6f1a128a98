import AQEngine
import Foundation

/// Seeking, pausing and resuming while playing (plain play, no JACK transport; issue 24).
///
/// A seek stops every track at once (`AudioQueue.stop(immediately: true)`: the buffers come
/// back unplayed), positions every track's source on its exact frame for the new session
/// position exactly as `--from` does (``init(session:engine:options:from:)``: PCM seeks,
/// compressed files parsed and decoded from a pre-roll with the decoder's residual trimmed),
/// refills every track's buffers, and starts every track again against one common device
/// frame R, now + the lead: session position P plays at R on every track, each track starting
/// later by its own start offset as at a start. The session-position ↔ device-frame mapping
/// (``positionText(atDeviceFrame:)``, ``sessionFrame(atDeviceFrame:)``, the loop, the report)
/// follows: the player's start is R and its position P from then on.
///
/// A loop (`[session] loop`) keeps applying: a seek plays the timeline from P as `--from P`
/// would (into the loop with all its passes when P is before the loop's end, the first pass
/// partial when P is inside it; past the loop's end, on to the session's end). A loop
/// released (``releaseLoop()``) stays released: a seek into or before it plays through it
/// once. A resume continues the pass it paused in: only the passes that were left.
///
/// Sessions with `[[record]]` takes refuse seeks and pauses (a take is one continuous
/// recording placed on the session's frames).
extension SessionPlayer {
    /// What a ``seek(to:lead:)`` or a ``resume(lead:)`` did.
    ///
    /// Thread safety: a plain value; any thread.
    package enum SeekResult: Sendable, Equatable {
        /// Every track restarts so that session frame `position` plays at device frame
        /// `deviceFrame`.
        case playing(position: Int64, deviceFrame: Int64)
        /// The player is paused: it stays paused, now at session frame `position` (a seek while
        /// paused moves where ``resume(lead:)`` plays from).
        case paused(position: Int64)
        /// The position was at or past the session's end: playback ended, as reaching the end
        /// does (every track stopped and reported completed).
        case ended
    }

    /// Why a seek or a pause is refused.
    static func refusal(_ what: String, session: Session) -> SessionError {
        SessionError(.invalidValue, file: session.url.path,
            "\(what) is not possible in a session with [[record]] takes (a take is one continuous recording, placed on the session's frames)")
    }

    /// True while paused (``pause()``).
    ///
    /// Thread safety: any thread but the render thread; a short lock.
    package var isPaused: Bool {
        cond.lock()
        defer { cond.unlock() }
        return pausedAt != nil
    }

    /// Moves playback to session frame `sessionFrame` (device frames; before 0 is 0): every
    /// track stops at once, is positioned on its exact frame there, is refilled, and restarts
    /// on one common device frame, now + `lead`, on which that session frame plays for every
    /// track (sample-exact relative to one another and to the position). At or past the
    /// session's end, playback ends as reaching the end does. While paused (``pause()``), the
    /// player stays paused and the position is where ``resume(lead:)`` will play from.
    ///
    /// - Parameter lead: device frames from the moment the tracks are refilled to the restart
    ///   frame (nil: 100 ms at the device's rate; at least the engine's nearest start time).
    /// - Returns: what it did.
    /// - Throws: ``SessionError`` `.invalidValue` for a session with `[[record]]` takes (nothing
    ///   is stopped) or a player already stopped; `.playback` when a queue cannot be stopped or
    ///   restarted (that track is then reported stopped with the error; the others play on).
    ///
    /// Thread safety: any control thread, not the render thread nor the engine's output
    /// callbacks. Blocks while the tracks are stopped (up to a render cycle), positioned (a
    /// compressed track is parsed from its start and decoded from a pre-roll on the calling
    /// thread) and refilled; the feeder waits meanwhile. Seeks, pauses and ``stop()`` from
    /// several threads run one after another.
    @discardableResult
    package func seek(to sessionFrame: Int64, lead: Int64? = nil) throws(SessionError) -> SeekResult {
        if !session.takes.isEmpty { throw Self.refusal("seeking", session: session) }
        beginExclusive()
        defer { endExclusive() }
        return try seekLocked(to: max(0, sessionFrame), lead: lead, passesLeft: nil, passOffset: 0, halt: true)
    }

    /// Pauses: every track stops at once, and the session position playing then (to within a
    /// render cycle) is remembered for ``resume(lead:)``. Returns that position (device
    /// frames), or nil when already paused, or when the position was already past the end
    /// (playback has ended).
    ///
    /// - Throws: ``SessionError`` `.invalidValue` for a session with `[[record]]` takes (nothing
    ///   is stopped) or a player already stopped.
    ///
    /// Thread safety: any control thread, not the render thread nor the engine's output
    /// callbacks. Blocks until the tracks are stopped (up to a render cycle).
    @discardableResult
    package func pause() throws(SessionError) -> Int64? {
        if !session.takes.isEmpty { throw Self.refusal("pausing", session: session) }
        beginExclusive()
        defer { endExclusive() }
        cond.lock()
        if stopping {
            cond.unlock()
            throw SessionError(.invalidValue, file: session.url.path, "the player has stopped: nothing to pause")
        }
        if pausedAt != nil || tracks.allSatisfy(\.done) {
            cond.unlock()
            return nil
        }
        cond.unlock()
        let now = haltAll()
        cond.lock()
        defer {
            cond.broadcast()
            cond.unlock()
        }
        guard let at = locate(atDeviceFrame: now) else {
            // Past the end: it has ended.
            finishAll()
            return nil
        }
        pausedAt = (at.frame, at.pass > 0 ? at.pass + passOffset : 0)
        for t in tracks where !t.done { t.enqueuedEnd = 0 }
        seeking = false
        return at.frame
    }

    /// Plays on from where ``pause()`` stopped (``seek(to:lead:)`` to that position, the loop
    /// pass it paused in continued). Returns nil when not paused.
    ///
    /// - Parameter lead: as ``seek(to:lead:)``'s.
    /// - Throws: as ``seek(to:lead:)``.
    ///
    /// Thread safety: any control thread, not the render thread; blocks as a seek does.
    @discardableResult
    package func resume(lead: Int64? = nil) throws(SessionError) -> SeekResult? {
        if !session.takes.isEmpty { throw Self.refusal("resuming", session: session) }
        beginExclusive()
        defer { endExclusive() }
        cond.lock()
        guard let paused = pausedAt else {
            cond.unlock()
            return nil
        }
        // Inside the loop in pass k of this timeline (of `total`, when known): the passes
        // left, this one included.
        let k = paused.pass - passOffset
        var left: Int?
        if paused.pass > 0, let total = currentTimeline.passes?.total { left = max(1, total - k + 1) }
        pausedAt = nil
        cond.unlock()
        return try seekLocked(to: paused.frame, lead: lead, passesLeft: paused.pass > 0 ? .some(left) : nil,
            passOffset: paused.pass > 0 ? paused.pass - 1 : 0, halt: false)
    }

    /// The session frame playing at device frame `deviceFrame` and its loop pass (as
    /// ``sessionFrame(atPlayerFrame:)``), with seeks and pauses followed: while paused, the
    /// paused position; before the start or a restart, the position it starts at. Nil at or
    /// past the end.
    ///
    /// Thread safety: any control thread, not the render thread; a short lock.
    package func sessionFrame(atDeviceFrame deviceFrame: Int64) -> (frame: Int64, pass: Int)? {
        cond.lock()
        defer { cond.unlock() }
        if let p = pausedAt { return p }
        guard let at = locate(atDeviceFrame: deviceFrame) else { return nil }
        return (at.frame, at.pass > 0 ? at.pass + passOffset : 0)
    }

    /// The display's position text (``positionText(atPlayerFrame:)``) at device frame
    /// `deviceFrame`, seeks and pauses followed; `  paused` at the end while paused.
    ///
    /// Thread safety: any control thread, not the render thread; short locks.
    package func positionText(atDeviceFrame deviceFrame: Int64) -> String {
        let rate = engine.device.sampleRate
        let tl = timeline
        let at = sessionFrame(atDeviceFrame: deviceFrame) ?? (tl.end, 0)
        var text = "\(Self.formatClock(Double(at.frame) / rate)) / \(Self.formatClock(Double(tl.end) / rate))"
        cond.lock()
        let offset = passOffset
        let paused = pausedAt != nil
        cond.unlock()
        if at.pass > 0 { text += "  loop \(at.pass)/\(tl.passes?.total.map { String($0 + offset) } ?? "∞")" }
        if let m = session.marker(at: at.frame, deviceRate: rate) { text += "  [\(m.name)]" }
        if paused { text += "  paused" }
        return text
    }

    // MARK: - The work (exclusive: beginExclusive())

    /// `cond` held. The timeline's place at `deviceFrame` (player frame from the start frame).
    private func locate(atDeviceFrame deviceFrame: Int64) -> (frame: Int64, pass: Int)? {
        let player = startFrame.map { deviceFrame - $0 } ?? 0
        return Self.sessionFrame(atPlayerFrame: player, on: currentTimeline)
    }

    /// Stops every queue at once and files each track's frames played so far; returns the
    /// device frame it happened at (the device's current frame when the stops were sent).
    /// `seeking` is set (and left set), work dropped. Exclusive (beginExclusive()), cond not held.
    private func haltAll() -> Int64 {
        cond.lock()
        seeking = true
        work.removeAll()
        cond.unlock()
        let starts = tracks.map(\.queue.startDeviceFrame)
        // An immediate stop waits for the render cycle that applies it, one queue after the
        // other: every playing queue is paused first (not waiting: all from the same cycle on),
        // then each is stopped, those not yet playing first, the soonest to start first (one
        // whose start falls in the cycles the stops take could play those before its stop).
        let now = Int64(engine.deviceCurrentTime().sampleTime)
        let running = tracks.map(\.queue.isRunning)
        for (i, t) in tracks.enumerated() where running[i] { try? t.queue.pause() }
        cond.lock()
        let scheduled = tracks.map(\.scheduledStart)
        cond.unlock()
        let order = tracks.indices.sorted { a, b in
            running[a] != running[b] ? !running[a] : scheduled[a] < scheduled[b]
        }
        for i in order { try? tracks[i].queue.stop(immediately: true) }
        // Frames played up to the stop, filed (late frames are the queue's running total,
        // subtracted by the report itself).
        cond.lock()
        for (i, t) in tracks.enumerated() {
            if t.completed {
                t.playedBefore += t.enqueuedEnd
            } else if let a = starts[i], !t.restarted || a >= t.scheduledStart {
                t.playedBefore += min(max(0, now - a), t.enqueuedEnd)
            }
            t.enqueuedEnd = 0
            t.restarted = true
            t.wasRunning = false
        }
        cond.unlock()
        return now
    }

    /// cond held: every track done and completed (the end was reached).
    private func finishAll() {
        for t in tracks {
            t.fed = true
            t.done = true
            t.completed = t.error == nil
        }
        seeking = false
        pausedAt = nil
    }

    /// The seek proper (exclusive: beginExclusive()). `passesLeft`: for a resume inside the loop, the
    /// passes left (`.some(nil)`: until released); nil: a fresh loop. `aligned`: the device
    /// frame the position must play at (``shift(by:lead:)``) instead of now + `lead`; when the
    /// refill made it too late, the nearest start time after it (the result says which).
    func seekLocked(to position: Int64, lead: Int64?, passesLeft: Int??, passOffset offset: Int, halt: Bool, at aligned: Int64? = nil) throws(SessionError) -> SeekResult {
        let rate = engine.device.sampleRate
        cond.lock()
        if stopping {
            cond.unlock()
            throw SessionError(.invalidValue, file: session.url.path, "the player has stopped: nothing to seek")
        }
        let old = currentTimeline
        let end = old.end
        if pausedAt != nil && position < end {
            // Paused: stay paused, at the new position (a fresh loop from there).
            pausedAt = (position, 0)
            passOffset = 0
            cond.unlock()
            return .paused(position: position)
        }
        let wasPaused = pausedAt != nil
        cond.unlock()
        if halt && !wasPaused { _ = haltAll() }
        cond.lock()
        seeking = true
        cond.unlock()
        if position >= end {
            cond.lock()
            finishAll()
            cond.broadcast()
            cond.unlock()
            return .ended
        }
        // A released loop stays released: played through once.
        let count: Int?
        switch passesLeft {
        case .some(let left): count = left
        case .none: count = old.passes?.isReleased == true ? 1 : session.loop?.count
        }
        let timeline = PlayTimeline(position: position, end: end, loop: loopRange, count: count)
        var failure: SessionError?
        for t in tracks {
            var feed: TrackFeed?
            var problem: String?
            do throws(SessionError) {
                feed = try Self.makeFeed(for: t.spec, in: session, deviceRate: rate, timeline: timeline, bufferFrames: options.bufferFrames)
                if feed != nil && t.buffers.isEmpty {
                    // It had ended before the first position: no buffers yet.
                    let bytes = options.bufferFrames * Int(t.spec.audio.format.channelsPerFrame) * 4
                    do throws(AudioQueueError) {
                        for _ in 0..<max(1, options.buffersPerTrack) { t.buffers.append(try t.queue.allocateBuffer(capacity: bytes)) }
                    } catch {
                        throw SessionError(.playback, file: t.spec.file.path, "track '\(t.spec.name)': \(error.message)")
                    }
                }
            } catch {
                failure = failure ?? error
                problem = error.description
                feed = nil
            }
            cond.lock()
            t.source = feed
            t.startOffset = feed?.startOffset ?? 0
            t.first = true
            t.queuedFrames = 0
            t.enqueuedEnd = 0
            t.error = problem
            t.fed = feed == nil
            t.done = feed == nil
            t.completed = feed == nil && problem == nil
            t.wasRunning = false
            cond.unlock()
            if feed != nil { for b in t.buffers { self.feed(t, b) } }
        }
        let want = aligned ?? (Int64(engine.deviceCurrentTime().sampleTime) + (lead ?? Int64((0.1 * rate).rounded())))
        let r = Int64(engine.nearestStartTime(AudioTimeStamp(sampleTime: Double(want))).sampleTime)
        cond.lock()
        currentTimeline = timeline
        passOffset = offset
        startFrame = r
        stopFrame = nil
        for t in tracks { t.scheduledStart = r + t.startOffset }
        seeking = false
        cond.broadcast()
        cond.unlock()
        for t in tracks where t.source != nil && t.error == nil {
            do throws(AudioQueueError) {
                try t.queue.start(at: AudioTimeStamp(sampleTime: Double(r + t.startOffset)))
            } catch {
                cond.lock()
                t.error = "cannot restart: \(error.message)"
                t.done = true
                cond.broadcast()
                cond.unlock()
                failure = failure ?? SessionError(.playback, file: t.spec.file.path, "track '\(t.spec.name)' cannot restart: \(error.message)")
            }
        }
        if let failure { throw failure }
        return .playing(position: position, deviceFrame: r)
    }
}
