import AQTypes

/// A push parser for streamed audio files: Audio File Stream Services on Swift.
///
/// Feed the file's bytes in order with ``parse(_:flags:)``, split anywhere (even one byte at a
/// time). As the parser finds properties it calls the property listener; as it finds audio it
/// calls the packets handler with whole packets. It keeps only the properties and at most one
/// partial header or packet, never the audio, so memory stays constant however long the stream.
///
/// Formats: WAVE (with RF64/BW64 and Wave64), AIFF, AIFC, CAF, NeXT/Sun, MP3, ADTS AAC and
/// FLAC, MP4/M4A (AAC, Apple Lossless, FLAC, Opus), Ogg (FLAC, Opus, Vorbis) (see docs/file-stream.md).
///
/// Threading: the parser is not thread-safe. Use an instance from one thread at a time (it may
/// move between threads if calls are serialised by the caller). Both callbacks run synchronously
/// on the thread calling ``parse(_:flags:)``, before it returns. Inside a callback you may read
/// properties and translations, but not call ``parse(_:flags:)``, ``seek(toPacket:)`` or
/// ``close()`` (they throw ``AudioFileStreamError/illegalOperation``).
public final class AudioFileStream {
    /// Called when the parser found a property's value. `flags` always contains
    /// ``AudioFileStreamPropertyFlags/propertyIsCached``: every value, the magic cookie too,
    /// stays readable after the call (inserting ``AudioFileStreamPropertyFlags/cacheProperty``
    /// is allowed and changes nothing). Runs on the thread calling ``parse(_:flags:)``.
    public typealias PropertyListener = (
        _ stream: AudioFileStream, _ property: AudioFileStreamProperty,
        _ flags: inout AudioFileStreamPropertyFlags
    ) -> Void

    /// Called with whole packets: `data` holds `packetCount` packets; `descriptions` is non-nil for
    /// variable-size packets (MP3, AAC, ALAC), one per packet, offsets relative to `data`. The
    /// memory is only valid during the call (it is often the caller's own input); copy what you
    /// keep. Runs on the thread calling ``parse(_:flags:)``.
    public typealias PacketsHandler = (
        _ data: UnsafeRawBufferPointer, _ packetCount: Int,
        _ descriptions: UnsafeBufferPointer<AudioStreamPacketDescription>?
    ) -> Void

    /// The largest header, chunk or packet the parser will hold between calls (16 MiB + change).
    public static let maximumBufferedBytes = (16 << 20) + 64

    /// How many bytes of unknown data are scanned for an MP3/ADTS sync before giving up with
    /// ``AudioFileStreamError/unsupportedFileType`` (only without a file type hint).
    public static let sniffLimit = 1 << 16

    /// Packet descriptions handed to one packets callback at most.
    static let maxDescriptionsPerCallback = 2048

    let propertyListener: PropertyListener
    let packetsHandler: PacketsHandler
    /// The file type hint given at creation, if any.
    public let fileTypeHint: FourCharCode?

    // MARK: driver state
    enum Phase { case detect, id3, riffChunk, w64Chunk, aiffChunk, cafChunk, auHeader, cbrData, tableData, mpeg, adts, flacMeta, flacFrames, mp4Box, mp4Data, oggPage, trailing }
    enum Container { case unknown, wave, w64, aiff, caf, au, mpeg, adts, flac, mp4, ogg }
    var phase: Phase = .detect
    var container: Container = .unknown
    var carry = CarryBuffer()
    var need = 0
    var skipRemaining: Int64 = 0
    /// File offset of the next byte to be consumed.
    var position: Int64 = 0
    var closed = false
    var inCallback = false
    var failure: AudioFileStreamError?
    var justSeeked = false
    var sniffed = 0

    // MARK: properties found
    var fileFormat: FourCharCode?
    var format: AudioStreamBasicDescription?
    var cookie: [UInt8]?
    var layout: AudioChannelLayout?
    var byteCount: UInt64?
    var packetCount: UInt64?
    var audioDataOffset: Int64?
    var packetTable: AudioFilePacketTableInfo?
    var ready = false
    var headerBitRate: UInt32?
    var upperBound: UInt32 = 0

    // MARK: data state
    /// Audio bytes left in the data chunk; nil when running to the end of the stream.
    var dataRemaining: Int64?
    var dataPad: Int64 = 0
    /// Number of the next packet to deliver.
    var packetIndex: Int64 = 0
    var packetsSeen: UInt64 = 0
    var bytesSeen: UInt64 = 0
    var maxSeen: UInt32 = 0
    /// CAF packet table (sizes, and frames when the format has variable frames per packet).
    var tableSizes: [UInt32] = []
    var tableFrames: [UInt32] = []
    var tableMax: UInt32 = 0
    var tableTotalBytes: UInt64 = 0
    let descriptions: UnsafeMutableBufferPointer<AudioStreamPacketDescription>

    // MARK: MPEG / ADTS state
    var locked = false
    var mpegReference: MPEGHeader?
    /// An AAC stream's layers (ADTS header, MP4 esds): what the format list offers (issue 23).
    var aacConfig: AACStreamConfig?
    /// MP4 sample durations × this = frames at the data format's rate (an HE-AAC track's
    /// timescale is often the full rate, the data format the core's: 0.5).
    var mp4DurationScale: Double = 1
    var adtsReference: ADTSHeader?
    var xingTOC: [UInt8] = []
    var xingBytes: UInt64?
    /// File offset the Xing TOC and VBRI table are relative to (the tag frame's start).
    var tagFrameOffset: Int64 = 0
    var vbriTOC: [UInt32] = []
    var vbriFramesPerEntry: UInt32 = 0

    /// Creates a parser (`AudioFileStreamOpen`).
    ///
    /// - Parameters:
    ///   - fileTypeHint: the file type when the data can't tell (``AudioFileTypeID/aacADTS``,
    ///     ``AudioFileTypeID/mp3``); nil when unknown. Container formats are recognised anyway.
    ///   - propertyListener: called for each property found (see ``PropertyListener``).
    ///   - packets: called with audio packets (see ``PacketsHandler``).
    /// - Throws: ``AudioFileStreamError/unsupportedFileType`` for a hint the parser doesn't know.
    /// - Thread: any thread; the instance then belongs to one thread at a time.
    public init(
        fileTypeHint: FourCharCode? = nil,
        propertyListener: @escaping PropertyListener,
        packets: @escaping PacketsHandler
    ) throws(AudioFileStreamError) {
        if let hint = fileTypeHint, hint.rawValue != 0 {
            let known: [FourCharCode] = [
                AudioFileTypeID.wave, AudioFileTypeID.aiff, AudioFileTypeID.aifc, AudioFileTypeID.caf,
                AudioFileTypeID.next, AudioFileTypeID.mp3, AudioFileTypeID.mp2, AudioFileTypeID.mp1, AudioFileTypeID.aacADTS, AudioFileTypeID.rf64,
                AudioFileTypeID.bw64, AudioFileTypeID.wave64, AudioFileTypeID.flac, AudioFileTypeID.mpeg4,
                AudioFileTypeID.m4a, AudioFileTypeID.ogg,
            ]
            guard known.contains(hint) else {
                throw AudioFileStreamError.unsupportedFileType.with(detail: "file type hint '\(hint)'")
            }
            self.fileTypeHint = hint
        } else {
            self.fileTypeHint = nil
        }
        self.propertyListener = propertyListener
        packetsHandler = packets
        descriptions = .allocate(capacity: Self.maxDescriptionsPerCallback)
    }

    deinit { descriptions.deallocate() }

    /// Bytes the parser holds between calls (a partial header or packet); for diagnostics and
    /// tests. Bounded by ``maximumBufferedBytes``.
    /// - Thread: the parser's thread.
    public var bufferedByteCount: Int { carry.count }

    /// True once the parser reached the audio data (property ``AudioFileStreamProperty/readyToProducePackets``).
    /// - Thread: the parser's thread.
    public var isReadyToProducePackets: Bool { ready }

    /// Closes the parser (`AudioFileStreamClose`): releases buffers; later calls throw
    /// ``AudioFileStreamError/illegalOperation``. Closing twice is harmless.
    /// - Thread: the parser's thread, not from inside a callback.
    public func close() throws(AudioFileStreamError) {
        if inCallback { throw AudioFileStreamError.illegalOperation.with(detail: "close from a callback") }
        closed = true
        carry.removeAll()
        tableSizes = []
        tableFrames = []
    }

    /// Parses bytes (`AudioFileStreamParseBytes`).
    ///
    /// Bytes must follow those given before, from the start of the file, or from the offset
    /// returned by the last ``seek(toPacket:)``. Callbacks are called before this returns.
    /// - Parameters:
    ///   - bytes: the next bytes of the file, any length (0 is fine).
    ///   - flags: ``AudioFileStreamParseFlags/discontinuity`` when these bytes don't follow the
    ///     previous ones (after a seek, or lost data): a partial packet is dropped and MP3/ADTS
    ///     resynchronise.
    /// - Throws: an ``AudioFileStreamError``; after an error other than `illegalOperation` the
    ///   parser is failed and every later call throws the same error.
    /// - Thread: the parser's thread, not from inside a callback.
    public func parse(
        _ bytes: UnsafeRawBufferPointer, flags: AudioFileStreamParseFlags = []
    ) throws(AudioFileStreamError) {
        if closed { throw AudioFileStreamError.illegalOperation.with(detail: "parser is closed") }
        if inCallback { throw AudioFileStreamError.illegalOperation.with(detail: "parse from a callback") }
        if let failure { throw failure }
        do {
            if flags.contains(.discontinuity) { try discontinuity() }
            justSeeked = false
            try run(bytes)
        } catch {
            failure = error
            carry.removeAll()
            throw error
        }
    }

    /// Parses the bytes of an array; see ``parse(_:flags:)``.
    /// - Thread: the parser's thread, not from inside a callback.
    public func parse(_ bytes: [UInt8], flags: AudioFileStreamParseFlags = []) throws(AudioFileStreamError) {
        let result: Result<Void, AudioFileStreamError> = bytes.withUnsafeBytes { raw in
            do throws(AudioFileStreamError) { try self.parse(raw, flags: flags); return .success(()) } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    private func discontinuity() throws(AudioFileStreamError) {
        carry.removeAll()
        need = 0
        guard ready else {
            throw AudioFileStreamError.discontinuityCantRecover.with(detail: "discontinuity before the audio data")
        }
        switch phase {
        case .mpeg, .adts, .flacFrames: locked = false; resetFLACScan()
        case .oggPage: ogg.partial = []; ogg.partialValid = false; ogg.vorbisPrevious = nil
        case .mp4Data where !justSeeked, .mp4Box where !justSeeked:
            throw AudioFileStreamError.discontinuityCantRecover.with(
                detail: "MP4 samples are found by file offset; after lost data, seek first")
        case .tableData where !justSeeked:
            throw AudioFileStreamError.discontinuityCantRecover.with(
                detail: "packet boundaries unknown after a discontinuity; seek first")
        default: break
        }
    }

    enum Outcome { case consumed(Int), need(Int) }

    /// Feeds `input` through the carry buffer and the format's step functions.
    private func run(_ input: UnsafeRawBufferPointer) throws(AudioFileStreamError) {
        var inPos = 0
        var idle = 0
        while true {
            if carry.isEmpty {
                let view = input.slice(inPos, input.count)
                let outcome = try step(view)
                switch outcome {
                case .consumed(let n):
                    inPos += n
                    position += Int64(n)
                    idle = n == 0 ? idle + 1 : 0
                case .need(let n):
                    guard n > view.count else { throw internalStall() }
                    guard n <= Self.maximumBufferedBytes else {
                        throw AudioFileStreamError.invalidFile.with(detail: "a header or packet of \(n) bytes is too large")
                    }
                    need = n
                    carry.append(view)
                    return
                }
            } else {
                let take = min(need - carry.count, input.count - inPos)
                if take > 0 {
                    carry.append(input.slice(inPos, inPos + take))
                    inPos += take
                }
                if carry.count < need { return }
                let outcome = try step(carry.bytes)
                switch outcome {
                case .consumed(let n):
                    carry.removeFirst(n)
                    position += Int64(n)
                    idle = n == 0 ? idle + 1 : 0
                    // Let the step look at what is left in the carry before topping it up.
                    if carry.isEmpty { carry.removeAll() } else { need = carry.count }
                case .need(let n):
                    guard n > carry.count else { throw internalStall() }
                    guard n <= Self.maximumBufferedBytes else {
                        throw AudioFileStreamError.invalidFile.with(detail: "a header or packet of \(n) bytes is too large")
                    }
                    need = n
                }
            }
            if idle > 16 { throw internalStall() }
        }
    }

    private func internalStall() -> AudioFileStreamError {
        AudioFileStreamError.invalidFile.with(detail: "parser made no progress")
    }

    private func step(_ v: UnsafeRawBufferPointer) throws(AudioFileStreamError) -> Outcome {
        if skipRemaining > 0 {
            if v.count == 0 { return .need(1) }
            let n = Int(min(Int64(v.count), skipRemaining))
            skipRemaining -= Int64(n)
            return .consumed(n)
        }
        switch phase {
        case .detect: return try stepDetect(v)
        case .id3: return try stepID3(v)
        case .riffChunk: return try stepRIFFChunk(v)
        case .w64Chunk: return try stepW64Chunk(v)
        case .flacMeta: return try stepFLACMetadata(v)
        case .flacFrames: return try stepFLACFrames(v)
        case .mp4Box: return try stepMP4Box(v)
        case .mp4Data: return try stepMP4Data(v)
        case .oggPage: return try stepOggPage(v)
        case .aiffChunk: return try stepAIFFChunk(v)
        case .cafChunk: return try stepCAFChunk(v)
        case .auHeader: return try stepAUHeader(v)
        case .cbrData: return stepCBRData(v)
        case .tableData: return try stepTableData(v)
        case .mpeg: return try stepMPEG(v)
        case .adts: return try stepADTS(v)
        case .trailing: return v.count == 0 ? .need(1) : .consumed(v.count)
        }
    }

    // MARK: callbacks

    func deliver(_ data: UnsafeRawBufferPointer, packets: Int, descriptionCount: Int) {
        guard packets > 0 else { return }
        inCallback = true
        defer { inCallback = false }
        packetIndex += Int64(packets)
        packetsSeen += UInt64(packets)
        if descriptionCount > 0 {
            var payload = 0
            for i in 0..<descriptionCount {
                let s = descriptions[i].dataByteSize
                payload += Int(s)
                if s > maxSeen { maxSeen = s }
            }
            bytesSeen += UInt64(payload)
            packetsHandler(data, packets, UnsafeBufferPointer(rebasing: descriptions[0..<descriptionCount]))
        } else {
            bytesSeen += UInt64(data.count)
            if let f = format, f.bytesPerPacket > maxSeen { maxSeen = f.bytesPerPacket }
            packetsHandler(data, packets, nil)
        }
    }

    private func announce(_ property: AudioFileStreamProperty) -> AudioFileStreamPropertyFlags {
        var flags: AudioFileStreamPropertyFlags = [.propertyIsCached]
        inCallback = true
        propertyListener(self, property, &flags)
        inCallback = false
        return flags
    }

    /// Announces everything known and then ReadyToProducePackets.
    func becomeReady() {
        guard !ready else { return }
        audioDataOffset = audioDataOffset ?? position
        var order: [AudioFileStreamProperty] = [.fileFormat, .dataFormat, .formatList]
        if cookie != nil { order.append(.magicCookieData) }
        if layout != nil { order.append(.channelLayout) }
        if packetTable != nil { order.append(.packetTableInfo) }
        if byteCount != nil { order.append(.audioDataByteCount) }
        if packetCount != nil { order.append(.audioDataPacketCount) }
        order += [.dataOffset, .packetSizeUpperBound]
        if (try? bitRateValue()) != nil { order.append(.bitRate) }
        // Every value stays readable after its notification, the magic cookie too: streaming
        // players (Apple's AudioFileStreamExample) read the cookie when ReadyToProducePackets
        // arrives, without having asked for it to be cached, as Apple's parser allows. So every
        // notification carries PropertyIsCached and CacheProperty changes nothing.
        for p in order { _ = announce(p) }
        ready = true
        _ = announce(.readyToProducePackets)
    }

    var firstFrameLength = 0

    // MARK: RF64 / Wave64 / FLAC state
    /// RF64/BW64 `ds64` sizes: the data chunk's, and other chunks' from its table.
    var ds64DataSize: UInt64?
    var ds64Table: [FourCharCode: UInt64] = [:]
    /// The first four bytes of the input, for the message when nothing is recognised.
    var leadingBytes: [UInt8] = []
    var flac = FLACState()
    var mp4 = MP4Track()
    var ogg = OggState()
}
