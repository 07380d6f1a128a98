import AQFileStream
import AQTypes
import Foundation
import Testing

// MARK: helpers independent of the parser

/// ADTS frames found by walking frame_length fields from offset 0 (ffmpeg writes no junk).
func adtsFrames(_ b: [UInt8]) -> [ArraySlice<UInt8>] {
    var out: [ArraySlice<UInt8>] = []
    var i = 0
    while i + 7 <= b.count {
        let len = Int(b[i + 3] & 3) << 11 | Int(b[i + 4]) << 3 | Int(b[i + 5] >> 5)
        guard len > 0, i + len <= b.count else { break }
        out.append(b[i..<i + len])
        i += len
    }
    return out
}

func be(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).reversed().map { UInt8((v >> (8 * UInt64($0))) & 0xFF) } }

func cafChunks(_ b: [UInt8]) -> [(String, [UInt8])] {
    var out: [(String, [UInt8])] = []
    var o = 8
    while o + 12 <= b.count {
        let type = String(decoding: b[o..<o + 4], as: UTF8.self)
        var size = 0
        for k in 0..<8 { size = size << 8 | Int(b[o + 4 + k]) }
        if size == -1 || o + 12 + size > b.count { size = b.count - o - 12 }
        out.append((type, Array(b[o + 12..<o + 12 + size])))
        o += 12 + size
    }
    return out
}

func buildCAF(_ chunks: [(String, [UInt8])], unknownDataSize: Bool = false) -> [UInt8] {
    var out: [UInt8] = Array("caff".utf8) + [0, 1, 0, 0]
    for (t, body) in chunks {
        out += Array(t.utf8)
        out += t == "data" && unknownDataSize ? [UInt8](repeating: 0xFF, count: 8) : be(UInt64(body.count), 8)
        out += body
    }
    return out
}

func cafVarint(_ v: UInt32) -> [UInt8] {
    var groups: [UInt8] = [UInt8(v & 0x7F)]
    var x = v >> 7
    while x > 0 { groups.insert(UInt8(x & 0x7F) | 0x80, at: 0); x >>= 7 }
    return groups
}

@Suite struct MP3Tests {
    static func sine(_ fx: Fixtures, _ name: String, _ args: [String], rate: Int = 44100, channels: Int = 1) throws -> [UInt8] {
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=0.1:sample_rate=\(rate)", "-ac", "\(channels)", "-c:a", "libmp3lame"]
            + args + [fx.path(name)])
        return try fx.read(fx.path(name))
    }

    /// Frame headers re-derived here so the packets are checked independently.
    static func frameLength(_ p: ArraySlice<UInt8>) -> Int? {
        let b = Array(p.prefix(4))
        guard b.count == 4, b[0] == 0xFF, b[1] & 0xE6 == 0xE2 else { return nil }
        let v1 = b[1] & 0x18 == 0x18
        let br1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        let br2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        let rates = [44100, 48000, 32000][Int((b[2] >> 2) & 3)]
        let rate = v1 ? rates : (b[1] & 0x18 == 0x10 ? rates / 2 : rates / 4)
        let br = (v1 ? br1 : br2)[Int(b[2] >> 4)] * 1000
        return (v1 ? 144 : 72) * br / rate + Int((b[2] >> 1) & 1)
    }

    static func checkPackets(_ r: Parsed, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.sizes.count == r.packetCount, sourceLocation: sourceLocation)
        for i in 0..<r.sizes.count {
            let p = r.packet(i)
            #expect(frameLength(p) == p.count, "packet \(i) is not one whole frame", sourceLocation: sourceLocation)
        }
    }

    @Test func vbrWithXingAndLAMEGapless() throws {
        let fx = try Fixtures()
        let file = try Self.sine(fx, "vbr.mp3", ["-q:a", "2", "-id3v2_version", "0"])
        let r = parse(file)
        #expect(r.error == nil)
        #expect(r.uint32(.fileFormat) == AudioFileTypeID.mp3.rawValue)
        #expect(r.format == AudioStreamBasicDescription(
            sampleRate: 44100, formatID: AudioFormatID.mpegLayer3, formatFlags: [], bytesPerPacket: 0,
            framesPerPacket: 1152, bytesPerFrame: 0, channelsPerFrame: 1, bitsPerChannel: 0))
        Self.checkPackets(r)
        #expect(r.uint64(.audioDataPacketCount) == UInt64(r.packetCount))
        let table = try #require(r.table)
        #expect(table.numberValidFrames == 4410, "valid frames = source length")
        #expect(table.primingFrames >= 529 + 576)
        #expect(Int64(r.packetCount) * 1152 - Int64(table.primingFrames) - Int64(table.remainderFrames) == 4410)
        let offset = try #require(r.int64(.dataOffset))
        #expect(UInt64(file.count) - UInt64(offset) == r.uint64(.audioDataByteCount))
        #expect(r.data.count == file.count - Int(offset))
        #expect(r.uint32(.packetSizeUpperBound) == 1441)
        #expect(r.uint32(.maximumPacketSize) == r.sizes.max())
        verifySplits(file)
    }

    @Test func cbrWithID3TagsBothEnds() throws {
        let fx = try Fixtures()
        let file = try Self.sine(fx, "cbr.mp3", ["-b:a", "128k", "-id3v2_version", "3", "-write_id3v1", "1", "-metadata", "title=Test tone"])
        #expect(Array(file.prefix(3)) == Array("ID3".utf8))
        #expect(Array(file.suffix(128).prefix(3)) == Array("TAG".utf8))
        let r = parse(file)
        #expect(r.error == nil)
        Self.checkPackets(r)
        let offset = try #require(r.int64(.dataOffset))
        #expect(r.data.count == file.count - Int(offset) - 128, "ID3v1 is not audio")
        #expect(r.uint32(.bitRate) == 128_000)
        #expect(r.table?.numberValidFrames == 4410)
        verifySplits(file)

        // The same stream without the Xing/Info frame: same packets, count unknown up front.
        let plain = try Self.sine(fx, "plain.mp3", ["-b:a", "128k", "-write_xing", "0", "-id3v2_version", "0"])
        let p = parse(plain)
        #expect(p.error == nil)
        #expect(p.uint64(.audioDataPacketCount) == nil)
        #expect(p.packetCount == r.packetCount)
        #expect(same(p.data, r.data))
        #expect(p.int64(.dataOffset) == 0)
        verifySplits(plain)
    }

    @Test func mpeg2StereoHalfRate() throws {
        let fx = try Fixtures()
        let file = try Self.sine(fx, "m2.mp3", ["-b:a", "64k"], rate: 22050, channels: 2)
        let r = parse(file)
        #expect(r.format?.framesPerPacket == 576)
        #expect(r.format?.sampleRate == 22050)
        #expect(r.format?.channelsPerFrame == 2)
        #expect(r.table?.numberValidFrames == 2205)
        Self.checkPackets(r)
        verifySplits(file)
    }

    /// False sync words before the real frames must not derail the parser.
    @Test func falseSyncIsRejected() throws {
        let fx = try Fixtures()
        let clean = try Self.sine(fx, "c.mp3", ["-b:a", "128k", "-write_xing", "0", "-id3v2_version", "0"])
        var junk = randomBytes(600, seed: 99)
        for at in [0, 100, 333, 596] { junk[at..<at + 4] = [0xFF, 0xFB, 0x90, 0x44] }  // MPEG-1 L3 128k 44.1k
        let r = parse(junk + clean)
        let c = parse(clean)
        #expect(r.error == nil)
        #expect(r.packetCount == c.packetCount)
        #expect(same(r.data, c.data))
        #expect(r.int64(.dataOffset) == 600)
        verifySplits(junk + clean)
        // Junk between frames: the parser loses sync, then finds the next confirmed frame.
        let frames = c.sizes.map(Int.init)
        let cut = frames[0] + frames[1]
        let spliced = Array(clean[0..<cut]) + [0xFF, 0xFB, 0x90] + Array(clean[cut...])
        let s = parse(spliced)
        #expect(s.packetCount == c.packetCount)
        #expect(same(s.data, c.data))
        verifySplits(spliced)
        let noise = Array(clean[0..<cut]) + randomBytes(300, seed: 3, excluding: [0xFF]) + Array(clean[cut...])
        let n = parse(noise)
        #expect(n.packetCount == c.packetCount)
        #expect(same(n.data, c.data))
    }

    /// A VBRI (Fraunhofer) tag frame: packet count and seek table come from it.
    @Test func vbriHeader() throws {
        let fx = try Fixtures()
        let clean = try Self.sine(fx, "v.mp3", ["-b:a", "128k", "-write_xing", "0", "-id3v2_version", "0"])
        let c = parse(clean)
        let len = c.sizes[0]
        var tag = [UInt8](repeating: 0, count: Int(len))
        tag[0..<4] = clean[0..<4]
        tag[36..<40] = ArraySlice(Array("VBRI".utf8))
        tag[40..<42] = [0, 1]
        tag[46..<50] = ArraySlice(be(UInt64(clean.count + Int(len)), 4))
        tag[50..<54] = ArraySlice(be(UInt64(c.packetCount), 4))
        tag[54..<56] = [0, 2]  // two entries
        tag[56..<58] = [0, 1]  // scale
        tag[58..<60] = [0, 2]  // entry size
        tag[60..<62] = [0, 3]  // frames per entry
        tag[62..<64] = ArraySlice(be(UInt64(3 * len), 2))
        tag[64..<66] = ArraySlice(be(UInt64(3 * len), 2))
        let file = tag + clean
        let r = parse(file)
        #expect(r.uint64(.audioDataPacketCount) == UInt64(c.packetCount))
        #expect(same(r.data, c.data))
        #expect(r.int64(.dataOffset) == Int64(len))
        verifySplits(file)
    }

    @Test func seekEstimatesWithTOC() throws {
        let fx = try Fixtures()
        let file = try Self.sine(fx, "s.mp3", ["-q:a", "2", "-id3v2_version", "0"])
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        try s.parse(file)
        let (offset, flags) = try s.seek(toPacket: 2)
        #expect(flags == .offsetIsEstimated)
        #expect(offset >= s.dataOffset! && offset < Int64(file.count))
        #expect(throws: AudioFileStreamError.invalidPacketOffset) { try s.seek(toPacket: 1000) }
        // After the seek the parser resynchronises on the bytes from the returned offset.
        var packets = 0
        let t = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, n, _ in packets += n })
        try t.parse(Array(file.prefix(600)))
        let before = packets
        let (o2, _) = try t.seek(toPacket: 1)
        try t.parse(Array(file[Int(o2)...]), flags: .discontinuity)
        #expect(packets > before)
    }
}

@Suite struct ADTSTests {
    static func make(_ fx: Fixtures, rate: Int, channels: Int) throws -> [UInt8] {
        let name = "a\(rate)\(channels).aac"
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=0.2:sample_rate=\(rate)", "-ac", "\(channels)", "-c:a", "aac", "-f", "adts", fx.path(name)])
        return try fx.read(fx.path(name))
    }

    @Test(arguments: [(44100, 1, [UInt8]([0x12, 0x08])), (48000, 2, [0x11, 0x90])])
    func framesAndCookie(rate: Int, channels: Int, asc: [UInt8]) throws {
        let fx = try Fixtures()
        let file = try Self.make(fx, rate: rate, channels: channels)
        let frames = adtsFrames(file)
        #expect(frames.count > 5)
        for hint in [nil, AudioFileTypeID.aacADTS] {
            let r = parse(file, hint: hint)
            #expect(r.error == nil)
            #expect(r.uint32(.fileFormat) == AudioFileTypeID.aacADTS.rawValue)
            #expect(r.format == AudioStreamBasicDescription(
                sampleRate: Double(rate), formatID: AudioFormatID.mpeg4AAC, formatFlags: AudioFormatFlags(rawValue: 2),
                bytesPerPacket: 0, framesPerPacket: 1024, bytesPerFrame: 0, channelsPerFrame: UInt32(channels), bitsPerChannel: 0))
            #expect(r.cookie == asc)
            #expect(r.packetCount == frames.count)
            #expect(same(r.data, frames.flatMap { $0.dropFirst(7) }), "payloads without headers")
            #expect(r.uint32(.maximumPacketSize) == r.sizes.max())
        }
        verifySplits(file)
    }

    /// With CRC (protection_absent = 0) the header is 9 bytes; payloads stay the same.
    @Test func withCRC() throws {
        let fx = try Fixtures()
        let file = try Self.make(fx, rate: 44100, channels: 1)
        var crc: [UInt8] = []
        for f in adtsFrames(file) {
            var h = Array(f.prefix(7))
            let len = f.count + 2
            h[1] &= 0xFE
            h[3] = (h[3] & 0xFC) | UInt8(len >> 11)
            h[4] = UInt8((len >> 3) & 0xFF)
            h[5] = (h[5] & 0x1F) | UInt8((len & 7) << 5)
            crc += h + [0xAB, 0xCD] + f.dropFirst(7)
        }
        let a = parse(file)
        let b = parse(crc)
        #expect(b.error == nil)
        #expect(b.packetCount == a.packetCount)
        #expect(same(b.data, a.data))
        verifySplits(crc)
    }
}

@Suite struct CAFCompressedTests {
    /// ffmpeg's ALAC CAF has its pakt after the data (written at the end); a streamable CAF
    /// has it before, so the test moves it there.
    @Test func alacWithPacketTable() throws {
        let fx = try Fixtures()
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=0.1", "-c:a", "alac", fx.path("a.caf")])
        let chunks = cafChunks(try fx.read(fx.path("a.caf")))
        let pakt = try #require(chunks.first { $0.0 == "pakt" })
        let kuki = try #require(chunks.first { $0.0 == "kuki" })
        let data = try #require(chunks.first { $0.0 == "data" })
        let streamable = chunks.filter { $0.0 != "pakt" && $0.0 != "data" } + [pakt, data]
        let file = buildCAF(streamable)
        let r = parse(file)
        #expect(r.error == nil)
        #expect(r.format?.formatID == AudioFormatID.appleLossless)
        #expect(r.format?.framesPerPacket == 4096)
        #expect(r.cookie == kuki.1)
        let packets = Int(be64(pakt.1, 0))
        #expect(r.packetCount == packets)
        #expect(r.uint64(.audioDataPacketCount) == UInt64(packets))
        #expect(r.table?.numberValidFrames == Int64(be64(pakt.1, 8)))
        // (ffmpeg writes whole packets as valid frames: 2 × 4096, not the 4410 of the source.)
        #expect(same(r.data, Array(data.1.dropFirst(4))))
        #expect(r.uint32(.maximumPacketSize) == r.sizes.max())
        verifySplits(file)

        // With the pakt after the data it can't be streamed: documented error.
        #expect(parse(buildCAF(chunks)).error == AudioFileStreamError.notOptimized)
    }

    /// AAC packets (from ffmpeg's ADTS) in a CAF with a packet table and unknown data size.
    @Test func aacInCAF() throws {
        let fx = try Fixtures()
        let frames = adtsFrames(try ADTSTests.make(fx, rate: 44100, channels: 1))
        let payloads = frames.map { Array($0.dropFirst(7)) }
        var desc = be(Double(44100).bitPattern, 8) + Array("aac ".utf8)
        desc += be(2, 4) + be(0, 4) + be(1024, 4) + be(1, 4) + be(0, 4)
        var pakt = be(UInt64(payloads.count), 8) + be(UInt64(payloads.count * 1024 - 2112 - 100), 8) + be(2112, 4) + be(100, 4)
        for p in payloads { pakt += cafVarint(UInt32(p.count)) }
        let cookie = randomBytes(39, seed: 5)
        let file = buildCAF([("desc", desc), ("kuki", cookie), ("pakt", pakt), ("free", [0, 0, 0]),
                             ("data", [0, 0, 0, 1] + payloads.flatMap { $0 })], unknownDataSize: true)
        let r = parse(file)
        #expect(r.error == nil)
        #expect(r.format?.formatID == AudioFormatID.mpeg4AAC)
        #expect(r.cookie == cookie)
        #expect(r.table == AudioFilePacketTableInfo(
            numberValidFrames: Int64(payloads.count * 1024 - 2212), primingFrames: 2112, remainderFrames: 100))
        #expect(r.packetCount == payloads.count)
        #expect(same(r.data, payloads.flatMap { $0 }))
        #expect(r.uint64(.audioDataByteCount) == nil)
        verifySplits(file)

        // Seeking in a packet table is exact.
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        try s.parse(file)
        let (offset, flags) = try s.seek(toPacket: 3)
        #expect(flags.isEmpty)
        #expect(offset == s.dataOffset! + Int64(payloads[0..<3].map(\.count).reduce(0, +)))
    }
}

func be64(_ b: [UInt8], _ o: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(b[o + $1]) } }

/// Byte arrays equal (without printing them when they are not).
func same<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool { a.elementsEqual(b) }
