import AQCore
import Testing

/// Frame stamps are exact in floats, unwrap across 2^24 and 2^32, and the meter reports the
/// offset between a receiver's frames and the stamps it reads.
@Suite struct FrameStampTests {
    @Test func everyStampReadsBackExactly() {
        for f: UInt64 in [0, 1, 255, 0xFF_FFFE, 0xFF_FFFF, 0x100_0000, 0xFFFF_FFFF, 0x1_0000_0000 + 17] {
            #expect(FrameStamp.frame(in: FrameStamp.sample(for: f)) == Int(f & 0xFF_FFFF))
        }
    }

    @Test func silenceAndAudioAreNoStamps() {
        for v: Float in [0, -1, 0.5, 1.5, 16_777_218, .nan, .infinity] { #expect(FrameStamp.frame(in: v) == nil) }
    }

    @Test func offsetsAreSignedAndWrap() {
        #expect(FrameStamp.offset(from: 100, to: 1636) == 1536)
        #expect(FrameStamp.offset(from: 1636, to: 100) == -1536)
        // Stamped just before a wrap of 2^24, read just after it.
        #expect(FrameStamp.offset(from: 0xFF_FF00, to: 0x100_0000 + 0x100) == 0x200)
        // The receiver's 32-bit counter wrapped, the sender's did not.
        #expect(FrameStamp.offset(from: Int(UInt64(0xFFFF_FF00) & 0xFF_FFFF), to: 0x1_0000_0000 + 0x40) == 0x140)
    }

    @Test func meterReportsOffsetRangeAndChanges() {
        let meter = FrameStampMeter()
        var buffer = [Float](repeating: 0, count: 256)
        // The sender's frames are the receiver's − 1536 for two cycles, then − 1792.
        for (cycle, lag) in [(0, 1536), (1, 1536), (2, 1792)] {
            let first = UInt64(10_000 + cycle * 256)
            buffer.withUnsafeMutableBufferPointer { FrameStamp.write($0.baseAddress!, count: 256, firstFrame: first - UInt64(lag)) }
            buffer[0] = 0  // a sample that is no stamp
            buffer.withUnsafeBufferPointer { meter.record($0.baseAddress!, count: 256, firstFrame: first) }
        }
        let s = meter.snapshot()
        #expect(s.stamps == 3 * 255)
        #expect(s.latest == 1792 && s.range == 1536...1792 && s.changes == 1)
        meter.reset()
        #expect(meter.snapshot().stamps == 0)
        buffer.withUnsafeBufferPointer { meter.record($0.baseAddress!, count: 256, firstFrame: 20_000) }
        // The last buffer stamps frames from 10_512 − 1792 on: read at 20_000, the offset is one value.
        let after = meter.snapshot(), d = 20_000 - (10_512 - 1792)
        #expect(after.stamps == 255 && after.range == d...d && after.changes == 0)
    }
}
