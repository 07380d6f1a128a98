import Foundation

/// Which session frame plays at which player frame (device frames; player frame 0 is the
/// position the player starts at), with a loop unrolled.
///
/// Without a loop (or one that does not apply: the position at or past its end, or
/// `count = 1`) it is one segment, session frames P ..< end. With one: segment 0 is P ..< to
/// (the first pass, partial when P is inside the loop), segments 1, 2, … are passes
/// from ..< to, and after the last pass the tail to ..< end. How many passes there are is
/// ``LoopPasses``'s word: fixed by `count`, or decided pass by pass while the loop runs until
/// released, each decision made once for every track.
///
/// Thread safety: the struct is a value; its ``LoopPasses`` locks (feeder and control
/// threads only; never the render thread).
struct PlayTimeline: Sendable {
    /// The session frame at player frame 0.
    let position: Int64
    /// The session's end (device frames).
    let end: Int64
    /// The loop region in device frames, when it applies.
    let loop: Range<Int64>?
    /// The passes over the loop (nil without a loop).
    let passes: LoopPasses?

    init(position: Int64, end: Int64, loop: Range<Int64>?, count: Int?) {
        self.position = position
        self.end = end
        if let loop, position < loop.upperBound, (count ?? 2) > 1, !loop.isEmpty {
            self.loop = loop
            passes = LoopPasses(count: count)
        } else {
            self.loop = nil
            passes = nil
        }
    }

    /// Player frames of segment 0.
    var firstLength: Int64 { (loop?.upperBound ?? end) - position }

    /// Player frames in all; nil while the number of passes is not known (a loop until
    /// released that has not been).
    var length: Int64? {
        guard let loop, let passes else { return end - position }
        guard let n = passes.total else { return nil }
        return firstLength + Int64(n - 1) * Int64(loop.count) + (end - loop.upperBound)
    }

    /// Where player frame `t` is: the session frame, the player frames left in its segment,
    /// and the segment (0: the first, 1…: loop passes, -1: the tail). Nil at or past the end.
    /// Decides the passes up to `t`'s (``LoopPasses/exists(_:)``) when `commit`, else reads
    /// what is decided (assuming the loop goes on where it is not).
    func locate(_ t: Int64, commit: Bool = true) -> (frame: Int64, left: Int64, segment: Int)? {
        if t < firstLength { return (position + t, firstLength - t, 0) }
        guard let loop, let passes else { return nil }
        let l = Int64(loop.count)
        let k = Int(1 + (t - firstLength) / l)
        if commit ? passes.exists(k) : passes.mayExist(k) {
            let into = (t - firstLength) % l
            return (loop.lowerBound + into, l - into, k)
        }
        let n = passes.total ?? k
        let tail = firstLength + Int64(n - 1) * l
        let f = loop.upperBound + (t - tail)
        return f < end ? (f, end - f, -1) : nil
    }

    /// True when session frames `range` (a track's) play in some segment after `segment`
    /// (for deciding a track has ended; reads the passes without deciding any).
    func playsAfter(segment: Int, _ range: Range<Int64>) -> Bool {
        guard let loop, let passes, segment >= 0 else { return false }
        if range.overlaps(loop) && passes.mayExist(segment + 1) { return true }
        return range.overlaps(loop.upperBound..<end)
    }
}

/// How many passes a loop makes: `count`, or, until released, one more each time a track's
/// feeding reaches the next. Every decision is made once and holds for every track, so all
/// tracks wrap (or leave the loop) together.
///
/// Thread safety: any thread but the render thread (it locks; never blocks for long).
final class LoopPasses: @unchecked Sendable {
    private let lock = NSLock()
    private let count: Int?
    private var decided = 1
    private var released = false

    init(count: Int?) { self.count = count }

    /// Whether pass `k` (0: the first) is played, deciding it (and those before) if not yet.
    func exists(_ k: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if k < decided { return true }
        if released { return false }
        if let count, k >= count { return false }
        decided = k + 1
        return true
    }

    /// Whether pass `k` is or may still be played (nothing decided).
    func mayExist(_ k: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if k < decided { return true }
        if released { return false }
        if let count { return k < count }
        return true
    }

    /// True once ``release()`` ran.
    var isReleased: Bool {
        lock.lock()
        defer { lock.unlock() }
        return released
    }

    /// The passes in all, once known (a count, or released).
    var total: Int? {
        lock.lock()
        defer { lock.unlock() }
        if let count { return released ? min(count, decided) : count }
        return released ? decided : nil
    }

    /// Ends the loop after the passes already decided (the current one, and any a track has
    /// already been fed into). Returns the passes in all.
    @discardableResult
    func release() -> Int {
        lock.lock()
        defer { lock.unlock() }
        released = true
        if let count { return min(count, decided) }
        return decided
    }
}
