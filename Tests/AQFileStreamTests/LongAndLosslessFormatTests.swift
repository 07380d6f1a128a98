import AQFileStream
import AQTypes
import Foundation
import Testing

// Issue 14: RF64/BW64, Wave64 and native FLAC in the push parser, and refusals that name the
// format. (PCM sample checks for RF64 and Wave64 are PCMCase rows in PCMFormatTests.)

/// ffprobe's packets of a file: (frames, bytes) each, independent of the parser.
func ffprobePackets(_ fx: Fixtures, _ file: String) throws -> [(frames: Int, bytes: Int)] {
    let out = fx.path("probe-\(UUID().uuidString).csv")
    try fx.run("ffprobe", ["-v", "error", "-show_entries", "packet=duration,size", "-of", "csv=p=0", file], stdoutFile: out)
    let text = try String(contentsOfFile: out, encoding: .utf8)
    return text.split(separator: "\n").compactMap { line in
        let f = line.split(separator: ",")
        guard f.count == 2, let d = Int(f[0]), let s = Int(f[1]) else { return nil }
        return (d, s)
    }
}

@Suite struct RefusalTests {
    /// Files of formats the parser does not read are refused with `'typ?'` and a detail that
    /// names the format, whatever the split.
    @Test(arguments: [
        ("spx", ["-c:a", "libspeex", "-ar", "16000", "-f", "ogg"], "Speex"),
        ("mka", ["-c:a", "pcm_s16le"], "Matroska"),
        ("wv", ["-c:a", "wavpack"], "WavPack"),
        ("wma", ["-c:a", "wmav2"], "ASF/WMA"),
        ("tta", ["-c:a", "tta"], "True Audio"),
    ])
    func foreignFormatsAreNamed(ext: String, codec: [String], name: String) throws {
        let fx = try Fixtures()
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=d=0.2"] + codec + [fx.path("t.\(ext)")])
        let bytes = try fx.read(fx.path("t.\(ext)"))
        for split in [Split.whole, .bytewise, .random(4)] {
            let r = parse(bytes, split: split)
            #expect(r.error == (ext == "spx" ? AudioFileStreamError.unsupportedDataFormat : AudioFileStreamError.unsupportedFileType), "\(split)")
            #expect(r.error?.detail.contains(name) == true, "\(split): \(String(describing: r.error))")
        }
    }

    /// Bytes of no known format: the message says what was looked for and how the file starts.
    @Test func unknownBytesAreDescribed() {
        let junk = ascii("MZ\u{90}\u{0}") + randomBytes(100_000, seed: 3, excluding: [0xFF])
        let r = parse(junk, split: .random(2))
        #expect(r.error == AudioFileStreamError.unsupportedFileType)
        #expect(r.error?.detail.contains("4D 5A") == true, "\(String(describing: r.error))")
        let midi = ascii("MThd") + be(6, 4) + be(1, 2) + be(1, 2) + be(96, 2)
        #expect(parse(midi).error?.detail.contains("MIDI") == true)
    }

    /// A CAF whose variable-size packets come before their table: `'optm'` (the reference's
    /// "not optimized": the packet table is after the audio data), naming the cure.
    @Test func cafPacketTableAfterDataIsNotOptimized() throws {
        let fx = try Fixtures()
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=d=0.2", "-c:a", "alac", fx.path("t.caf")])
        let r = parse(try fx.read(fx.path("t.caf")))
        #expect(r.error == AudioFileStreamError.notOptimized)
        #expect(r.error?.detail.contains("pakt") == true)
    }
}

@Suite struct RF64AndWave64Tests {
    /// BW64 is RF64 under another name: same layout, its own file type.
    @Test func bw64() throws {
        let fx = try Fixtures()
        let (file, samples) = try PCMCase.all.first { $0.name == "rf64-s16" }!.make(fx)
        var bw = file
        bw.replaceSubrange(0..<4, with: ascii("BW64"))
        let r = parse(bw)
        #expect(r.error == nil)
        #expect(r.uint32(.fileFormat) == AudioFileTypeID.bw64.rawValue)
        #expect(same(r.data, samples))
        verifySplits(bw)
    }

    /// An RF64 whose ds64 says the data is 5 GiB (more than a 32-bit size holds): the counts are
    /// the 64-bit ones, a chunk over 4 GiB before the data is skipped by its ds64 table entry,
    /// and what arrives is delivered.
    @Test func ds64SizesBeyond4GiB() {
        let dataSize: UInt64 = 5 << 30
        let junkSize: UInt64 = 10
        let ds64 = ascii("ds64") + le(40, 4) + le(0, 8) + le(dataSize, 8) + le(dataSize / 4, 8) + le(1, 4)
            + ascii("JUNK") + le(junkSize, 8)
        let junk = ascii("JUNK") + le(0xFFFF_FFFF, 4) + [UInt8](repeating: 7, count: Int(junkSize))
        let samples = randomBytes(4000, seed: 21)
        let file = ascii("RF64") + le(0xFFFF_FFFF, 4) + ascii("WAVE") + ds64 + junk + waveFmt()
            + ascii("data") + le(0xFFFF_FFFF, 4) + samples
        let r = parse(file, split: .random(6))
        #expect(r.error == nil)
        #expect(r.uint64(.audioDataByteCount) == dataSize)
        #expect(r.uint64(.audioDataPacketCount) == dataSize / 4)
        #expect(same(r.data, samples))
        #expect(r.int64(.dataOffset) == Int64(file.count - samples.count))
        verifySplits(file)
    }

    /// A plain RIFF WAVE over 4 GiB whose data size wrapped around 2^32 (ffmpeg without
    /// `-rf64`): a file reader feeds a corrected header (data to the end of the file); a file
    /// with a chunk after its data, or under 4 GiB, is left alone.
    @Test func waveOver4GiBWithWrappedSize() throws {
        let samples = randomBytes(4000, seed: 31)
        let header = riff(waveFmt() + ascii("data") + le(4000, 4))
        let fileSize = Int64(header.count) + (1 << 32) + 4000
        func reader(_ bytes: [UInt8]) -> (Int64, Int) -> [UInt8] {
            { o, n in
                (0..<n).map { k in Int(o) + k < bytes.count ? bytes[Int(o) + k] : 0 }
            }
        }
        let order = AudioFileReadingOrder.make(fileSize: fileSize, read: reader(header))
        let fixed = try #require(order.replacementHeader)
        #expect(fixed.count == header.count)
        #expect(Array(fixed.suffix(4)) == [0xFF, 0xFF, 0xFF, 0xFF])
        let r = parse(fixed + samples + samples)
        #expect(r.error == nil)
        #expect(r.uint64(.audioDataByteCount) == nil, "to the end of the file")
        #expect(same(r.data, samples + samples))
        // Not wrapped: the size does not match the file modulo 2^32, or the file is small.
        #expect(AudioFileReadingOrder.make(fileSize: fileSize + 2, read: reader(header)).replacementHeader == nil)
        #expect(AudioFileReadingOrder.make(fileSize: Int64(header.count) + 4000, read: reader(header)).replacementHeader == nil)
    }

    /// Seeking a Wave64 file is exact, and parsing on from the returned offset gives the packets.
    @Test func wave64Seek() throws {
        let fx = try Fixtures()
        let (file, samples) = try PCMCase.all.first { $0.name == "w64-s16" }!.make(fx)
        var tail: [UInt8] = []
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { d, _, _ in tail += d })
        try s.parse(Array(file.prefix(200)))
        let (offset, flags) = try s.seek(toPacket: 300)
        #expect(flags.isEmpty)
        #expect(offset == (s.dataOffset ?? 0) + 300 * 4)
        tail = []
        try s.parse(Array(file[Int(offset)...]), flags: .discontinuity)
        #expect(same(tail, samples[(300 * 4)...]))
    }

    /// A Wave64 chunk smaller than its own header is malformed.
    @Test func wave64BadChunk() {
        let head: [UInt8] = ascii("riff") + [0x2E, 0x91, 0xCF, 0x11, 0xA5, 0xD6, 0x28, 0xDB, 0x04, 0xC1, 0x00, 0x00]
            + le(200, 8) + ascii("wave") + [0xF3, 0xAC, 0xD3, 0x11, 0x8C, 0xD1, 0x00, 0xC0, 0x4F, 0x8E, 0xDB, 0x8A]
        let chunk: [UInt8] = ascii("fmt ") + [0xF3, 0xAC, 0xD3, 0x11, 0x8C, 0xD1, 0x00, 0xC0, 0x4F, 0x8E, 0xDB, 0x8A] + le(8, 8)
        for split in [Split.whole, .bytewise] {
            #expect(parse(head + chunk, split: split).error == AudioFileStreamError.invalidFile)
        }
        // Data before fmt.
        let data: [UInt8] = ascii("data") + [0xF3, 0xAC, 0xD3, 0x11, 0x8C, 0xD1, 0x00, 0xC0, 0x4F, 0x8E, 0xDB, 0x8A] + le(40, 8)
        #expect(parse(head + data + [UInt8](repeating: 0, count: 16)).error == AudioFileStreamError.invalidFile)
    }
}

@Suite struct FLACTests {
    static func make(_ fx: Fixtures, _ name: String, rate: Int, channels: Int, args: [String] = ["-sample_fmt", "s16"]) throws -> [UInt8] {
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=0.5:sample_rate=\(rate)", "-f", "lavfi", "-i",
                       "anoisesrc=d=0.5:a=0.3:seed=5:r=\(rate)", "-filter_complex", "amix=inputs=2",
                       "-ac", "\(channels)", "-c:a", "flac"] + args + [fx.path(name)])
        return try fx.read(fx.path(name))
    }

    /// Every packet is one whole frame, as ffprobe counts them (size and frames), the format,
    /// cookie and gapless counts are STREAMINFO's, and every split gives the same.
    @Test(arguments: [
        (44100, 2, ["-sample_fmt", "s16"]), (48000, 1, ["-sample_fmt", "s32", "-compression_level", "0"]),
        (96000, 6, ["-sample_fmt", "s16", "-frame_size", "1152"]),
    ])
    func framesMatchFFprobe(rate: Int, channels: Int, args: [String]) throws {
        let fx = try Fixtures()
        let file = try Self.make(fx, "t.flac", rate: rate, channels: channels, args: args)
        let probe = try ffprobePackets(fx, fx.path("t.flac"))
        let r = parse(file)
        #expect(r.error == nil)
        #expect(r.uint32(.fileFormat) == AudioFileTypeID.flac.rawValue)
        let f = try #require(r.format)
        #expect(f.formatID == AudioFormatID.flac)
        #expect(f.sampleRate == Double(rate))
        #expect(f.channelsPerFrame == UInt32(channels))
        #expect(f.formatFlags.rawValue == (args[1] == "s16" ? 1 : 3))  // 16- or 24-bit source
        #expect(r.sizes.map(Int.init) == probe.map(\.bytes))
        #expect(r.frames.map(Int.init) == probe.map(\.frames))
        let total = probe.reduce(0) { $0 + $1.frames }
        #expect(total == rate / 2)
        #expect(r.table == AudioFilePacketTableInfo(
            numberValidFrames: Int64(total), primingFrames: 0,
            remainderFrames: Int32(probe.count * Int(f.framesPerPacket) - total)))
        #expect(r.uint64(.audioDataPacketCount) == UInt64(probe.count))
        #expect(r.cookie == [0, 0, 0, 0, 0x80, 0, 0, 34] + Array(file[8..<42]))
        let offset = Int(try #require(r.int64(.dataOffset)))
        #expect(same(r.data, file[offset...]), "the packets are the file's frames, back to back")
        #expect(r.announced.last == .readyToProducePackets)
        verifySplits(file)
    }

    /// A SEEKTABLE makes a seek onto a seek point exact; without one the offset is estimated
    /// and the parser resynchronises on the next frame.
    @Test func seek() throws {
        let fx = try Fixtures()
        let file = try Self.make(fx, "t.flac", rate: 44100, channels: 2)
        let clean = parse(file)
        let offset = Int(try #require(clean.int64(.dataOffset)))
        let starts = clean.sizes.indices.map { i in clean.sizes[..<i].reduce(0) { $0 + Int($1) } }
        // fLaC, STREAMINFO (not last), SEEKTABLE with points on packets 0 and 3 (last), frames.
        let bs = UInt64(try #require(clean.format).framesPerPacket)
        let points = [0, 3].map { k in be(UInt64(k) * bs, 8) + be(UInt64(starts[k]), 8) + be(bs, 2) }.joined()
        let seekable = ascii("fLaC") + [0x00, 0, 0, 34] + Array(file[8..<42]) + [0x83, 0, 0, 36] + Array(points) + Array(file[offset...])
        verifySplits(seekable)
        for (bytes, exact) in [(seekable, true), (file, false)] {
            var got: [UInt8] = []
            let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { d, _, descs in
                for x in descs! { got += d[Int(x.startOffset)..<Int(x.startOffset) + Int(x.dataByteSize)] }
            })
            let dataOffset = bytes.count - (file.count - offset)
            try s.parse(Array(bytes.prefix(dataOffset + 10)))
            let (at, flags) = try s.seek(toPacket: 3)
            #expect(flags.isEmpty == exact)
            if exact { #expect(at == Int64(dataOffset + starts[3])) }
            got = []
            try s.parse(Array(bytes[Int(at)...]), flags: .discontinuity)
            // Whole frames from some packet on, to the end.
            let first = starts.firstIndex { dataOffset + $0 >= Int(at) } ?? starts.count
            if exact { #expect(first == 3) }
            #expect(same(got, file[(offset + starts[first])...]))
        }
    }

    /// A damaged frame is dropped and the parser finds the next one; later frames are intact,
    /// whatever the split.
    @Test func damagedFrameIsSkipped() throws {
        let fx = try Fixtures()
        let file = try Self.make(fx, "t.flac", rate: 44100, channels: 2)
        let clean = parse(file)
        let offset = Int(try #require(clean.int64(.dataOffset)))
        var bad = file
        let start = offset + Int(clean.sizes[0] + clean.sizes[1])
        for i in (start + 20)..<(start + 60) { bad[i] ^= 0x5A }
        let whole = parse(bad)
        #expect(whole.error == nil)
        var expected = clean.sizes
        expected.remove(at: 2)
        #expect(whole.sizes == expected)
        for split in [Split.bytewise, .random(8), .chunks(1000)] {
            let r = parse(bad, split: split)
            #expect(r.sizes == whole.sizes && r.data == whole.data, "\(split)")
        }
    }

    /// Malformed metadata ends in `'dta?'`; garbage after a frame header waits in bounded memory;
    /// a truncated file never throws.
    @Test func hostile() throws {
        let info = [UInt8](repeating: 0, count: 2) + be(4096, 2) + be(4096, 2) + [0, 0, 0, 0, 0, 0]
        // rate 44100 (20 bits), 2 channels, 16 bits, 0 samples: 0xAC44 << 4 | 1 << 1 | 0 ...
        let packed: UInt64 = 44100 << 44 | 1 << 41 | 15 << 36
        let streamInfo = Array(info[2...]) + be(packed, 8) + [UInt8](repeating: 0, count: 16)
        #expect(streamInfo.count == 34)
        let cases: [(String, [UInt8], AudioFileStreamError?)] = [
            ("STREAMINFO of 20 bytes", ascii("fLaC") + [0x80, 0, 0, 20] + [UInt8](repeating: 0, count: 20), .invalidFile),
            ("zero rate", ascii("fLaC") + [0x80, 0, 0, 34] + Array(streamInfo[0..<10]) + [0, 0, 0, 0, 0, 0, 0, 0] + Array(streamInfo[18...]), .invalidFile),
            ("comment first", ascii("fLaC") + [0x04, 0, 0, 4, 1, 2, 3, 4], .invalidFile),
            ("block type 127", ascii("fLaC") + [0x00, 0, 0, 34] + streamInfo + [0xFF, 0, 0, 0], .invalidFile),
            ("two STREAMINFO", ascii("fLaC") + [0x00, 0, 0, 34] + streamInfo + [0x80, 0, 0, 34] + streamInfo, .invalidFile),
            ("block sizes 0", ascii("fLaC") + [0x80, 0, 0, 34] + [UInt8](repeating: 0, count: 10) + Array(streamInfo[10...]), .invalidFile),
        ]
        for (name, bytes, expected) in cases {
            saveToFuzzCorpus(bytes, hint: nil)
            for split in [Split.whole, .bytewise] {
                #expect(parse(bytes, split: split).error == expected, "\(name) \(split)")
            }
        }
        // A valid header, then no end: the scan gives up after the largest possible frame and
        // keeps looking, holding little.
        let head = ascii("fLaC") + [0x80, 0, 0, 34] + streamInfo
        let frame: [UInt8] = [0xFF, 0xF8, 0xC9, 0x18, 0x00]
        var crc: UInt8 = 0
        for b in frame { crc ^= b; for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 } }
        let endless = head + frame + [crc] + randomBytes(300_000, seed: 9, excluding: [0xFF])
        let r = parse(endless, split: .chunks(4096))
        #expect(r.error == nil)
        #expect(r.packetCount == 0)
        #expect(r.bufferedHighWater < 40_000, "buffered \(r.bufferedHighWater)")
        // Truncated anywhere: no error, only whole frames.
        let fx = try Fixtures()
        let file = try Self.make(fx, "t.flac", rate: 8000, channels: 1)
        let clean = parse(file)
        for n in stride(from: 0, to: file.count, by: max(1, file.count / 97)) {
            let t = parse(Array(file.prefix(n)))
            #expect(t.error == nil)
            #expect(same(t.data, clean.data.prefix(t.data.count)))
        }
    }
}
