/// Float samples to signed integer PCM: the project's one rule (docs/conversion.md,
/// "Float to integer"), used by every writer of integer samples: input queues, offline
/// rendering, the WAV and take writers, the Apple Lossless encoder.
///
/// The rule, for `bits` of 16, 24 or 32 (scale s = 2^(bits−1)):
/// 1. NaN → 0;
/// 2. x × s in Double (exact: a Float times a power of two), rounded to nearest, ties away from
///    zero (C's `lround`);
/// 3. clipped to [−s, s − 1]: −1.0 → −s, +1.0 and above → s − 1, ±infinity → the bounds.
///    A sample whose rounded value lay outside that range counts as clipped (+1.0 does).
///
/// It is the inverse of ``PCMDeinterleaver`` (x / s) for every integer: decoding and encoding
/// again gives the same integer.
///
/// Thread safety: a plain value; any thread. Neither allocates nor locks (control side by
/// design: the render thread mixes floats only).
public struct PCMInterleaver: Hashable, Sendable {
    /// Significant bits: 16, 24 or 32.
    public let bits: Int
    /// Bytes one sample takes in the interleaved output: 2, 3 (24-bit packed) or 4.
    public let bytesPerSample: Int
    /// Big-endian output (AIFF, big-endian linear PCM); little-endian otherwise.
    public let bigEndian: Bool

    /// An interleaver to `bits`-bit signed integers (16, 24 packed in 3 bytes, or 32) in the
    /// given byte order. Other widths stop the program (a caller's bug).
    public init(bits: Int, bigEndian: Bool = false) {
        precondition(bits == 16 || bits == 24 || bits == 32, "PCMInterleaver: \(bits)-bit integers are not supported")
        self.bits = bits
        self.bytesPerSample = bits / 8
        self.bigEndian = bigEndian
    }

    /// `x` as a `bits`-bit signed integer by the rule, and whether it was clipped.
    @inlinable
    public static func quantize(_ x: Float, bits: Int) -> (value: Int32, clipped: Bool) {
        if x.isNaN { return (0, false) }
        let scale = Double(Int64(1) << (bits - 1))
        let r = (Double(x) * scale).rounded(.toNearestOrAwayFromZero)
        if r > scale - 1 { return (Int32(scale - 1), true) }
        if r < -scale { return (Int32(-scale), true) }
        return (Int32(r), false)
    }

    /// `x` as a `bits`-bit signed integer by the rule.
    @inlinable
    public static func integer(_ x: Float, bits: Int) -> Int32 { quantize(x, bits: bits).value }

    /// Stores `x` at `p` (``bytesPerSample`` bytes, in this byte order); true when clipped.
    @inlinable @discardableResult
    public func store(_ x: Float, at p: UnsafeMutableRawPointer) -> Bool {
        let (v, clipped) = PCMInterleaver.quantize(x, bits: bits)
        switch bytesPerSample {
        case 2:
            let u = UInt16(truncatingIfNeeded: v)
            p.storeBytes(of: bigEndian ? u.bigEndian : u.littleEndian, as: UInt16.self)
        case 3:
            let u = UInt32(bitPattern: v)
            let b0 = UInt8(truncatingIfNeeded: u), b1 = UInt8(truncatingIfNeeded: u >> 8), b2 = UInt8(truncatingIfNeeded: u >> 16)
            p.storeBytes(of: bigEndian ? b2 : b0, as: UInt8.self)
            (p + 1).storeBytes(of: b1, as: UInt8.self)
            (p + 2).storeBytes(of: bigEndian ? b0 : b2, as: UInt8.self)
        default:
            let u = UInt32(bitPattern: v)
            p.storeBytes(of: bigEndian ? u.bigEndian : u.littleEndian, as: UInt32.self)
        }
        return clipped
    }

    /// Writes `frames` frames of `channels` channels, interleaved, at `dst` (frame `i`, channel
    /// `c` at byte `(i × channels + c) × bytesPerSample`), sample `(c, i)` from `sample`.
    /// Returns how many samples were clipped.
    @inlinable @discardableResult
    public func interleave(
        frames: Int, channels: Int, into dst: UnsafeMutableRawPointer, _ sample: (_ channel: Int, _ frame: Int) -> Float
    ) -> Int {
        var clipped = 0
        var p = dst
        for i in 0..<frames {
            for c in 0..<channels {
                if store(sample(c, i), at: p) { clipped += 1 }
                p += bytesPerSample
            }
        }
        return clipped
    }

    /// ``interleave(frames:channels:into:_:)`` from planar channels: `planar[c]` holds channel
    /// `c`'s `frames` samples.
    @inlinable @discardableResult
    public func interleave(
        planar: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int, channels: Int, into dst: UnsafeMutableRawPointer
    ) -> Int {
        interleave(frames: frames, channels: channels, into: dst) { c, i in planar[c][i] }
    }
}
