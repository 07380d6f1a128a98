import AQConvert
import AQFileStream
import AQTypes
import Foundation
import Testing

/// MPEG Layer III through libmpg123 (issue 25; docs/codecs.md, "MP3 through libmpg123"): the
/// packets Audio File Stream Services gives decode one by one, from the first packet of a
/// stream and after a reset, to ffmpeg's untrimmed decode within rounding (the same frames,
/// the same delay), for MPEG-1 stereo and MPEG-2 mono (576-frame packets); the library that
/// cannot be loaded is named.
@Suite struct MPG123DecoderTests {
    /// Every packet of `parsed` from `first` on through a fresh decoder, one call a packet:
    /// planes, and the frames each packet gave.
    static func decode(_ parsed: ParsedFile, from first: Int = 0, resetFirst: Bool = false) throws -> (planes: [[Float]], perPacket: [Int], decoder: PacketDecoder) {
        let decoder = try PacketDecoder(format: parsed.format, magicCookie: parsed.cookie ?? [])
        let channels = decoder.channelCount
        let most = decoder.maximumFramesPerPacket
        var planes = [[Float]](repeating: [], count: channels)
        var perPacket: [Int] = []
        let scratch = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: most) }
        defer { scratch.forEach { $0.deallocate() } }
        if resetFirst { decoder.reset() }
        for p in parsed.packets[first...] {
            let n = p.bytes.withUnsafeBytes { b in
                scratch.withUnsafeBufferPointer { decoder.decode(b, framesIfCorrupt: Int(p.frames), into: $0.baseAddress!, offset: 0, capacity: most) }
            }
            perPacket.append(n)
            for c in 0..<channels { planes[c] += UnsafeBufferPointer(start: scratch[c], count: n) }
        }
        return (planes, perPacket, decoder)
    }

    /// ffmpeg's decode without its gapless trim (`-flags2 +skip_manual`), as the decoder's own
    /// output is before the player's packet table trims it.
    static func untrimmed(_ fx: CodecFixtures, _ file: String, channels: Int) throws -> [[Float]] {
        let out = fx.path(UUID().uuidString + ".f32")
        try fx.ffmpeg(["-flags2", "+skip_manual", "-i", file, "-f", "f32le", out])
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return (0..<channels).map { c in (0..<samples.count / channels).map { samples[$0 * channels + c] } }
    }

    @Test(arguments: [("stereo44k.mp3", 44100, 2, 1152), ("mono22k.mp3", 22050, 1, 576)])
    func decodesAsFFmpegWithinRounding(name: String, rate: Int, channels: Int, framesPerPacket: Int) throws {
        let fx = try CodecFixtures()
        let file = fx.path(name)
        try fx.ffmpeg([
            "-f", "lavfi", "-i", "anoisesrc=d=2:a=0.2:sample_rate=\(rate):seed=3", "-ac", "\(channels)",
            "-c:a", "libmp3lame", "-b:a", "96k", file,
        ])
        let parsed = try parseFile([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(parsed.format.formatID == AudioFormatID.mpegLayer3 && Int(parsed.format.framesPerPacket) == framesPerPacket)
        let r = try Self.decode(parsed)
        #expect(r.decoder.library == "libmpg123")
        // Every packet gives its frames at once, the first too (no read-ahead).
        #expect(r.perPacket.allSatisfy { $0 == framesPerPacket }, "frames per packet: \(Set(r.perPacket))")
        #expect(r.decoder.corruptPackets == 0 && r.decoder.droppedFrames == 0)
        let reference = try Self.untrimmed(fx, file, channels: channels)
        #expect(r.planes[0].count == reference[0].count, "libmpg123 \(r.planes[0].count) frames, ffmpeg \(reference[0].count)")
        let d = maxDifference(r.planes, reference, frames: min(r.planes[0].count, reference[0].count))
        // Rounding only: float synthesis in another order (measured 1.3e-6 at most; -100 dBFS).
        #expect(d <= 1e-5, "max difference \(d)")
    }

    /// From the middle of a stream after a reset (a seek): the first packet decodes at once and
    /// the output joins ffmpeg's once the bit reservoir is full again.
    @Test func aResetStreamDecodesFromItsFirstPacket() throws {
        let fx = try CodecFixtures()
        let file = fx.path("seek.mp3")
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=700:d=2:sample_rate=44100", "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", file])
        let parsed = try parseFile([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        let whole = try Self.decode(parsed)
        let from = 40
        let tail = try Self.decode(parsed, from: from, resetFirst: true)
        #expect(tail.perPacket.allSatisfy { $0 == 1152 })
        #expect(tail.planes[0].count == whole.planes[0].count - from * 1152)
        // Two packets on (the reservoir refilled), the same samples as the whole stream's.
        let skip = 2 * 1152
        let a = tail.planes.map { Array($0[skip...]) }, b = whole.planes.map { Array($0[(from * 1152 + skip)...]) }
        #expect(maxDifference(a, b, frames: a[0].count) <= 1e-6)
    }

    @Test func anAbsentLibraryIsNamed() throws {
        #expect(MPG123Library.soname == "libmpg123.so.0")
        #expect(MPG123Library.probe(soname: MPG123Library.soname) == nil)
        let absent = try #require(MPG123Library.probe(soname: "libmpg123.so.999"))
        #expect(absent.hasPrefix("libmpg123.so.999 could not be loaded: ") && absent.contains("cannot open shared object file"), "\(absent)")
        let wrong = try #require(MPG123Library.probe(soname: "libc.so.6"))
        #expect(wrong.contains("mpg123_init"), "\(wrong)")
        #expect(MPG123Library.load() == nil)
    }
}
