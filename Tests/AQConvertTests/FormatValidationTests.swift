import AQTypes
import Testing

@testable import AQConvert

typealias ASBD = AudioStreamBasicDescription

@Suite("PCM format validation")
struct FormatValidationTests {

    static func companded(_ id: FourCharCode, channels: UInt32 = 1, bits: UInt32 = 8) -> ASBD {
        ASBD(
            sampleRate: 8000, formatID: id, formatFlags: [], bytesPerPacket: channels,
            framesPerPacket: 1, bytesPerFrame: channels, channelsPerFrame: channels, bitsPerChannel: bits)
    }

    @Test("'fmt?' is 1718449215")
    func resultCode() {
        #expect(FourCharCode("fmt?").rawValue == 1_718_449_215)
        #expect(PCMFormatError.nonInterleaved.resultCode == 1_718_449_215)
        #expect(PCMFormatError.unsupportedFormatID("aac ").resultCode == Int32(bitPattern: FourCharCode("fmt?").rawValue))
    }

    @Test("every supported format is accepted, with its encoding", arguments: [
        (ASBD.linearPCM(sampleRate: 44100, channels: 2, bits: 16), PCMSampleEncoding.int16LE),
        (.linearPCM(sampleRate: 44100, channels: 2, bits: 16, bigEndian: true), .int16BE),
        (.linearPCM(sampleRate: 48000, channels: 1, bits: 24), .int24LE),
        (.linearPCM(sampleRate: 48000, channels: 1, bits: 24, bigEndian: true), .int24BE),
        (.linearPCM(sampleRate: 96000, channels: 8, bits: 32), .int32LE),
        (.linearPCM(sampleRate: 96000, channels: 8, bits: 32, bigEndian: true), .int32BE),
        (.linearPCM(sampleRate: 192000, channels: 3, bits: 32, isFloat: true), .float32LE),
        (.linearPCM(sampleRate: 192000, channels: 3, bits: 32, isFloat: true, bigEndian: true), .float32BE),
        (.linearPCM(sampleRate: 8000, channels: 4, bits: 64, isFloat: true), .float64LE),
        (.linearPCM(sampleRate: 8000, channels: 4, bits: 64, isFloat: true, bigEndian: true), .float64BE),
        (.linearPCM(sampleRate: 22050, channels: 1, bits: 8, signed: false), .uint8),
        (companded("ulaw", channels: 2), .uLaw),
        (companded("alaw"), .aLaw),
    ])
    func accepted(format: ASBD, encoding: PCMSampleEncoding) throws {
        #expect(try PCMDeinterleaver.validate(format) == encoding)
        let d = try PCMDeinterleaver(format: format)
        #expect(d.encoding == encoding)
        #expect(d.channelCount == Int(format.channelsPerFrame))
        #expect(d.bytesPerFrame == encoding.bytesPerSample * d.channelCount)
    }

    static var refusedFormats: [(ASBD, PCMFormatError, String)] {
        let s16 = ASBD.linearPCM(sampleRate: 44100, channels: 2, bits: 16)
        var nonInterleaved = s16
        nonInterleaved.formatFlags.insert(.isNonInterleaved)
        var floatAndInt = ASBD.linearPCM(sampleRate: 44100, channels: 2, bits: 32, isFloat: true)
        floatAndInt.formatFlags.insert(.isSignedInteger)
        var padded24 = ASBD.linearPCM(sampleRate: 44100, channels: 2, bits: 24)
        padded24.bytesPerFrame = 8
        padded24.bytesPerPacket = 8
        var badPacket = s16
        badPacket.bytesPerPacket = 8
        var twoFrames = s16
        twoFrames.framesPerPacket = 2
        var mp3 = s16
        mp3.formatID = AudioFormatID.mpegLayer3
        return [
            (mp3, .unsupportedFormatID(".mp3"), "'.mp3'"),
            (nonInterleaved, .nonInterleaved, "non-interleaved"),
            (.linearPCM(sampleRate: 7999, channels: 2, bits: 16), .sampleRateOutOfRange(7999), "7999.0 Hz"),
            (.linearPCM(sampleRate: 384000, channels: 2, bits: 16), .sampleRateOutOfRange(384000), "384000.0 Hz"),
            (.linearPCM(sampleRate: .nan, channels: 2, bits: 16), .sampleRateOutOfRange(.nan), "sample rate"),
            (.linearPCM(sampleRate: 44100, channels: 0, bits: 16), .channelCountOutOfRange(0), "channel count 0"),
            (.linearPCM(sampleRate: 44100, channels: 9, bits: 16), .channelCountOutOfRange(9), "channel count 9"),
            (.linearPCM(sampleRate: 44100, channels: 1, bits: 12), .unsupportedIntegerBitDepth(12), "12-bit integer"),
            (.linearPCM(sampleRate: 44100, channels: 1, bits: 16, isFloat: true), .unsupportedFloatBitDepth(16), "16-bit float"),
            (.linearPCM(sampleRate: 44100, channels: 1, bits: 16, signed: false), .unsignedWideInteger(bits: 16), "unsigned 16-bit"),
            (.linearPCM(sampleRate: 44100, channels: 1, bits: 8, signed: true), .signedEightBit, "signed 8-bit"),
            (floatAndInt, .conflictingFloatAndIntegerFlags, "both float and signed integer"),
            (companded("ulaw", bits: 16), .companded(formatID: "ulaw", bits: 16), "'ulaw' data must have 8 bits"),
            (twoFrames, .framesPerPacket(2), "framesPerPacket is 2"),
            (padded24, .bytesPerFrame(expected: 6, actual: 8), "bytesPerFrame is 8"),
            (badPacket, .bytesPerPacket(expected: 4, actual: 8), "bytesPerPacket is 8"),
        ]
    }

    @Test("unsupported formats are refused with a message naming the problem", arguments: refusedFormats)
    func refused(format: ASBD, expected: PCMFormatError, fragment: String) {
        do {
            _ = try PCMDeinterleaver.validate(format)
            Issue.record("accepted \(format)")
        } catch {
            if case .sampleRateOutOfRange(let r) = expected, r.isNaN {
                guard case .sampleRateOutOfRange(let got) = error, got.isNaN else {
                    Issue.record("expected NaN rate error, got \(error)")
                    return
                }
            } else {
                #expect(error == expected)
            }
            #expect(error.message.contains(fragment), "\(error.message)")
            #expect(error.resultCode == 1_718_449_215)
        }
        #expect(throws: PCMFormatError.self) { try PCMDeinterleaver(format: format) }
    }

    @Test("the error thrown is the expected case")
    func exactCases() {
        for (format, expected, _) in Self.refusedFormats {
            if case .sampleRateOutOfRange(let r) = expected, r.isNaN { continue }
            #expect(throws: expected) { try PCMDeinterleaver.validate(format) }
        }
    }
}
