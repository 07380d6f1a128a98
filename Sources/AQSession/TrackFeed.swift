import Foundation

/// One track's frames along the player's timeline (``PlayTimeline``): from the player frame
/// its queue starts on, frame after frame, the track's frame where the timeline plays one of
/// its session frames and silence where it plays none (before its start, after its end,
/// between loop passes). At a loop's wrap the track's ``TrackSource`` is made anew on the
/// exact frame at the loop's start (PCM seeks; compressed files are parsed and decoded from a
/// pre-roll, the decoder's output trimmed to the frame), so the frame after a wrap is exactly
/// the one after `from`, never a frame early, late or twice.
///
/// Without a loop this is the track's ``TrackSource`` from its placement, and the queue starts
/// on the track's first frame played (as ``SessionPlayer/placement(of:in:deviceRate:position:)``).
///
/// Thread safety: one thread at a time (made and primed on a control thread, then fed by the
/// player's feeder thread). Never the render thread (it reads files and allocates).
final class TrackFeed {
    typealias SourceMaker = (_ skip: Int64) throws(SessionError) -> TrackSource

    let channels: Int
    /// Player frames from the player's start to the queue's first frame.
    let startOffset: Int64
    /// True once no frame is left to produce.
    private(set) var isAtEnd = false
    /// Compressed packets that did not decode, over every source made so far.
    var corruptPackets: Int { retiredCorrupt + (source?.corruptPackets ?? 0) }

    private let timeline: PlayTimeline
    /// The track's session frames (device frames).
    private let span: Range<Int64>
    private let make: SourceMaker
    private var source: TrackSource?
    /// The track frame `source` produces next.
    private var sourceNext: Int64 = -1
    private var retiredCorrupt = 0
    /// The player frame of the next frame produced.
    private var position: Int64

    /// Where a track whose session frames are `span` starts on `timeline`, or nil when it plays
    /// nothing: its first frame in segment 0, else (a track that plays only in later loop
    /// passes or after the loop) the end of segment 0.
    static func startOffset(span: Range<Int64>, timeline: PlayTimeline) -> Int64? {
        let first = timeline.position..<(timeline.position + timeline.firstLength)
        if span.overlaps(first) { return max(0, span.lowerBound - timeline.position) }
        if timeline.playsAfter(segment: 0, span) { return timeline.firstLength }
        return nil
    }

    /// A feed for a track playing `span` on `timeline`, or nil when it plays nothing. Makes
    /// the first source at once (on the calling thread), so a file that cannot be read is
    /// reported here.
    init?(channels: Int, span: Range<Int64>, timeline: PlayTimeline, make: @escaping SourceMaker) throws(SessionError) {
        guard let start = Self.startOffset(span: span, timeline: timeline) else { return nil }
        self.channels = channels
        self.span = span
        self.timeline = timeline
        self.make = make
        startOffset = start
        position = start
        if let loc = timeline.locate(start), span.contains(loc.frame) {
            source = try make(loc.frame - span.lowerBound)
            sourceNext = loc.frame - span.lowerBound
        }
    }

    /// Writes up to `maxFrames` interleaved Float32 frames to `destination`.
    /// - Returns: frames written; 0 at the end.
    func read(into destination: UnsafeMutablePointer<Float>, maxFrames: Int) throws(SessionError) -> Int {
        var written = 0
        while written < maxFrames && !isAtEnd {
            guard let loc = timeline.locate(position) else { isAtEnd = true; break }
            let want = Int64(maxFrames - written)
            let f = loc.frame
            let dst = destination + written * channels
            var n: Int64
            if span.contains(f) {
                n = min(want, loc.left, span.upperBound - f)
                let skip = f - span.lowerBound
                if source == nil || sourceNext != skip {
                    retiredCorrupt += source?.corruptPackets ?? 0
                    source = nil
                    source = try make(skip)
                    sourceNext = skip
                }
                var got = 0
                while got < Int(n) {
                    let r = try source!.read(into: dst + got * channels, maxFrames: Int(n) - got)
                    if r == 0 { break }
                    got += r
                }
                // A file shorter than its header said: silence keeps the track in its place.
                if got < Int(n) { (dst + got * channels).update(repeating: 0, count: (Int(n) - got) * channels) }
                sourceNext += n
            } else if f < span.lowerBound {
                n = min(want, loc.left, span.lowerBound - f)
                dst.update(repeating: 0, count: Int(n) * channels)
            } else {
                if !timeline.playsAfter(segment: loc.segment, span) { isAtEnd = true; break }
                n = min(want, loc.left)
                dst.update(repeating: 0, count: Int(n) * channels)
            }
            position += n
            written += Int(n)
        }
        if !isAtEnd { isAtEnd = nothingLeft() }
        return written
    }

    /// True when nothing is left from `position` on (decides no loop pass).
    private func nothingLeft() -> Bool {
        guard let loc = timeline.locate(position, commit: false) else { return true }
        return loc.frame >= span.upperBound && !timeline.playsAfter(segment: loc.segment, span)
    }
}
