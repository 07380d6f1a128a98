import AQTypes

// Ogg: pages ("OggS", CRC-32 checked) carrying one logical stream's packets in segments; a
// packet may continue on the next page. The first stream's first packet names the codec:
// FLAC ("\x7FFLAC"), Opus ("OpusHead") or Vorbis ("\x01vorbis"); header packets follow,
// then audio packets.

extension AudioFileTypeID {
    /// Ogg, `'ogg '`. (Core Audio has no Ogg file type; aqsync's own code.)
    public static let ogg: FourCharCode = "ogg "
}

extension AudioFormatID {
    /// Opus, `'opus'` (Core Audio's kAudioFormatOpus). Magic cookie: the OpusHead packet.
    public static let opus: FourCharCode = "opus"
    /// Vorbis, `'vorb'` (aqsync's own code: Core Audio has none). Magic cookie: the three
    /// header packets in Xiph lacing (`2`, the first two lengths in 255-runs, the packets), as
    /// Matroska's CodecPrivate and libavcodec's extradata have them.
    public static let vorbis: FourCharCode = "vorb"
}

/// CRC-32 as Ogg uses it: polynomial 0x04C11DB7, MSB first, initial 0, no final xor.
let oggCRCTable: [UInt32] = (0..<256).map { i -> UInt32 in
    var c = UInt32(i) << 24
    for _ in 0..<8 { c = c & 0x8000_0000 != 0 ? (c << 1) ^ 0x04C1_1DB7 : c << 1 }
    return c
}

/// What the parser keeps of an Ogg stream.
struct OggState {
    var serial: UInt32?
    enum Codec { case unknown, flac, opus, vorbis }
    var codec: Codec = .unknown
    /// Header packets still to come before the audio (FLAC: from its mapping header; Opus: 1).
    var headersLeft = 0
    var packetsSeen = 0
    /// A packet continued from earlier pages.
    var partial: [UInt8] = []
    var partialValid = false
    var preSkip = 0
    /// Vorbis header packets so far (identification, comment, setup).
    var vorbisHeaders: [[UInt8]] = []
    /// Vorbis block sizes (short, long), each mode's block flag, the previous packet's block.
    var vorbisBlocks = (0, 0)
    var vorbisModes: [Bool] = []
    var vorbisPrevious: Int?
    var ended = false
    /// File offset after the page being split (where the audio starts when headers end on it).
    var pageEnd: Int64 = 0
}

/// The number of 48 kHz frames in an Opus packet, from its TOC byte (RFC 6716 §3.1).
func opusPacketFrames(_ p: UnsafeRawBufferPointer) -> Int? {
    guard p.count >= 1 else { return nil }
    let toc = p[0]
    let config = Int(toc >> 3)
    let size: Int
    switch config {
    case 0...11: size = [480, 960, 1920, 2880][config & 3]
    case 12...15: size = [480, 960][config & 1]
    default: size = [120, 240, 480, 960][config & 3]
    }
    let count: Int
    switch toc & 3 {
    case 0: count = 1
    case 1, 2: count = 2
    default:
        guard p.count >= 2 else { return nil }
        count = Int(p[1] & 0x3F)
    }
    let total = count * size
    return total > 0 && total <= 5760 ? total : nil
}

/// The granule position of the last Ogg page in `tail` (the end of a file) whose serial is
/// `serial` (any when nil), with a valid CRC; nil when there is none. A reader that can see
/// the end of a file gets the stream's length from it (Opus: minus the pre-skip).
/// Thread safety: pure; any thread.
public func oggLastGranule(_ tail: [UInt8], serial: UInt32? = nil) -> Int64? {
    var found: Int64?
    tail.withUnsafeBytes { v in
        var i = 0
        while i + 27 <= v.count {
            if v[i] == 0x4F, v[i + 1] == 0x67, v[i + 2] == 0x67, v[i + 3] == 0x53, v[i + 4] == 0 {
                let n = Int(v[i + 26])
                if i + 27 + n <= v.count {
                    var body = 0
                    for k in 0..<n { body += Int(v[i + 27 + k]) }
                    let end = i + 27 + n + body
                    if end <= v.count, oggPageCRCMatches(v.slice(i, end)) {
                        let s = v.le32(i + 14)
                        let g = Int64(bitPattern: UInt64(v.le32(i + 6)) | UInt64(v.le32(i + 10)) << 32)
                        if serial == nil || s == serial, g >= 0 { found = g }
                        i = end
                        continue
                    }
                }
            }
            i += 1
        }
    }
    return found
}

func oggPageCRCMatches(_ page: UnsafeRawBufferPointer) -> Bool {
    var crc: UInt32 = 0
    for k in 0..<page.count {
        let b: UInt8 = (22..<26).contains(k) ? 0 : page[k]
        crc = crc << 8 ^ oggCRCTable[Int(UInt8(crc >> 24) ^ b)]
    }
    return crc == page.le32(22)
}

extension AudioFileStream {
    func stepOggPage(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if ogg.ended { phase = .trailing; return .consumed(0) }
        if v.count < 27 { return .need(27) }
        guard v.fcc(0) == "OggS" else {
            // Lost sync (damage, or after a seek): look for the next page.
            if !ready { throw invalid("Ogg data that is not a page before the audio") }
            var i = 1
            while i + 4 <= v.count, !(v[i] == 0x4F && v[i + 1] == 0x67 && v[i + 2] == 0x67 && v[i + 3] == 0x53) { i += 1 }
            ogg.partial = []
            ogg.partialValid = false
            return .consumed(min(i, v.count - 3))
        }
        guard v[4] == 0 else { throw unsupported("Ogg version \(v[4])") }
        let segments = Int(v[26])
        if v.count < 27 + segments { return .need(27 + segments) }
        var body = 0
        for k in 0..<segments { body += Int(v[27 + k]) }
        let size = 27 + segments + body
        if v.count < size { return .need(size) }
        let page = v.slice(0, size)
        guard oggPageCRCMatches(page) else {
            if !ready { throw invalid("Ogg page with a bad CRC before the audio") }
            ogg.partial = []
            ogg.partialValid = false
            return .consumed(4)  // damaged: resynchronise on the next "OggS"
        }
        let flags = v[5]
        let serial = v.le32(14)
        if ogg.serial == nil {
            guard flags & 2 != 0 else { throw invalid("Ogg stream that does not begin with a first page") }
            ogg.serial = serial
        } else if serial != ogg.serial {
            // Another logical stream: a new chain link ends ours; multiplexed pages are skipped.
            if flags & 2 != 0, ready { ogg.ended = true }
            return .consumed(size)
        }
        if flags & 1 == 0 { ogg.partial = []; ogg.partialValid = true } else if !ogg.partialValid {
            // A continuation of a packet whose start was lost: drop its rest.
            ogg.partial = []
        }
        ogg.pageEnd = position + Int64(size)
        try oggPackets(page, segments: segments, continued: flags & 1 != 0)
        if flags & 4 != 0 { ogg.ended = true }
        return .consumed(size)
    }

    /// Splits a page's body into packets and hands them on.
    private func oggPackets(_ page: UnsafeRawBufferPointer, segments: Int, continued: Bool) throws(AudioFileStreamError) {
        let base = 27 + segments
        var start = base
        var at = base
        var run: (from: Int, count: Int) = (base, 0)
        var firstPacket = true
        for k in 0..<segments {
            let lace = Int(page[27 + k])
            at += lace
            guard lace < 255 else { continue }
            // A packet ends here: [start, at), with any earlier part in ogg.partial.
            let joined = firstPacket && continued && ogg.partialValid && !ogg.partial.isEmpty
            let droppedRest = firstPacket && continued && !ogg.partialValid
            firstPacket = false
            if droppedRest { start = at; ogg.partialValid = true; continue }
            if joined {
                try flushRun(page, &run)
                let whole = ogg.partial + Array(page.slice(start, at))
                ogg.partial = []
                let result: Result<Void, AudioFileStreamError> = whole.withUnsafeBytes { w in
                    do throws(AudioFileStreamError) {
                        var single: (from: Int, count: Int) = (0, 0)
                        try oggPacket(w, 0, w.count, &single)
                        try flushRun(w, &single)
                        return .success(())
                    } catch {
                        return .failure(error)
                    }
                }
                try result.get()
                run = (at, 0)
            } else {
                try oggPacket(page, start, at, &run)
            }
            start = at
        }
        try flushRun(page, &run)
        if start < at || (segments > 0 && page[27 + segments - 1] == 255) {
            // The last packet continues on the next page.
            if firstPacket && continued && !ogg.partialValid { return }
            guard ogg.partial.count + (at - start) <= Self.maximumBufferedBytes - 64 else {
                throw invalid("Ogg packet larger than \(Self.maximumBufferedBytes - 64) bytes")
            }
            ogg.partial += Array(page.slice(start, at))
            ogg.partialValid = true
        }
    }

    /// One whole packet `v[from..<to]`: a header, or audio added to the run of descriptions.
    private func oggPacket(
        _ v: UnsafeRawBufferPointer, _ from: Int, _ to: Int, _ run: inout (from: Int, count: Int)
    ) throws(AudioFileStreamError) {
        let p = v.slice(from, to)
        ogg.packetsSeen += 1
        if !ready {
            try oggHeader(p)
            run = (to, 0)
            return
        }
        guard p.count > 0 else { run = run.count == 0 ? (to, 0) : run; return }
        var frames: UInt32 = 0
        switch ogg.codec {
        case .opus: frames = UInt32(opusPacketFrames(p) ?? 0)
        case .flac:
            if case .valid(let h) = flacFrameHeader(p, 0) { frames = UInt32(h.blockSize) }
        case .vorbis: frames = vorbisPacketFrames(p)
        case .unknown: break
        }
        if run.count == Self.maxDescriptionsPerCallback { try flushRun(v, &run) }
        if run.count == 0 { run.from = from }
        descriptions[run.count] = AudioStreamPacketDescription(
            startOffset: Int64(from - run.from), variableFramesInPacket: frames, dataByteSize: UInt32(p.count))
        run.count += 1
    }

    private func flushRun(_ v: UnsafeRawBufferPointer, _ run: inout (from: Int, count: Int)) throws(AudioFileStreamError) {
        guard run.count > 0 else { return }
        let last = descriptions[run.count - 1]
        let end = run.from + Int(last.startOffset) + Int(last.dataByteSize)
        deliver(v.slice(run.from, end), packets: run.count, descriptionCount: run.count)
        run = (end, 0)
    }

    /// Header packets: the first names the codec; the rest are counted until the audio.
    private func oggHeader(_ p: UnsafeRawBufferPointer) throws(AudioFileStreamError) {
        if ogg.codec == .unknown {
            if p.count >= 51, p[0] == 0x7F, p.fcc(1) == "FLAC", p.fcc(9) == "fLaC" {
                guard p[5] == 1 else { throw unsupported("Ogg FLAC mapping version \(p[5])") }
                guard p[13] & 0x7F == 0, p.be24(14) == 34 else { throw invalid("Ogg FLAC without STREAMINFO") }
                try parseStreamInfo(p.slice(17, 51))
                ogg.codec = .flac
                fileFormat = AudioFileTypeID.ogg
                ogg.headersLeft = Int(p.be16(7))
                if ogg.headersLeft == 0 { ogg.headersLeft = -1 }  // unknown: until the last metadata block
                if p[13] & 0x80 != 0 { try oggReady() }  // STREAMINFO was the last block
                return
            } else if p.count >= 19, p.fcc(0) == "Opus", p.fcc(4) == "Head" {
                guard p[8] >> 4 == 0 else { throw unsupported("OpusHead version \(p[8])") }
                let channels = Int(p[9])
                guard channels > 0 else { throw invalid("Opus stream with 0 channels") }
                ogg.preSkip = Int(p.le16(10))
                ogg.codec = .opus
                ogg.headersLeft = 1
                format = AudioStreamBasicDescription(
                    sampleRate: 48000, formatID: AudioFormatID.opus, formatFlags: [], bytesPerPacket: 0,
                    framesPerPacket: 960, bytesPerFrame: 0, channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
                cookie = Array(p)
                packetTable = AudioFilePacketTableInfo(numberValidFrames: 0, primingFrames: Int32(ogg.preSkip), remainderFrames: 0)
                upperBound = 61440  // 48 frames of at most 1275 bytes, plus framing
            } else if p.count >= 30, p[0] == 1, p.fcc(1) == "vorb", p.be16(5) == 0x6973 {
                guard p.le32(7) == 0 else { throw unsupported("Vorbis version \(p.le32(7))") }
                let channels = Int(p[11])
                let rate = Int(p.le32(12))
                let small = 1 << Int(p[28] & 0x0F), large = 1 << Int(p[28] >> 4)
                guard channels > 0, rate > 0 else { throw invalid("Vorbis with \(channels) channels at \(rate) Hz") }
                guard small >= 64, small <= large, large <= 8192, p[29] & 1 == 1 else {
                    throw invalid("Vorbis block sizes \(small)/\(large)")
                }
                ogg.codec = .vorbis
                ogg.vorbisBlocks = (small, large)
                ogg.vorbisHeaders = [Array(p)]
                ogg.headersLeft = 2
                format = AudioStreamBasicDescription(
                    sampleRate: Double(rate), formatID: AudioFormatID.vorbis, formatFlags: [], bytesPerPacket: 0,
                    framesPerPacket: 0, bytesPerFrame: 0, channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
                upperBound = 1 << 16
            } else {
                let name = p.count >= 8 && p.fcc(0) == "Spee" ? "Speex" : p.count >= 7 && p.fcc(1) == "theo" ? "Theora" : "unknown"
                throw unsupported("Ogg stream of the \(name) codec (Ogg FLAC, Opus and Vorbis are read)")
            }
            fileFormat = AudioFileTypeID.ogg
            return
        }
        switch ogg.codec {
        case .flac:
            // Metadata blocks; the one flagged last (or the count the mapping gave) ends them.
            guard p.count >= 4, p[0] & 0x7F != 0, p[0] & 0x7F != 127 else { throw invalid("Ogg FLAC header packet that is not a metadata block") }
            if ogg.headersLeft > 0 { ogg.headersLeft -= 1 }
            if ogg.headersLeft == 0 || p[0] & 0x80 != 0 { try oggReady() }
        case .opus:
            guard p.count >= 8, p.fcc(0) == "Opus", p.fcc(4) == "Tags" else { throw invalid("Opus stream without OpusTags") }
            ogg.headersLeft = 0
            try oggReady()
        case .vorbis:
            let type: UInt8 = ogg.vorbisHeaders.count == 1 ? 3 : 5
            guard p.count >= 7, p[0] == type, p.fcc(1) == "vorb", p.be16(5) == 0x6973 else {
                throw invalid("Vorbis \(type == 3 ? "comment" : "setup") header missing")
            }
            ogg.vorbisHeaders.append(Array(p))
            if ogg.vorbisHeaders.count == 3 {
                ogg.vorbisModes = vorbisModeBlockFlags(p)
                // Xiph lacing: 2 (three packets), the first two sizes in 255-runs, the packets.
                var c: [UInt8] = [2]
                for h in ogg.vorbisHeaders.prefix(2) {
                    c += [UInt8](repeating: 255, count: h.count / 255) + [UInt8(h.count % 255)]
                }
                cookie = c + ogg.vorbisHeaders.joined()
                ogg.vorbisHeaders = []
                ogg.headersLeft = 0
                try oggReady()
            }
        case .unknown: break
        }
    }

    /// A Vorbis audio packet's frames: (previous block + this block) / 4; the first packet of a
    /// stream (or after a discontinuity) gives none. 0 when the modes are unknown.
    private func vorbisPacketFrames(_ p: UnsafeRawBufferPointer) -> UInt32 {
        let modes = ogg.vorbisModes
        guard !modes.isEmpty, p.count >= 1, p[0] & 1 == 0 else { ogg.vorbisPrevious = nil; return 0 }
        // Bits are packed from each byte's least significant bit: type (1), then the mode.
        let width = modes.count > 1 ? Int.bitWidth - (modes.count - 1).leadingZeroBitCount : 0
        var mode = 0
        for k in 0..<width {
            let bit = 1 + k
            guard bit / 8 < p.count else { ogg.vorbisPrevious = nil; return 0 }
            mode |= Int((p[bit / 8] >> UInt8(bit % 8)) & 1) << k
        }
        guard mode < modes.count else { ogg.vorbisPrevious = nil; return 0 }
        let block = modes[mode] ? ogg.vorbisBlocks.1 : ogg.vorbisBlocks.0
        defer { ogg.vorbisPrevious = block }
        guard let previous = ogg.vorbisPrevious else { return 0 }
        return UInt32((previous + block) / 4)
    }

    private func oggReady() throws(AudioFileStreamError) {
        if ogg.codec == .flac {
            // As native FLAC, but the frames come in Ogg packets.
            try flacAnnounceFormat()
        }
        audioDataOffset = ogg.pageEnd
        container = .ogg
        packetIndex = 0
        becomeReady()
    }
}

/// Each mode's block flag (true: long block) from a Vorbis setup header, read from its end:
/// the framing bit, before it the modes (41 bits each: block flag, window type 0, transform
/// type 0, mapping), before them the mode count − 1 in 6 bits. The largest count that fits is
/// taken. Empty when the end of the header is not like that.
func vorbisModeBlockFlags(_ p: UnsafeRawBufferPointer) -> [Bool] {
    // Bit i is bit i % 8 (from the least significant) of byte i / 8.
    func bit(_ i: Int) -> Int { Int((p[i >> 3] >> UInt8(i & 7)) & 1) }
    func bits(_ from: Int, _ n: Int) -> Int {
        var v = 0
        for k in 0..<n { v |= bit(from + k) << k }
        return v
    }
    var last = p.count - 1
    while last >= 0, p[last] == 0 { last -= 1 }
    guard last >= 0 else { return [] }
    let framing = last * 8 + (7 - p[last].leadingZeroBitCount)
    var best = 0
    var n = 1
    while n <= 64 {
        let start = framing - 41 * n
        guard start - 6 >= 0 else { break }
        guard bits(start + 1, 16) == 0, bits(start + 17, 16) == 0, bits(start + 33, 8) <= 63 else { break }
        if bits(start - 6, 6) == n - 1 { best = n }
        n += 1
    }
    guard best > 0 else { return [] }
    return (0..<best).map { i in bit(framing - 41 * (best - i)) == 1 }
}
