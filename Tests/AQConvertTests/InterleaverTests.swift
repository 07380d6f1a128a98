import AQConvert
import AQTypes
import Testing

/// The one float → integer rule (docs/conversion.md, "Float to integer").
@Suite struct InterleaverTests {
    typealias I = PCMInterleaver

    @Test(arguments: [16, 24, 32])
    func specialValues(bits: Int) {
        let s = Int64(1) << (bits - 1)
        let max = Int32(s - 1), min = Int32(-s)
        #expect(I.quantize(.nan, bits: bits) == (0, false))
        #expect(I.quantize(-.nan, bits: bits) == (0, false))
        #expect(I.quantize(.signalingNaN, bits: bits) == (0, false))
        #expect(I.quantize(.infinity, bits: bits) == (max, true))
        #expect(I.quantize(-.infinity, bits: bits) == (min, true))
        #expect(I.quantize(1, bits: bits) == (max, true), "+1.0 is one step above the largest integer")
        #expect(I.quantize(-1, bits: bits) == (min, false), "−1.0 is exactly the smallest")
        #expect(I.quantize(2, bits: bits) == (max, true))
        #expect(I.quantize(-2, bits: bits) == (min, true))
        #expect(I.quantize(0, bits: bits) == (0, false))
        #expect(I.quantize(-0.0, bits: bits) == (0, false))
        #expect(I.quantize(0.5, bits: bits) == (Int32(s / 2), false))
        // The largest Float below 1: 32-bit scaling rounds it to 2^31 − 128, the others clip.
        let belowOne = Float(1).nextDown
        #expect(I.quantize(belowOne, bits: bits).value == (bits == 32 ? Int32(s - 128) : max))
    }

    @Test func roundingTiesGoAwayFromZero() {
        // k + 0.5 steps: exactly representable, so these are true ties.
        #expect(I.integer(Float(0.5) / 32768, bits: 16) == 1)
        #expect(I.integer(Float(1.5) / 32768, bits: 16) == 2)
        #expect(I.integer(Float(2.5) / 32768, bits: 16) == 3)
        #expect(I.integer(Float(-0.5) / 32768, bits: 16) == -1)
        #expect(I.integer(Float(-2.5) / 32768, bits: 16) == -3)
        #expect(I.integer(Float(2.5) / 8_388_608, bits: 24) == 3)
        #expect(I.integer(Float(-2.5) / 8_388_608, bits: 24) == -3)
        // Below and above a tie: to nearest.
        #expect(I.integer(Float(0.49) / 32768, bits: 16) == 0)
        #expect(I.integer(Float(0.51) / 32768, bits: 16) == 1)
        // The last value below the top that still fits: 32766.5 rounds up to 32767, no clip.
        #expect(I.quantize(Float(32766.5) / 32768, bits: 16) == (32767, false))
        #expect(I.quantize(Float(32767.5) / 32768, bits: 16) == (32767, true))
    }

    /// Every integer decoded by ``PCMDeinterleaver``'s rule (x / 2^(bits−1)) comes back.
    @Test func inverseOfTheDeinterleaver() {
        for x in Int32(-32768)...Int32(32767) {
            #expect(I.integer(Float(x) / 32768, bits: 16) == x)
        }
        for x in stride(from: Int32(-8_388_608), through: 8_388_607, by: 997) {
            #expect(I.integer(Float(x) / 8_388_608, bits: 24) == x)
        }
    }

    @Test func byteLayouts() {
        var bytes = [UInt8](repeating: 0, count: 4)
        let v: Float = -2 / 32768  // 16-bit −2 = 0xFFFE; 24-bit −512 = 0xFFFE00; 32-bit 0xFFFE0000
        bytes.withUnsafeMutableBytes { _ = I(bits: 16).store(v, at: $0.baseAddress!) }
        #expect(bytes[0..<2] == [0xFE, 0xFF])
        bytes.withUnsafeMutableBytes { _ = I(bits: 16, bigEndian: true).store(v, at: $0.baseAddress!) }
        #expect(bytes[0..<2] == [0xFF, 0xFE])
        bytes = [0, 0, 0, 0x77]
        bytes.withUnsafeMutableBytes { _ = I(bits: 24).store(v, at: $0.baseAddress!) }
        #expect(bytes == [0x00, 0xFE, 0xFF, 0x77], "three bytes, packed")
        bytes.withUnsafeMutableBytes { _ = I(bits: 24, bigEndian: true).store(v, at: $0.baseAddress!) }
        #expect(bytes == [0xFF, 0xFE, 0x00, 0x77])
        bytes.withUnsafeMutableBytes { _ = I(bits: 32).store(v, at: $0.baseAddress!) }
        #expect(bytes == [0x00, 0x00, 0xFE, 0xFF])
        bytes.withUnsafeMutableBytes { _ = I(bits: 32, bigEndian: true).store(v, at: $0.baseAddress!) }
        #expect(bytes == [0xFF, 0xFE, 0x00, 0x00])
    }

    @Test func interleavesAndCountsClips() {
        let left: [Float] = [0, 1, -1, .nan], right: [Float] = [0.5, 2, -3, 0.25]
        var out = [Int16](repeating: 0, count: 8)
        let clipped = left.withUnsafeBufferPointer { l in
            right.withUnsafeBufferPointer { r in
                out.withUnsafeMutableBytes { o in
                    I(bits: 16).interleave(frames: 4, channels: 2, into: o.baseAddress!) { c, i in c == 0 ? l[i] : r[i] }
                }
            }
        }
        #expect(out.map { Int16(littleEndian: $0) } == [0, 16384, 32767, 32767, -32768, -32768, 0, 8192])
        #expect(clipped == 3, "+1.0, 2 and −3")
    }
}
