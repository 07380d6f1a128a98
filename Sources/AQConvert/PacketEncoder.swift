import AQTypes
import CAVCodec

/// Why a ``PacketEncoder`` could not be made.
///
/// Thread safety: a plain value; use from any thread.
public struct PacketEncoderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the caller got wrong or what is missing, in words.
    public enum Kind: Hashable, Sendable {
        /// Not a format ``PacketEncoder`` encodes: another format ID, AAC other than LC, a
        /// frames-per-packet other than the codec's, a rate or channel count the codec refuses.
        case unsupportedFormat
        /// libavcodec has no encoder for the format, or could not open it, or could not be loaded
        /// (the message then is ``AVCodecLibrary/load()``'s: "libavcodec.so.59 could not be loaded: …").
        case encoderUnavailable
    }
    /// Which of the failures it is.
    public let kind: Kind
    /// What is wrong, in words.
    public let message: String
    /// Same as ``message``.
    public var description: String { message }
    /// `'fmt?'` (`kAudioFormatUnsupportedDataFormatError`), as for PCM formats.
    public var resultCode: Int32 { PCMFormatError.unsupportedDataFormatResultCode }
}

/// Encodes planar Float32 frames to compressed packets with libavcodec: AAC LC (FFmpeg's `aac`
/// encoder, 1024 frames a packet) and Apple Lossless (FFmpeg's `alac` encoder, 4096 frames a
/// packet, 16- or 24-bit source data).
///
/// Feed frames in stream order with ``encode(_:frames:into:)``; packets come out whole, each of
/// ``framesPerPacket`` frames, but the last of a stream (``finish(into:)``): AAC's is padded with
/// silence, ALAC's holds only the frames left (its header says how many, as Apple's encoder
/// makes it; decoders give exactly the frames fed). At the end
/// of a stream call ``finish(into:)`` (the encoder's last packets, and the stream's remainder
/// frames), then ``reset()`` before the next stream.
///
/// **Priming.** AAC packets are delayed by ``primingFrames`` (1024 for FFmpeg's encoder):
/// decoding a stream's packets from the first gives ``primingFrames`` frames before the first
/// frame fed. A stream of N frames gives P packets with P × framesPerPacket = priming + N +
/// remainder (``finish(into:)`` returns the remainder): exactly the `pakt` chunk of a CAF file
/// (`AudioFilePacketTableInfo`). Apple Lossless has no priming.
///
/// **Samples.** AAC takes the floats as they are. Apple Lossless takes them quantised as the
/// project's PCM formats do (``PCMInterleaver``: x × 2^(bits−1), NaN → 0, rounded, clipped; decoded back with
/// ``PacketDecoder`` it gives those integers / 2^(bits−1) exactly).
///
/// **Magic cookie.** ``magicCookie``, valid from creation: for AAC the body of an `esds` atom
/// (4 bytes of version and flags, then the MPEG-4 ES descriptor holding the AudioSpecificConfig),
/// what a CAF `kuki` chunk holds for AAC; for Apple Lossless the 24-byte ALACSpecificConfig.
/// ``PacketDecoder`` and FFmpeg's CAF reader take both.
///
/// Thread safety: **not thread-safe.** One control or worker thread at a time (it may be handed
/// between threads between calls). Never the render thread: libavcodec allocates and its time
/// per packet is unbounded. The static members are pure and may be called from any thread.
public final class PacketEncoder {
    /// The stream format, completed: `framesPerPacket` the codec's, `bytesPerPacket`,
    /// `bytesPerFrame` and `bitsPerChannel` 0; for AAC `formatFlags` 2 (`kMPEG4Object_AAC_LC`),
    /// for ALAC the source bit depth flag (1: 16 bits, 3: 24 bits). Any thread may read it.
    public let format: AudioStreamBasicDescription
    /// Channels of the input frames and of the stream.
    public let channelCount: Int
    /// Frames in every packet: 1024 (AAC), 4096 (ALAC).
    public let framesPerPacket: Int
    /// Frames of encoder delay before a stream's first frame in its decoded packets (AAC 1024,
    /// ALAC 0).
    public private(set) var primingFrames = 0
    /// The largest packet the encoder makes, in bytes (size buffers from it).
    public private(set) var maximumPacketSize = 0
    /// The format's magic cookie (see the type's documentation). Valid from creation.
    public private(set) var magicCookie: [UInt8] = []
    /// Frames fed since the stream began (``reset()``).
    public private(set) var framesEncoded: Int64 = 0
    /// Packets handed out since the stream began.
    public private(set) var packetsProduced: Int64 = 0

    private var context: UnsafeMutablePointer<AVCodecContext>?
    private let codec: UnsafePointer<AVCodec>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    /// Frames in `frame` waiting for a whole packet.
    private var pending = 0
    private var nextPTS: Int64 = 0
    private let alacBits: Int
    /// AAC's target bits per second as opened: the rate asked for (0: 96000 a channel), capped at
    /// AAC's limit; ALAC does not use it. Any thread may read it.
    public let bitRate: Int
    private var finished = false

    /// The AAC object type flag for AAC LC (`kMPEG4Object_AAC_LC`).
    public static let aacLowComplexityFlag: UInt32 = 2
    /// ALAC format flags: 16-bit source data (`kAppleLosslessFormatFlag_16BitSourceData`).
    public static let alac16BitSourceFlag: UInt32 = 1
    /// ALAC format flags: 24-bit source data (`kAppleLosslessFormatFlag_24BitSourceData`).
    public static let alac24BitSourceFlag: UInt32 = 3

    /// True for the format IDs this encoder handles: `aac ` and `alac`. Any thread.
    public static func canEncode(_ formatID: FourCharCode) -> Bool {
        formatID == AudioFormatID.mpeg4AAC || formatID == AudioFormatID.appleLossless
    }

    /// The format IDs this encoder makes with the libavcodec loaded (AAC, Apple Lossless: those
    /// whose encoder libavcodec has); none when libavcodec cannot be loaded. Any thread but the
    /// render thread: the first call in the process may load libavcodec (``AVCodecLibrary/load()``).
    public static func encodableFormatIDs() -> [FourCharCode] {
        var ids: [FourCharCode] = []
        guard AVCodecLibrary.load() == nil else { return ids }
        if aq_avcodec_find_encoder(AV_CODEC_ID_AAC) != nil { ids.append(AudioFormatID.mpeg4AAC) }
        if aq_avcodec_find_encoder(AV_CODEC_ID_ALAC) != nil { ids.append(AudioFormatID.appleLossless) }
        return ids
    }

    /// The codec's frames per packet: 1024 (AAC), 4096 (ALAC); 0 for other formats. Any thread.
    public static func framesPerPacket(_ formatID: FourCharCode) -> Int {
        switch formatID {
        case AudioFormatID.mpeg4AAC: 1024
        case AudioFormatID.appleLossless: 4096
        default: 0
        }
    }

    /// Checks `format` and returns it completed as ``format`` will be (without opening
    /// libavcodec). Accepted: `aac ` with flags 0 or 2 (AAC LC), `alac` with flags 0, 1 (16-bit)
    /// or 3 (24-bit); `framesPerPacket` 0 or the codec's; `bytesPerPacket` 0; 1–8 channels;
    /// 8000–192000 Hz (AAC: 8000–96000). Any thread (pure).
    /// - Throws: ``PacketEncoderError`` `.unsupportedFormat`.
    public static func completed(_ format: AudioStreamBasicDescription) throws(PacketEncoderError) -> AudioStreamBasicDescription {
        func refuse(_ m: String) -> PacketEncoderError { PacketEncoderError(kind: .unsupportedFormat, message: m) }
        guard canEncode(format.formatID) else {
            throw refuse("format \(format.formatID) cannot be encoded (AAC LC 'aac ' and Apple Lossless 'alac' can)")
        }
        let fpp = framesPerPacket(format.formatID)
        guard format.framesPerPacket == 0 || Int(format.framesPerPacket) == fpp else {
            throw refuse("\(format.formatID) packets hold \(fpp) frames (got \(format.framesPerPacket))")
        }
        guard format.bytesPerPacket == 0 else { throw refuse("compressed packets vary in size: bytesPerPacket must be 0") }
        guard (1...8).contains(format.channelsPerFrame) else { throw refuse("\(format.channelsPerFrame) channels (1 to 8 are supported)") }
        let aac = format.formatID == AudioFormatID.mpeg4AAC
        let top = aac ? 96000.0 : 192_000
        guard format.sampleRate.isFinite, format.sampleRate >= 8000, format.sampleRate <= top,
            format.sampleRate == format.sampleRate.rounded()
        else { throw refuse("sample rate \(format.sampleRate) Hz is outside 8000…\(Int(top)) Hz") }
        var flags = format.formatFlags.rawValue
        if aac {
            guard flags == 0 || flags == aacLowComplexityFlag else {
                throw refuse("AAC object type \(flags) is not AAC LC (2): only AAC LC is encoded")
            }
            flags = aacLowComplexityFlag
        } else {
            guard flags == 0 || flags == alac16BitSourceFlag || flags == alac24BitSourceFlag else {
                throw refuse("ALAC source bit depth flag \(flags): 16-bit (1) and 24-bit (3) are encoded")
            }
            if flags == 0 { flags = alac16BitSourceFlag }
        }
        return AudioStreamBasicDescription(
            sampleRate: format.sampleRate, formatID: format.formatID, formatFlags: AudioFormatFlags(rawValue: flags),
            bytesPerPacket: 0, framesPerPacket: UInt32(fpp), bytesPerFrame: 0,
            channelsPerFrame: format.channelsPerFrame, bitsPerChannel: 0)
    }

    /// Opens an encoder for `format`. The first decoder or encoder of a process loads libavcodec
    /// (``AVCodecLibrary/load()``): make it on a control or worker thread, never the render thread.
    ///
    /// - Parameters:
    ///   - format: see ``completed(_:)``.
    ///   - bitRate: AAC's target bits per second; 0 for 96000 per channel. At most 6144 bits a
    ///     channel per packet (AAC's limit): rate × 6 a channel. Ignored for ALAC.
    /// - Throws: ``PacketEncoderError`` (`'fmt?'`).
    public init(format: AudioStreamBasicDescription, bitRate: Int = 0) throws(PacketEncoderError) {
        let f = try PacketEncoder.completed(format)
        self.format = f
        channelCount = Int(f.channelsPerFrame)
        framesPerPacket = Int(f.framesPerPacket)
        let aac = f.formatID == AudioFormatID.mpeg4AAC
        alacBits = aac ? 0 : (f.formatFlags.rawValue == PacketEncoder.alac24BitSourceFlag ? 24 : 16)
        var rate = bitRate > 0 ? bitRate : 96000 * channelCount
        // FFmpeg's AAC encoder allows at most 6144 bits per channel per frame.
        rate = min(rate, Int(6144.0 * f.sampleRate / 1024) * channelCount)
        self.bitRate = rate
        if let why = AVCodecLibrary.load() {
            throw PacketEncoderError(kind: .encoderUnavailable, message: why)
        }
        guard let c = aq_avcodec_find_encoder(aac ? AV_CODEC_ID_AAC : AV_CODEC_ID_ALAC) else {
            throw PacketEncoderError(kind: .encoderUnavailable, message: "libavcodec has no \(aac ? "AAC" : "ALAC") encoder")
        }
        codec = c
        guard let p = aq_av_packet_alloc(), let fr = aq_av_frame_alloc() else {
            throw PacketEncoderError(kind: .encoderUnavailable, message: "libavcodec could not allocate a packet or frame")
        }
        packet = p
        frame = fr
        // Every stored property is set: if this throws, deinit frees the packet and frame.
        try open()
        let ctx = context!
        let extra = ctx.pointee.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(ctx.pointee.extradata_size))) } ?? []
        if aac {
            primingFrames = Int(ctx.pointee.initial_padding)
            // 6144 bits a channel is the most an AAC frame may hold (ISO/IEC 14496-3).
            maximumPacketSize = 768 * channelCount + 16
            magicCookie = PacketEncoder.esds(audioSpecificConfig: extra, bitRate: rate, bufferSize: 768 * channelCount)
        } else {
            primingFrames = 0
            // The 36-byte 'alac' atom: the ALACSpecificConfig is its last 24 bytes.
            let config = extra.count >= 36 ? Array(extra[12..<36]) : []
            magicCookie = config
            let fromConfig = config.count == 24 ? Int(config[12]) << 24 | Int(config[13]) << 16 | Int(config[14]) << 8 | Int(config[15]) : 0
            // Verbatim frames: every sample at full width, plus headers.
            let verbatim = framesPerPacket * channelCount * ((alacBits + 7) / 8) + 64 + 16 * channelCount
            maximumPacketSize = max(fromConfig, verbatim)
        }
    }

    deinit {
        var c = context
        aq_avcodec_free_context(&c)
        var pp: UnsafeMutablePointer<AVPacket>? = packet
        aq_av_packet_free(&pp)
        var ff: UnsafeMutablePointer<AVFrame>? = frame
        aq_av_frame_free(&ff)
    }

    private func open() throws(PacketEncoderError) {
        guard let ctx = aq_avcodec_alloc_context3(codec) else {
            throw PacketEncoderError(kind: .encoderUnavailable, message: "libavcodec could not allocate an encoder context")
        }
        ctx.pointee.sample_rate = Int32(format.sampleRate)
        ctx.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        aq_av_channel_layout_default(&ctx.pointee.ch_layout, Int32(channelCount))
        if format.formatID == AudioFormatID.mpeg4AAC {
            ctx.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
            ctx.pointee.bit_rate = Int64(bitRate)
            ctx.pointee.profile = aq_profile_aac_low()
        } else {
            ctx.pointee.sample_fmt = alacBits == 16 ? AV_SAMPLE_FMT_S16P : AV_SAMPLE_FMT_S32P
            ctx.pointee.bits_per_raw_sample = Int32(alacBits)
            ctx.pointee.frame_size = Int32(framesPerPacket)
        }
        ctx.pointee.flags |= aq_codec_flag_global_header()
        let r = aq_avcodec_open2(ctx, codec, nil)
        if r < 0 {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            aq_avcodec_free_context(&c)
            throw PacketEncoderError(kind: .unsupportedFormat, message: "libavcodec refused to open the \(format.formatID) encoder (\(Int(format.sampleRate)) Hz, \(channelCount) channels): \(PacketDecoder.errorText(r))")
        }
        guard Int(ctx.pointee.frame_size) == framesPerPacket else {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            aq_avcodec_free_context(&c)
            throw PacketEncoderError(kind: .encoderUnavailable, message: "libavcodec's \(format.formatID) encoder makes packets of \(ctx.pointee.frame_size) frames")
        }
        context = ctx
        aq_av_frame_unref(frame)
        frame.pointee.nb_samples = Int32(framesPerPacket)
        frame.pointee.format = ctx.pointee.sample_fmt.rawValue
        frame.pointee.sample_rate = ctx.pointee.sample_rate
        aq_av_channel_layout_copy(&frame.pointee.ch_layout, &ctx.pointee.ch_layout)
        guard aq_av_frame_get_buffer(frame, 0) >= 0 else {
            throw PacketEncoderError(kind: .encoderUnavailable, message: "libavcodec could not allocate a frame")
        }
        pending = 0
        nextPTS = 0
        finished = false
    }

    /// Starts a new stream: drops the frames not yet encoded and whatever the encoder holds;
    /// the next frames fed are the first of a stream (preceded by ``primingFrames`` again).
    /// Control thread; reopens the codec (libavcodec's encoders cannot be flushed).
    public func reset() {
        var c = context
        aq_avcodec_free_context(&c)
        context = nil
        framesEncoded = 0
        packetsProduced = 0
        // The same format opened once already: it opens again.
        try? open()
    }

    /// Feeds `frames` planar frames (`input[c]` for each of the ``channelCount`` channels) and
    /// appends the packets completed to `packets`. Frames short of a whole packet wait for the
    /// next call or ``finish(into:)``.
    public func encode(_ input: UnsafePointer<UnsafePointer<Float>>, frames: Int, into packets: inout [[UInt8]]) {
        encode(frames: frames, into: &packets) { c, i in input[c][i] }
    }

    /// Feeds `frames` interleaved frames (``channelCount`` floats each) and appends the packets
    /// completed to `packets`.
    public func encodeInterleaved(_ input: UnsafePointer<Float>, frames: Int, into packets: inout [[UInt8]]) {
        let ch = channelCount
        encode(frames: frames, into: &packets) { c, i in input[i * ch + c] }
    }

    /// Feeds frames given by `sample(channel, frame)`.
    public func encode(frames: Int, into packets: inout [[UInt8]], _ sample: (Int, Int) -> Float) {
        guard context != nil, !finished, frames > 0 else { return }
        var done = 0
        while done < frames {
            let n = min(framesPerPacket - pending, frames - done)
            store(n, from: done, sample)
            pending += n
            done += n
            framesEncoded += Int64(n)
            if pending == framesPerPacket { send(&packets) }
        }
    }

    /// Ends the stream: encodes the frames waiting (AAC: padded with silence to a whole packet;
    /// ALAC: a short last packet), drains the encoder and appends the last packets. Returns the stream's remainder frames (decoded
    /// frames after its last frame fed): packets × framesPerPacket − priming − frames fed.
    /// Call ``reset()`` before feeding another stream.
    @discardableResult
    public func finish(into packets: inout [[UInt8]]) -> Int {
        guard let context, !finished else { return remainderFrames }
        if pending > 0 {
            if alacBits > 0 {
                // ALAC frames say how many samples they hold: the last packet is short (as
                // Apple's encoder makes it), its shortfall the stream's remainder.
                frame.pointee.nb_samples = Int32(pending)
                send(&packets)
                frame.pointee.nb_samples = Int32(framesPerPacket)
            } else {
                store(framesPerPacket - pending, from: 0) { _, _ in 0 }
                pending = framesPerPacket
                send(&packets)
            }
        }
        if aq_avcodec_send_frame(context, nil) >= 0 { receive(&packets) }
        finished = true
        return remainderFrames
    }

    /// Packets × framesPerPacket − priming − frames fed, for the packets produced so far
    /// (after ``finish(into:)``: the stream's remainder frames for its packet table).
    public var remainderFrames: Int {
        max(0, Int(packetsProduced) * framesPerPacket - primingFrames - Int(framesEncoded))
    }

    /// The packet table of the stream so far (after ``finish(into:)``: the whole stream's).
    public var packetTableInfo: AudioFilePacketTableInfo {
        AudioFilePacketTableInfo(
            numberValidFrames: framesEncoded, primingFrames: Int32(primingFrames), remainderFrames: Int32(remainderFrames))
    }

    private func store(_ n: Int, from: Int, _ sample: (Int, Int) -> Float) {
        guard let planes = frame.pointee.extended_data else { return }
        let at = pending
        for c in 0..<channelCount {
            let raw = UnsafeMutableRawPointer(planes[c]!)
            switch alacBits {
            // Integers by the project's one rule (``PCMInterleaver``); planar, native order.
            case 16:
                let dst = raw.assumingMemoryBound(to: Int16.self) + at
                for i in 0..<n { dst[i] = Int16(truncatingIfNeeded: PCMInterleaver.integer(sample(c, from + i), bits: 16)) }
            case 24:
                // S32P with 24 significant bits in the high bits (FFmpeg's convention).
                let dst = raw.assumingMemoryBound(to: Int32.self) + at
                for i in 0..<n { dst[i] = PCMInterleaver.integer(sample(c, from + i), bits: 24) << 8 }
            default:
                let dst = raw.assumingMemoryBound(to: Float.self) + at
                for i in 0..<n { dst[i] = sample(c, from + i) }
            }
        }
    }

    private func send(_ packets: inout [[UInt8]]) {
        guard let context else { return }
        frame.pointee.pts = nextPTS
        nextPTS += Int64(framesPerPacket)
        var r = aq_avcodec_send_frame(context, frame)
        if r == aq_averror_eagain() {
            receive(&packets)
            r = aq_avcodec_send_frame(context, frame)
        }
        pending = 0
        // libavcodec may keep a reference to the frame's buffers: the next frames go into
        // buffers of our own.
        _ = aq_av_frame_make_writable(frame)
        receive(&packets)
    }

    private func receive(_ packets: inout [[UInt8]]) {
        guard let context else { return }
        while aq_avcodec_receive_packet(context, packet) >= 0 {
            if let d = packet.pointee.data, packet.pointee.size > 0 {
                packets.append(Array(UnsafeBufferPointer(start: d, count: Int(packet.pointee.size))))
                packetsProduced += 1
            }
            aq_av_packet_unref(packet)
        }
    }

    // MARK: - Magic cookies

    /// The body of an `esds` atom for an AAC stream: version and flags (0), then an ES
    /// descriptor (tag 3) holding a DecoderConfigDescriptor (tag 4: MPEG-4 audio, 0x40; audio
    /// stream) with the AudioSpecificConfig as its DecoderSpecificInfo (tag 5), and an
    /// SLConfigDescriptor (tag 6, predefined 2). Any thread (pure).
    public static func esds(audioSpecificConfig asc: [UInt8], bitRate: Int, bufferSize: Int) -> [UInt8] {
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let dsi: [UInt8] = [0x05, UInt8(asc.count)] + asc
        let buffer = min(bufferSize, 0xFF_FFFF)
        let dcd: [UInt8] = [0x04, UInt8(13 + dsi.count), 0x40, 0x15,
                            UInt8(buffer >> 16 & 0xFF), UInt8(buffer >> 8 & 0xFF), UInt8(buffer & 0xFF)]
            + be32(bitRate) + be32(bitRate) + dsi
        let sl: [UInt8] = [0x06, 0x01, 0x02]
        let es: [UInt8] = [0x03, UInt8(3 + dcd.count + sl.count), 0x00, 0x00, 0x00] + dcd + sl
        return [0, 0, 0, 0] + es
    }
}
