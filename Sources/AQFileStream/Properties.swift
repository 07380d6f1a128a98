import AQTypes

extension AudioFileStream {
    // MARK: property access

    /// Size and writability of a property's value (`AudioFileStreamGetPropertyInfo`).
    ///
    /// The size is that of Core Audio's C representation (40 for an AudioStreamBasicDescription,
    /// 24 for the translation structs). No property is writable.
    /// - Throws: ``AudioFileStreamError/valueUnknown`` when the value isn't known (yet, or in this
    ///   file), ``AudioFileStreamError/illegalOperation`` after ``close()``.
    /// - Thread: the parser's thread, also from inside a callback.
    public func propertyInfo(_ property: AudioFileStreamProperty) throws(AudioFileStreamError) -> (size: Int, isWritable: Bool) {
        switch property {
        case .packetToFrame, .frameToPacket, .packetToByte, .byteToPacket:
            try checkOpen()
            guard format != nil else { throw AudioFileStreamError.valueUnknown }
            return (24, false)
        default:
            return (try value(of: property).byteSize, false)
        }
    }

    /// A property's value (`AudioFileStreamGetProperty`).
    ///
    /// The translation properties (`packetToFrame`, `frameToPacket`, `packetToByte`,
    /// `byteToPacket`) need an input: use ``frame(forPacket:)``, ``packet(forFrame:)``,
    /// ``byte(forPacket:)`` and ``packet(forByte:)``; here they throw
    /// ``AudioFileStreamError/badPropertySize``.
    /// - Throws: ``AudioFileStreamError/valueUnknown`` when the value isn't known (yet, or in this
    ///   file); ``AudioFileStreamError/illegalOperation`` after ``close()``.
    /// - Thread: the parser's thread, also from inside a callback.
    public func value(of property: AudioFileStreamProperty) throws(AudioFileStreamError) -> AudioFileStreamPropertyValue {
        try checkOpen()
        func known<T>(_ v: T?) throws(AudioFileStreamError) -> T {
            guard let v else { throw AudioFileStreamError.valueUnknown.with(detail: "'\(property.code)' is not known") }
            return v
        }
        switch property {
        case .readyToProducePackets: return .uint32(ready ? 1 : 0)
        case .fileFormat: return .uint32(try known(fileFormat).rawValue)
        case .dataFormat: return .dataFormat(try known(format))
        case .formatList:
            let f = try known(format)
            let tag = layout?.tag ?? (f.channelsPerFrame == 1 ? AudioChannelLayoutTag.mono
                : f.channelsPerFrame == 2 ? AudioChannelLayoutTag.stereo : (0xFFFF << 16) | f.channelsPerFrame)
            // AAC: ADTS and MP4 keep the config they read; CAF's is in its `kuki` (an esds).
            if f.formatID == AudioFormatID.mpeg4AAC,
               let a = aacConfig ?? cookie.flatMap({ audioSpecificConfig($0) }).flatMap({ AACStreamConfig(audioSpecificConfig: $0) })
            {
                return .formatList(a.formatList(core: f, coreTag: tag))
            }
            return .formatList([AudioFormatListItem(format: f, channelLayoutTag: tag)])
        case .magicCookieData: return .bytes(try known(cookie))
        case .audioDataByteCount: return .uint64(try known(byteCount))
        case .audioDataPacketCount: return .uint64(try known(packetCount))
        case .maximumPacketSize: return .uint32(try known(maximumPacketSize))
        case .dataOffset: return .int64(try known(audioDataOffset))
        case .channelLayout: return .channelLayout(try known(layout))
        case .packetTableInfo: return .packetTableInfo(try known(packetTable))
        case .packetSizeUpperBound:
            let f = try known(format)
            if f.bytesPerPacket > 0 { return .uint32(f.bytesPerPacket) }
            if !tableSizes.isEmpty { return .uint32(tableMax) }
            return .uint32(try known(upperBound > 0 ? upperBound : nil))
        case .averageBytesPerPacket: return .float64(try known(averageBytesPerPacket))
        case .bitRate: return .uint32(try bitRateValue())
        case .packetToFrame, .frameToPacket, .packetToByte, .byteToPacket:
            throw AudioFileStreamError.badPropertySize.with(detail: "'\(property.code)' needs an input; use the translation methods")
        }
    }

    /// Setting properties (`AudioFileStreamSetProperty`): none are settable.
    /// - Throws: always ``AudioFileStreamError/unsupportedProperty`` (or `illegalOperation` when closed).
    /// - Thread: the parser's thread.
    public func setValue(_ value: AudioFileStreamPropertyValue, of property: AudioFileStreamProperty) throws(AudioFileStreamError) {
        try checkOpen()
        throw AudioFileStreamError.unsupportedProperty.with(detail: "'\(property.code)' is not writable")
    }

    private func checkOpen() throws(AudioFileStreamError) {
        if closed { throw AudioFileStreamError.illegalOperation.with(detail: "parser is closed") }
    }

    // MARK: typed accessors (nil when unknown)

    /// ``AudioFileStreamProperty/dataFormat``, nil until known. Thread: the parser's thread.
    public var dataFormat: AudioStreamBasicDescription? { closed ? nil : format }
    /// ``AudioFileStreamProperty/fileFormat``, nil until known. Thread: the parser's thread.
    public var fileType: FourCharCode? { closed ? nil : fileFormat }
    /// ``AudioFileStreamProperty/magicCookieData``, nil if the file has none (or not yet known). Thread: the parser's thread.
    public var magicCookie: [UInt8]? { closed ? nil : cookie }
    /// ``AudioFileStreamProperty/packetTableInfo``, nil if the file has none. Thread: the parser's thread.
    public var packetTableInfo: AudioFilePacketTableInfo? { closed ? nil : packetTable }
    /// ``AudioFileStreamProperty/audioDataPacketCount``, nil if the header doesn't say. Thread: the parser's thread.
    public var audioDataPacketCount: UInt64? { closed ? nil : packetCount }
    /// ``AudioFileStreamProperty/audioDataByteCount``, nil if the header doesn't say. Thread: the parser's thread.
    public var audioDataByteCount: UInt64? { closed ? nil : byteCount }
    /// ``AudioFileStreamProperty/dataOffset``, nil until known. Thread: the parser's thread.
    public var dataOffset: Int64? { closed ? nil : audioDataOffset }
    /// ``AudioFileStreamProperty/channelLayout``, nil if the file has none. Thread: the parser's thread.
    public var channelLayout: AudioChannelLayout? { closed ? nil : layout }

    /// ``AudioFileStreamProperty/maximumPacketSize``: exact for constant-size packets and packet
    /// tables, otherwise the largest packet delivered so far (the upper bound before any).
    /// Thread: the parser's thread.
    public var maximumPacketSize: UInt32? {
        guard let f = format, !closed else { return nil }
        if f.bytesPerPacket > 0 { return f.bytesPerPacket }
        if !tableSizes.isEmpty { return tableMax }
        if maxSeen > 0 { return maxSeen }
        return upperBound > 0 ? upperBound : nil
    }

    /// ``AudioFileStreamProperty/averageBytesPerPacket``: exact for constant-size packets, packet
    /// tables and Xing/VBRI byte counts, otherwise the running average. Thread: the parser's thread.
    public var averageBytesPerPacket: Double? {
        guard let f = format, !closed else { return nil }
        if f.bytesPerPacket > 0 { return Double(f.bytesPerPacket) }
        if !tableSizes.isEmpty { return Double(tableTotalBytes) / Double(tableSizes.count) }
        if let b = byteCount, let n = packetCount, n > 0, container == .mpeg { return Double(b) / Double(n) }
        if packetsSeen > 0 { return Double(bytesSeen) / Double(packetsSeen) }
        if firstFrameLength > 0 { return Double(firstFrameLength) }
        return nil
    }

    func bitRateValue() throws(AudioFileStreamError) -> UInt32 {
        guard let f = format else { throw AudioFileStreamError.valueUnknown }
        if let h = headerBitRate { return h }
        if f.bytesPerPacket > 0, f.framesPerPacket > 0 {
            return clampedUInt32(f.sampleRate * Double(f.bytesPerPacket) * 8 / Double(f.framesPerPacket))
        }
        if !tableSizes.isEmpty {
            let frames: Double = f.framesPerPacket > 0
                ? Double(tableSizes.count) * Double(f.framesPerPacket)
                : Double(tableFrames.reduce(UInt64(0)) { $0 + UInt64($1) })
            guard frames > 0 else { throw AudioFileStreamError.valueUnknown }
            return clampedUInt32(Double(tableTotalBytes) * 8 * f.sampleRate / frames)
        }
        let fromXing = container == .mpeg && byteCount != nil && (packetCount ?? 0) > 0
        guard f.framesPerPacket > 0, fromXing || packetsSeen > 0, let avg = averageBytesPerPacket else {
            throw AudioFileStreamError.valueUnknown
        }
        return clampedUInt32(avg * 8 * f.sampleRate / Double(f.framesPerPacket))
    }

    private func clampedUInt32(_ d: Double) -> UInt32 {
        guard d.isFinite, d > 0 else { return 0 }
        return d >= Double(UInt32.max) ? UInt32.max : UInt32(d)
    }

    // MARK: translations

    private func product(_ a: Int64, _ b: Int64) throws(AudioFileStreamError) -> Int64 {
        let (r, overflow) = a.multipliedReportingOverflow(by: b)
        if overflow { throw AudioFileStreamError.invalidPacketOffset.with(detail: "offset out of range") }
        return r
    }

    private func exactInt(_ d: Double) throws(AudioFileStreamError) -> Int64 {
        guard d.isFinite, d >= 0, d < 9.2e18 else {
            throw AudioFileStreamError.invalidPacketOffset.with(detail: "offset out of range")
        }
        return Int64(d)
    }

    /// The first frame of a packet (`kAudioFileStreamProperty_PacketToFrame`).
    /// - Throws: `valueUnknown` before the format is known; `invalidPacketOffset` for a negative
    ///   packet or one past a variable-frames packet table.
    /// - Thread: the parser's thread, also from inside a callback.
    public func frame(forPacket packet: Int64) throws(AudioFileStreamError) -> Int64 {
        try checkOpen()
        guard let f = format else { throw AudioFileStreamError.valueUnknown }
        guard packet >= 0 else { throw AudioFileStreamError.invalidPacketOffset }
        if f.framesPerPacket > 0 { return try product(packet, Int64(f.framesPerPacket)) }
        guard packet <= tableFrames.count else { throw AudioFileStreamError.invalidPacketOffset }
        return tableFrames[0..<Int(packet)].reduce(Int64(0)) { $0 + Int64($1) }
    }

    /// The packet holding a frame, and the frame's offset in it (`FrameToPacket`).
    /// - Throws: as ``frame(forPacket:)``.
    /// - Thread: the parser's thread, also from inside a callback.
    public func packet(forFrame frame: Int64) throws(AudioFileStreamError) -> AudioFramePacketTranslation {
        try checkOpen()
        guard let f = format else { throw AudioFileStreamError.valueUnknown }
        guard frame >= 0 else { throw AudioFileStreamError.invalidPacketOffset }
        if f.framesPerPacket > 0 {
            let fpp = Int64(f.framesPerPacket)
            return AudioFramePacketTranslation(frame: frame, packet: frame / fpp, frameOffsetInPacket: UInt32(frame % fpp))
        }
        var start: Int64 = 0
        for (i, n) in tableFrames.enumerated() {
            if frame < start + Int64(n) {
                return AudioFramePacketTranslation(frame: frame, packet: Int64(i), frameOffsetInPacket: UInt32(frame - start))
            }
            start += Int64(n)
        }
        throw AudioFileStreamError.invalidPacketOffset
    }

    /// Where a packet starts, in bytes from the start of the audio data (`PacketToByte`);
    /// estimated (``AudioBytePacketTranslation/isEstimate``) without a packet table.
    /// - Throws: `valueUnknown` before the format is known or when there is nothing to
    ///   estimate from; `invalidPacketOffset` for a negative packet or one past the table.
    /// - Thread: the parser's thread, also from inside a callback.
    public func byte(forPacket packet: Int64) throws(AudioFileStreamError) -> AudioBytePacketTranslation {
        try checkOpen()
        guard let f = format else { throw AudioFileStreamError.valueUnknown }
        guard packet >= 0 else { throw AudioFileStreamError.invalidPacketOffset }
        if f.bytesPerPacket > 0 {
            return AudioBytePacketTranslation(
                byte: try product(packet, Int64(f.bytesPerPacket)), packet: packet, byteOffsetInPacket: 0, isEstimate: false)
        }
        if container == .mp4 {
            // Samples sit where the sample table says (chunks may have other tracks between).
            guard packet < mp4.offsets.count, let start = audioDataOffset else { throw AudioFileStreamError.invalidPacketOffset }
            return AudioBytePacketTranslation(byte: mp4.offsets[Int(packet)] - start, packet: packet, byteOffsetInPacket: 0, isEstimate: false)
        }
        if !tableSizes.isEmpty {
            guard packet <= tableSizes.count else { throw AudioFileStreamError.invalidPacketOffset }
            let b = tableSizes[0..<Int(packet)].reduce(Int64(0)) { $0 + Int64($1) }
            return AudioBytePacketTranslation(byte: b, packet: packet, byteOffsetInPacket: 0, isEstimate: false)
        }
        let start = audioDataOffset ?? 0
        if container == .flac, f.framesPerPacket > 0, !flac.seekPoints.isEmpty {
            // SEEKTABLE: the last point at or before the packet's first sample.
            let sample = UInt64(try product(packet, Int64(f.framesPerPacket)))
            if let point = flac.seekPoints.last(where: { $0.sample <= sample }), point.offset < UInt64(Int64.max / 2) {
                let exact = point.sample == sample
                var b = Int64(point.offset)
                if !exact, let avg = averageBytesPerPacket {
                    let (sum, overflow) = b.addingReportingOverflow(
                        try exactInt(avg * Double(sample - point.sample) / Double(f.framesPerPacket)))
                    if overflow { throw AudioFileStreamError.invalidPacketOffset.with(detail: "offset out of range") }
                    b = sum
                }
                return AudioBytePacketTranslation(byte: b, packet: packet, byteOffsetInPacket: 0, isEstimate: !exact)
            }
        }
        if !xingTOC.isEmpty, let total = xingBytes, let frames = packetCount, frames > 0 {
            let percent = min(99.999, Double(packet) * 100 / Double(frames))
            let i = Int(percent)
            let a = Double(xingTOC[i])
            let b = i < 99 ? Double(xingTOC[i + 1]) : 256
            let offset = Int64((a + (b - a) * (percent - Double(i))) / 256 * Double(total))
            let rel = max(0, tagFrameOffset + offset - start)
            return AudioBytePacketTranslation(byte: rel, packet: packet, byteOffsetInPacket: 0, isEstimate: true)
        }
        if !vbriTOC.isEmpty {
            let per = Int64(vbriFramesPerEntry)
            var b: Int64 = 0
            let whole = Int(min(Int64(vbriTOC.count), packet / per))
            for k in 0..<whole { b += Int64(vbriTOC[k]) }
            if whole < vbriTOC.count { b += Int64(vbriTOC[whole]) * (packet - Int64(whole) * per) / per }
            return AudioBytePacketTranslation(byte: b, packet: packet, byteOffsetInPacket: 0, isEstimate: true)
        }
        guard let avg = averageBytesPerPacket else { throw AudioFileStreamError.valueUnknown }
        return AudioBytePacketTranslation(byte: try exactInt(avg * Double(packet)), packet: packet, byteOffsetInPacket: 0, isEstimate: true)
    }

    /// The packet holding a byte of the audio data (`ByteToPacket`), estimated without a table.
    /// - Throws: as ``byte(forPacket:)``.
    /// - Thread: the parser's thread, also from inside a callback.
    public func packet(forByte byte: Int64) throws(AudioFileStreamError) -> AudioBytePacketTranslation {
        try checkOpen()
        guard let f = format else { throw AudioFileStreamError.valueUnknown }
        guard byte >= 0 else { throw AudioFileStreamError.invalidPacketOffset }
        if f.bytesPerPacket > 0 {
            let bpp = Int64(f.bytesPerPacket)
            return AudioBytePacketTranslation(byte: byte, packet: byte / bpp, byteOffsetInPacket: UInt32(byte % bpp), isEstimate: false)
        }
        if !tableSizes.isEmpty {
            var start: Int64 = 0
            for (i, n) in tableSizes.enumerated() {
                if byte < start + Int64(n) {
                    return AudioBytePacketTranslation(byte: byte, packet: Int64(i), byteOffsetInPacket: UInt32(byte - start), isEstimate: false)
                }
                start += Int64(n)
            }
            throw AudioFileStreamError.invalidPacketOffset
        }
        guard let avg = averageBytesPerPacket, avg > 0 else { throw AudioFileStreamError.valueUnknown }
        let p = try exactInt(Double(byte) / avg)
        let start = try exactInt(Double(p) * avg)
        return AudioBytePacketTranslation(
            byte: byte, packet: p, byteOffsetInPacket: UInt32(clamping: max(0, byte - start)), isEstimate: true)
    }

    // MARK: seek

    /// Where to continue reading the file to get `packet` next (`AudioFileStreamSeek`).
    ///
    /// Returns the absolute file offset; the parser then expects the next ``parse(_:flags:)`` to
    /// start there (pass ``AudioFileStreamParseFlags/discontinuity``). The offset is estimated for
    /// MP3 (Xing/VBRI tables or average frame size) and ADTS; exact for PCM and CAF packet tables.
    /// MP3/ADTS resynchronise on the next confirmed frame.
    /// - Throws: `dataUnavailable` before ``isReadyToProducePackets``; `invalidPacketOffset` for
    ///   a negative packet or one at or past a known packet count; `illegalOperation` when closed or
    ///   inside a callback.
    /// - Thread: the parser's thread, not from inside a callback.
    public func seek(toPacket packet: Int64) throws(AudioFileStreamError) -> (byteOffset: Int64, flags: AudioFileStreamSeekFlags) {
        try checkOpen()
        if inCallback { throw AudioFileStreamError.illegalOperation.with(detail: "seek from a callback") }
        if let failure { throw failure }
        guard ready, let start = audioDataOffset else {
            throw AudioFileStreamError.dataUnavailable.with(detail: "seek before the audio data was reached")
        }
        guard packet >= 0 else { throw AudioFileStreamError.invalidPacketOffset }
        if let n = packetCount, UInt64(packet) >= n {
            throw AudioFileStreamError.invalidPacketOffset.with(detail: "packet \(packet) of \(n)")
        }
        let t = try byte(forPacket: packet)
        carry.removeAll()
        need = 0
        skipRemaining = 0
        position = start + t.byte
        packetIndex = packet
        justSeeked = true
        switch container {
        case .mpeg, .adts:
            locked = false
        case .mp4:
            phase = .mp4Data
        case .ogg:
            // Estimated: the parser finds the next page and starts with the next whole packet.
            phase = .oggPage
            ogg.partial = []
            ogg.partialValid = false
            ogg.vorbisPrevious = nil
        case .flac:
            // The next frame header found is the packet's (exact with a seek point on it).
            locked = false
            resetFLACScan()
            phase = .flacFrames
        default:
            phase = format!.bytesPerPacket > 0 ? .cbrData : .tableData
            dataRemaining = byteCount.map { Int64($0) - t.byte }
            if container == .wave || container == .aiff, let b = byteCount { dataPad = Int64(b & 1) }
            if container == .w64, let b = byteCount { dataPad = Int64((8 - ((b + 24) & 7)) & 7) }
        }
        return (position, t.isEstimate ? [.offsetIsEstimated] : [])
    }
}
