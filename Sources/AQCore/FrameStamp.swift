import Synchronization

/// A frame counter carried exactly in audio samples, to measure where a frame went across a
/// link that passes samples unchanged (a netjack2 connection with its default float encoding,
/// a JACK graph, a loopback): the sender writes each frame's stamp, the receiver reads a stamp
/// at one of its own frames, and the difference is the offset between the two counters plus
/// the link's latency, exact to the frame (docs/netjack.md).
///
/// The stamp of frame `f` is the float `(f mod 2^24) + 1`: integers up to 2^24 are exact in a
/// float, and 0 (silence, an unconnected port) is never a stamp. Only the low 24 bits travel,
/// so an offset is read modulo 2^24 (about 5.8 minutes at 48 kHz) as the signed value nearest
/// zero: offsets between −2^23 and 2^23 − 1 frames are exact.
///
/// Thread safety: pure functions; any thread, including the render thread (no lock, no
/// allocation).
public enum FrameStamp {
    /// Stamps repeat every 2^24 frames.
    public static let modulus = 1 << 24

    /// The stamp of frame `frame`. Any thread.
    @_noLocks
    @inlinable
    public static func sample(for frame: UInt64) -> Float {
        Float(frame & 0xFF_FFFF) + 1
    }

    /// Writes the stamps of frames `firstFrame`, `firstFrame + 1`, … into `count` samples of
    /// `buffer`. Any thread, including the render thread.
    @_noLocks
    public static func write(_ buffer: UnsafeMutablePointer<Float>, count: Int, firstFrame: UInt64) {
        for i in 0..<count { buffer[i] = sample(for: firstFrame &+ UInt64(i)) }
    }

    /// The frame (mod 2^24) a sample stamps, or nil when the sample is no stamp (0, negative,
    /// not an integer, above 2^24: silence, or audio that is not a stamp). Any thread.
    @_noLocks
    @inlinable
    public static func frame(in sample: Float) -> Int? {
        guard sample >= 1, sample <= Float(modulus) else { return nil }
        let n = Int(sample)
        return Float(n) == sample ? n - 1 : nil
    }

    /// `frame − stamped` on the 24-bit circle, as the signed value nearest zero
    /// (−2^23 ..< 2^23): how many frames after the stamped frame `frame` is. Any thread.
    @_noLocks
    @inlinable
    public static func offset(from stamped: Int, to frame: UInt64) -> Int {
        let d = (Int(truncatingIfNeeded: frame & 0xFF_FFFF) - stamped) & 0xFF_FFFF
        return d >= modulus / 2 ? d - modulus : d
    }
}

/// The offset between a receiver's frames and the stamps it reads (``FrameStamp``), watched
/// over time: the latest value, the smallest and largest since the last reset, how many
/// stamps were read and how often the offset changed. One render thread records
/// (``record(_:count:firstFrame:)``); control threads read and reset.
///
/// Thread safety: ``record(_:count:firstFrame:)`` from one render thread at a time (no lock,
/// no allocation); everything else from any thread. A ``snapshot()`` taken while the render
/// thread records may mix two cycles' values (each value is itself whole).
public final class FrameStampMeter: Sendable {
    /// What the meter has seen since its last reset. A plain value.
    public struct Snapshot: Sendable, Equatable, CustomStringConvertible {
        /// Stamps read.
        public var stamps: Int
        /// The offset of the latest stamp read (nil: none yet).
        public var latest: Int?
        /// The smallest and largest offsets read (nil: none yet).
        public var range: ClosedRange<Int>?
        /// Times the offset differed from the previous stamp's.
        public var changes: Int

        /// A snapshot of these values.
        public init(stamps: Int, latest: Int?, range: ClosedRange<Int>?, changes: Int) {
            self.stamps = stamps
            self.latest = latest
            self.range = range
            self.changes = changes
        }

        public var description: String {
            guard let latest, let range else { return "no stamps" }
            return "offset \(latest) (\(range.lowerBound)…\(range.upperBound), \(changes) changes, \(stamps) stamps)"
        }
    }

    private let stamps = Atomic<Int>(0), latest = Atomic<Int>(0), low = Atomic<Int>(.max), high = Atomic<Int>(.min)
    private let changes = Atomic<Int>(0)
    /// Set by ``reset()``; the render thread clears the values at its next record.
    private let resetAsked = Atomic<Bool>(false)

    /// A meter that has seen nothing. Any thread.
    public init() {}

    /// Reads the stamps in `count` samples of `buffer`, whose first sample is the receiver's
    /// frame `firstFrame`; samples that are no stamp are skipped. Render thread (one at a time).
    @_noLocks
    public func record(_ buffer: UnsafePointer<Float>, count: Int, firstFrame: UInt64) {
        var n = stamps.load(ordering: .relaxed), last = latest.load(ordering: .relaxed)
        var lo = low.load(ordering: .relaxed), hi = high.load(ordering: .relaxed), changed = changes.load(ordering: .relaxed)
        if resetAsked.exchange(false, ordering: .acquiring) {
            n = 0; last = 0; lo = .max; hi = .min; changed = 0
        }
        for i in 0..<count {
            guard let stamped = FrameStamp.frame(in: buffer[i]) else { continue }
            let d = FrameStamp.offset(from: stamped, to: firstFrame &+ UInt64(i))
            if n > 0 && d != last { changed += 1 }
            last = d
            lo = min(lo, d)
            hi = max(hi, d)
            n += 1
        }
        stamps.store(n, ordering: .relaxed)
        latest.store(last, ordering: .relaxed)
        low.store(lo, ordering: .relaxed)
        high.store(hi, ordering: .relaxed)
        changes.store(changed, ordering: .releasing)
    }

    /// Forgets what was seen: the render thread starts afresh at its next record. Any thread.
    public func reset() { resetAsked.store(true, ordering: .releasing) }

    /// What was seen since the last reset (nothing while a reset is pending). Any thread.
    public func snapshot() -> Snapshot {
        let c = changes.load(ordering: .acquiring)
        if resetAsked.load(ordering: .acquiring) { return Snapshot(stamps: 0, latest: nil, range: nil, changes: 0) }
        let n = stamps.load(ordering: .relaxed)
        guard n > 0 else { return Snapshot(stamps: 0, latest: nil, range: nil, changes: 0) }
        let lo = low.load(ordering: .relaxed), hi = high.load(ordering: .relaxed)
        return Snapshot(stamps: n, latest: latest.load(ordering: .relaxed), range: lo <= hi ? lo...hi : nil, changes: c)
    }
}
