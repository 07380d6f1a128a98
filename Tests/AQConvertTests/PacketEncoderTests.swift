import AQTypes
import Foundation
import Testing

@testable import AQConvert

/// The AAC LC and Apple Lossless encoders (issue 11): packets decoded back with the project's
/// own decoder (from the encoder's magic cookie) give the frames fed, at the frames the
/// documented priming says.
@Suite struct PacketEncoderTests {
    static func format(_ id: FourCharCode, rate: Double = 48000, channels: UInt32 = 2, flags: UInt32 = 0) -> AudioStreamBasicDescription {
        AudioStreamBasicDescription(
            sampleRate: rate, formatID: id, formatFlags: AudioFormatFlags(rawValue: flags), bytesPerPacket: 0,
            framesPerPacket: 0, bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 0)
    }

    /// Decodes `packets` from the first with a decoder made from `encoder`'s format and cookie.
    static func decode(_ packets: [[UInt8]], _ encoder: PacketEncoder) throws -> [[Float]] {
        let d = try PacketDecoder(format: encoder.format, magicCookie: encoder.magicCookie)
        let capacity = (packets.count + 2) * encoder.framesPerPacket
        let planes = (0..<encoder.channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: capacity) }
        defer { planes.forEach { $0.deallocate() } }
        var n = 0
        try planes.withUnsafeBufferPointer { p in
            for packet in packets {
                let k = packet.withUnsafeBytes { d.decode($0, framesIfCorrupt: encoder.framesPerPacket, into: p.baseAddress!, offset: n, capacity: capacity) }
                n += k
            }
            n += d.drain(into: p.baseAddress!, offset: n, capacity: capacity)
            #expect(d.corruptPackets == 0)
            _ = try #require(n > 0)
        }
        return planes.map { Array(UnsafeBufferPointer(start: $0, count: n)) }
    }

    /// 16-bit ALAC: decoded back exactly the input quantised to 16 bits, no priming, every
    /// packet 4096 frames but the last, short (its shortfall the remainder), cookie the 24-byte config.
    @Test(arguments: [1, 2])
    func alacRoundTripIsExact(channels: Int) throws {
        let e = try PacketEncoder(format: Self.format(AudioFormatID.appleLossless, channels: UInt32(channels)))
        #expect(e.framesPerPacket == 4096 && e.primingFrames == 0 && e.magicCookie.count == 24)
        #expect(e.format.framesPerPacket == 4096 && e.format.formatFlags.rawValue == 1)
        let frames = 10000
        var input = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
        for c in 0..<channels {
            for i in 0..<frames { input[c][i] = Float(sin(Double(i) * 0.01 * Double(c + 1))) * 0.7 }
            input[c][4097] = 1
            input[c][5] = -1
        }
        var packets: [[UInt8]] = []
        // Fed in uneven pieces.
        var at = 0
        for piece in [1, 333, 4096, 1000, 4570] {
            let ptrs = (0..<channels).map { c in input[c].withUnsafeBufferPointer { UnsafePointer($0.baseAddress! + at) } }
            ptrs.withUnsafeBufferPointer { e.encode($0.baseAddress!, frames: piece, into: &packets) }
            at += piece
        }
        #expect(at == frames)
        let remainder = e.finish(into: &packets)
        #expect(packets.count == 3 && remainder == 3 * 4096 - frames)
        #expect(e.packetTableInfo == AudioFilePacketTableInfo(numberValidFrames: Int64(frames), primingFrames: 0, remainderFrames: Int32(remainder)))
        #expect(packets.allSatisfy { $0.count <= e.maximumPacketSize })
        let out = try Self.decode(packets, e)
        #expect(out[0].count == frames, "the short last packet decodes to the frames left")
        for c in 0..<channels {
            for i in 0..<frames {
                let q = Float(Int16(clamping: Int((Double(max(-1, min(1, input[c][i]))) * 32768).rounded()))) / 32768
                if out[c][i] != q { Issue.record("channel \(c) frame \(i): \(out[c][i]) ≠ \(q)"); break }
            }
            #expect(out[c][frames...].allSatisfy { $0 == 0 })
        }
    }

    /// 24-bit ALAC decodes back the input quantised to 24 bits.
    @Test func alac24BitRoundTrip() throws {
        let e = try PacketEncoder(format: Self.format(AudioFormatID.appleLossless, channels: 1, flags: 3))
        let frames = 5000
        let x = (0..<frames).map { Float(sin(Double($0) * 0.003)) * 0.9 }
        var packets: [[UInt8]] = []
        x.withUnsafeBufferPointer { b in
            [b.baseAddress!].withUnsafeBufferPointer { e.encode($0.baseAddress!, frames: frames, into: &packets) }
        }
        e.finish(into: &packets)
        let out = try Self.decode(packets, e)
        for i in 0..<frames {
            let q = Float(Int32(Int((Double(x[i]) * 8_388_608).rounded())) << 8) / 2_147_483_648
            if out[0][i] != q { Issue.record("frame \(i): \(out[0][i]) ≠ \(q)"); break }
        }
    }

    /// AAC LC: impulses come back at their frame + the priming (±1), the packet count is
    /// priming + frames + remainder over 1024, and the cookie is an esds body the project's
    /// decoder reads.
    @Test func aacImpulsesAfterPriming() throws {
        let e = try PacketEncoder(format: Self.format(AudioFormatID.mpeg4AAC, rate: 48000, channels: 2))
        #expect(e.framesPerPacket == 1024 && e.primingFrames == 1024)
        #expect(e.format.formatFlags.rawValue == 2)
        #expect(e.magicCookie.prefix(5) == [0, 0, 0, 0, 3])
        #expect(PacketDecoder.audioSpecificConfig(fromCookie: e.magicCookie)?.isEmpty == false)
        let frames = 20000
        let impulses = [1000, 5003, 12345, 19000]
        var input = [[Float]](repeating: [Float](repeating: 0, count: frames), count: 2)
        for d in impulses { input[0][d] = 0.8; input[1][d + 7] = -0.8 }
        var packets: [[UInt8]] = []
        let ptrs = (0..<2).map { c in input[c].withUnsafeBufferPointer { UnsafePointer($0.baseAddress!) } }
        ptrs.withUnsafeBufferPointer { e.encode($0.baseAddress!, frames: frames, into: &packets) }
        let remainder = e.finish(into: &packets)
        #expect(packets.count * 1024 == e.primingFrames + frames + remainder)
        #expect(remainder >= 0 && remainder < 2048)
        #expect(packets.allSatisfy { $0.count <= e.maximumPacketSize })
        let out = try Self.decode(packets, e)
        #expect(out[0].count == packets.count * 1024)
        for d in impulses {
            for (c, at) in [(0, d), (1, d + 7)] {
                let expected = at + e.primingFrames
                let window = (expected - 200)..<(expected + 200)
                let peak = window.max { abs(out[c][$0]) < abs(out[c][$1]) }!
                #expect(abs(peak - expected) <= 1, "impulse at \(at): peak at \(peak), expected \(expected)")
            }
        }
        // A new stream after reset starts over, priming included.
        e.reset()
        var again: [[UInt8]] = []
        ptrs.withUnsafeBufferPointer { e.encode($0.baseAddress!, frames: 3000, into: &again) }
        e.finish(into: &again)
        #expect(again.count * 1024 == e.primingFrames + 3000 + e.remainderFrames)
    }

    /// Formats the encoder refuses: another codec, AAC HE, a wrong frames per packet, a
    /// bytes-per-packet, a rate AAC has no index for.
    @Test func refusedFormats() {
        var wrongFPP = Self.format(AudioFormatID.mpeg4AAC)
        wrongFPP.framesPerPacket = 2048
        var bpp = Self.format(AudioFormatID.appleLossless)
        bpp.bytesPerPacket = 100
        for f in [
            Self.format(AudioFormatID.mpegLayer3),
            Self.format(AudioFormatID.mpeg4AAC, flags: 5),
            Self.format("aach"),
            wrongFPP, bpp,
            Self.format(AudioFormatID.mpeg4AAC, rate: 192_000),
            Self.format(AudioFormatID.appleLossless, flags: 4),
            Self.format(AudioFormatID.appleLossless, channels: 9),
        ] {
            do { _ = try PacketEncoder(format: f); Issue.record("accepted \(f)") } catch {
                #expect(error.kind == .unsupportedFormat)
                #expect(error.resultCode == PCMFormatError.unsupportedDataFormatResultCode)
            }
        }
    }
}
