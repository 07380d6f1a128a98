import AQTypes

// WAVE, AIFF/AIFC, CAF and NeXT/Sun: chunked headers, then constant-size packets (or a CAF
// packet table) straight out of the caller's bytes.

let maxSampleRate = 4_294_967_295.0

extension AudioFileStream {
    func invalid(_ detail: String) -> AudioFileStreamError { AudioFileStreamError.invalidFile.with(detail: detail) }
    func unsupported(_ detail: String) -> AudioFileStreamError {
        AudioFileStreamError.unsupportedDataFormat.with(detail: detail)
    }

    // MARK: detection

    func stepDetect(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        // Magic numbers count only where the file (or what follows its ID3 tags) starts; once
        // bytes were scanned for a sync, the result must not depend on how input was split.
        if sniffed > 0 { return try sniffFraming(v) }
        if v.count < 3 { return .need(3) }
        if v.count >= 3, v[0] == 0x49, v[1] == 0x44, v[2] == 0x33 {  // "ID3"
            phase = .id3
            return .consumed(0)
        }
        if fileTypeHint == AudioFileTypeID.mp3 || fileTypeHint == AudioFileTypeID.mp2 || fileTypeHint == AudioFileTypeID.mp1
            || fileTypeHint == AudioFileTypeID.aacADTS
        {
            if v.count < 3 { return .need(3) }
            startFraming(fileTypeHint == AudioFileTypeID.aacADTS ? .adts : .mpeg)
            return .consumed(0)
        }
        if v.count < 4 { return .need(4) }
        if leadingBytes.isEmpty { leadingBytes = Array(v.slice(0, 4)) }
        switch v.fcc(0) {
        case "RIFF", "RF64", "BW64":
            if v.count < 12 { return .need(12) }
            let kind = v.fcc(0)
            guard v.fcc(8) == "WAVE" else {
                throw AudioFileStreamError.unsupportedFileType.with(
                    detail: "\(kind) form '\(v.fcc(8))' is not WAVE (AVI, WebP and other RIFF forms are not audio files)")
            }
            container = .wave
            fileFormat = kind == "RIFF" ? AudioFileTypeID.wave : kind == "RF64" ? AudioFileTypeID.rf64 : AudioFileTypeID.bw64
            phase = .riffChunk
            return .consumed(12)
        case "riff":
            // Wave64: the "riff" GUID, a 64-bit size, the "wave" GUID.
            if v.count < 40 { return .need(40) }
            guard isW64GUID(v, 0, "riff", riffTail: true) else { return try refuseOrSniff(v) }
            guard isW64GUID(v, 24, "wave", riffTail: false) else {
                throw AudioFileStreamError.unsupportedFileType.with(detail: "Wave64 file whose form is not 'wave'")
            }
            container = .w64
            fileFormat = AudioFileTypeID.wave64
            phase = .w64Chunk
            return .consumed(40)
        case "OggS":
            container = .ogg
            phase = .oggPage
            return .consumed(0)
        case "fLaC":
            container = .flac
            fileFormat = AudioFileTypeID.flac
            phase = .flacMeta
            return .consumed(4)
        case "FORM":
            if v.count < 12 { return .need(12) }
            let form = v.fcc(8)
            guard form == "AIFF" || form == "AIFC" else {
                throw AudioFileStreamError.unsupportedFileType.with(detail: "IFF form '\(form)' is not AIFF or AIFC")
            }
            container = .aiff
            fileFormat = form == "AIFF" ? AudioFileTypeID.aiff : AudioFileTypeID.aifc
            phase = .aiffChunk
            return .consumed(12)
        case "caff":
            if v.count < 8 { return .need(8) }
            guard v.be16(4) == 1 else { throw unsupported("CAF version \(v.be16(4))") }
            container = .caf
            fileFormat = AudioFileTypeID.caf
            phase = .cafChunk
            return .consumed(8)
        case ".snd":
            container = .au
            fileFormat = AudioFileTypeID.next
            phase = .auHeader
            return .consumed(0)
        default:
            // MP4's magic is at byte 4: decided only once 12 bytes are there, whatever the split.
            if v.count < 12 { return .need(12) }
            if v.fcc(4) == "ftyp" {
                container = .mp4
                phase = .mp4Box
                return .consumed(0)
            }
            return try refuseOrSniff(v)
        }
    }

    /// A file of a format recognised by its magic number but not read here is refused by name;
    /// anything else is scanned for an MP3/ADTS sync.
    private func refuseOrSniff(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if v.count < 12 { return .need(12) }
        if let name = foreignFormatName(v) {
            throw AudioFileStreamError.unsupportedFileType.with(detail: "\(name) file: aqsync does not read this format")
        }
        return try sniffFraming(v)
    }

    /// Wave64's GUIDs: four ASCII bytes, then the 12 bytes every `riff`-family (or wave chunk)
    /// GUID ends with.
    func isW64GUID(_ v: UnsafeRawBufferPointer, _ at: Int, _ name: FourCharCode, riffTail: Bool) -> Bool {
        let tail: [UInt8] = riffTail
            ? [0x2E, 0x91, 0xCF, 0x11, 0xA5, 0xD6, 0x28, 0xDB, 0x04, 0xC1, 0x00, 0x00]
            : [0xF3, 0xAC, 0xD3, 0x11, 0x8C, 0xD1, 0x00, 0xC0, 0x4F, 0x8E, 0xDB, 0x8A]
        guard v.fcc(at) == name else { return false }
        for k in 0..<12 where v[at + 4 + k] != tail[k] { return false }
        return true
    }

    func startFraming(_ c: Container) {
        container = c
        // MPEG audio: the first frame's layer names the file type (MPG1, MPG2, MPG3).
        if c == .adts { fileFormat = AudioFileTypeID.aacADTS }
        phase = c == .mpeg ? .mpeg : .adts
        locked = false
    }

    /// No magic number: look for an MP3 or ADTS frame whose successor confirms it.
    private func sniffFraming(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        var i = 0
        while i + 7 <= v.count {
            if v[i] == 0xFF {
                if let h = ADTSHeader(v, i) {
                    if v.count < i + h.frameLength + 7 { return try sniffWait(i, h.frameLength + 7) }
                    if let n = ADTSHeader(v, i + h.frameLength), n.compatible(h) {
                        startFraming(.adts)
                        return .consumed(i)
                    }
                } else if let h = MPEGHeader(v, i) {
                    if v.count < i + h.frameLength + 4 { return try sniffWait(i, h.frameLength + 4) }
                    if let n = MPEGHeader(v, i + h.frameLength), n.compatible(h) {
                        startFraming(.mpeg)
                        return .consumed(i)
                    }
                }
            }
            i += 1
        }
        let drop = max(0, v.count - 6)
        if drop == 0 { return .need(7) }
        return try sniffWait(drop, 0)
    }

    private func sniffWait(_ drop: Int, _ want: Int) throws(AudioFileStreamError) -> Outcome {
        if drop > 0 {
            sniffed += drop
            if sniffed > Self.sniffLimit {
                let hex = leadingBytes.map { String($0, radix: 16, uppercase: true).count == 1 ? "0" + String($0, radix: 16, uppercase: true) : String($0, radix: 16, uppercase: true) }.joined(separator: " ")
                throw AudioFileStreamError.unsupportedFileType.with(
                    detail: "not a format aqsync reads: no WAVE, RF64, Wave64, AIFF, CAF, NeXT or FLAC header and no MP3/ADTS frames in the first 64 KiB (it starts with \(hex))")
            }
            return .consumed(drop)
        }
        return .need(want)
    }

    func stepID3(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if v.count < 10 { return .need(10) }
        guard v[3] != 0xFF, v[4] != 0xFF, v[6] < 0x80, v[7] < 0x80, v[8] < 0x80, v[9] < 0x80 else {
            throw invalid("malformed ID3v2 header")
        }
        let size = Int64(v[6]) << 21 | Int64(v[7]) << 14 | Int64(v[8]) << 7 | Int64(v[9])
        let footer: Int64 = v[5] & 0x10 != 0 ? 10 : 0
        skipRemaining = size + footer
        phase = .detect
        return .consumed(10)
    }

    // MARK: WAVE

    func stepRIFFChunk(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if v.count < 8 { return .need(8) }
        let id = v.fcc(0)
        let size = Int64(v.le32(4))
        let padded = size + (size & 1)
        if fileFormat != AudioFileTypeID.wave, size == 0xFFFF_FFFF, id != "data", let big = ds64Table[id] {
            // RF64: a chunk over 4 GiB has its size in the ds64 table.
            let bounded = Int64(min(big, UInt64(Int64.max / 4)))
            skipRemaining = bounded + (bounded & 1)
            return .consumed(8)
        }
        switch id {
        case "ds64" where fileFormat != AudioFileTypeID.wave && format == nil && ds64DataSize == nil:
            guard size >= 28 else { throw invalid("\(fileTypeName(fileFormat!)) ds64 chunk of \(size) bytes") }
            let want = Int(min(size, 28 + 12 * 64))
            if v.count < 8 + want { return .need(8 + want) }
            let b = v.slice(8, 8 + want)
            ds64DataSize = UInt64(b.le32(8)) | UInt64(b.le32(12)) << 32
            let entries = min(Int(b.le32(24)), (want - 28) / 12)
            for e in 0..<entries {
                let o = 28 + 12 * e
                ds64Table[b.fcc(o)] = UInt64(b.le32(o + 4)) | UInt64(b.le32(o + 8)) << 32
            }
            skipRemaining = padded - Int64(want)
            return .consumed(8 + want)
        case "fmt " where format == nil:
            guard size >= 16 else { throw invalid("WAVE fmt chunk of \(size) bytes") }
            let want = Int(min(size, 40))
            if v.count < 8 + want { return .need(8 + want) }
            try parseWAVEFormat(v.slice(8, 8 + want))
            skipRemaining = padded - Int64(want)
            return .consumed(8 + want)
        case "data" where !ready:
            guard let f = format else { throw invalid("WAVE data chunk before fmt chunk") }
            var size = size
            if fileFormat != AudioFileTypeID.wave, size == 0xFFFF_FFFF {
                // RF64/BW64: the real size is in ds64 (absent or 0: to the end of the stream).
                guard let big = ds64DataSize, big > 0, big < UInt64(Int64.max / 2) else {
                    return startWAVEData(f, size: nil)
                }
                size = Int64(big)
            }
            // 0 and 0xFFFFFFFF: the writer did not know (a stream, or a WAVE past 4 GiB).
            return startWAVEData(f, size: size != 0 && size != 0xFFFF_FFFF ? size : nil)
        default:
            skipRemaining = padded
            return .consumed(8)
        }
    }

    private func startWAVEData(_ f: AudioStreamBasicDescription, size: Int64?, header: Int = 8, pad: Int64? = nil) -> Outcome {
        dataRemaining = size
        dataPad = size.map { pad ?? $0 & 1 } ?? 0
        if let size {
            byteCount = UInt64(size)
            packetCount = UInt64(size) / UInt64(f.bytesPerPacket)
        }
        audioDataOffset = position + Int64(header)
        enterData()
        return .consumed(header)
    }

    // MARK: Wave64

    func stepW64Chunk(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if v.count < 24 { return .need(24) }
        let total = UInt64(v.le32(16)) | UInt64(v.le32(20)) << 32
        // A writer that could not seek back (a pipe) leaves the size at 2^63 − 1 or all ones.
        let unknown = total >= UInt64(Int64.max / 2)
        if isW64GUID(v, 0, "data", riffTail: false), !ready {
            guard let f = format else { throw invalid("Wave64 data chunk before fmt chunk") }
            if unknown || total <= 24 { return startWAVEData(f, size: nil, header: 24) }
            return startWAVEData(f, size: Int64(total) - 24, header: 24, pad: Int64((8 - (total & 7)) & 7))
        }
        guard total >= 24 else { throw invalid("Wave64 chunk of \(total) bytes (less than its own header)") }
        let size = unknown ? Int64.max / 2 : Int64(total) - 24
        let pad = Int64((8 - (total & 7)) & 7)
        if isW64GUID(v, 0, "fmt ", riffTail: false), format == nil {
            guard size >= 16 else { throw invalid("Wave64 fmt chunk of \(size) bytes") }
            let want = Int(min(size, 40))
            if v.count < 24 + want { return .need(24 + want) }
            try parseWAVEFormat(v.slice(24, 24 + want))
            skipRemaining = size - Int64(want) + pad
            return .consumed(24 + want)
        }
        skipRemaining = size + pad
        return .consumed(24)
    }

    private func parseWAVEFormat(_ b: UnsafeRawBufferPointer) throws(AudioFileStreamError) {
        var tag = b.le16(0)
        let channels = UInt32(b.le16(2))
        let rate = Double(b.le32(4))
        let blockAlign = UInt32(b.le16(12))
        var bits = UInt32(b.le16(14))
        guard channels > 0 else { throw invalid("zero channels") }
        guard rate > 0 else { throw invalid("zero sample rate") }
        guard blockAlign > 0, blockAlign % channels == 0 else { throw invalid("block align \(blockAlign) for \(channels) channels") }
        if tag == 0xFFFE {
            guard b.count >= 40 else { throw invalid("short WAVE_FORMAT_EXTENSIBLE") }
            let valid = UInt32(b.le16(18))
            if valid != 0 { bits = valid }
            let mask = b.le32(20)
            if mask != 0 { layout = AudioChannelLayout(tag: AudioChannelLayoutTag.useChannelBitmap, bitmap: mask) }
            tag = b.le16(24)
        }
        let container = blockAlign / channels
        switch tag {
        case 1:
            guard (1...4).contains(container), (1...container * 8).contains(bits) else {
                throw unsupported("WAVE PCM of \(bits) bits in \(container) bytes")
            }
            var f = AudioStreamBasicDescription.linearPCM(
                sampleRate: rate, channels: channels, bits: container * 8, signed: container > 1)
            if bits < container * 8 {
                f.bitsPerChannel = bits
                f.formatFlags.remove(.isPacked)
                f.formatFlags.insert(.isAlignedHigh)
            }
            format = f
        case 3:
            guard (container == 4 && bits == 32) || (container == 8 && bits == 64) else {
                throw unsupported("WAVE float of \(bits) bits in \(container) bytes")
            }
            format = .linearPCM(sampleRate: rate, channels: channels, bits: bits, isFloat: true)
        case 6, 7:
            guard container == 1 else { throw unsupported("WAVE G.711 of \(container) bytes") }
            format = companded(tag == 7 ? AudioFormatID.uLaw : AudioFormatID.aLaw, rate, channels)
        default:
            throw unsupported("WAVE format tag 0x\(String(tag, radix: 16))")
        }
    }

    func companded(_ id: FourCharCode, _ rate: Double, _ channels: UInt32) -> AudioStreamBasicDescription {
        AudioStreamBasicDescription(
            sampleRate: rate, formatID: id, formatFlags: [], bytesPerPacket: channels, framesPerPacket: 1,
            bytesPerFrame: channels, channelsPerFrame: channels, bitsPerChannel: 8)
    }

    /// Packed big- or little-endian integer PCM of `bits` significant bits.
    func integerPCM(_ rate: Double, _ channels: UInt32, _ bits: UInt32, bigEndian: Bool) -> AudioStreamBasicDescription {
        let bytes = (bits + 7) / 8
        var f = AudioStreamBasicDescription.linearPCM(
            sampleRate: rate, channels: channels, bits: bytes * 8, bigEndian: bigEndian, signed: true)
        if bits < bytes * 8 {
            f.bitsPerChannel = bits
            f.formatFlags.remove(.isPacked)
            f.formatFlags.insert(.isAlignedHigh)
        }
        return f
    }

    func enterData() {
        phase = format!.bytesPerPacket > 0 ? .cbrData : .tableData
        packetIndex = 0
        becomeReady()
    }

    func endData() {
        switch container {
        case .wave: phase = .riffChunk; skipRemaining = dataPad
        case .w64: phase = .w64Chunk; skipRemaining = dataPad
        case .aiff: phase = .aiffChunk; skipRemaining = dataPad
        case .caf: phase = .cafChunk
        default: phase = .trailing
        }
        dataRemaining = nil
        dataPad = 0
    }

    // MARK: AIFF / AIFC

    func stepAIFFChunk(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if v.count < 8 { return .need(8) }
        let id = v.fcc(0)
        let size = Int64(v.be32(4))
        let padded = size + (size & 1)
        switch id {
        case "COMM" where format == nil:
            let want = fileFormat == AudioFileTypeID.aifc ? 22 : 18
            guard size >= Int64(want) else { throw invalid("COMM chunk of \(size) bytes") }
            if v.count < 8 + want { return .need(8 + want) }
            try parseCOMM(v.slice(8, 8 + want))
            skipRemaining = padded - Int64(want)
            return .consumed(8 + want)
        case "SSND" where !ready:
            guard format != nil else { throw invalid("SSND chunk before COMM chunk") }
            if v.count < 16 { return .need(16) }
            let offset = Int64(v.be32(8))
            if size == 0 || size == 0xFFFF_FFFF {
                dataRemaining = nil
                dataPad = 0
            } else {
                guard size >= 8 + offset else { throw invalid("SSND offset \(offset) beyond its chunk") }
                dataRemaining = size - 8 - offset
                dataPad = size & 1
                byteCount = UInt64(size - 8 - offset)
            }
            audioDataOffset = position + 16 + offset
            skipRemaining = offset
            enterData()
            return .consumed(16)
        default:
            skipRemaining = padded
            return .consumed(8)
        }
    }

    private func parseCOMM(_ b: UnsafeRawBufferPointer) throws(AudioFileStreamError) {
        let channels = Int16(bitPattern: b.be16(0))
        let frames = b.be32(2)
        let bits = Int16(bitPattern: b.be16(6))
        guard channels > 0 else { throw invalid("\(channels) channels") }
        guard let rate = b.float80(8), rate.isFinite, rate > 0, rate <= maxSampleRate else {
            throw invalid("sample rate is not a positive finite number")
        }
        let ch = UInt32(channels)
        let compression: FourCharCode = fileFormat == AudioFileTypeID.aifc ? b.fcc(18) : "NONE"
        switch compression {
        case "NONE", "twos", "in24", "in32", "sowt":
            guard (1...32).contains(bits) else { throw unsupported("AIFF sample size \(bits)") }
            format = integerPCM(rate, ch, UInt32(bits), bigEndian: compression != "sowt")
        case "fl32", "FL32":
            format = .linearPCM(sampleRate: rate, channels: ch, bits: 32, isFloat: true, bigEndian: true)
        case "fl64", "FL64":
            format = .linearPCM(sampleRate: rate, channels: ch, bits: 64, isFloat: true, bigEndian: true)
        case "ulaw", "ULAW":
            format = companded(AudioFormatID.uLaw, rate, ch)
        case "alaw", "ALAW":
            format = companded(AudioFormatID.aLaw, rate, ch)
        case "ima4":
            // Apple IMA4: numSampleFrames counts packets (64 frames each), as QuickTime writes it.
            guard ch <= 1024 else { throw invalid("AIFC ima4 with \(ch) channels") }
            format = .appleIMA4(sampleRate: rate, channels: ch)
        default:
            throw unsupported("AIFC compression '\(compression)'")
        }
        packetCount = UInt64(frames)
    }

    // MARK: CAF

    func stepCAFChunk(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if v.count < 12 { return .need(12) }
        let type = v.fcc(0)
        let size = Int64(bitPattern: v.be64(4))
        if size < 0 && !(type == "data" && size == -1) { throw invalid("CAF '\(type)' chunk of size \(size)") }
        switch type {
        case "desc" where format == nil:
            guard size >= 32 else { throw invalid("CAF desc chunk of \(size) bytes") }
            if v.count < 44 { return .need(44) }
            try parseDesc(v.slice(12, 44))
            skipRemaining = size - 32
            return .consumed(44)
        case "kuki" where !ready:
            guard size <= 1 << 20 else { throw invalid("magic cookie of \(size) bytes") }
            let n = Int(size)
            if v.count < 12 + n { return .need(12 + n) }
            cookie = Array(v.slice(12, 12 + n))
            return .consumed(12 + n)
        case "pakt" where !ready:
            guard format != nil else { throw invalid("CAF pakt chunk before desc chunk") }
            guard size >= 24, size <= 16 << 20 else { throw invalid("CAF pakt chunk of \(size) bytes") }
            let n = Int(size)
            if v.count < 12 + n { return .need(12 + n) }
            try parsePakt(v.slice(12, 12 + n))
            return .consumed(12 + n)
        case "chan" where !ready:
            guard size >= 12 else { throw invalid("CAF chan chunk of \(size) bytes") }
            let want = Int(min(size, 12 + 20 * 64))
            if v.count < 12 + want { return .need(12 + want) }
            let b = v.slice(12, 12 + want)
            let count = min(Int(b.be32(8)), (want - 12) / 20)
            var descs: [AudioChannelDescription] = []
            for i in 0..<count {
                let o = 12 + 20 * i
                descs.append(AudioChannelDescription(
                    label: b.be32(o), flags: b.be32(o + 4),
                    coordinates: (Float(bitPattern: b.be32(o + 8)), Float(bitPattern: b.be32(o + 12)),
                                  Float(bitPattern: b.be32(o + 16)))))
            }
            layout = AudioChannelLayout(tag: b.be32(0), bitmap: b.be32(4), descriptions: descs)
            skipRemaining = size - Int64(want)
            return .consumed(12 + want)
        case "data" where !ready:
            guard let f = format else { throw invalid("CAF data chunk before desc chunk") }
            if v.count < 16 { return .need(16) }
            if size == -1 {
                dataRemaining = nil
            } else {
                guard size >= 4 else { throw invalid("CAF data chunk of \(size) bytes") }
                dataRemaining = size - 4
                byteCount = UInt64(size - 4)
                if f.bytesPerPacket > 0, packetTable == nil {
                    packetCount = UInt64(size - 4) / UInt64(f.bytesPerPacket)
                }
            }
            if f.bytesPerPacket == 0 && packetTable == nil {
                throw AudioFileStreamError.notOptimized.with(
                    detail: "CAF '\(f.formatID)' packets vary in size and the packet table (pakt) is not before the audio data: a stream can't be parsed; read the file with its pakt first (aqsync does for files)")
            }
            audioDataOffset = position + 16
            enterData()
            return .consumed(16)
        default:
            skipRemaining = size
            return .consumed(12)
        }
    }

    private func parseDesc(_ b: UnsafeRawBufferPointer) throws(AudioFileStreamError) {
        let rate = Double(bitPattern: b.be64(0))
        let id = b.fcc(8)
        let flags = b.be32(12)
        let bpp = b.be32(16)
        let fpp = b.be32(20)
        let channels = b.be32(24)
        let bits = b.be32(28)
        guard rate.isFinite, rate > 0, rate <= maxSampleRate else { throw invalid("CAF sample rate \(rate)") }
        guard channels > 0, channels <= 1024 else { throw invalid("CAF with \(channels) channels") }
        switch id {
        case AudioFormatID.linearPCM:
            let isFloat = flags & 1 != 0
            let little = flags & 2 != 0
            guard bpp > 0, fpp == 1, bpp % channels == 0 else { throw invalid("CAF lpcm packet of \(bpp) bytes") }
            let sampleBytes = bpp / channels
            guard (1...64).contains(bits), sampleBytes <= 8, bits <= sampleBytes * 8 else {
                throw unsupported("CAF lpcm of \(bits) bits in \(sampleBytes) bytes")
            }
            if isFloat { guard bits == sampleBytes * 8, bits == 32 || bits == 64 else { throw unsupported("CAF float of \(bits) bits") } }
            var ff: AudioFormatFlags = isFloat ? [.isFloat] : [.isSignedInteger]
            ff.insert(bits == sampleBytes * 8 ? .isPacked : .isAlignedHigh)
            if !little && sampleBytes > 1 { ff.insert(.isBigEndian) }
            format = AudioStreamBasicDescription(
                sampleRate: rate, formatID: id, formatFlags: ff, bytesPerPacket: bpp, framesPerPacket: 1,
                bytesPerFrame: bpp, channelsPerFrame: channels, bitsPerChannel: bits)
        case AudioFormatID.uLaw, AudioFormatID.aLaw:
            guard bpp == channels, fpp == 1 else { throw invalid("CAF G.711 packet of \(bpp) bytes") }
            format = companded(id, rate, channels)
        case AudioFormatID.appleIMA4:
            // Core Audio's description whatever the writer put in the flags and bits (ffmpeg
            // writes 4 bits a channel); the packet shape is the format's own.
            guard bpp == 34 * channels, fpp == 64 else { throw invalid("CAF ima4 packet of \(bpp) bytes and \(fpp) frames (34 × \(channels) and 64 expected)") }
            format = .appleIMA4(sampleRate: rate, channels: channels)
        default:
            guard !(bpp > 0 && fpp == 0) else { throw invalid("CAF constant packets with variable frames") }
            format = AudioStreamBasicDescription(
                sampleRate: rate, formatID: id, formatFlags: AudioFormatFlags(rawValue: flags),
                bytesPerPacket: bpp, framesPerPacket: fpp, bytesPerFrame: 0, channelsPerFrame: channels,
                bitsPerChannel: bits)
        }
    }

    private func parsePakt(_ b: UnsafeRawBufferPointer) throws(AudioFileStreamError) {
        let f = format!
        let packets = Int64(bitPattern: b.be64(0))
        let valid = Int64(bitPattern: b.be64(8))
        let priming = Int32(bitPattern: b.be32(16))
        let remainder = Int32(bitPattern: b.be32(20))
        guard packets >= 0, valid >= 0, priming >= 0, remainder >= 0 else { throw invalid("negative pakt counts") }
        let variableSize = f.bytesPerPacket == 0
        // Each entry takes at least one byte, so the chunk size bounds the count.
        guard !variableSize || packets <= Int64(b.count - 24) else {
            throw invalid("pakt claims \(packets) packets in \(b.count) bytes")
        }
        packetTable = AudioFilePacketTableInfo(numberValidFrames: valid, primingFrames: priming, remainderFrames: remainder)
        packetCount = UInt64(packets)
        guard variableSize else { return }
        let variableFrames = f.framesPerPacket == 0
        tableSizes = []
        tableFrames = []
        tableSizes.reserveCapacity(Int(packets))
        if variableFrames { tableFrames.reserveCapacity(Int(packets)) }
        tableMax = 0
        tableTotalBytes = 0
        var o = 24
        for _ in 0..<packets {
            let size = try varint(b, &o)
            guard size > 0, size <= UInt32(Self.maximumBufferedBytes - 64) else { throw invalid("pakt packet of \(size) bytes") }
            tableSizes.append(size)
            tableMax = max(tableMax, size)
            tableTotalBytes += UInt64(size)
            if variableFrames { tableFrames.append(try varint(b, &o)) }
        }
    }

    private func varint(_ b: UnsafeRawBufferPointer, _ o: inout Int) throws(AudioFileStreamError) -> UInt32 {
        var v: UInt64 = 0
        for _ in 0..<5 {
            guard o < b.count else { throw invalid("pakt table ends early") }
            let byte = b[o]
            o += 1
            v = v << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 {
                guard v <= UInt64(UInt32.max) else { break }
                return UInt32(v)
            }
        }
        throw invalid("bad pakt entry")
    }

    // MARK: NeXT / Sun

    func stepAUHeader(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if v.count < 24 { return .need(24) }
        let header = Int64(v.be32(4))
        let size = v.be32(8)
        let encoding = v.be32(12)
        let rate = Double(v.be32(16))
        let channels = v.be32(20)
        guard header >= 24 else { throw invalid("NeXT header of \(header) bytes") }
        guard channels > 0, channels <= 1024 else { throw invalid("\(channels) channels") }
        guard rate > 0 else { throw invalid("zero sample rate") }
        switch encoding {
        case 1: format = companded(AudioFormatID.uLaw, rate, channels)
        case 27: format = companded(AudioFormatID.aLaw, rate, channels)
        case 2, 3, 4, 5: format = integerPCM(rate, channels, (encoding - 1) * 8, bigEndian: true)
        case 6: format = .linearPCM(sampleRate: rate, channels: channels, bits: 32, isFloat: true, bigEndian: true)
        case 7: format = .linearPCM(sampleRate: rate, channels: channels, bits: 64, isFloat: true, bigEndian: true)
        default: throw unsupported("NeXT encoding \(encoding)")
        }
        if size == 0xFFFF_FFFF {
            dataRemaining = nil
        } else {
            dataRemaining = Int64(size)
            byteCount = UInt64(size)
            packetCount = UInt64(size) / UInt64(format!.bytesPerPacket)
        }
        audioDataOffset = position + header
        skipRemaining = header - 24
        enterData()
        return .consumed(24)
    }

    // MARK: data

    func stepCBRData(_ v: UnsafeRawBufferPointer) -> Outcome {
        let bpp = Int(format!.bytesPerPacket)
        var avail = v.count
        if let r = dataRemaining {
            if r == 0 { endData(); return .consumed(0) }
            if Int64(avail) > r { avail = Int(r) }
        }
        let n = avail / bpp
        if n == 0 {
            if let r = dataRemaining, r < Int64(bpp) {
                // A partial packet ends the data chunk: drop it.
                skipRemaining = r
                dataRemaining = 0
                return .consumed(0)
            }
            return .need(bpp)
        }
        let bytes = n * bpp
        deliver(v.slice(0, bytes), packets: n, descriptionCount: 0)
        if let r = dataRemaining { dataRemaining = r - Int64(bytes) }
        return .consumed(bytes)
    }

    func stepTableData(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if dataRemaining == 0 { endData(); return .consumed(0) }
        let limit = dataRemaining.map { Int(min(Int64(v.count), $0)) } ?? v.count
        let variableFrames = format!.framesPerPacket == 0
        var p = 0
        var dc = 0
        while dc < Self.maxDescriptionsPerCallback {
            let index = Int(packetIndex) + dc
            guard index < tableSizes.count else { break }
            let size = Int(tableSizes[index])
            guard limit - p >= size else { break }
            descriptions[dc] = AudioStreamPacketDescription(
                startOffset: Int64(p), variableFramesInPacket: variableFrames ? tableFrames[index] : 0,
                dataByteSize: UInt32(size))
            p += size
            dc += 1
        }
        if dc > 0 {
            deliver(v.slice(0, p), packets: dc, descriptionCount: dc)
            if let r = dataRemaining { dataRemaining = r - Int64(p) }
            return .consumed(p)
        }
        let index = Int(packetIndex)
        if index >= tableSizes.count {
            // Every packet of the table is out: the rest of the chunk is not audio.
            if let r = dataRemaining { skipRemaining = r; dataRemaining = 0 } else { phase = .trailing }
            return .consumed(0)
        }
        let size = Int64(tableSizes[index])
        if let r = dataRemaining, size > r {
            skipRemaining = r
            dataRemaining = 0
            return .consumed(0)
        }
        return .need(Int(size))
    }
}
