import AQTypes

// MPEG-4 / M4A (ISO base media): top-level boxes; the `moov` box (read whole, ≤ 16 MiB) gives
// the first sound track's sample table; samples are then delivered from `mdat` by their file
// offsets. A `moov` after `mdat` can't be streamed: 'optm' (files are read moov first, see
// AudioFileReadingOrder).

extension AudioFileTypeID {
    /// MPEG-4 file, `'mp4f'`.
    public static let mpeg4: FourCharCode = "mp4f"
    /// M4A (MPEG-4 audio, iTunes), `'m4af'`.
    public static let m4a: FourCharCode = "m4af"
}

/// The sound track's sample table.
struct MP4Track {
    var mediaTimescale: UInt32 = 0
    var movieTimescale: UInt32 = 0
    var handler: FourCharCode = FourCharCode(rawValue: 0)
    var entry: FourCharCode = FourCharCode(rawValue: 0)
    var entryChannels = 0
    var entryRate = 0
    var cookie: [UInt8]?
    var esdsObjectType: UInt8 = 0
    var editMediaTime: Int64?
    var editDuration: UInt64?
    /// iTunes' gapless data (`iTunSMPB`): priming, padding, valid frames.
    var smpb: (priming: Int64, padding: Int64, valid: Int64)?
    var durations: [UInt32] = []
    var sizes: [UInt32] = []
    var offsets: [Int64] = []
    var chunkOffsets: [Int64] = []
    var stsc: [(firstChunk: UInt32, samples: UInt32)] = []
    var constantSize: UInt32 = 0
    var sampleCount = 0
}

/// Most samples a track may have: 4 M, a day of 48 kHz AAC (bounds what a small hostile
/// `moov` can make the parser allocate: 16 bytes a sample).
let mp4MaximumSamples = 1 << 22

extension AudioFileStream {
    // MARK: top-level boxes

    func stepMP4Box(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if v.count < 8 { return .need(8) }
        var size = Int64(v.be32(0))
        let type = v.fcc(4)
        var header = 8
        if size == 1 {
            if v.count < 16 { return .need(16) }
            size = Int64(bitPattern: v.be64(8))
            header = 16
        }
        let toEnd = size == 0
        guard toEnd || size >= Int64(header) else { throw invalid("MP4 '\(type)' box of \(size) bytes") }
        switch type {
        case "ftyp" where fileFormat == nil:
            if v.count < 12 { return .need(12) }
            let brand = v.fcc(8)
            fileFormat = brand == "M4A " || brand == "M4B " || brand == "M4P " ? AudioFileTypeID.m4a : AudioFileTypeID.mpeg4
            skipRemaining = toEnd ? Int64.max / 2 : size - Int64(header)
            return .consumed(header)
        case "moov" where !ready:
            guard !toEnd, size <= 16 << 20 else { throw invalid("MP4 moov box of \(toEnd ? "unknown" : String(size)) bytes (at most 16 MiB)") }
            let n = Int(size)
            if v.count < n { return .need(n) }
            fileFormat = fileFormat ?? AudioFileTypeID.mpeg4
            try parseMoov(v.slice(header, n))
            return .consumed(n)
        case "mdat" where !ready:
            throw AudioFileStreamError.notOptimized.with(
                detail: "MP4 whose moov box comes after its audio (mdat): a stream can't be parsed; files are read moov first (aqsync does), or write them with ffmpeg -movflags +faststart")
        case "mdat":
            phase = .mp4Data
            return .consumed(header)
        default:
            if toEnd { phase = .trailing; return .consumed(header) }
            skipRemaining = size - Int64(header)
            return .consumed(header)
        }
    }

    // MARK: moov

    private func parseMoov(_ b: UnsafeRawBufferPointer) throws(AudioFileStreamError) {
        var movieTimescale: UInt32 = 0
        var smpb: (priming: Int64, padding: Int64, valid: Int64)?
        var fragmented = false
        var found: MP4Track?
        var foreignEntry: FourCharCode?
        try forEachBox(b) { (type, body) throws(AudioFileStreamError) in
            switch type {
            case "mvhd":
                guard body.count >= 24 else { throw invalid("MP4 mvhd box too small") }
                movieTimescale = body[0] == 1 ? (body.count >= 24 ? body.be32(20) : 0) : body.be32(12)
            case "udta":
                smpb = try iTunesGapless(body) ?? smpb
            case "mvex":
                fragmented = true
            case "trak" where found == nil:
                var t = MP4Track()
                try parseTrak(body, &t)
                if t.handler == "soun" {
                    if ["mp4a", "alac", "fLaC", "Opus"].contains(t.entry) { found = t } else { foreignEntry = foreignEntry ?? t.entry }
                }
            default: break
            }
        }
        guard var t = found else {
            if let e = foreignEntry {
                throw unsupported("MP4 audio '\(e)' is not read (AAC, Apple Lossless, FLAC and Opus in MP4 are)")
            }
            throw unsupported("MP4 without a sound track")
        }
        if fragmented && t.sampleCount == 0 {
            throw unsupported("fragmented MP4 (samples in moof/mdat fragments) is not read; remux it with ffmpeg -c copy")
        }
        t.movieTimescale = movieTimescale
        t.smpb = smpb
        try buildSampleTable(&t)
        try mp4Ready(t)
    }

    /// The `iTunSMPB` text in `udta`/`meta`/`ilst`/`----` (mean `com.apple.iTunes`): hex words
    /// 0, priming, padding, valid frames (64-bit). Nil when absent or unreadable.
    private func iTunesGapless(_ udta: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> (Int64, Int64, Int64)? {
        var result: (Int64, Int64, Int64)?
        try forEachBox(udta) { (type, meta) throws(AudioFileStreamError) in
            guard type == "meta", meta.count >= 4 else { return }
            // A full box (4 bytes of version and flags) in MP4; QuickTime's has none.
            let children = meta.count >= 8 && meta.fcc(4) == "hdlr" ? meta.slice(0, meta.count) : meta.slice(4, meta.count)
            try forEachBox(children) { (type, ilst) throws(AudioFileStreamError) in
                guard type == "ilst" else { return }
                try forEachBox(ilst) { (type, item) throws(AudioFileStreamError) in
                    guard type == "----" else { return }
                    var name = false
                    var text: [UInt8]?
                    try forEachBox(item) { (type, c) throws(AudioFileStreamError) in
                        if type == "name", c.count >= 4 { name = Array(c.slice(4, c.count)) == Array("iTunSMPB".utf8) }
                        if type == "data", c.count >= 8 { text = Array(c.slice(8, c.count)) }
                    }
                    guard name, let text else { return }
                    let words = text.split(separator: 0x20).map { String(decoding: $0, as: UTF8.self) }
                    guard words.count >= 4, let p = Int64(words[1], radix: 16), let r = Int64(words[2], radix: 16),
                          let v = Int64(words[3], radix: 16), p >= 0, r >= 0, v >= 0, p < Int64(Int32.max), r < Int64(Int32.max)
                    else { return }
                    result = (p, r, v)
                }
            }
        }
        return result
    }

    /// Calls `body` with each child box (type, payload) of `b`; sizes are checked.
    private func forEachBox(
        _ b: UnsafeRawBufferPointer, _ body: (FourCharCode, UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Void
    ) throws(AudioFileStreamError) {
        var o = 0
        while o + 8 <= b.count {
            var size = Int(b.be32(o))
            var header = 8
            if size == 1 {
                guard o + 16 <= b.count else { throw invalid("MP4 box header cut short") }
                let big = b.be64(o + 8)
                guard big <= UInt64(b.count - o) else { throw invalid("MP4 box larger than its parent") }
                size = Int(big)
                header = 16
            } else if size == 0 {
                size = b.count - o
            }
            guard size >= header, size <= b.count - o else { throw invalid("MP4 '\(b.fcc(o + 4))' box of \(size) bytes in \(b.count - o)") }
            try body(b.fcc(o + 4), b.slice(o + header, o + size))
            o += size
        }
    }

    private func parseTrak(_ b: UnsafeRawBufferPointer, _ t: inout MP4Track) throws(AudioFileStreamError) {
        try forEachBox(b) { (type, body) throws(AudioFileStreamError) in
            switch type {
            case "edts":
                try forEachBox(body) { (type, elst) throws(AudioFileStreamError) in
                    guard type == "elst", elst.count >= 8 else { return }
                    let v1 = elst[0] == 1
                    let count = Int(elst.be32(4))
                    let entrySize = v1 ? 20 : 12
                    guard count <= (elst.count - 8) / entrySize else { throw invalid("MP4 elst claims \(count) entries") }
                    for e in 0..<count {
                        let o = 8 + e * entrySize
                        let duration = v1 ? elst.be64(o) : UInt64(elst.be32(o))
                        let media = v1 ? Int64(bitPattern: elst.be64(o + 8)) : Int64(Int32(bitPattern: elst.be32(o + 4)))
                        if media == -1 { continue }  // an empty edit (a delay); not audio to trim
                        if t.editMediaTime == nil { t.editMediaTime = media; t.editDuration = duration }
                    }
                }
            case "mdia":
                try forEachBox(body) { (type, m) throws(AudioFileStreamError) in
                    switch type {
                    case "mdhd":
                        guard m.count >= 24 else { throw invalid("MP4 mdhd box too small") }
                        t.mediaTimescale = m[0] == 1 ? (m.count >= 24 ? m.be32(20) : 0) : m.be32(12)
                    case "hdlr":
                        guard m.count >= 12 else { throw invalid("MP4 hdlr box too small") }
                        t.handler = m.fcc(8)
                    case "minf":
                        try forEachBox(m) { (type, minf) throws(AudioFileStreamError) in
                            guard type == "stbl" else { return }
                            try parseStbl(minf, &t)
                        }
                    default: break
                    }
                }
            default: break
            }
        }
    }

    private func parseStbl(_ b: UnsafeRawBufferPointer, _ t: inout MP4Track) throws(AudioFileStreamError) {
        try forEachBox(b) { (type, s) throws(AudioFileStreamError) in
            switch type {
            case "stsd":
                guard s.count >= 16 else { throw invalid("MP4 stsd box too small") }
                let size = Int(s.be32(8))
                guard size >= 36, size <= s.count - 8 else { throw invalid("MP4 sample entry of \(size) bytes") }
                let e = s.slice(8, 8 + size)
                t.entry = e.fcc(4)
                // SampleEntry (8 header + 8), AudioSampleEntry: version, revision, vendor,
                // channels, sample size, compression, packet size, rate 16.16.
                let version = e.be16(16)
                t.entryChannels = Int(e.be16(24))
                t.entryRate = Int(e.be32(32) >> 16)
                let children = version == 1 ? 52 : version == 2 ? 72 : 36
                guard children <= e.count else { throw invalid("MP4 sample entry cut short") }
                try findCodecConfig(e.slice(children, e.count), &t, depth: 0)
            case "stts":
                guard s.count >= 8 else { throw invalid("MP4 stts box too small") }
                let count = Int(s.be32(4))
                guard count <= (s.count - 8) / 8 else { throw invalid("MP4 stts claims \(count) entries") }
                t.durations = []
                for e in 0..<count {
                    let n = Int(s.be32(8 + 8 * e)), d = s.be32(12 + 8 * e)
                    guard t.durations.count + n <= mp4MaximumSamples else { throw invalid("MP4 track of more than \(mp4MaximumSamples) samples") }
                    t.durations += repeatElement(d, count: n)
                }
            case "stsc":
                guard s.count >= 8 else { throw invalid("MP4 stsc box too small") }
                let count = Int(s.be32(4))
                guard count <= (s.count - 8) / 12 else { throw invalid("MP4 stsc claims \(count) entries") }
                t.stsc = (0..<count).map { e in (s.be32(8 + 12 * e), s.be32(12 + 12 * e)) }
            case "stsz":
                guard s.count >= 12 else { throw invalid("MP4 stsz box too small") }
                t.constantSize = s.be32(4)
                t.sampleCount = Int(s.be32(8))
                guard t.sampleCount <= mp4MaximumSamples else { throw invalid("MP4 track of \(t.sampleCount) samples") }
                if t.constantSize == 0 {
                    guard t.sampleCount <= (s.count - 12) / 4 else { throw invalid("MP4 stsz claims \(t.sampleCount) sizes") }
                    t.sizes = (0..<t.sampleCount).map { s.be32(12 + 4 * $0) }
                } else {
                    t.sizes = Array(repeating: t.constantSize, count: t.sampleCount)
                }
            case "stco", "co64":
                guard s.count >= 8 else { throw invalid("MP4 \(type) box too small") }
                let count = Int(s.be32(4))
                let width = type == "co64" ? 8 : 4
                guard count <= (s.count - 8) / width else { throw invalid("MP4 \(type) claims \(count) chunks") }
                t.chunkOffsets = (0..<count).map { c in
                    width == 8 ? Int64(bitPattern: s.be64(8 + 8 * c)) : Int64(s.be32(8 + 4 * c))
                }
            default: break
            }
        }
    }

    /// The codec configuration box inside a sample entry (`esds`, `alac`), also inside a
    /// QuickTime `wave` box.
    private func findCodecConfig(_ b: UnsafeRawBufferPointer, _ t: inout MP4Track, depth: Int) throws(AudioFileStreamError) {
        guard depth < 3 else { return }
        try forEachBox(b) { (type, c) throws(AudioFileStreamError) in
            switch type {
            case "esds":
                guard t.cookie == nil else { return }
                t.cookie = Array(c)
                t.esdsObjectType = esdsObjectType(c)
            case "alac" where c.count >= 28:
                guard t.cookie == nil else { return }
                // The cookie is the whole 'alac' atom, as Core Audio gives it.
                t.cookie = [0, 0, 0, UInt8(c.count + 8), 0x61, 0x6C, 0x61, 0x63] + Array(c.slice(0, 28))
            case "dfLa" where c.count >= 42:
                guard t.cookie == nil else { return }
                t.cookie = Array(c)  // version/flags, then metadata blocks (STREAMINFO first)
            case "dOps" where c.count >= 11:
                guard t.cookie == nil else { return }
                // dOps is OpusHead's fields big-endian after a version byte: rebuild OpusHead.
                guard c[0] == 0 else { throw unsupported("MP4 dOps version \(c[0])") }
                let preSkip = c.be16(2), rate = c.be32(4), gain = c.be16(8)
                var head: [UInt8] = Array("OpusHead".utf8) + [1, c[1]]
                head += [UInt8(preSkip & 0xFF), UInt8(preSkip >> 8)]
                head += [UInt8(rate & 0xFF), UInt8((rate >> 8) & 0xFF), UInt8((rate >> 16) & 0xFF), UInt8(rate >> 24)]
                head += [UInt8(gain & 0xFF), UInt8(gain >> 8), c[10]]
                if c[10] != 0 { head += Array(c.slice(11, c.count)) }  // stream counts and mapping
                t.cookie = head
            case "wave":
                try findCodecConfig(c, &t, depth: depth + 1)
            default: break
            }
        }
    }

    /// The DecoderConfigDescriptor's objectTypeIndication in an `esds` body (0 if absent).
    private func esdsObjectType(_ c: UnsafeRawBufferPointer) -> UInt8 {
        var i = 4
        func length() -> Int? {
            var n = 0
            for _ in 0..<4 {
                guard i < c.count else { return nil }
                let b = c[i]
                i += 1
                n = n << 7 | Int(b & 0x7F)
                if b & 0x80 == 0 { break }
            }
            return n
        }
        guard i < c.count, c[i] == 0x03 else { return 0 }
        i += 1
        guard length() != nil, i + 3 <= c.count else { return 0 }
        let flags = c[i + 2]
        i += 3
        if flags & 0x80 != 0 { i += 2 }
        if flags & 0x40 != 0 { guard i < c.count else { return 0 }; i += 1 + Int(c[i]) }
        if flags & 0x20 != 0 { i += 2 }
        guard i < c.count, c[i] == 0x04 else { return 0 }
        i += 1
        guard length() != nil, i < c.count else { return 0 }
        return c[i]
    }

    private func buildSampleTable(_ t: inout MP4Track) throws(AudioFileStreamError) {
        guard t.sampleCount > 0 else { throw invalid("MP4 sound track without samples") }
        guard !t.stsc.isEmpty, !t.chunkOffsets.isEmpty else { throw invalid("MP4 sound track without chunks") }
        t.offsets = []
        t.offsets.reserveCapacity(t.sampleCount)
        var sample = 0
        for (k, run) in t.stsc.enumerated() {
            let first = Int(run.firstChunk)
            let next = k + 1 < t.stsc.count ? Int(t.stsc[k + 1].firstChunk) : t.chunkOffsets.count + 1
            guard first >= 1, next > first, next <= t.chunkOffsets.count + 1 else { throw invalid("MP4 stsc chunk numbers out of order") }
            guard run.samples > 0, Int(run.samples) <= mp4MaximumSamples else { throw invalid("MP4 stsc chunk of \(run.samples) samples") }
            for chunk in first..<next {
                var o = t.chunkOffsets[chunk - 1]
                for _ in 0..<Int(run.samples) {
                    guard sample < t.sampleCount else { throw invalid("MP4 chunks hold more samples than stsz lists") }
                    guard o >= 0, o < Int64.max / 4 else { throw invalid("MP4 sample offset out of range") }
                    if let last = t.offsets.last, o < last + Int64(t.sizes[sample - 1]) {
                        throw unsupported("MP4 samples not in file order (overlapping or going back)")
                    }
                    t.offsets.append(o)
                    o += Int64(t.sizes[sample])
                    sample += 1
                }
            }
        }
        guard sample == t.sampleCount else { throw invalid("MP4 chunks hold \(sample) of \(t.sampleCount) samples") }
        for s in t.sizes where s == 0 || s > UInt32(Self.maximumBufferedBytes - 64) {
            throw invalid("MP4 sample of \(s) bytes")
        }
    }

    private func mp4Ready(_ t: MP4Track) throws(AudioFileStreamError) {
        var rate = Double(t.entryRate > 0 ? t.entryRate : Int(t.mediaTimescale))
        var channels = UInt32(t.entryChannels)
        switch t.entry {
        case "fLaC":
            guard let c = t.cookie, c.count >= 42, c[4] & 0x7F == 0, c[5] == 0, c[6] == 0, c[7] == 34 else {
                throw invalid("MP4 FLAC without a dfLa box starting with STREAMINFO")
            }
            let parsed: Result<Void, AudioFileStreamError> = c.withUnsafeBytes { b in
                do throws(AudioFileStreamError) { try parseStreamInfo(b.slice(8, 42)); return .success(()) } catch {
                    return .failure(error)
                }
            }
            try parsed.get()
            try flacAnnounceFormat()
            rate = format!.sampleRate
            channels = format!.channelsPerFrame
        case "Opus":
            guard let c = t.cookie, c.count >= 19 else { throw invalid("MP4 Opus without its dOps box") }
            channels = UInt32(c[9])
            rate = 48000
            format = AudioStreamBasicDescription(
                sampleRate: 48000, formatID: AudioFormatID.opus, formatFlags: [], bytesPerPacket: 0,
                framesPerPacket: 960, bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 0)
            cookie = c
        case "alac":
            guard let c = t.cookie, c.count >= 36 else { throw invalid("MP4 ALAC without its alac box") }
            let frameLength = UInt32(c[12]) << 24 | UInt32(c[13]) << 16 | UInt32(c[14]) << 8 | UInt32(c[15])
            let bitDepth = c[17]
            channels = UInt32(c[21])
            rate = Double(UInt32(c[32]) << 24 | UInt32(c[33]) << 16 | UInt32(c[34]) << 8 | UInt32(c[35]))
            guard frameLength > 0, frameLength <= 1 << 16 else { throw invalid("MP4 ALAC frame length \(frameLength)") }
            let flag: UInt32 = switch bitDepth {
            case 16: 1
            case 20: 2
            case 24: 3
            case 32: 4
            default: 0
            }
            format = AudioStreamBasicDescription(
                sampleRate: rate, formatID: AudioFormatID.appleLossless, formatFlags: AudioFormatFlags(rawValue: flag),
                bytesPerPacket: 0, framesPerPacket: frameLength, bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 0)
            cookie = c
        default:
            guard let c = t.cookie else { throw invalid("MP4 AAC without its esds box") }
            switch t.esdsObjectType {
            case 0x40, 0x66, 0x67, 0x68:
                var objectType: UInt32 = 2
                if let asc = audioSpecificConfig(c), asc.count >= 2 {
                    objectType = UInt32(asc[0] >> 3)
                    let rateIndex = Int((asc[0] & 7) << 1 | asc[1] >> 7)
                    let config = UInt32((asc[1] >> 3) & 0xF)
                    if rateIndex < ADTSHeader.rates.count { rate = Double(ADTSHeader.rates[rateIndex]) }
                    if config > 0 && config < 7 { channels = config } else if config == 7 { channels = 8 }
                    if let a = AACStreamConfig(audioSpecificConfig: asc) {
                        // HE-AAC (explicit SBR, object type 5 or 29): the data format is the
                        // LC core, as Apple's parser gives it; the format list has the rest.
                        aacConfig = a
                        objectType = UInt32(a.coreObjectType)
                        if a.coreSampleRateIndex < 13 { rate = Double(a.coreSampleRate) }
                    }
                }
                format = AudioStreamBasicDescription(
                    sampleRate: rate, formatID: AudioFormatID.mpeg4AAC, formatFlags: AudioFormatFlags(rawValue: objectType),
                    bytesPerPacket: 0, framesPerPacket: 1024, bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 0)
                cookie = c
            case 0x69, 0x6B:
                // Its channel count is only in the MP3 frames, which come after the header.
                throw unsupported("MP4 with MP3 audio (object type 0x\(String(t.esdsObjectType, radix: 16))) is not read (AAC and Apple Lossless are)")
            default:
                throw unsupported("MP4 'mp4a' with object type 0x\(String(t.esdsObjectType, radix: 16)) (only AAC is read)")
            }
        }
        guard rate > 0, rate <= maxSampleRate else { throw invalid("MP4 sample rate \(rate)") }
        guard channels > 0 else { throw invalid("MP4 sound track with 0 channels") }
        mp4 = t
        tableSizes = t.sizes
        tableMax = t.sizes.max() ?? 0
        tableTotalBytes = t.sizes.reduce(0) { $0 + UInt64($1) }
        packetCount = UInt64(t.sampleCount)
        byteCount = tableTotalBytes
        // Gapless: iTunSMPB when present; else the edit list's media time is the priming and the
        // samples' durations (the last one shortened by the muxer) give the real length, in the
        // media's timescale.
        let scale = t.mediaTimescale > 0 ? rate / Double(t.mediaTimescale) : 1
        mp4DurationScale = format?.formatID == AudioFormatID.mpeg4AAC ? scale : 1
        let total = t.durations.count == t.sampleCount ? t.durations.reduce(Int64(0)) { $0 + Int64($1) } : 0
        let fpp = Int64(format!.framesPerPacket)
        let priming = Int64((Double(max(0, t.editMediaTime ?? 0)) * scale).rounded())
        if let g = t.smpb, g.valid > 0 {
            // iTunes' own numbers, in frames at the stream's rate, win over the edit list.
            packetTable = AudioFilePacketTableInfo(
                numberValidFrames: g.valid, primingFrames: Int32(g.priming), remainderFrames: Int32(g.padding))
        } else if total > 0 || priming > 0 {
            let playable = total > 0 ? Int64((Double(total) * scale).rounded()) : Int64(t.sampleCount) * fpp
            let valid = max(0, playable - priming)
            let remainder = max(0, Int64(t.sampleCount) * fpp - priming - valid)
            if priming <= Int64(Int32.max), remainder <= Int64(Int32.max) {
                packetTable = AudioFilePacketTableInfo(
                    numberValidFrames: valid, primingFrames: Int32(priming), remainderFrames: Int32(remainder))
            }
        }
        upperBound = tableMax
        audioDataOffset = t.offsets[0]
        packetIndex = 0
        container = .mp4
        becomeReady()
    }

    /// The AudioSpecificConfig inside an `esds` body (version and flags, then the ES_Descriptor):
    /// the DecoderSpecificInfo (tag 5) reached through the descriptors' structure, the
    /// ES_Descriptor (tag 3) and its DecoderConfigDescriptor (tag 4). (Until issue 23 the first
    /// byte 5 anywhere was taken for the tag: a bit rate with a byte 5 in it, as ffmpeg's 128 kb/s
    /// files have, gave a wrong object type and rate.)
    func audioSpecificConfig(_ c: [UInt8]) -> [UInt8]? {
        // A descriptor at i: its tag, where its body starts, its length (up to four 7-bit groups).
        func descriptor(at i: Int, before end: Int) -> (tag: UInt8, body: Int, length: Int)? {
            guard i < end else { return nil }
            var j = i + 1, n = 0
            for _ in 0..<4 {
                guard j < end else { return nil }
                let b = c[j]
                j += 1
                n = n << 7 | Int(b & 0x7F)
                if b & 0x80 == 0 { break }
            }
            return j + n <= end ? (c[i], j, n) : nil
        }
        let start = c.count > 4 && c[0] == 0 ? 4 : 0  // after the box's version and flags
        guard let es = descriptor(at: start, before: c.count), es.tag == 0x03, es.length >= 3 else { return nil }
        let flags = c[es.body + 2]
        var i = es.body + 3
        if flags & 0x80 != 0 { i += 2 }  // dependsOn_ES_ID
        if flags & 0x40 != 0 { guard i < c.count else { return nil }; i += 1 + Int(c[i]) }  // URL
        if flags & 0x20 != 0 { i += 2 }  // OCR_ES_Id
        let esEnd = es.body + es.length
        while let d = descriptor(at: i, before: esEnd) {
            if d.tag == 0x04 {
                // DecoderConfigDescriptor: 13 fixed bytes, then its DecoderSpecificInfo.
                var k = d.body + 13
                let dcEnd = d.body + d.length
                while let s = descriptor(at: k, before: dcEnd) {
                    if s.tag == 0x05 { return s.length >= 2 ? Array(c[s.body..<(s.body + s.length)]) : nil }
                    k = s.body + s.length
                }
                return nil
            }
            i = d.body + d.length
        }
        return nil
    }

    // MARK: samples

    func stepMP4Data(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        let i = Int(packetIndex)
        guard i < mp4.offsets.count else { phase = .trailing; return .consumed(0) }
        let target = mp4.offsets[i]
        if position < target {
            skipRemaining = target - position
            return .consumed(0)
        }
        guard position == target else { throw invalid("MP4 sample \(i) starts inside the previous one") }
        var p = 0
        var dc = 0
        while dc < Self.maxDescriptionsPerCallback, i + dc < mp4.offsets.count {
            let k = i + dc
            guard mp4.offsets[k] == target + Int64(p) else { break }
            let size = Int(mp4.sizes[k])
            guard v.count - p >= size else { break }
            descriptions[dc] = AudioStreamPacketDescription(
                startOffset: Int64(p), variableFramesInPacket: k < mp4.durations.count
                    ? (mp4DurationScale == 1 ? mp4.durations[k] : UInt32((Double(mp4.durations[k]) * mp4DurationScale).rounded()))
                    : 0,
                dataByteSize: UInt32(size))
            p += size
            dc += 1
        }
        if dc > 0 {
            deliver(v.slice(0, p), packets: dc, descriptionCount: dc)
            return .consumed(p)
        }
        return .need(Int(mp4.sizes[i]))
    }
}
