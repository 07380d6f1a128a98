import AQFileStream
import AQTypes
import Foundation
import Testing

/// Issue 14: Ogg FLAC, Opus and Vorbis (Speex is refused by name).
@Suite struct OggTests {
    static func make(_ fx: Fixtures, _ name: String, codec: [String], rate: Int = 48000, channels: Int = 2) throws -> [UInt8] {
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=0.7:sample_rate=\(rate)", "-f", "lavfi", "-i",
                       "anoisesrc=d=0.7:a=0.2:seed=6:r=\(rate)", "-filter_complex", "amix=inputs=2", "-ac", "\(channels)"]
                      + codec + [fx.path(name)])
        return try fx.read(fx.path(name))
    }

    /// Packets are ffprobe's (sizes, and frames from the Opus TOC or the FLAC frame header),
    /// the cookie is OpusHead or STREAMINFO, Opus's priming is its pre-skip, the last page's
    /// granule gives the length, and every split agrees.
    @Test(arguments: [("opus", ["-c:a", "libopus", "-b:a", "96k"], 2), ("opus", ["-c:a", "libopus", "-frame_duration", "60"], 1),
                      ("oga", ["-c:a", "flac", "-sample_fmt", "s16"], 2), ("ogg", ["-c:a", "libvorbis"], 2)])
    func packetsAndProperties(ext: String, codec: [String], channels: Int) throws {
        let fx = try Fixtures()
        let file = try Self.make(fx, "t.\(ext)", codec: codec, channels: channels)
        let probe = try ffprobePackets(fx, fx.path("t.\(ext)"))
        let r = parse(file)
        #expect(r.error == nil, "\(String(describing: r.error))")
        #expect(r.uint32(.fileFormat) == AudioFileTypeID.ogg.rawValue)
        let f = try #require(r.format)
        #expect(f.channelsPerFrame == UInt32(channels))
        #expect(r.sizes.map(Int.init) == probe.map(\.bytes))
        let cookie = try #require(r.cookie)
        if ext == "opus" {
            #expect(f.formatID == AudioFormatID.opus && f.sampleRate == 48000)
            #expect(Array(cookie.prefix(8)) == ascii("OpusHead"))
            let preSkip = Int32(cookie[10]) | Int32(cookie[11]) << 8
            #expect(r.table?.primingFrames == preSkip)
            // ffprobe's durations: the last packet's is trimmed to the granule, the rest are the TOC's.
            #expect(r.frames.dropLast().map(Int.init) == probe.dropLast().map(\.frames))
            if codec.contains("60") { #expect(r.frames.first == 2880) }
            #expect(oggLastGranule(file).map { $0 - Int64(preSkip) } == 33600)
        } else if ext == "ogg" {
            #expect(f.formatID == AudioFormatID.vorbis && f.sampleRate == 48000)
            // Xiph lacing of the identification, comment and setup headers.
            #expect(cookie[0] == 2)
            let first = Int(cookie[1])
            #expect(cookie[3] == 1 && Array(cookie[4..<10]) == ascii("vorbis") && first == 30)
            // (previous block + block) / 4 from the setup header's modes; the first packet
            // decodes to nothing (ffprobe counts it as half a short block); the last is
            // trimmed by ffprobe to the granule.
            #expect(r.frames.first == 0)
            #expect(r.frames.dropFirst().dropLast().map(Int.init) == probe.dropFirst().dropLast().map(\.frames))
            #expect(oggLastGranule(file) == 33600)
        } else {
            #expect(f.formatID == AudioFormatID.flac && f.sampleRate == 48000)
            #expect(cookie.count == 42)
            #expect(r.frames.map(Int.init) == probe.map(\.frames))
            #expect(oggLastGranule(file) == 33600)
        }
        // An Ogg page (up to 65307 bytes) is held whole.
        verifySplits(file, maxBuffered: 65_307)
    }

    /// A damaged page (bad CRC) is dropped with the packets on it; later pages are intact and
    /// every split agrees. A seek is estimated and parsing resumes on the next page.
    @Test func damageAndSeek() throws {
        let fx = try Fixtures()
        let file = try Self.make(fx, "t.opus", codec: ["-c:a", "libopus", "-page_duration", "100000"])
        let clean = parse(file)
        let pages = oggPageOffsets(file)
        #expect(pages.count > 5)
        var bad = file
        bad[pages[4] + 40] ^= 0x55
        let whole = parse(bad)
        #expect(whole.error == nil)
        #expect(whole.sizes.count < clean.sizes.count && whole.sizes.count > clean.sizes.count / 2)
        #expect(clean.data.ends(with: whole.data.suffix(whole.data.count - whole.data.count / 2)))
        for split in [Split.bytewise, .random(7)] {
            let r = parse(bad, split: split)
            #expect(r.sizes == whole.sizes && r.data == whole.data, "\(split)")
        }
        var got: [UInt8] = []
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { d, _, descs in
            for x in descs! { got += d[Int(x.startOffset)..<Int(x.startOffset) + Int(x.dataByteSize)] }
        })
        try s.parse(Array(file.prefix(pages[3])))
        let (at, flags) = try s.seek(toPacket: 20)
        #expect(flags == .offsetIsEstimated)
        got = []
        try s.parse(Array(file[Int(at)...]), flags: .discontinuity)
        #expect(!got.isEmpty && clean.data.ends(with: got), "whole packets from a later page on")
    }

    /// Refusals and malformed streams; truncation never throws.
    @Test func hostile() throws {
        let fx = try Fixtures()
        let speex = try Self.make(fx, "s.spx", codec: ["-c:a", "libspeex", "-ar", "16000", "-f", "ogg"], rate: 16000, channels: 1)
        let r = parse(speex, split: .random(2))
        #expect(r.error == AudioFileStreamError.unsupportedDataFormat)
        #expect(r.error?.detail.contains("Speex") == true, "\(String(describing: r.error))")
        let opus = try Self.make(fx, "t.opus", codec: ["-c:a", "libopus"])
        var badHead = opus
        badHead[30] ^= 1  // inside OpusHead: the first page's CRC fails
        #expect(parse(badHead).error == AudioFileStreamError.invalidFile)
        var version = opus
        version[4] = 1
        #expect(parse(version).error == AudioFileStreamError.unsupportedDataFormat)
        saveToFuzzCorpus(Array(opus.prefix(8192)), hint: nil)
        let clean = parse(opus)
        for n in stride(from: 0, to: opus.count, by: max(1, opus.count / 97)) {
            let t = parse(Array(opus.prefix(n)))
            #expect(t.error == nil)
            #expect(same(t.data, clean.data.prefix(t.data.count)))
        }
    }

    func oggPageOffsets(_ b: [UInt8]) -> [Int] {
        var out: [Int] = []
        var i = 0
        while i + 27 <= b.count, Array(b[i..<(i + 4)]) == ascii("OggS") {
            out.append(i)
            let n = Int(b[i + 26])
            i += 27 + n + b[(i + 27)..<(i + 27 + n)].reduce(0) { $0 + Int($1) }
        }
        return out
    }
}

extension Array where Element == UInt8 {
    func ends(with tail: [UInt8]) -> Bool { tail.count <= count && Array(suffix(tail.count)) == tail }
}
