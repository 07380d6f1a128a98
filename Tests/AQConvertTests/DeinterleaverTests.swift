import AQTypes
import Testing

@testable import AQConvert

/// Runs `format`'s deinterleaver over `bytes` (placed at an odd address on purpose) and
/// returns the planes, each `frames` long, written at `offset`.
func deinterleave(
    _ bytes: [UInt8], format: AudioStreamBasicDescription, offset: Int = 0, misalign: Int = 1
) throws -> [[Float]] {
    let d = try PCMDeinterleaver(format: format)
    let frames = bytes.count / d.bytesPerFrame
    let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes.count + 16, alignment: 16)
    defer { raw.deallocate() }
    let src = raw + misalign
    bytes.withUnsafeBytes { src.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    let planes = (0..<d.channelCount).map { _ in
        let p = UnsafeMutablePointer<Float>.allocate(capacity: offset + frames + 1)
        p.initialize(repeating: 99, count: offset + frames + 1)
        return p
    }
    defer { planes.forEach { $0.deallocate() } }
    planes.withUnsafeBufferPointer { d.convert(src, frames: frames, into: $0.baseAddress!, offset: offset) }
    for p in planes {
        // Nothing written before the offset or after the last frame.
        for i in 0..<offset { #expect(p[i] == 99) }
        #expect(p[offset + frames] == 99)
    }
    return planes.map { Array(UnsafeBufferPointer(start: $0 + offset, count: frames)) }
}

func le16(_ v: Int16) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
func be16(_ v: Int16) -> [UInt8] { withUnsafeBytes(of: v.bigEndian, Array.init) }
func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
func be32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.bigEndian, Array.init) }
func le64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
func be64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian, Array.init) }

/// G.711 µ-law expansion written from the recommendation's table form (independent of the
/// module's shift-based code): code bits inverted; magnitude (2·step + 33)·2^segment − 33 in
/// 14-bit units; 16-bit value = 4 × that.
func specULaw(_ code: UInt8) -> Int {
    let inverted = Int(code) ^ 0xFF
    let negative = inverted >= 128
    let segment = (inverted % 128) / 16
    let step = inverted % 16
    let magnitude = ((2 * step + 33) * (1 << segment) - 33) * 4
    return negative ? -magnitude : magnitude
}

/// G.711 A-law expansion from the table form: even bits inverted (XOR 0x55); a set sign bit is
/// positive; 13-bit magnitude 2·step + 1 in segment 0, (2·step + 33)·2^(segment−1) above;
/// 16-bit value = 8 × that.
func specALaw(_ code: UInt8) -> Int {
    let a = Int(code) ^ 0x55
    let positive = a >= 128
    let segment = (a % 128) / 16
    let step = a % 16
    let magnitude = (segment == 0 ? 2 * step + 1 : (2 * step + 33) * (1 << (segment - 1))) * 8
    return positive ? magnitude : -magnitude
}

@Suite("PCM to planar Float32")
struct DeinterleaverTests {

    @Test("int16, both byte orders, two channels, at an offset")
    func int16() throws {
        let values: [Int16] = [0, 1, -1, 32767, -32768, 0x1234]
        for big in [false, true] {
            let bytes = values.flatMap { big ? be16($0) : le16($0) }
            let out = try deinterleave(
                bytes, format: .linearPCM(sampleRate: 44100, channels: 2, bits: 16, bigEndian: big), offset: 5)
            #expect(out[0] == [0, -1.0 / 32768, -1.0])
            #expect(out[1] == [1.0 / 32768, 32767.0 / 32768, Float(0x1234) / 32768])
        }
    }

    @Test("int16 -32768 is exactly -1.0 and nothing reaches +1.0")
    func int16Extremes() throws {
        let out = try deinterleave(le16(-32768) + le16(32767), format: .linearPCM(sampleRate: 48000, channels: 1, bits: 16))
        #expect(out[0][0] == -1.0)
        #expect(out[0][1] < 1.0)
    }

    @Test("int24 packed in 3 bytes, sign-extended, both byte orders")
    func int24() throws {
        let samplesLE: [[UInt8]] = [
            [0xFF, 0xFF, 0x7F], [0x00, 0x00, 0x80], [0xFF, 0xFF, 0xFF], [0x01, 0x00, 0x00],
            [0x56, 0x34, 0x12], [0x00, 0x00, 0xC0], [0x00, 0x80, 0xFF],
        ]
        let expected: [Float] = [
            8_388_607.0 / 8_388_608, -1.0, -1.0 / 8_388_608, 1.0 / 8_388_608,
            Float(0x123456) / 8_388_608, -0.5, -32768.0 / 8_388_608,
        ]
        for big in [false, true] {
            let bytes = samplesLE.flatMap { big ? Array($0.reversed()) : $0 }
            for misalign in 0..<4 {
                let out = try deinterleave(
                    bytes, format: .linearPCM(sampleRate: 48000, channels: 1, bits: 24, bigEndian: big),
                    misalign: misalign)
                #expect(out[0] == expected, "big endian: \(big)")
            }
        }
    }

    @Test("int32, both byte orders")
    func int32() throws {
        let values: [UInt32] = [0x8000_0000, 0x7FFF_FFFF, 0x4000_0000, 1, 0xFFFF_FFFF, 0]
        let expected: [Float] = [-1.0, Float(1).nextDown, 0.5, 0x1p-31, -0x1p-31, 0]
        for big in [false, true] {
            let bytes = values.flatMap { big ? be32($0) : le32($0) }
            let out = try deinterleave(bytes, format: .linearPCM(sampleRate: 96000, channels: 3, bits: 32, bigEndian: big))
            #expect(out[0] == [expected[0], expected[3]])
            #expect(out[1] == [expected[1], expected[4]])
            #expect(out[2] == [expected[2], expected[5]])
        }
    }

    @Test("float32 copied bit for bit, float64 narrowed, both byte orders, not clamped")
    func floats() throws {
        let f32: [Float] = [0.25, -0.5, 1.5, -0.0, .leastNonzeroMagnitude, 0.1]
        let f64: [Double] = [0.1, -1.0, 2.5, 1e-10]
        for big in [false, true] {
            let b32 = f32.flatMap { big ? be32($0.bitPattern) : le32($0.bitPattern) }
            let o32 = try deinterleave(b32, format: .linearPCM(sampleRate: 48000, channels: 2, bits: 32, isFloat: true, bigEndian: big))
            #expect(o32[0].map(\.bitPattern) == [f32[0], f32[2], f32[4]].map(\.bitPattern))
            #expect(o32[1].map(\.bitPattern) == [f32[1], f32[3], f32[5]].map(\.bitPattern))
            let b64 = f64.flatMap { big ? be64($0.bitPattern) : le64($0.bitPattern) }
            let o64 = try deinterleave(b64, format: .linearPCM(sampleRate: 48000, channels: 1, bits: 64, isFloat: true, bigEndian: big))
            #expect(o64[0] == f64.map { Float($0) })
        }
    }

    @Test("unsigned 8-bit: (x - 128) / 128")
    func uint8() throws {
        let out = try deinterleave(
            [0, 128, 255, 64, 192, 127], format: .linearPCM(sampleRate: 8000, channels: 2, bits: 8, signed: false))
        #expect(out[0] == [-1.0, 127.0 / 128, 0.5])
        #expect(out[1] == [0, -0.5, -1.0 / 128])
    }

    @Test("µ-law spot values from G.711")
    func uLawSpots() throws {
        // code: 16-bit linear value
        let spots: [(UInt8, Int)] = [
            (0x00, -32124), (0x80, 32124), (0xFF, 0), (0x7F, 0), (0xEF, 132), (0xF0, 120),
            (0x8F, 16764), (0x0F, -16764), (0xFE, 8), (0x7E, -8),
        ]
        for (code, value) in spots { #expect(specULaw(code) == value, "spec formula for \(code)") }
        let format = FormatValidationTests.companded("ulaw")
        let out = try deinterleave(spots.map(\.0), format: format)
        #expect(out[0] == spots.map { Float($0.1) / 32768 })
    }

    @Test("A-law spot values from G.711")
    func aLawSpots() throws {
        let spots: [(UInt8, Int)] = [
            (0xD5, 8), (0x55, -8), (0xAA, 32256), (0x2A, -32256), (0x80, 5504), (0xD4, 24),
            (0xC5, 264), (0x45, -264),
        ]
        for (code, value) in spots { #expect(specALaw(code) == value, "spec formula for \(code)") }
        let format = FormatValidationTests.companded("alaw")
        let out = try deinterleave(spots.map(\.0), format: format)
        #expect(out[0] == spots.map { Float($0.1) / 32768 })
    }

    @Test("every µ-law and A-law code, two channels")
    func companderTables() throws {
        let codes = (0...255).map(UInt8.init)
        let interleaved = codes.flatMap { [$0, ~$0] }
        let u = try deinterleave(interleaved, format: FormatValidationTests.companded("ulaw", channels: 2))
        #expect(u[0] == codes.map { Float(specULaw($0)) / 32768 })
        #expect(u[1] == codes.map { Float(specULaw(~$0)) / 32768 })
        let a = try deinterleave(interleaved, format: FormatValidationTests.companded("alaw", channels: 2))
        #expect(a[0] == codes.map { Float(specALaw($0)) / 32768 })
        #expect(a[1] == codes.map { Float(specALaw(~$0)) / 32768 })
    }

    @Test("long int16 and float32 runs, 1–8 channels, unaligned, match a scalar reference")
    func bulk() throws {
        var rng = SystemRandomNumberGenerator()
        for channels in 1...8 {
            let frames = 1000 + channels
            let ints = (0..<(frames * channels)).map { _ in Int16.random(in: .min ... .max, using: &rng) }
            let out16 = try deinterleave(
                ints.flatMap(le16), format: .linearPCM(sampleRate: 44100, channels: UInt32(channels), bits: 16),
                offset: 3, misalign: 3)
            let floats = (0..<(frames * channels)).map { _ in Float.random(in: -1..<1, using: &rng) }
            let outF = try deinterleave(
                floats.flatMap { le32($0.bitPattern) },
                format: .linearPCM(sampleRate: 44100, channels: UInt32(channels), bits: 32, isFloat: true),
                offset: 1, misalign: 2)
            for c in 0..<channels {
                #expect(out16[c] == (0..<frames).map { Float(ints[$0 * channels + c]) / 32768 })
                #expect(outF[c] == (0..<frames).map { floats[$0 * channels + c] })
            }
        }
    }

    @Test("zero frames writes nothing")
    func zeroFrames() throws {
        let out = try deinterleave([], format: .linearPCM(sampleRate: 44100, channels: 2, bits: 16), offset: 2)
        #expect(out == [[], []])
    }
}
