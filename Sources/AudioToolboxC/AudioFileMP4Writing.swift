// Audio File Services, writing M4A (issue 23): AAC and Apple Lossless packets into an MPEG-4
// file made by AudioFileCreateWithURL (kAudioFileM4AType, kAudioFileMPEG4Type), laid out as
// Apple's AudioFile writes one: `ftyp`, an 8-byte `free` box (room for a 64-bit `mdat` header
// should the data pass 4 GiB, QuickTime's `wide` trick), `mdat` holding the packets as they are
// written, and at AudioFileOptimize/AudioFileClose the `moov` after the data: one sound track
// whose media timescale is the sample rate, `stsd` with `mp4a`+`esds` (built from the cookie) or
// `alac`+`alac`, `stts` (the last packet's duration shortened by the remainder frames), `stsc`,
// `stsz`, `stco` (`co64` past 4 GiB), and an edit list (`edts`/`elst`) whose media time is the
// priming and whose duration is the valid frames — what ffmpeg and this library's reader
// (AQFileStream/MP4.swift) take as the packet table — and, for AAC, the same numbers in iTunes'
// `iTunSMPB` (which this library's reader prefers). Plain functions: any thread.
import AQTypes
import CAudioToolbox
import Foundation

enum MP4Writing {
    /// Packets in a chunk (`stsc`): about half a second of 44.1 kHz AAC, as Apple's files have.
    static let packetsPerChunk = 22

    /// True for the MPEG-4 file types written here.
    static func isMP4(_ fileType: UInt32) -> Bool {
        fileType == UInt32(kAudioFileM4AType) || fileType == UInt32(kAudioFileMPEG4Type)
    }

    /// The formats an M4A holds: AAC (LC) and Apple Lossless packets.
    static func check(_ f: SFormat) throws(AudioFileFailure) {
        let ids = [UInt32(kAudioFormatMPEG4AAC), UInt32(kAudioFormatAppleLossless)]
        guard ids.contains(f.formatID.rawValue), f.bytesPerPacket == 0, f.framesPerPacket > 0, f.channelsPerFrame > 0,
              f.sampleRate > 0, f.sampleRate < Double(UInt32.max) else {
            throw AudioFileFailure(status: kAudioFileUnsupportedDataFormatError, "an M4A holds AAC and Apple Lossless packets only, not \(f)")
        }
    }

    /// `ftyp` and the room for the `mdat` header: the bytes before the audio data.
    static func header(_ fileType: UInt32) -> [UInt8] {
        let brand = fileType == UInt32(kAudioFileM4AType) ? "M4A " : "mp42"
        var body = PCMHeader.Bytes()
        body.tag(brand); body.be32(0); body.tag("M4A "); body.tag("mp42"); body.tag("isom"); body.be32(0)
        return box("ftyp", body.out) + mdatHeader(dataBytes: 0)
    }

    /// The 16 bytes before the data: `free` (8) then a 32-bit `mdat` header, or one 64-bit `mdat`
    /// header when the box passes 4 GiB.
    static func mdatHeader(dataBytes: Int64) -> [UInt8] {
        var b = PCMHeader.Bytes()
        if dataBytes + 8 > Int64(UInt32.max) {
            b.be32(1); b.tag("mdat"); b.be64(UInt64(dataBytes + 16))
        } else {
            b.be32(8); b.tag("free"); b.be32(UInt32(dataBytes + 8)); b.tag("mdat")
        }
        return b.out
    }

    /// The cookie as the file keeps it (and AudioFileGetProperty gives it back, as the reader
    /// does): AAC's `esds` body (version and flags, then the ES descriptor; a whole `esds` atom is
    /// unwrapped, a bare ES descriptor or AudioSpecificConfig wrapped); ALAC's `alac` atom of the 24-byte ALACSpecificConfig (given
    /// bare, as that atom, or after a `frma` atom as in a CAF).
    static func fileCookie(_ cookie: [UInt8], format f: SFormat) throws(AudioFileFailure) -> [UInt8] {
        if f.formatID.rawValue == UInt32(kAudioFormatAppleLossless) {
            guard let config = alacConfig(cookie) else {
                throw AudioFileFailure(status: paramError, "an ALAC cookie is the 24-byte ALACSpecificConfig or the 'alac' atom holding it")
            }
            return [0, 0, 0, 36] + Array("alac".utf8) + [0, 0, 0, 0] + config
        }
        var cookie = cookie
        if cookie.count > 12, Array(cookie[4..<8]) == Array("esds".utf8) { cookie = Array(cookie.dropFirst(8)) }
        guard !cookie.isEmpty else { throw AudioFileFailure(status: paramError, "an empty AAC cookie") }
        if cookie[0] == 0x03 { return [0, 0, 0, 0] + cookie }
        return CAFPacketState.fileCookie(cookie, format: f)
    }

    /// The ALACSpecificConfig in `cookie` (bare, in an `alac` atom, or after a `frma` atom).
    static func alacConfig(_ cookie: [UInt8]) -> [UInt8]? {
        if cookie.count == 24 { return cookie }
        var c = cookie[...]
        if c.count >= 12, Array(c.dropFirst(4).prefix(4)) == Array("frma".utf8) { c = c.dropFirst(12) }
        guard c.count >= 36, Array(c.dropFirst(4).prefix(4)) == Array("alac".utf8) else { return nil }
        return Array(c.dropFirst(12).prefix(24))
    }

    /// The `moov` box for the packets written (`state`) starting at `dataOffset` in the file.
    static func moov(_ f: SFormat, _ state: CAFPacketState, dataOffset: Int64) -> [UInt8] {
        let rate = UInt32(f.sampleRate.rounded())
        let durations = sampleDurations(state)
        let total = durations.reduce(Int64(0)) { $0 + Int64($1) }
        let edited = state.priming > 0 || state.remainder > 0
        let valid = edited ? max(0, total - Int64(state.priming)) : total
        let track = box("trak", tkhd(duration: valid) + (edited ? edts(priming: state.priming, valid: valid) : [])
            + box("mdia", mdhd(rate: rate, duration: total) + hdlr() + box("minf", smhd() + dinf() + stbl(f, state, durations, dataOffset: dataOffset))))
        let aac = f.formatID.rawValue == UInt32(kAudioFormatMPEG4AAC)
        let gapless = aac && edited ? iTunSMPB(priming: state.priming, remainder: state.remainder, valid: valid) : []
        return box("moov", mvhd(rate: rate, duration: valid) + track + gapless)
    }

    /// iTunes' gapless information for AAC (`udta`/`meta`/`ilst`/`----` named `iTunSMPB`): the
    /// same priming, remainder and valid frames as the edit list, for players that read only it.
    static func iTunSMPB(priming: Int32, remainder: Int32, valid: Int64) -> [UInt8] {
        func hex(_ v: Int64, _ digits: Int) -> String {
            let h = String(UInt64(max(0, v)), radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, digits - h.count)) + h
        }
        let words = [hex(0, 8), hex(Int64(priming), 8), hex(Int64(remainder), 8), hex(valid, 16)] + [String](repeating: hex(0, 8), count: 8)
        let text = Array((" " + words.joined(separator: " ")).utf8)
        var hdlr = PCMHeader.Bytes()
        hdlr.be32(0); hdlr.tag("mdir"); hdlr.tag("appl"); hdlr.be32(0); hdlr.be32(0); hdlr.raw([0])
        let item = box("----", full("mean", Array("com.apple.iTunes".utf8)) + full("name", Array("iTunSMPB".utf8))
            + box("data", [0, 0, 0, 1, 0, 0, 0, 0] + text))  // type 1: UTF-8 text
        return box("udta", full("meta", full("hdlr", hdlr.out) + box("ilst", item)))
    }

    /// Each packet's frames, the last ones shortened so that they add up to priming + valid.
    static func sampleDurations(_ s: CAFPacketState) -> [UInt32] {
        var d = s.frames
        var cut = Int64(s.remainder)
        var i = d.count - 1
        while cut > 0 && i >= 0 {
            let take = min(cut, Int64(d[i]))
            d[i] -= UInt32(take)
            cut -= take
            i -= 1
        }
        return d
    }

    // MARK: boxes

    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        var b = PCMHeader.Bytes()
        b.be32(UInt32(8 + body.count)); b.tag(type); b.raw(body)
        return b.out
    }

    /// A full box: version and flags, then `body`.
    static func full(_ type: String, version: UInt8 = 0, flags: UInt32 = 0, _ body: [UInt8]) -> [UInt8] {
        box(type, [version, UInt8((flags >> 16) & 0xFF), UInt8((flags >> 8) & 0xFF), UInt8(flags & 0xFF)] + body)
    }

    static let matrix: [UInt32] = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000]

    /// A duration as version 0 (32-bit) or 1 (64-bit) wants it.
    static func fits32(_ v: Int64) -> Bool { v <= Int64(UInt32.max) }

    static func mvhd(rate: UInt32, duration: Int64) -> [UInt8] {
        var b = PCMHeader.Bytes()
        let long = !fits32(duration)
        if long { b.be64(0); b.be64(0); b.be32(rate); b.be64(UInt64(duration)) } else { b.be32(0); b.be32(0); b.be32(rate); b.be32(UInt32(duration)) }
        b.be32(0x10000); b.be16(0x100); b.raw([UInt8](repeating: 0, count: 10))
        for m in matrix { b.be32(m) }
        b.raw([UInt8](repeating: 0, count: 24)); b.be32(2)  // next track ID
        return full("mvhd", version: long ? 1 : 0, b.out)
    }

    static func tkhd(duration: Int64) -> [UInt8] {
        var b = PCMHeader.Bytes()
        let long = !fits32(duration)
        if long { b.be64(0); b.be64(0); b.be32(1); b.be32(0); b.be64(UInt64(duration)) } else { b.be32(0); b.be32(0); b.be32(1); b.be32(0); b.be32(UInt32(duration)) }
        b.be64(0); b.be16(0); b.be16(0); b.be16(0x100); b.be16(0)  // layer, group, volume 1.0
        for m in matrix { b.be32(m) }
        b.be32(0); b.be32(0)  // width, height
        return full("tkhd", version: long ? 1 : 0, flags: 1, b.out)  // enabled
    }

    /// One edit: from the priming frame, the valid frames (the movie timescale is the rate).
    static func edts(priming: Int32, valid: Int64) -> [UInt8] {
        var b = PCMHeader.Bytes()
        b.be32(1)
        let long = !fits32(valid)
        if long { b.be64(UInt64(valid)); b.be64(UInt64(priming)) } else { b.be32(UInt32(valid)); b.be32(UInt32(priming)) }
        b.be16(1); b.be16(0)  // rate 1.0
        return box("edts", full("elst", version: long ? 1 : 0, b.out))
    }

    static func mdhd(rate: UInt32, duration: Int64) -> [UInt8] {
        var b = PCMHeader.Bytes()
        let long = !fits32(duration)
        if long { b.be64(0); b.be64(0); b.be32(rate); b.be64(UInt64(duration)) } else { b.be32(0); b.be32(0); b.be32(rate); b.be32(UInt32(duration)) }
        b.be16(0x55C4); b.be16(0)  // language "und"
        return full("mdhd", version: long ? 1 : 0, b.out)
    }

    static func hdlr() -> [UInt8] {
        var b = PCMHeader.Bytes()
        b.be32(0); b.tag("soun"); b.be32(0); b.be32(0); b.be32(0); b.tag("SoundHandler"); b.raw([0])
        return full("hdlr", b.out)
    }

    static func smhd() -> [UInt8] { full("smhd", [0, 0, 0, 0]) }

    static func dinf() -> [UInt8] {
        box("dinf", full("dref", [0, 0, 0, 1] + full("url ", flags: 1, [])))
    }

    static func stbl(_ f: SFormat, _ s: CAFPacketState, _ durations: [UInt32], dataOffset: Int64) -> [UInt8] {
        // stts: runs of equal durations.
        var runs: [(count: UInt32, delta: UInt32)] = []
        for d in durations {
            if let last = runs.last, last.delta == d { runs[runs.count - 1].count += 1 } else { runs.append((1, d)) }
        }
        var stts = PCMHeader.Bytes()
        stts.be32(UInt32(runs.count))
        for r in runs { stts.be32(r.count); stts.be32(r.delta) }
        // stsc: chunks of packetsPerChunk packets, the last one shorter.
        let n = s.sizes.count
        let chunks = (n + packetsPerChunk - 1) / packetsPerChunk
        var stsc = PCMHeader.Bytes()
        let lastCount = n - (chunks - 1) * packetsPerChunk
        var entries: [(first: Int, count: Int)] = []
        if chunks > 0 { entries.append((1, min(n, packetsPerChunk))) }
        if chunks > 1 && lastCount != packetsPerChunk { entries.append((chunks, lastCount)) }
        stsc.be32(UInt32(entries.count))
        for e in entries { stsc.be32(UInt32(e.first)); stsc.be32(UInt32(e.count)); stsc.be32(1) }
        // stsz: every size; stco/co64: every chunk's offset.
        var stsz = PCMHeader.Bytes()
        stsz.be32(0); stsz.be32(UInt32(n))
        for size in s.sizes { stsz.be32(size) }
        var offsets: [Int64] = []
        var at = dataOffset
        for (i, size) in s.sizes.enumerated() {
            if i % packetsPerChunk == 0 { offsets.append(at) }
            at += Int64(size)
        }
        let wide = offsets.contains { !fits32($0) }
        var stco = PCMHeader.Bytes()
        stco.be32(UInt32(offsets.count))
        for o in offsets { if wide { stco.be64(UInt64(o)) } else { stco.be32(UInt32(o)) } }
        return box("stbl", stsd(f, cookie: s.cookie) + full("stts", stts.out) + full("stsc", stsc.out)
            + full("stsz", stsz.out) + full(wide ? "co64" : "stco", stco.out))
    }

    /// The sample description: `mp4a` with its `esds`, or `alac` with its `alac` box.
    static func stsd(_ f: SFormat, cookie: [UInt8]) -> [UInt8] {
        let alac = f.formatID.rawValue == UInt32(kAudioFormatAppleLossless)
        let config = alac ? alacConfig(cookie) : nil
        var b = PCMHeader.Bytes()
        b.raw([0, 0, 0, 0, 0, 0]); b.be16(1)  // reserved, data reference 1
        b.be16(0); b.be16(0); b.be32(0)  // version, revision, vendor
        b.be16(UInt16(clamping: f.channelsPerFrame))
        b.be16(config.map { UInt16($0[5]) } ?? 16)  // sample size: ALAC's bit depth
        b.be16(0); b.be16(0)
        b.be32(f.sampleRate < 65536 ? UInt32(f.sampleRate.rounded()) << 16 : 0)
        let inner = alac ? (cookie.isEmpty ? [] : cookie) : (cookie.isEmpty ? [] : box("esds", cookie))
        let entry = box(alac ? "alac" : "mp4a", b.out + inner)
        return full("stsd", [0, 0, 0, 1] + entry)
    }
}
