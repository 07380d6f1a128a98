import AQFileStream
import AQTypes
import Foundation
import Testing

func le(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8((v >> (8 * UInt64($0))) & 0xFF) } }
func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

/// A canonical 16-bit stereo WAVE header with the given fmt fields.
func waveFmt(tag: UInt16 = 1, channels: UInt16 = 2, rate: UInt32 = 8000, bits: UInt16 = 16, blockAlign: UInt16? = nil) -> [UInt8] {
    let ba = blockAlign ?? channels * (bits / 8)
    return ascii("fmt ") + le(16, 4) + le(UInt64(tag), 2) + le(UInt64(channels), 2) + le(UInt64(rate), 4)
        + le(UInt64(rate) * UInt64(ba), 4) + le(UInt64(ba), 2) + le(UInt64(bits), 2)
}

func riff(_ chunks: [UInt8]) -> [UInt8] { ascii("RIFF") + le(UInt64(chunks.count + 4), 4) + ascii("WAVE") + chunks }

/// An AIFF COMM with an arbitrary 80-bit rate.
func aiff(rate80: [UInt8], channels: UInt16 = 1) -> [UInt8] {
    let comm = ascii("COMM") + be(18, 4) + be(UInt64(channels), 2) + be(100, 4) + be(16, 2) + rate80
    let ssnd = ascii("SSND") + be(8 + 200, 4) + be(0, 4) + be(0, 4) + [UInt8](repeating: 1, count: 200)
    let body = ascii("AIFF") + comm + ssnd
    return ascii("FORM") + be(UInt64(body.count), 4) + body
}

@Suite struct HostileInputTests {
    /// Each hostile input ends in the documented error, however it is split.
    static let cases: [(String, [UInt8], AudioFileStreamError?)] = [
        ("garbage", randomBytes(200_000, seed: 1, excluding: [0xFF]), .unsupportedFileType),
        ("RIFF not WAVE", ascii("RIFF") + le(4, 4) + ascii("AVI LIST"), .unsupportedFileType),
        ("data before fmt", riff(ascii("data") + le(4, 4) + [1, 2, 3, 4]), .invalidFile),
        ("fmt size 0", riff(ascii("fmt ") + le(0, 4) + ascii("data") + le(4, 4)), .invalidFile),
        ("zero channels", riff(waveFmt(channels: 0, blockAlign: 4) + ascii("data") + le(4, 4)), .invalidFile),
        ("zero rate", riff(waveFmt(rate: 0) + ascii("data") + le(4, 4)), .invalidFile),
        ("zero block align", riff(waveFmt(blockAlign: 0) + ascii("data") + le(4, 4)), .invalidFile),
        ("WAVE ADPCM", riff(waveFmt(tag: 2, bits: 4, blockAlign: 2) + ascii("data") + le(4, 4)), .unsupportedDataFormat),
        ("WAVE 12-byte samples", riff(waveFmt(bits: 96) + ascii("data") + le(4, 4)), .unsupportedDataFormat),
        ("AIFF infinite rate", aiff(rate80: [0x7F, 0xFF] + [UInt8](repeating: 0, count: 8)), .invalidFile),
        ("AIFF NaN rate", aiff(rate80: [0x7F, 0xFF, 0xC0] + [UInt8](repeating: 0, count: 7)), .invalidFile),
        ("AIFF zero rate", aiff(rate80: [UInt8](repeating: 0, count: 10)), .invalidFile),
        ("AIFF negative rate", aiff(rate80: [0xC0, 0x0E, 0xAC, 0x44] + [UInt8](repeating: 0, count: 6)), .invalidFile),
        ("AIFF zero channels", aiff(rate80: [0x40, 0x0E, 0xAC, 0x44] + [UInt8](repeating: 0, count: 6), channels: 0), .invalidFile),
        ("CAF huge kuki", ascii("caff") + [0, 1, 0, 0] + ascii("kuki") + be(1 << 40, 8), .invalidFile),
        ("CAF negative chunk", ascii("caff") + [0, 1, 0, 0] + ascii("free") + be(UInt64(bitPattern: -5), 8), .invalidFile),
        ("CAF data before desc", ascii("caff") + [0, 1, 0, 0] + ascii("data") + be(8, 8) + [0, 0, 0, 0, 1, 2, 3, 4], .invalidFile),
        ("CAF desc size 0", ascii("caff") + [0, 1, 0, 0] + ascii("desc") + be(0, 8), .invalidFile),
        ("CAF pakt claims 2^40 packets", cafWithPakt(packets: 1 << 40), .invalidFile),
        ("CAF version 2", ascii("caff") + [0, 2, 0, 0], .unsupportedDataFormat),
        ("NeXT header 8 bytes", ascii(".snd") + be(8, 4) + be(0, 4) + be(3, 4) + be(8000, 4) + be(1, 4), .invalidFile),
        ("NeXT zero channels", ascii(".snd") + be(24, 4) + be(0, 4) + be(3, 4) + be(8000, 4) + be(0, 4), .invalidFile),
        ("NeXT G.721", ascii(".snd") + be(24, 4) + be(4, 4) + be(23, 4) + be(8000, 4) + be(1, 4), .unsupportedDataFormat),
        ("ID3 not syncsafe", ascii("ID3") + [4, 0, 0, 0x80, 0, 0, 0], .invalidFile),
    ]

    static func cafWithPakt(packets: UInt64) -> [UInt8] {
        var desc = be(Double(44100).bitPattern, 8) + ascii("aac ")
        desc += be(2, 4) + be(0, 4) + be(1024, 4) + be(1, 4) + be(0, 4)
        let pakt = be(packets, 8) + be(0, 8) + be(0, 4) + be(0, 4) + [5, 5, 5]
        return buildCAF([("desc", desc), ("pakt", pakt)])
    }

    @Test(arguments: 0..<cases.count)
    func endsInDocumentedError(_ i: Int) {
        let (name, bytes, expected) = Self.cases[i]
        saveToFuzzCorpus(Array(bytes.prefix(4096)), hint: nil)
        for split in [Split.whole, .bytewise, .random(9)] {
            let r = parse(bytes, split: split)
            #expect(r.error == expected, "\(name) split \(split): \(r.error.map { String(describing: $0) } ?? "no error")")
            #expect(r.bufferedHighWater < 70_000, "\(name) buffered \(r.bufferedHighWater)")
        }
    }

    /// An ID3v2 tag claiming 256 MiB: skipped as it streams by, nothing buffered, no error.
    @Test func hugeID3TagWaits() throws {
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in Issue.record("no packets expected") })
        try s.parse(ascii("ID3") + [4, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F])
        let zeros = [UInt8](repeating: 0xFF, count: 1 << 20)
        for _ in 0..<8 { try s.parse(zeros) }
        #expect(s.bufferedByteCount == 0)
        #expect(!s.isReadyToProducePackets)
    }

    /// Endless would-be ADTS frames of length 0 (and MP3 free-format frames) never sync; with a
    /// hint the parser keeps scanning in constant memory.
    @Test func zeroLengthFramesNeverSync() throws {
        var packets = 0
        let adtsZero: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x00, 0x1F, 0xFC]
        let mp3Free: [UInt8] = [0xFF, 0xFB, 0x00, 0xC4]
        for (hint, unit) in [(AudioFileTypeID.aacADTS, adtsZero), (AudioFileTypeID.mp3, mp3Free)] {
            let s = try AudioFileStream(fileTypeHint: hint, propertyListener: { _, _, _ in }, packets: { _, n, _ in packets += n })
            let block = Array((0..<20_000).map { _ in unit }.joined())
            for _ in 0..<5 { try s.parse(block) }
            #expect(s.bufferedByteCount < 16)
            #expect(!s.isReadyToProducePackets)
            // Without a hint the same bytes are rejected.
            #expect(parse(block).error == AudioFileStreamError.unsupportedFileType)
        }
        #expect(packets == 0)
    }

    /// A WAVE whose chunk sizes claim gigabytes: unknown chunks are skipped without buffering.
    @Test func hugeSkippedChunkWaits() throws {
        let file = riff(waveFmt() + ascii("JUNK") + le(0xFFFF_FFF0, 4) + [UInt8](repeating: 0, count: 100_000))
        let r = parse(file, split: .random(4))
        #expect(r.error == nil)
        #expect(r.bufferedHighWater < 16)
        #expect(r.uint32(.readyToProducePackets) == nil || r.uint32(.readyToProducePackets) == 0)
    }

    /// Truncated at every length: never an error other than the documented ones, never packets
    /// beyond the data.
    @Test func truncatedAnywhere() throws {
        let fx = try Fixtures()
        let (file, samples) = try PCMCase.all[1].make(fx)
        for n in stride(from: 0, to: 120, by: 1) + [200, 1000, file.count - 1] {
            let r = parse(Array(file.prefix(n)))
            #expect(r.error == nil)
            #expect(same(r.data, samples.prefix(r.data.count)))
        }
    }

    /// WAVE chunks in odd orders with odd sizes (padded), and a data chunk of unknown size.
    @Test func waveChunkOrderPaddingAndUnknownSize() {
        let samples = randomBytes(400, seed: 8)
        let odd: [UInt8] = ascii("LIST") + le(5, 4) + [1, 2, 3, 4, 5, 0]
        let fact: [UInt8] = ascii("fact") + le(4, 4) + le(100, 4)
        let junk: [UInt8] = ascii("JUNK") + le(3, 4) + [9, 9, 9, 0]
        for size: UInt64 in [400, 0, 0xFFFF_FFFF] {
            // With an unknown size the data runs to the end of the stream, so nothing may follow.
            let file = riff(junk + waveFmt() + odd + fact + ascii("data") + le(size, 4) + samples + (size == 400 ? odd : []))
            let r = parse(file)
            #expect(r.error == nil)
            #expect(same(r.data, samples))
            #expect(r.int64(.dataOffset) == Int64(12 + junk.count + 24 + odd.count + fact.count + 8))
            #expect(r.uint64(.audioDataByteCount) == (size == 400 ? 400 : nil))
            verifySplits(file)
        }
        // A data chunk claiming more than the stream holds delivers what arrives.
        let short = riff(waveFmt() + ascii("data") + le(1 << 30, 4) + samples)
        let r = parse(short)
        #expect(r.error == nil)
        #expect(same(r.data, samples))
        #expect(r.uint64(.audioDataPacketCount) == (1 << 30) / 4)
        // Odd-sized 8-bit data followed by a chunk: the pad byte is skipped.
        let mono8 = riff(waveFmt(channels: 1, bits: 8) + ascii("data") + le(3, 4) + [10, 20, 30, 0] + odd)
        #expect(same(parse(mono8).data, [10, 20, 30]))
    }
}

/// Inputs the fuzz target found; each once crashed the parser.
@Suite struct FuzzRegressionTests {
    /// A CAF whose pakt claims 2^40 packets: the chunk is rejected, and translations of huge
    /// packet numbers afterwards throw instead of overflowing.
    @Test func hugePacketTranslationsDoNotOverflow() throws {
        let input = try #require(Data(base64Encoded:
            "HGNhZmYAAQAAZGVzYwAAAAAAAAAgQOWIgAAAAABhYWMgAAAAAgAAAAAAAAQAAAAAAQAAAABwYWt0AAAAAAAAABsAAAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAFBQU="))
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        #expect(throws: AudioFileStreamError.invalidFile) { try s.parse([UInt8](input.dropFirst())) }
        #expect(s.audioDataPacketCount == nil)
        #expect(throws: AudioFileStreamError.invalidPacketOffset) { try s.frame(forPacket: .max / 2) }

        let w = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        try w.parse(riff(waveFmt() + ascii("data") + le(0, 4)))
        #expect(throws: AudioFileStreamError.invalidPacketOffset) { try w.byte(forPacket: .max / 2) }
        #expect(throws: AudioFileStreamError.invalidPacketOffset) { try w.seek(toPacket: .max / 2) }
        #expect(try w.packet(forByte: .max).packet == .max / 4)
    }
}

extension FuzzRegressionTests {
    /// 0xFF bytes before a RIFF header: whole and split parses must agree.
    @Test func syncBytesBeforeRIFF() throws {
        let input = try #require(Data(base64Encoded:
            "HP////////////////////////////////////////////////////////////////////////////9SSUZGJAAAAFdBVkVmbXQgEAAAAAEAAgAAAAAAAAAAAAQAEABkYXRhBAAAAA=="))
        let bytes = [UInt8](input.dropFirst())
        let whole = parse(bytes)
        for split in [Split.chunks(8), .bytewise, .random(5)] {
            let other = parse(bytes, split: split)
            #expect(other.error == whole.error, "\(split): \(String(describing: other.error)) vs \(String(describing: whole.error))")
            #expect(other.packetCount == whole.packetCount)
        }
    }
}

extension FuzzRegressionTests {
    /// An RF64 whose ds64 table gives a chunk a size of 2^64 − 1: skipping it must not overflow.
    @Test func rf64TableSizeNearUInt64Max() throws {
        let input = try #require(Data(base64Encoded:
            "HFJGNjT/////V0FWRWRzNjQoAAAAAAABP//wCAAAAET///////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////9hTGYAAAAAAEABAAAAAAAAUAEcAAABAAABGlVOSwoAAAAAAAAASlVOS/////8HBwcHBwdnFXNcJ+rPJlDnNZd0x+10p1Q0LJMQZ3d90dzJX2NVmzM5tLhl42rvY2l5zWo6UhiIRFea0r2KfL7MftEWcvwBjOITSjnfVXZ2dnZ2dnZ2dnZ2dnZ2dnZ2dqT0+UorBYZfEGqft/XignmDZKZ7hBIBHOvIyZKbVdE="))
        let bytes = [UInt8](input.dropFirst())
        let whole = parse(bytes)
        #expect(whole.error == nil)
        for split in [Split.chunks(7), .bytewise] {
            #expect(parse(bytes, split: split).packetCount == whole.packetCount)
        }
    }
}

extension FuzzRegressionTests {
    /// ".snd" followed by "ftyp": the magic at byte 0 wins however the input is split (the
    /// MP4 check at byte 4 once ran first only when 8 bytes had arrived).
    @Test func nextHeaderThatLooksLikeMP4() throws {
        let input = try #require(Data(base64Encoded:
            "GC5zbmRmdHlwAAAAKv8ABkAAAAACEAAfQAAAAAJQcm9jZXNzZWQgYnmfn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fn5+fnyBTb1gAAAAAqJ+fn5+fn5+fn5+fn5+fn5+fnwLhl/lYl3XEeLg8vQxYFGbswGAsjJvkmPyLT5m+yeMgWdqHSbWHhktQL1EQz2wcEw=="))
        let bytes = [UInt8](input.dropFirst())
        let whole = parse(bytes)
        #expect(whole.uint32(.fileFormat) == AudioFileTypeID.next.rawValue)
        for split in [Split.chunks(6), .bytewise, .random(5)] {
            let other = parse(bytes, split: split)
            #expect(other.error == whole.error && other.packetCount == whole.packetCount && other.data == whole.data, "\(split)")
        }
    }
}
