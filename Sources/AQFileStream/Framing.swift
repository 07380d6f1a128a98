import AQTypes

// MP3 and ADTS: self-synchronising frames. A sync is trusted only when the next frame's header
// confirms it; once locked, frames follow each other until a header doesn't fit.

/// The header of a self-synchronising frame (MPEG audio, ADTS): what the one sync search and
/// the one locked-stream step below need to know of a format.
protocol SyncFrameHeader {
    /// Bytes a header takes to read.
    static var size: Int { get }
    /// The header at byte `i` of `v`, or nil when the bytes there are not one.
    init?(_ v: UnsafeRawBufferPointer, _ i: Int)
    /// Bytes of the whole frame, header included.
    var frameLength: Int { get }
    /// Bytes of the frame before its packet (ADTS's header; an MPEG packet is the whole frame).
    var packetOffset: Int { get }
    /// Same stream: the frame after a candidate sync must be compatible with it.
    func compatible(_ o: Self) -> Bool
    /// Every frame of a locked stream fits the stream's first frame this way.
    func follows(_ reference: Self) -> Bool
}

/// An MPEG audio (Layer I, II or III) frame header.
struct MPEGHeader: SyncFrameHeader {
    static let size = 4
    var packetOffset: Int { 0 }
    /// 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5 (the header's version bits).
    var version: UInt8
    /// 1, 2 or 3 (Layer I, II, III).
    var layer: UInt8
    var sampleRateIndex: UInt8
    var sampleRate: Int
    var bitRate: Int
    var channels: Int
    var frameLength: Int
    var samplesPerFrame: Int
    /// Bytes of side information after the 4-byte header (where a Xing tag starts).
    var sideInfoSize: Int
    /// Bits that stay the same in every frame of a file: protection, copyright, original, emphasis.
    var fixedBits: UInt8

    static let rates1 = [44100, 48000, 32000]
    static let bitRates1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    static let bitRates2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
    static let bitRatesL1V1 = [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
    static let bitRatesL2V1 = [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
    static let bitRatesL1V2 = [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]

    init?(_ v: UnsafeRawBufferPointer, _ i: Int) {
        guard i + 4 <= v.count, v[i] == 0xFF else { return nil }
        let b1 = v[i + 1], b2 = v[i + 2], b3 = v[i + 3]
        guard b1 & 0xE0 == 0xE0 else { return nil }
        version = (b1 >> 3) & 3
        let layerBits = (b1 >> 1) & 3
        guard version != 1, layerBits != 0 else { return nil }
        layer = 4 - layerBits
        let bi = Int(b2 >> 4)
        sampleRateIndex = (b2 >> 2) & 3
        guard bi != 0, bi != 15, sampleRateIndex != 3, b3 & 3 != 2 else { return nil }
        fixedBits = (b1 & 1) << 4 | (b3 & 0x0F)
        let padding = Int((b2 >> 1) & 1)
        let mono = b3 >> 6 == 3
        channels = mono ? 1 : 2
        let base = Self.rates1[Int(sampleRateIndex)]
        if layer != 3 {
            // Layers I and II: no side information (and no Xing tag); Layer II keeps 1152
            // frames a packet in MPEG-2 too.
            sampleRate = version == 3 ? base : version == 2 ? base / 2 : base / 4
            sideInfoSize = 0
            if layer == 1 {
                bitRate = (version == 3 ? Self.bitRatesL1V1 : Self.bitRatesL1V2)[bi] * 1000
                frameLength = (12 * bitRate / sampleRate + padding) * 4
                samplesPerFrame = 384
            } else {
                bitRate = (version == 3 ? Self.bitRatesL2V1 : Self.bitRates2)[bi] * 1000
                frameLength = 144 * bitRate / sampleRate + padding
                samplesPerFrame = 1152
            }
        } else if version == 3 {
            sampleRate = base
            bitRate = Self.bitRates1[bi] * 1000
            frameLength = 144 * bitRate / sampleRate + padding
            samplesPerFrame = 1152
            sideInfoSize = mono ? 17 : 32
        } else {
            sampleRate = version == 2 ? base / 2 : base / 4
            bitRate = Self.bitRates2[bi] * 1000
            frameLength = 72 * bitRate / sampleRate + padding
            samplesPerFrame = 576
            sideInfoSize = mono ? 9 : 17
        }
    }

    /// Same stream: version, rate and channel count (a Xing frame may differ in other bits).
    func compatible(_ o: MPEGHeader) -> Bool {
        version == o.version && layer == o.layer && sampleRateIndex == o.sampleRateIndex && channels == o.channels
    }

    /// Same stream and the same constant bits, as every audio frame of a file has.
    func follows(_ o: MPEGHeader) -> Bool { compatible(o) && fixedBits == o.fixedBits }
}

/// An ADTS (AAC) frame header.
struct ADTSHeader: SyncFrameHeader {
    static let size = 7
    var packetOffset: Int { headerLength }
    var objectType: UInt8
    var sampleRateIndex: UInt8
    var channelConfig: UInt8
    var frameLength: Int
    var headerLength: Int

    static let rates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    init?(_ v: UnsafeRawBufferPointer, _ i: Int) {
        guard i + 7 <= v.count, v[i] == 0xFF, v[i + 1] & 0xF6 == 0xF0 else { return nil }
        let b2 = v[i + 2], b3 = v[i + 3]
        objectType = (b2 >> 6) + 1
        sampleRateIndex = (b2 >> 2) & 0xF
        channelConfig = (b2 & 1) << 2 | b3 >> 6
        frameLength = Int(b3 & 3) << 11 | Int(v[i + 4]) << 3 | Int(v[i + 5] >> 5)
        headerLength = v[i + 1] & 1 == 1 ? 7 : 9
        guard sampleRateIndex < 13, channelConfig != 0, v[i + 6] & 3 == 0, frameLength > headerLength else {
            return nil
        }
    }

    var sampleRate: Int { Self.rates[Int(sampleRateIndex)] }
    var channels: Int { channelConfig == 7 ? 8 : Int(channelConfig) }

    func compatible(_ o: ADTSHeader) -> Bool {
        objectType == o.objectType && sampleRateIndex == o.sampleRateIndex && channelConfig == o.channelConfig
    }

    func follows(_ o: ADTSHeader) -> Bool { compatible(o) }
}

/// Decoder delay added to LAME's encoder delay for priming frames (and taken from its padding for
/// remainder frames), the convention of iTunes' gapless data.
public let mp3DecoderDelay: Int32 = 529

extension AudioFileStream {
    // MARK: MP3

    func stepMPEG(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        guard locked, let ref = mpegReference else {
            return syncFrames(v, reference: mpegReference) { h in
                mpegReference == nil ? mpegFirstFrame(v, h) : .consumed(0)
            }
        }
        // "TAG": an ID3v1 tag at the end, 128 bytes to skip.
        return stepFrames(v, reference: ref, endTag: { p in v[p] == 0x54 && v[p + 1] == 0x41 && v[p + 2] == 0x47 }) {
            skipRemaining = 128
        }
    }

    /// The first confirmed frame: the format, and a Xing/Info/LAME or VBRI tag if it is one.
    private func mpegFirstFrame(_ v: UnsafeRawBufferPointer, _ h: MPEGHeader) -> Outcome {
        mpegReference = h
        container = .mpeg
        fileFormat = (h.layer == 1 ? AudioFileTypeID.mp1 : h.layer == 2 ? AudioFileTypeID.mp2 : AudioFileTypeID.mp3)
        format = AudioStreamBasicDescription(
            sampleRate: Double(h.sampleRate),
            formatID: h.layer == 1 ? AudioFormatID.mpegLayer1 : h.layer == 2 ? AudioFormatID.mpegLayer2 : AudioFormatID.mpegLayer3,
            formatFlags: [],
            bytesPerPacket: 0, framesPerPacket: UInt32(h.samplesPerFrame), bytesPerFrame: 0,
            channelsPerFrame: UInt32(h.channels), bitsPerChannel: 0)
        // The largest frame: Layer III 320 kbit/s at 32 kHz, padded; Layer II 384 kbit/s at
        // 32 kHz; Layer I 256 kbit/s at 16 kHz (MPEG-2), padded.
        upperBound = h.layer == 1 ? 772 : h.layer == 2 ? 1729 : 1441
        firstFrameLength = h.frameLength
        let length = h.frameLength
        let frame = v.slice(0, length)
        let x = 4 + h.sideInfoSize
        if h.layer == 3, length >= x + 8, frame.fcc(x) == "Xing" || frame.fcc(x) == "Info" {
            let flags = frame.be32(x + 4)
            var q = x + 8
            var frames: UInt32?
            if flags & 1 != 0, q + 4 <= length { frames = frame.be32(q); q += 4 }
            if flags & 2 != 0, q + 4 <= length { xingBytes = UInt64(frame.be32(q)); q += 4 }
            if flags & 4 != 0, q + 100 <= length { xingTOC = Array(frame.slice(q, q + 100)); q += 100 }
            if flags & 8 != 0 { q += 4 }
            if let frames { packetCount = UInt64(frames) }
            if let b = xingBytes, b > UInt64(length) { byteCount = b - UInt64(length) }
            if frame.fcc(x) == "Info" { headerBitRate = UInt32(h.bitRate) }
            // LAME extension: 9-byte encoder name, then delay/padding at +21 (12 bits each).
            if q + 24 <= length, let frames, isEncoderName(frame, q) {
                let dp = frame.be24(q + 21)
                let delay = Int32(dp >> 12), padding = Int32(dp & 0xFFF)
                let priming = delay + mp3DecoderDelay
                let remainder = max(0, padding - mp3DecoderDelay)
                let total = Int64(frames) * Int64(h.samplesPerFrame)
                packetTable = AudioFilePacketTableInfo(
                    numberValidFrames: max(0, total - Int64(priming) - Int64(remainder)),
                    primingFrames: priming, remainderFrames: remainder)
            }
            tagFrameOffset = position
            audioDataOffset = position + Int64(length)
            mpegReference = MPEGHeader(v, length) ?? h
            becomeReady()
            return .consumed(length)
        }
        if h.layer == 3, length >= 62, frame.fcc(36) == "VBRI" {
            let bytes = frame.be32(46), frames = frame.be32(50)
            let entries = Int(frame.be16(54)), scale = UInt32(frame.be16(56))
            let entrySize = Int(frame.be16(58)), perEntry = UInt32(frame.be16(60))
            packetCount = UInt64(frames)
            if UInt64(bytes) > UInt64(length) { byteCount = UInt64(bytes) - UInt64(length) }
            xingBytes = UInt64(bytes)
            if (1...4).contains(entrySize), perEntry > 0, 62 + entries * entrySize <= length {
                vbriTOC = []
                for e in 0..<entries {
                    var value: UInt32 = 0
                    for k in 0..<entrySize { value = value << 8 | UInt32(frame[62 + e * entrySize + k]) }
                    vbriTOC.append(value &* scale)
                }
                vbriFramesPerEntry = perEntry
            }
            tagFrameOffset = position
            audioDataOffset = position + Int64(length)
            mpegReference = MPEGHeader(v, length) ?? h
            becomeReady()
            return .consumed(length)
        }
        headerBitRate = UInt32(h.bitRate)
        audioDataOffset = position
        becomeReady()
        return .consumed(0)
    }

    private func isEncoderName(_ f: UnsafeRawBufferPointer, _ q: Int) -> Bool {
        for k in 0..<4 {
            let c = f[q + k]
            guard (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c) || c == 0x2E else {
                return false
            }
        }
        return true
    }

    // MARK: ADTS

    func stepADTS(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        guard locked, let ref = adtsReference else {
            return syncFrames(v, reference: adtsReference) { h in
                if adtsReference == nil { adtsFirstFrame(h) }
                return .consumed(0)
            }
        }
        return stepFrames(v, reference: ref)
    }

    // MARK: Both

    /// A locked stream: as many whole frames as `v` holds (and the description array takes) go
    /// out as packets in one callback. A frame that does not follow `ref` unlocks the stream (the
    /// next step searches for a sync again); so does an end tag (`endTag` true at a frame's
    /// place; `skipTag` then says what to skip), each only once the frames before it are out.
    private func stepFrames<H: SyncFrameHeader>(
        _ v: UnsafeRawBufferPointer, reference ref: H,
        endTag: (Int) -> Bool = { _ in false }, skipTag: () -> Void = {}
    ) -> Outcome {
        var p = 0
        var dc = 0
        while dc < Self.maxDescriptionsPerCallback {
            if v.count - p < H.size { break }
            if endTag(p) {
                if dc > 0 { break }
                skipTag()
                locked = false
                return .consumed(0)
            }
            guard let h = H(v, p), h.follows(ref) else {
                if dc > 0 { break }
                locked = false
                return .consumed(0)
            }
            let length = h.frameLength
            if v.count - p < length { break }
            descriptions[dc] = AudioStreamPacketDescription(
                startOffset: Int64(p + h.packetOffset), variableFramesInPacket: 0,
                dataByteSize: UInt32(length - h.packetOffset))
            p += length
            dc += 1
        }
        if dc > 0 {
            deliver(v.slice(0, p), packets: dc, descriptionCount: dc)
            return .consumed(p)
        }
        if v.count < H.size { return .need(H.size) }
        return .need(H(v, 0)!.frameLength)
    }

    /// Searches `v` for a sync: a header (that follows `reference` when the stream had one) whose
    /// next frame's header is compatible with it. Bytes before it are dropped; at the sync the
    /// stream locks and `locked` says what to do with its first frame.
    private func syncFrames<H: SyncFrameHeader>(
        _ v: UnsafeRawBufferPointer, reference: H?, locked onLock: (H) -> Outcome
    ) -> Outcome {
        var i = 0
        while i + H.size <= v.count {
            if v[i] == 0xFF, let h = H(v, i), reference.map({ h.follows($0) }) ?? true {
                let length = h.frameLength
                if v.count < i + length + H.size { return i > 0 ? .consumed(i) : .need(length + H.size) }
                if let next = H(v, i + length), next.compatible(h) {
                    if i > 0 { return .consumed(i) }
                    locked = true
                    return onLock(h)
                }
            }
            i += 1
        }
        let drop = v.count - (H.size - 1)
        return drop > 0 ? .consumed(drop) : .need(H.size)
    }

    private func adtsFirstFrame(_ h: ADTSHeader) {
        adtsReference = h
        container = .adts
        fileFormat = fileFormat ?? AudioFileTypeID.aacADTS
        format = AudioStreamBasicDescription(
            sampleRate: Double(h.sampleRate), formatID: AudioFormatID.mpeg4AAC,
            formatFlags: AudioFormatFlags(rawValue: UInt32(h.objectType)), bytesPerPacket: 0,
            framesPerPacket: 1024, bytesPerFrame: 0, channelsPerFrame: UInt32(h.channels), bitsPerChannel: 0)
        // AudioSpecificConfig: object type (5 bits), rate index (4), channel config (4), 3 zero bits.
        cookie = [h.objectType << 3 | h.sampleRateIndex >> 1, (h.sampleRateIndex & 1) << 7 | h.channelConfig << 3]
        // ADTS cannot signal SBR: implicit, taken for HE-AAC when the core is at 24 kHz or less.
        aacConfig = AACStreamConfig(audioSpecificConfig: cookie!)
        upperBound = 8191
        firstFrameLength = h.frameLength - h.headerLength
        audioDataOffset = position
        becomeReady()
    }
}
