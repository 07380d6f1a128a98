import Foundation

extension SessionPlayer {
    /// Where the player's timeline is at player frame `frame` (device frames from the
    /// player's start): the session frame playing there and the loop pass (1 for the first,
    /// 0 outside the loop: before it, after it, or no loop). Nil at or past the end. For the
    /// display: it decides nothing.
    ///
    /// Thread safety: any control thread; never blocks for long (a short lock); not the render
    /// thread.
    package func sessionFrame(atPlayerFrame frame: Int64) -> (frame: Int64, pass: Int)? {
        Self.sessionFrame(atPlayerFrame: frame, on: timeline)
    }

    /// ``sessionFrame(atPlayerFrame:)`` on `timeline`. Any thread but the render thread.
    static func sessionFrame(atPlayerFrame frame: Int64, on timeline: PlayTimeline) -> (frame: Int64, pass: Int)? {
        guard let loc = timeline.locate(max(0, frame), commit: false) else { return nil }
        guard let loop = timeline.loop else { return (loc.frame, 0) }
        switch loc.segment {
        case 0: return (loc.frame, loop.contains(loc.frame) ? 1 : 0)
        case -1: return (loc.frame, 0)
        default: return (loc.frame, loc.segment + 1)
        }
    }

    /// The loop's passes in all: its count, or, for a loop until released, nil until
    /// ``releaseLoop()``; nil also when there is no loop (``hasLoop``).
    ///
    /// Thread safety: any control thread; not the render thread.
    package var loopPasses: Int? { timeline.passes?.total }

    /// True when the session's loop applies from the player's position (a loop with
    /// `count` ≥ 2, or without a count, whose end is after the position).
    ///
    /// Thread safety: any thread but the render thread; a short lock (the timeline a seek
    /// made).
    package var hasLoop: Bool { timeline.loop != nil }

    /// Ends the loop: after the passes already decided (the one playing, and any pass a track
    /// has already been fed into: the feeder runs up to its buffers ahead, 4 × 8192 frames by
    /// default), every track goes on past the loop's end instead of wrapping, all on the same
    /// frame. Returns the passes in all, or nil without a loop. Does nothing more when called
    /// again.
    ///
    /// Thread safety: any control thread; never blocks for long (a short lock); not the render
    /// thread.
    @discardableResult
    package func releaseLoop() -> Int? { timeline.passes?.release() }

    /// The display's position text at player frame `frame`: `m:ss.sss / m:ss.sss` (the session
    /// position and the session's end), then `loop 2/4` (`loop 2/∞` until released) while in
    /// the loop, then the last marker at or before the position, `[verse]`. Past the end, the
    /// end.
    ///
    /// Thread safety: any control thread; not the render thread.
    package func positionText(atPlayerFrame frame: Int64) -> String {
        let rate = engine.device.sampleRate
        let end = timeline.end
        let at = sessionFrame(atPlayerFrame: frame) ?? (end, 0)
        var text = "\(Self.formatClock(Double(at.frame) / rate)) / \(Self.formatClock(Double(end) / rate))"
        if at.pass > 0 { text += "  loop \(at.pass)/\(loopPasses.map(String.init) ?? "∞")" }
        if let m = session.marker(at: at.frame, deviceRate: rate) { text += "  [\(m.name)]" }
        return text
    }
}
