import AQTypes

// Native FLAC: "fLaC", metadata blocks (STREAMINFO first), then frames. A frame has no length
// field: it ends where its CRC-16 (over the whole frame) matches, confirmed by a valid next
// frame header, or by STREAMINFO's sample count for the last frame.

/// What the parser keeps of a FLAC stream.
struct FLACState {
    var minBlock = 0, maxBlock = 0, minFrame = 0, maxFrame = 0
    var rate = 0, channels = 0, bits = 0
    var totalSamples: UInt64 = 0
    var streamInfo: [UInt8] = []
    /// Blocking strategy of the first frame (false: fixed block size).
    var variableBlocks: Bool?
    /// SEEKTABLE points: (first sample, byte offset from the first frame).
    var seekPoints: [(sample: UInt64, offset: UInt64)] = []
    // The frame being scanned (it starts at offset 0 of the parser's view).
    var headerLength = 0
    var blockSize = 0
    var channelCode = 0
    var frameBits = 0
    var scanned = 0
    var crc: UInt16 = 0
    /// The largest frame the scan looks through before deciding the frame is broken.
    var scanLimit = 0
}

/// A parsed FLAC frame header.
struct FLACFrameHeader {
    var length: Int
    var blockSize: Int
    var variable: Bool
    /// Frame number (fixed block size) or sample number (variable).
    var number: UInt64
    var rate: Int?
    var channels: Int
    var channelCode: Int
    var bits: Int?
}

enum FLACHeaderResult { case invalid, needMore(Int), valid(FLACFrameHeader) }

/// CRC-8 (polynomial 0x07) and CRC-16 (0x8005) as FLAC uses them, MSB first, initial 0.
let flacCRC8Table: [UInt8] = (0..<256).map { i -> UInt8 in
    var c = UInt8(i)
    for _ in 0..<8 { c = c & 0x80 != 0 ? (c << 1) ^ 0x07 : c << 1 }
    return c
}
let flacCRC16Table: [UInt16] = (0..<256).map { i -> UInt16 in
    var c = UInt16(i) << 8
    for _ in 0..<8 { c = c & 0x8000 != 0 ? (c << 1) ^ 0x8005 : c << 1 }
    return c
}

/// Parses a frame header at `i`; checks its CRC-8.
func flacFrameHeader(_ v: UnsafeRawBufferPointer, _ i: Int) -> FLACHeaderResult {
    if v.count < i + 5 { return .needMore(i + 5) }
    guard v[i] == 0xFF, v[i + 1] & 0xFE == 0xF8 else { return .invalid }
    let variable = v[i + 1] & 1 == 1
    let bsCode = Int(v[i + 2] >> 4), rateCode = Int(v[i + 2] & 0x0F)
    let chCode = Int(v[i + 3] >> 4), sizeCode = Int((v[i + 3] >> 1) & 7)
    guard bsCode != 0, rateCode != 15, chCode <= 10, sizeCode != 3, v[i + 3] & 1 == 0 else { return .invalid }
    // The coded number: like UTF-8, up to 7 bytes.
    var p = i + 4
    let first = v[p]
    var extra = 0
    var number: UInt64
    if first & 0x80 == 0 { number = UInt64(first) }
    else if first & 0xE0 == 0xC0 { extra = 1; number = UInt64(first & 0x1F) }
    else if first & 0xF0 == 0xE0 { extra = 2; number = UInt64(first & 0x0F) }
    else if first & 0xF8 == 0xF0 { extra = 3; number = UInt64(first & 0x07) }
    else if first & 0xFC == 0xF8 { extra = 4; number = UInt64(first & 0x03) }
    else if first & 0xFE == 0xFC { extra = 5; number = UInt64(first & 0x01) }
    else if first == 0xFE, variable { extra = 6; number = 0 }
    else { return .invalid }
    p += 1
    let tailBytes = (bsCode == 6 ? 1 : bsCode == 7 ? 2 : 0) + (rateCode == 12 ? 1 : rateCode == 13 || rateCode == 14 ? 2 : 0)
    let length = p - i + extra + tailBytes + 1
    if v.count < i + length { return .needMore(i + length) }
    for _ in 0..<extra {
        guard v[p] & 0xC0 == 0x80 else { return .invalid }
        number = number << 6 | UInt64(v[p] & 0x3F)
        p += 1
    }
    var blockSize: Int
    switch bsCode {
    case 1: blockSize = 192
    case 2...5: blockSize = 576 << (bsCode - 2)
    case 6: blockSize = Int(v[p]) + 1; p += 1
    case 7: blockSize = Int(v.be16(p)) + 1; p += 2
    default: blockSize = 256 << (bsCode - 8)
    }
    let rates = [0, 88200, 176_400, 192_000, 8000, 16000, 22050, 24000, 32000, 44100, 48000, 96000]
    var rate: Int?
    switch rateCode {
    case 0: rate = nil
    case 12: rate = Int(v[p]) * 1000; p += 1
    case 13: rate = Int(v.be16(p)); p += 2
    case 14: rate = Int(v.be16(p)) * 10; p += 2
    default: rate = rates[rateCode]
    }
    var crc: UInt8 = 0
    for k in i..<p { crc = flacCRC8Table[Int(crc ^ v[k])] }
    guard crc == v[p] else { return .invalid }
    let bitsTable: [Int?] = [nil, 8, 12, nil, 16, 20, 24, 32]
    return .valid(FLACFrameHeader(
        length: p + 1 - i, blockSize: blockSize, variable: variable, number: number, rate: rate,
        channels: chCode < 8 ? chCode + 1 : 2, channelCode: chCode, bits: bitsTable[sizeCode]))
}

extension AudioFileStream {
    // MARK: FLAC metadata

    func stepFLACMetadata(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if v.count < 4 { return .need(4) }
        let last = v[0] & 0x80 != 0
        let type = v[0] & 0x7F
        let length = Int(v.be24(1))
        switch type {
        case 0:
            guard flac.streamInfo.isEmpty else { throw invalid("FLAC with two STREAMINFO blocks") }
            guard length == 34 else { throw invalid("FLAC STREAMINFO of \(length) bytes") }
            if v.count < 38 { return .need(38) }
            try parseStreamInfo(v.slice(4, 38))
            if last { try flacReady(firstFrameAfter: 38) }
            return .consumed(38)
        case 3 where length <= 1 << 20:
            if v.count < 4 + length { return .need(4 + length) }
            flac.seekPoints = []
            for e in 0..<(length / 18) {
                let o = 4 + 18 * e
                let sample = v.be64(o)
                if sample == UInt64.max { continue }  // placeholder
                flac.seekPoints.append((sample, v.be64(o + 8)))
            }
            if last { try flacReady(firstFrameAfter: Int64(4 + length)) }
            return .consumed(4 + length)
        case 127:
            throw invalid("FLAC metadata block of the invalid type 127")
        default:
            guard !flac.streamInfo.isEmpty else { throw invalid("FLAC metadata before STREAMINFO") }
            skipRemaining = Int64(length)
            if last {
                // Ready once the skipped block has streamed by: the first frame follows.
                try flacReady(firstFrameAfter: 4 + Int64(length))
            }
            return .consumed(4)
        }
    }

    func parseStreamInfo(_ b: UnsafeRawBufferPointer) throws(AudioFileStreamError) {
        flac.minBlock = Int(b.be16(0))
        flac.maxBlock = Int(b.be16(2))
        flac.minFrame = Int(b.be24(4))
        flac.maxFrame = Int(b.be24(7))
        let packed = b.be64(10)
        flac.rate = Int(packed >> 44)
        flac.channels = Int((packed >> 41) & 7) + 1
        flac.bits = Int((packed >> 36) & 31) + 1
        flac.totalSamples = packed & 0xF_FFFF_FFFF
        guard flac.rate > 0 else { throw invalid("FLAC STREAMINFO: zero sample rate") }
        guard flac.maxBlock >= 16, flac.minBlock >= 16, flac.minBlock <= flac.maxBlock else {
            throw invalid("FLAC STREAMINFO: block sizes \(flac.minBlock)…\(flac.maxBlock)")
        }
        guard flac.bits >= 4 else { throw invalid("FLAC STREAMINFO: \(flac.bits) bits per sample") }
        flac.streamInfo = Array(b)
    }

    /// The metadata is over: the format, cookie and counts are known.
    private func flacReady(firstFrameAfter skip: Int64) throws(AudioFileStreamError) {
        try flacAnnounceFormat()
        audioDataOffset = position + skip
        phase = .flacFrames
        locked = true
        resetFLACScan()
        packetIndex = 0
        becomeReady()
    }

    /// Format, cookie, counts and bounds from STREAMINFO (native FLAC and Ogg FLAC).
    func flacAnnounceFormat() throws(AudioFileStreamError) {
        guard !flac.streamInfo.isEmpty else { throw invalid("FLAC without STREAMINFO") }
        let fixed = flac.minBlock == flac.maxBlock
        let bitsFlag: UInt32 = switch flac.bits {
        case 16: 1
        case 20: 2
        case 24: 3
        case 32: 4
        default: 0
        }
        format = AudioStreamBasicDescription(
            sampleRate: Double(flac.rate), formatID: AudioFormatID.flac, formatFlags: AudioFormatFlags(rawValue: bitsFlag),
            bytesPerPacket: 0, framesPerPacket: fixed ? UInt32(flac.maxBlock) : 0, bytesPerFrame: 0,
            channelsPerFrame: UInt32(flac.channels), bitsPerChannel: 0)
        // The cookie is what an MP4 `dfLa` box holds: version and flags, then STREAMINFO as
        // the last metadata block.
        cookie = [0, 0, 0, 0, 0x80, 0, 0, 34] + flac.streamInfo
        let total = flac.totalSamples
        if total > 0 {
            var remainder: Int32 = 0
            if fixed {
                let bs = UInt64(flac.maxBlock)
                let packets = (total + bs - 1) / bs
                packetCount = packets
                remainder = Int32(packets * bs - total)
            }
            packetTable = AudioFilePacketTableInfo(numberValidFrames: Int64(total), primingFrames: 0, remainderFrames: remainder)
        }
        // A verbatim frame: every sample stored (side channels take a bit more), plus headers.
        let verbatim = flac.maxBlock * flac.channels * (flac.bits + 1) / 8 + 64 + 2 * flac.channels
        upperBound = UInt32(max(flac.maxFrame, verbatim))
        flac.scanLimit = min(Int(upperBound) + 64, Self.maximumBufferedBytes - 64)
        // Before any frame went by, seeks estimate with STREAMINFO's frame sizes.
        firstFrameLength = flac.minFrame > 0 && flac.maxFrame > 0 ? (flac.minFrame + flac.maxFrame) / 2 : Int(upperBound) / 2
    }

    func resetFLACScan() {
        flac.headerLength = 0
        flac.scanned = 0
        flac.crc = 0
    }

    /// A header that belongs to this stream: same channels, rate, bits, blocking strategy.
    private func flacConsistent(_ h: FLACFrameHeader) -> Bool {
        h.channels == flac.channels && (h.rate == nil || h.rate == flac.rate) && (h.bits == nil || h.bits == flac.bits)
            && h.blockSize <= flac.maxBlock && (flac.variableBlocks == nil || flac.variableBlocks == h.variable)
    }

    // MARK: FLAC frames

    func stepFLACFrames(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        guard locked else { return flacSync(v) }
        if flac.headerLength == 0 {
            switch flacFrameHeader(v, 0) {
            case .needMore(let n): return .need(n)
            case .invalid:
                locked = false
                return .consumed(0)
            case .valid(let h):
                guard flacConsistent(h) else { locked = false; return .consumed(0) }
                flac.variableBlocks = h.variable
                flac.headerLength = h.length
                flac.blockSize = h.blockSize
                flac.channelCode = h.channelCode
                flac.frameBits = h.bits ?? flac.bits
                flac.scanned = 0
                flac.crc = 0
            }
        }
        var k = flac.scanned
        var crc = flac.crc
        // Invariant: crc is the CRC-16 of v[0..<k]. Where the CRC matches, the frame's own
        // structure (its subframes, walked without decoding) must end there too.
        while k + 2 <= v.count {
            if k > flac.headerLength, crc == v.be16(k),
                flacFrameEnd(v, headerLength: flac.headerLength, limit: k + 2, blockSize: flac.blockSize,
                             channelCode: flac.channelCode, bits: flac.frameBits) == k + 2
            {
                return flacDeliver(v, k + 2)
            }
            crc = crc << 8 ^ flacCRC16Table[Int(UInt8(crc >> 8) ^ v[k])]
            k += 1
            if k > flac.scanLimit {
                // No end in sight: the frame is damaged. Look for the next one.
                resetFLACScan()
                locked = false
                return .consumed(1)
            }
        }
        flac.scanned = k
        flac.crc = crc
        return .need(v.count + 1)
    }

    private func flacDeliver(_ v: UnsafeRawBufferPointer, _ end: Int) -> Outcome {
        descriptions[0] = AudioStreamPacketDescription(
            startOffset: 0, variableFramesInPacket: UInt32(flac.blockSize), dataByteSize: UInt32(end))
        resetFLACScan()
        deliver(v.slice(0, end), packets: 1, descriptionCount: 1)
        return .consumed(end)
    }

    /// Looks for a frame header that belongs to the stream.
    private func flacSync(_ v: UnsafeRawBufferPointer) -> Outcome {
        var i = 0
        while i + 2 <= v.count {
            if v[i] == 0xFF, v[i + 1] & 0xFE == 0xF8 {
                switch flacFrameHeader(v, i) {
                case .needMore(let n): return i > 0 ? .consumed(i) : .need(n)
                case .valid(let h) where flacConsistent(h):
                    if i > 0 { return .consumed(i) }
                    locked = true
                    resetFLACScan()
                    return .consumed(0)
                default: break
                }
            }
            i += 1
        }
        let drop = v.count - 1
        return drop > 0 ? .consumed(drop) : .need(2)
    }
}

/// Reads bits MSB first from `v[0..<limit]`; reading past the limit makes ``failed`` true
/// (and returns zeros), so callers check once at the end of a step.
struct FLACBitReader {
    let v: UnsafeRawBufferPointer
    let limitBits: Int
    var bit: Int
    var failed = false

    init(_ v: UnsafeRawBufferPointer, byte: Int, limit: Int) {
        self.v = v
        bit = byte * 8
        limitBits = limit * 8
    }

    mutating func read(_ n: Int) -> UInt64 {
        guard n > 0 else { return 0 }
        guard bit + n <= limitBits else { failed = true; bit = limitBits; return 0 }
        var value: UInt64 = 0
        var left = n
        while left > 0 {
            let byte = v[bit >> 3]
            let used = bit & 7
            let take = min(8 - used, left)
            let bits = (UInt64(byte) >> UInt64(8 - used - take)) & ((1 << UInt64(take)) - 1)
            value = value << UInt64(take) | bits
            bit += take
            left -= take
        }
        return value
    }

    /// Skips `n` bits.
    mutating func skip(_ n: Int) {
        guard n >= 0, bit + n <= limitBits else { failed = true; bit = limitBits; return }
        bit += n
    }

    /// Zeros up to and including the next 1 bit; returns how many zeros.
    mutating func unary() -> Int {
        var zeros = 0
        while bit < limitBits {
            let byte = v[bit >> 3]
            let used = bit & 7
            let rest = UInt8(truncatingIfNeeded: Int(byte) << used)
            if rest == 0 {
                zeros += 8 - used
                bit += 8 - used
                continue
            }
            let lead = rest.leadingZeroBitCount
            zeros += lead
            bit += lead + 1
            return zeros
        }
        failed = true
        return zeros
    }
}

/// Walks a FLAC frame's subframes (without decoding samples) from just after its header to
/// where the frame's structure says it ends: the byte after its CRC-16. Nil when the bytes
/// before `limit` are not a well-formed frame that ends there or earlier.
func flacFrameEnd(
    _ v: UnsafeRawBufferPointer, headerLength: Int, limit: Int, blockSize: Int, channelCode: Int, bits: Int
) -> Int? {
    var r = FLACBitReader(v, byte: headerLength, limit: limit)
    let channels = channelCode < 8 ? channelCode + 1 : 2
    for c in 0..<channels {
        // Side channels carry one more bit.
        let side = (channelCode == 8 && c == 1) || (channelCode == 9 && c == 0) || (channelCode == 10 && c == 1)
        var size = bits + (side ? 1 : 0)
        guard r.read(1) == 0 else { return nil }
        let type = Int(r.read(6))
        if r.read(1) == 1 { size -= r.unary() + 1 }
        guard size > 0, !r.failed else { return nil }
        switch type {
        case 0:
            r.skip(size)
        case 1:
            r.skip(size * blockSize)
        case 8...12, 32...63:
            let order = type >= 32 ? type - 31 : type - 8
            guard order <= blockSize else { return nil }
            r.skip(order * size)
            if type >= 32 {
                let precision = Int(r.read(4)) + 1
                guard precision != 16 else { return nil }
                r.skip(5 + order * precision)
            }
            let method = r.read(2)
            guard method < 2 else { return nil }
            let paramBits = method == 0 ? 4 : 5
            let escape = UInt64((1 << paramBits) - 1)
            let partitionOrder = Int(r.read(4))
            let partitions = 1 << partitionOrder
            guard blockSize % partitions == 0, blockSize >> partitionOrder >= order else { return nil }
            for p in 0..<partitions {
                let samples = (blockSize >> partitionOrder) - (p == 0 ? order : 0)
                let param = r.read(paramBits)
                if param == escape {
                    r.skip(Int(r.read(5)) * samples)
                } else {
                    for _ in 0..<samples {
                        _ = r.unary()
                        r.skip(Int(param))
                        if r.failed { return nil }
                    }
                }
                if r.failed { return nil }
            }
        default:
            return nil
        }
        if r.failed { return nil }
    }
    let end = (r.bit + 7) / 8 + 2
    return end <= limit ? end : nil
}
