import AQFileStream
import AQTypes
import Foundation
import Testing

/// Issue 14: MP4/M4A with AAC and Apple Lossless.
@Suite struct MP4Tests {
    static func make(_ fx: Fixtures, _ name: String, codec: [String], faststart: Bool, channels: Int = 2) throws -> [UInt8] {
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=0.5:sample_rate=44100", "-f", "lavfi", "-i",
                       "anoisesrc=d=0.5:a=0.2:seed=4:r=44100", "-filter_complex", "amix=inputs=2", "-ac", "\(channels)"]
                      + codec + (faststart ? ["-movflags", "+faststart"] : []) + [fx.path(name)])
        return try fx.read(fx.path(name))
    }

    /// Feeds a file as `AudioFileReadingOrder` says (moov first when it is at the end).
    static func parseAsFile(_ file: [UInt8]) throws -> Parsed {
        let order = AudioFileReadingOrder.make(fileSize: Int64(file.count)) { o, n in
            Array(file[Int(o)..<min(file.count, Int(o) + n)])
        }
        var out = Parsed()
        let s = try AudioFileStream(
            propertyListener: { s, p, flags in
                if let v = try? s.value(of: p) { out.values[p] = v }
                if p == .magicCookieData { flags.insert(.cacheProperty) }
            },
            packets: { d, _, descs in
                for x in descs! {
                    out.data += d[Int(x.startOffset)..<Int(x.startOffset) + Int(x.dataByteSize)]
                    out.sizes.append(x.dataByteSize)
                    out.frames.append(x.variableFramesInPacket)
                }
            })
        for seg in order.segments { try s.parse(Array(file[Int(seg.offset)..<Int(seg.offset + seg.length)])) }
        if order.resumeAtFirstPacket {
            let start = try s.seek(toPacket: 0).byteOffset
            try s.parse(Array(file[Int(start)...]), flags: .discontinuity)
        }
        return out
    }

    /// AAC and ALAC in M4A, moov first: packets are ffprobe's (sizes and durations), the cookie
    /// is the codec's configuration, the gapless numbers give the source's length, every split
    /// agrees. With moov at the end a stream is refused 'optm' and the file, read moov first,
    /// gives the same packets.
    @Test(arguments: [("aac", ["-c:a", "aac", "-b:a", "128k"]), ("alac", ["-c:a", "alac", "-sample_fmt", "s16p"])])
    func packetsAndProperties(kind: String, codec: [String]) throws {
        let fx = try Fixtures()
        let file = try Self.make(fx, "t.m4a", codec: codec, faststart: true)
        let probe = try ffprobePackets(fx, fx.path("t.m4a"))
        let r = parse(file)
        #expect(r.error == nil, "\(String(describing: r.error))")
        #expect(r.uint32(.fileFormat) == AudioFileTypeID.m4a.rawValue)
        let f = try #require(r.format)
        #expect(f.formatID == (kind == "aac" ? AudioFormatID.mpeg4AAC : AudioFormatID.appleLossless))
        #expect(f.sampleRate == 44100 && f.channelsPerFrame == 2)
        #expect(f.framesPerPacket == (kind == "aac" ? 1024 : 4096))
        #expect(r.sizes.map(Int.init) == probe.map(\.bytes))
        let cookie = try #require(r.cookie)
        if kind == "aac" {
            #expect(cookie[4] == 0x03, "an esds ES descriptor")
            #expect(f.formatFlags.rawValue == 2, "AAC-LC")
        } else {
            #expect(cookie.count == 36 && Array(cookie[4..<8]) == ascii("alac"))
        }
        let table = try #require(r.table)
        #expect(table.numberValidFrames == 22050, "the source's length")
        #expect(Int64(table.primingFrames) + table.numberValidFrames + Int64(table.remainderFrames)
            == Int64(r.sizes.count) * Int64(f.framesPerPacket))
        if kind == "aac" { #expect(table.primingFrames == 1024) }
        #expect(r.uint64(.audioDataPacketCount) == UInt64(probe.count))
        verifySplits(file)

        let atEnd = try Self.make(fx, "e.m4a", codec: codec, faststart: false)
        for split in [Split.whole, .bytewise, .random(3)] {
            #expect(parse(atEnd, split: split).error == AudioFileStreamError.notOptimized, "\(split)")
        }
        let asFile = try Self.parseAsFile(atEnd)
        #expect(asFile.sizes == r.sizes && asFile.data == r.data)
        #expect(asFile.table == r.table)
    }

    /// Issue 23 (Apple's ConvertFile on ffmpeg's 128 kb/s M4A): the AudioSpecificConfig is found
    /// through the esds's descriptors, not as the first byte 5: bit rates with bytes 5 in them
    /// (0x0001EF05, as that file had) left the format at 44.1 kHz AAC LC, not 88.2 kHz type 16.
    @Test func esdsBitRatesWithByteFiveKeepTheConfig() throws {
        let fx = try Fixtures()
        var file = try Self.make(fx, "t.m4a", codec: ["-c:a", "aac", "-b:a", "128k"], faststart: true)
        let at = try #require((0..<(file.count - 4)).first { Array(file[$0..<($0 + 4)]) == ascii("esds") }) + 4
        // ffmpeg's layout: version and flags, 03 + 4-byte length, ES_ID, flags, 04 + 4-byte
        // length, object type, stream type, buffer size (3), max bit rate (4), avg bit rate (4), 05.
        #expect(file[at + 4] == 0x03 && file[at + 12] == 0x04 && file[at + 30] == 0x05, "ffmpeg's esds layout")
        file.replaceSubrange((at + 22)..<(at + 30), with: [0x00, 0x00, 0x05, 0x05, 0x00, 0x01, 0xEF, 0x05])
        let r = parse(file)
        #expect(r.error == nil, "\(String(describing: r.error))")
        let f = try #require(r.format)
        #expect(f.sampleRate == 44100 && f.channelsPerFrame == 2)
        #expect(f.formatFlags.rawValue == 2, "AAC-LC")
    }

    /// FLAC (`fLaC` + `dfLa`) and Opus (`Opus` + `dOps`) in MP4: the cookies are the STREAMINFO
    /// block and an OpusHead rebuilt from dOps; Opus's edit list gives its pre-skip.
    @Test(arguments: [("flac", ["-c:a", "flac", "-strict", "-2", "-sample_fmt", "s16"]), ("opus", ["-c:a", "libopus"])])
    func flacAndOpus(kind: String, codec: [String]) throws {
        let fx = try Fixtures()
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=0.5:sample_rate=48000", "-ac", "2"] + codec
                      + ["-movflags", "+faststart", fx.path("t.mp4")])
        let file = try fx.read(fx.path("t.mp4"))
        let probe = try ffprobePackets(fx, fx.path("t.mp4"))
        let r = parse(file)
        #expect(r.error == nil, "\(String(describing: r.error))")
        let f = try #require(r.format)
        #expect(f.sampleRate == 48000 && f.channelsPerFrame == 2)
        #expect(r.sizes.map(Int.init) == probe.map(\.bytes))
        let cookie = try #require(r.cookie)
        let table = try #require(r.table)
        #expect(table.numberValidFrames == 24000)
        if kind == "flac" {
            #expect(f.formatID == AudioFormatID.flac)
            #expect(cookie.count == 42 && Array(cookie[4..<8]) == [0x80, 0, 0, 34])
            #expect(table.primingFrames == 0)
        } else {
            #expect(f.formatID == AudioFormatID.opus)
            #expect(Array(cookie.prefix(8)) == ascii("OpusHead") && cookie[9] == 2)
            #expect(table.primingFrames == Int32(cookie[10]) | Int32(cookie[11]) << 8)
            #expect(table.primingFrames == 312)
        }
        verifySplits(file)
    }

    /// iTunes' `iTunSMPB` (udta/meta/ilst/----) gives the gapless numbers when present, over
    /// the edit list.
    @Test func iTunesGaplessData() throws {
        let fx = try Fixtures()
        let file = try Self.make(fx, "e.m4a", codec: ["-c:a", "aac"], faststart: false)
        func box(_ type: String, _ body: [UInt8]) -> [UInt8] { be(UInt64(body.count + 8), 4) + ascii(type) + body }
        let text = ascii(" 00000000 00000840 000001CA 0000000000005622 00000000 00000000")
        let item = box("----", box("mean", [0, 0, 0, 0] + ascii("com.apple.iTunes")) + box("name", [0, 0, 0, 0] + ascii("iTunSMPB"))
            + box("data", [0, 0, 0, 1, 0, 0, 0, 0] + text))
        let udta = box("udta", box("meta", [0, 0, 0, 0] + box("hdlr", [UInt8](repeating: 0, count: 25)) + box("ilst", item)))
        // ffmpeg writes moov last: growing it moves no sample.
        let moov = try #require(findBox(file, "moov"))
        #expect(moov + Int(be32(file, moov)) == file.count)
        var edited = file + udta
        edited.replaceSubrange(moov..<(moov + 4), with: be(UInt64(be32(file, moov)) + UInt64(udta.count), 4))
        let plain = try Self.parseAsFile(file)
        #expect(plain.table == AudioFilePacketTableInfo(numberValidFrames: 22050, primingFrames: 1024, remainderFrames: plain.table!.remainderFrames))
        let r = try Self.parseAsFile(edited)
        #expect(r.table == AudioFilePacketTableInfo(numberValidFrames: 0x5622, primingFrames: 0x840, remainderFrames: 0x1CA))
        #expect(r.data == plain.data)
    }

    /// Seeking is exact (the sample table gives every offset).
    @Test func seek() throws {
        let fx = try Fixtures()
        let file = try Self.make(fx, "t.m4a", codec: ["-c:a", "aac"], faststart: true)
        let clean = parse(file)
        var got: [UInt8] = []
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { d, _, descs in
            for x in descs! { got += d[Int(x.startOffset)..<Int(x.startOffset) + Int(x.dataByteSize)] }
        })
        let offset = Int(try #require(clean.int64(.dataOffset)))
        try s.parse(Array(file.prefix(offset)))
        let (at, flags) = try s.seek(toPacket: 7)
        #expect(flags.isEmpty)
        let skip = clean.sizes[..<7].reduce(0) { $0 + Int($1) }
        #expect(at == Int64(offset + skip))
        try s.parse(Array(file[Int(at)...]), flags: .discontinuity)
        #expect(got == Array(clean.data[skip...]))
        // Lost data without a seek: the offsets can't be followed.
        let t = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        try t.parse(Array(file.prefix(offset + 100)))
        #expect(throws: AudioFileStreamError.discontinuityCantRecover) {
            try t.parse(Array(file[(offset + 500)...]), flags: .discontinuity)
        }
    }

    /// Malformed or unsupported MP4s end in the documented errors, whatever the split; a
    /// truncated one never throws.
    @Test func hostile() throws {
        func box(_ type: String, _ body: [UInt8]) -> [UInt8] { be(UInt64(body.count + 8), 4) + ascii(type) + body }
        let ftyp = box("ftyp", ascii("M4A ") + be(0, 4))
        let fx = try Fixtures()
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=d=0.2", "-c:a", "ac3", "-movflags", "+faststart", fx.path("o.mp4")])
        let ac3 = try fx.read(fx.path("o.mp4"))
        let cases: [(String, [UInt8], AudioFileStreamError)] = [
            ("moov of 1 GiB", ftyp + be(1 << 30, 4) + ascii("moov"), .invalidFile),
            ("mdat before moov", ftyp + box("mdat", [1, 2, 3]) + box("moov", []), .notOptimized),
            ("no sound track", ftyp + box("moov", box("mvhd", [UInt8](repeating: 0, count: 100))), .unsupportedDataFormat),
            ("box smaller than its header", ftyp + be(4, 4) + ascii("free"), .invalidFile),
            ("child box larger than moov", ftyp + box("moov", be(500, 4) + ascii("trak")), .invalidFile),
            ("AC-3 in MP4", ac3, .unsupportedDataFormat),
        ]
        for (name, bytes, expected) in cases {
            saveToFuzzCorpus(Array(bytes.prefix(8192)), hint: nil)
            for split in [Split.whole, .bytewise] {
                let r = parse(bytes, split: split)
                #expect(r.error == expected, "\(name) \(split): \(String(describing: r.error))")
            }
        }
        #expect(parse(ac3).error?.detail.contains("ac-3") == true)
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=d=0.2", "-c:a", "aac", "-movflags", "frag_keyframe+empty_moov", fx.path("f.mp4")])
        let fragmented = parse(try fx.read(fx.path("f.mp4")))
        #expect(fragmented.error == AudioFileStreamError.unsupportedDataFormat)
        #expect(fragmented.error?.detail.contains("fragmented") == true)
        // A sample table claiming 2^30 samples in a small moov: refused, nothing huge allocated.
        let file = try Self.make(fx, "t.m4a", codec: ["-c:a", "aac"], faststart: true)
        guard let stsz = findBox(file, "stsz") else { Issue.record("no stsz"); return }
        var huge = file
        // stsz: size, type, version/flags, constant size (0), count at +16, then the sizes.
        huge.replaceSubrange((stsz + 16)..<(stsz + 20), with: be(1 << 30, 4))
        #expect(parse(huge).error == AudioFileStreamError.invalidFile)
        var fewer = file
        fewer.replaceSubrange((stsz + 16)..<(stsz + 20), with: be(UInt64(be32(file, stsz + 16) - 1), 4))
        #expect(parse(fewer).error == AudioFileStreamError.invalidFile, "chunks hold more samples than stsz lists")
        let clean = parse(file)
        for n in stride(from: 0, to: file.count, by: max(1, file.count / 89)) {
            let t = parse(Array(file.prefix(n)))
            #expect(t.error == nil)
            #expect(same(t.data, clean.data.prefix(t.data.count)))
        }
    }

    func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    /// Offset of the first box of `type` (its size field), found by scanning the bytes.
    func findBox(_ b: [UInt8], _ type: String) -> Int? {
        let t = ascii(type)
        for i in 4..<(b.count - 4) where Array(b[i..<(i + 4)]) == t { return i - 4 }
        return nil
    }
}
