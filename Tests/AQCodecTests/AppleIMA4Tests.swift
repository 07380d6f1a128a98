import AQConvert
import AQCore
import AQEngine
import AQFileStream
import AQTypes
import Foundation
import Testing

// Issue 23: Apple IMA4 ('ima4') decoded by PacketDecoder (libavcodec's adpcm_ima_qt), played by
// an output queue with and without packet descriptions, and rendered from a session, each
// against ffmpeg's own decode of the file (AIFC and CAF as ffmpeg writes them).

/// A file of constant-size packets parsed: its format and its packets (the parser gives them
/// without descriptions).
func parseConstantPackets(_ bytes: [UInt8]) throws -> ParsedFile {
    var data: [UInt8] = []
    let stream = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { d, _, _ in data.append(contentsOf: d) })
    try stream.parse(bytes)
    guard let format = stream.dataFormat, format.bytesPerPacket > 0 else { throw CodecFixtures.ToolFailed(description: "no constant-size format") }
    let size = Int(format.bytesPerPacket)
    var parsed = ParsedFile(format: format, cookie: nil, packetTable: stream.packetTableInfo, dataOffset: stream.dataOffset ?? 0)
    parsed.packets = stride(from: 0, to: data.count - size + 1, by: size).map { (Array(data[$0..<($0 + size)]), 0) }
    try stream.close()
    return parsed
}

@Suite struct AppleIMA4Tests {
    /// The fixtures: (file, channels, rate), made by ffmpeg's adpcm_ima_qt encoder from a tone
    /// and noise (so that the step sizes move).
    static let fixtures = [("t.aiff", 2, 44100), ("t.caf", 2, 44100), ("m.caf", 1, 22050), ("m.aiff", 1, 48000)]

    static func make(_ fx: CodecFixtures, _ name: String, channels: Int, rate: Int, seconds: Double = 1.5) throws -> String {
        let file = fx.path(name)
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=\(seconds):sample_rate=\(rate)", "-f", "lavfi", "-i",
                       "anoisesrc=d=\(seconds):a=0.3:seed=5:r=\(rate)", "-filter_complex", "amix=inputs=2",
                       "-ac", "\(channels)", "-c:a", "adpcm_ima_qt", file])
        return file
    }

    @Test func isListedAsDecodable() {
        #expect(PacketDecoder.decodableFormatIDs().contains(AudioFormatID.appleIMA4))
        #expect(PacketDecoder.canDecode(.appleIMA4(sampleRate: 44100, channels: 2)))
        #expect(!PacketDecoder.needsMagicCookie(.appleIMA4(sampleRate: 44100, channels: 2)))
        var odd = AudioStreamBasicDescription.appleIMA4(sampleRate: 44100, channels: 2)
        odd.bytesPerPacket = 34
        #expect(throws: PacketDecoderError.self) { try PacketDecoder.validate(odd) }
    }

    /// Every packet decoded in order gives exactly ffmpeg's samples (`-f f32le`), frame for
    /// frame, 64 frames a packet.
    @Test(arguments: fixtures)
    func decoderMatchesFFmpeg(name: String, channels: Int, rate: Int) throws {
        let fx = try CodecFixtures()
        let file = try Self.make(fx, name, channels: channels, rate: rate)
        let parsed = try parseConstantPackets(try [UInt8](Data(contentsOf: URL(fileURLWithPath: file))))
        let reference = try fx.ffmpegDecode(file, channels: channels)
        let decoder = try PacketDecoder(format: parsed.format)
        let total = parsed.packets.count * 64
        let planes = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: total) }
        defer { planes.forEach { $0.deallocate() } }
        var at = 0
        planes.withUnsafeBufferPointer { p in
            for packet in parsed.packets {
                let n = packet.bytes.withUnsafeBytes { decoder.decode($0, framesIfCorrupt: 64, into: p.baseAddress!, offset: at, capacity: total) }
                #expect(n == 64)
                at += n
            }
            at += decoder.drain(into: p.baseAddress!, offset: at, capacity: total)
        }
        #expect(decoder.corruptPackets == 0)
        #expect(at == reference[0].count, "\(at) frames decoded, ffmpeg \(reference[0].count)")
        let ours = (0..<channels).map { Array(UnsafeBufferPointer(start: planes[$0], count: at)) }
        #expect(ours == reference, "the samples equal ffmpeg's")
    }

    /// An output queue plays the packets enqueued with descriptions and without them
    /// (constant-size packets need none), in buffers whose size is not a whole number of packets:
    /// ffmpeg's samples, at the file's rate and at another.
    @Test(arguments: [false, true])
    func queuePlaysWithAndWithoutDescriptions(otherRate: Bool) throws {
        let fx = try CodecFixtures()
        let file = try Self.make(fx, "t.caf", channels: 2, rate: 44100, seconds: 0.8)
        let parsed = try parseConstantPackets(try [UInt8](Data(contentsOf: URL(fileURLWithPath: file))))
        let reference = try fx.ffmpegDecode(file, channels: 2)
        let deviceRate = otherRate ? 48000.0 : 44100.0
        let described = try renderOffline(parsed, deviceRate: deviceRate, packetsPerBuffer: 13)
        let bare = try renderWithoutDescriptions(parsed, deviceRate: deviceRate, bufferBytes: 68 * 13 + 30)
        let expected = Int((Double(reference[0].count) * deviceRate / 44100).rounded())
        #expect(described.frames == expected && bare.frames == expected, "\(described.frames) and \(bare.frames) frames, \(expected) expected")
        #expect(described.corruptPackets == 0 && bare.corruptPackets == 0)
        let n = min(bare.frames, described.frames)
        #expect(maxDifference(bare.output, described.output, frames: n) == 0, "the same with and without descriptions")
        if !otherRate {
            #expect(maxDifference(described.output, reference, frames: reference[0].count) == 0, "ffmpeg's samples")
        }
    }

    /// `aqsync render`'s code path with IMA4 tracks (AIFC and CAF): ffmpeg's decode, same length.
    @Test(arguments: ["t.aiff", "t.caf"])
    func sessionRenderMatchesFFmpeg(name: String) throws {
        let fx = try CodecFixtures()
        let file = try Self.make(fx, name, channels: 2, rate: 44100)
        let reference = try fx.ffmpegDecode(file, channels: 2)
        let wav = try SessionCodecTests().render(fx, file: file, rate: 44100)
        #expect(wav.frameCount == reference[0].count, "\(wav.frameCount) frames, ffmpeg \(reference[0].count)")
        let d = maxDifference(wav.channels, reference, frames: min(wav.frameCount, reference[0].count))
        #expect(d <= 1e-6, "max difference \(d)")
    }

    /// A track trimmed at its start (`trim_start`, as a later start position is reached) gives
    /// ffmpeg's samples from that frame exactly: IMA4 is decoded from the first packet, since
    /// libavcodec's decoder carries its predictor across packets (a restart a few packets
    /// before the frame differed by about 1e-3 everywhere after it).
    @Test(arguments: [1000, 40001])
    func sessionTrimStartIsExact(trim: Int) throws {
        let fx = try CodecFixtures()
        let file = try Self.make(fx, "t.aiff", channels: 2, rate: 44100)
        let reference = try fx.ffmpegDecode(file, channels: 2)
        let wav = try SessionCodecTests().render(fx, file: file, rate: 44100, extra: "trim_start = \(trim)")
        #expect(wav.frameCount == reference[0].count - trim)
        let shifted = reference.map { Array($0[trim...]) }
        let d = maxDifference(wav.channels, shifted, frames: min(wav.frameCount, shifted[0].count))
        #expect(d == 0, "max difference \(d)")
    }
}

/// ``renderOffline(_:deviceRate:packetsPerBuffer:gapless:replace:configure:)`` for a format of
/// constant-size packets, its buffers enqueued without packet descriptions: `bufferBytes` bytes
/// each (the whole packets that fit; the bytes after them left out).
func renderWithoutDescriptions(_ file: ParsedFile, deviceRate: Double, bufferBytes: Int) throws -> Rendered {
    let channels = Int(file.format.channelsPerFrame)
    let size = Int(file.format.bytesPerPacket)
    let perBuffer = bufferBytes / size
    let device = ManualDevice(sampleRate: deviceRate, channels: channels)
    let buffersNeeded = (file.packets.count + perBuffer - 1) / perBuffer
    let engine = try AudioQueueEngine(
        device: device,
        capacities: RenderCapacities(queues: 4, buffersPerQueue: buffersNeeded + 8, commands: 4 * buffersNeeded + 64, outputChannels: 8))
    defer { engine.close() }
    let q = try engine.newOutput(format: file.format) { _, _ in }
    var p = 0
    while p < file.packets.count {
        let n = min(perBuffer, file.packets.count - p)
        let b = try q.allocateBuffer(capacity: bufferBytes)
        for i in 0..<n {
            file.packets[p + i].bytes.withUnsafeBytes { (b.audioData + i * size).copyMemory(from: $0.baseAddress!, byteCount: size) }
        }
        // A partial packet's bytes after the whole ones, as a caller's stray tail: ignored.
        b.audioDataByteSize = n == perBuffer ? bufferBytes : n * size
        try q.enqueue(b)
        p += n
    }
    try q.flush()
    let total = (file.packets.count * 64 + 8192) * Int((deviceRate / file.format.sampleRate).rounded(.up)) * 2
    _ = try engine.start([q], at: AudioTimeStamp(sampleTime: 0))
    let out = device.render(frames: total, cycle: 256)
    let scheduled = Int((Double(try q.prime()) * deviceRate / file.format.sampleRate).rounded())
    return Rendered(output: out, frames: scheduled, corruptPackets: q.corruptPacketCount)
}
