import AQTypes
import CAVCodec

/// One stream through a libavcodec decoder, packet by packet, into planar Float32: the
/// libavcodec side of ``PacketDecoder`` (every format but MPEG Layer III when libmpg123 is
/// there). Not thread-safe (the decoder's thread); never the render thread.
final class AVCodecStream {
    /// What one packet gave.
    enum Outcome {
        /// libavcodec refused the packet before decoding anything.
        case refused
        /// Frames written, then the packet's second send failed (only after libavcodec asked
        /// for its output to be taken first, which the decoder never leaves it to).
        case partial(Int)
        /// Frames written; -1 when decoding failed before any frame came out.
        case decoded(Int)
    }

    private let format: AudioStreamBasicDescription
    private let channelCount: Int
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frame: UnsafeMutablePointer<AVFrame>
    /// Packet bytes copied here with libavcodec's required zero padding after them.
    private var padded: UnsafeMutableRawPointer
    private var paddedCapacity: Int
    private let codec: UnsafePointer<AVCodec>
    private let extradata: [UInt8]
    /// An AAC decoder told a layer is absent that the stream may carry (SBR on an LC queue, PS
    /// on an HE queue): libavcodec then logs an error for every packet that carries it, so this
    /// decoder's messages are lowered by 24 (error → verbose, hidden at FFmpeg's default level);
    /// damaged packets are still counted in ``PacketDecoder/corruptPackets``.
    private let quietAbsentLayers: Bool

    /// Opens libavcodec's decoder `codec` for `format` with `extradata` (the cookie as
    /// libavcodec wants it). libavcodec must be loaded.
    /// - Throws: ``PacketDecoderError`` (`.decoderUnavailable`, `.badMagicCookie`).
    init(codec: UnsafePointer<AVCodec>, format: AudioStreamBasicDescription, extradata: [UInt8], quietAbsentLayers: Bool) throws(PacketDecoderError) {
        self.codec = codec
        self.format = format
        self.extradata = extradata
        self.quietAbsentLayers = quietAbsentLayers
        channelCount = Int(format.channelsPerFrame)
        guard let p = aq_av_packet_alloc(), let f = aq_av_frame_alloc() else {
            throw PacketDecoderError(kind: .decoderUnavailable, message: "libavcodec could not allocate a packet or frame")
        }
        packet = p
        frame = f
        paddedCapacity = 8192
        padded = aq_av_malloc(paddedCapacity + Int(AV_INPUT_BUFFER_PADDING_SIZE))!
        do throws(PacketDecoderError) {
            try open()
        } catch {
            var pp: UnsafeMutablePointer<AVPacket>? = packet
            aq_av_packet_free(&pp)
            var ff: UnsafeMutablePointer<AVFrame>? = frame
            aq_av_frame_free(&ff)
            aq_av_free(padded)
            throw error
        }
    }

    deinit {
        var c = context
        aq_avcodec_free_context(&c)
        var pp: UnsafeMutablePointer<AVPacket>? = packet
        aq_av_packet_free(&pp)
        var ff: UnsafeMutablePointer<AVFrame>? = frame
        aq_av_frame_free(&ff)
        aq_av_free(padded)
    }

    private func open() throws(PacketDecoderError) {
        guard let ctx = aq_avcodec_alloc_context3(codec) else {
            throw PacketDecoderError(kind: .decoderUnavailable, message: "libavcodec could not allocate a decoder context")
        }
        ctx.pointee.sample_rate = Int32(format.sampleRate.rounded())
        if format.formatID == opusFormatID {
            // libavcodec's Opus decoder would drop the pre-skip itself; here, as in Core Audio,
            // the gapless window (the parser's priming frames) does.
            ctx.pointee.flags2 |= Int32(bitPattern: UInt32(AV_CODEC_FLAG2_SKIP_MANUAL))
        }
        aq_av_channel_layout_default(&ctx.pointee.ch_layout, Int32(channelCount))
        if format.formatID == AudioFormatID.appleIMA4 { ctx.pointee.block_align = Int32(34 * channelCount) }
        if quietAbsentLayers { ctx.pointee.log_level_offset = 24 }  // error (16) → verbose (40)
        if !extradata.isEmpty {
            let n = extradata.count
            let e = aq_av_mallocz(n + Int(AV_INPUT_BUFFER_PADDING_SIZE))!.assumingMemoryBound(to: UInt8.self)
            extradata.withUnsafeBufferPointer { e.update(from: $0.baseAddress!, count: n) }
            ctx.pointee.extradata = e
            ctx.pointee.extradata_size = Int32(n)
        }
        let r = aq_avcodec_open2(ctx, codec, nil)
        if r < 0 {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            aq_avcodec_free_context(&c)
            let kind: PacketDecoderError.Kind = extradata.isEmpty ? .decoderUnavailable : .badMagicCookie
            throw PacketDecoderError(kind: kind, message: "libavcodec refused to open the \(format.formatID) decoder: \(PacketDecoder.errorText(r))")
        }
        context = ctx
    }

    /// Drops whatever the decoder holds (bit reservoir, overlap).
    func reset() {
        if let context { aq_avcodec_flush_buffers(context) }
    }

    /// Decodes one packet (`packetBytes`, not empty) into `output`'s planes at `offset` (room up
    /// to `capacity`); frames beyond the room are dropped and added to `dropped`.
    func decode(
        _ packetBytes: UnsafeRawBufferPointer, into output: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int,
        capacity: Int, dropped: inout Int
    ) -> Outcome {
        guard let context else { return .decoded(0) }
        let n = packetBytes.count
        if n > paddedCapacity {
            aq_av_free(padded)
            paddedCapacity = n
            padded = aq_av_malloc(n + Int(AV_INPUT_BUFFER_PADDING_SIZE))!
        }
        padded.copyMemory(from: packetBytes.baseAddress!, byteCount: n)
        (padded + n).initializeMemory(as: UInt8.self, repeating: 0, count: Int(AV_INPUT_BUFFER_PADDING_SIZE))
        aq_av_packet_unref(packet)
        packet.pointee.data = padded.assumingMemoryBound(to: UInt8.self)
        packet.pointee.size = Int32(n)
        var r = aq_avcodec_send_packet(context, packet)
        packet.pointee.data = nil
        packet.pointee.size = 0
        if r == aq_averror_eagain() {
            // Cannot happen when every frame is received after each packet; be safe anyway.
            let first = receiveAll(output, offset, capacity, &dropped)
            r = aq_avcodec_send_packet(context, packet)
            if r < 0 { return .partial(first) }
            return .decoded(first + receiveAll(output, offset + first, capacity, &dropped))
        }
        if r < 0 { return .refused }
        return .decoded(receiveAll(output, offset, capacity, &dropped))
    }

    /// Tells libavcodec no more packets come and writes the frames it still held.
    func drain(into output: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int, capacity: Int, dropped: inout Int) -> Int {
        guard let context else { return 0 }
        guard aq_avcodec_send_packet(context, nil) >= 0 else { return 0 }
        return max(0, receiveAll(output, offset, capacity, &dropped))
    }

    /// Receives every frame libavcodec has ready. Returns frames written, or -1 if decoding
    /// failed before any frame came out.
    private func receiveAll(_ output: UnsafePointer<UnsafeMutablePointer<Float>>, _ offset: Int, _ capacity: Int, _ dropped: inout Int) -> Int {
        guard let context else { return 0 }
        var written = 0
        while true {
            let r = aq_avcodec_receive_frame(context, frame)
            if r == aq_averror_eagain() || r == aq_averror_eof() { break }
            if r < 0 { return written == 0 ? -1 : written }
            defer { aq_av_frame_unref(frame) }
            let frames = Int(frame.pointee.nb_samples)
            if Int(frame.pointee.ch_layout.nb_channels) != channelCount
                || Double(frame.pointee.sample_rate) != format.sampleRate.rounded()
            {
                return written == 0 ? -1 : written
            }
            let room = max(0, capacity - offset - written)
            let n = min(frames, room)
            dropped += frames - n
            if n > 0, !copy(frames: n, to: output, at: offset + written) { return written == 0 ? -1 : written }
            written += n
        }
        return written
    }

    /// Copies the first `n` frames of `frame` as Float32 planes. False for a sample format
    /// this decoder does not convert.
    private func copy(frames n: Int, to output: UnsafePointer<UnsafeMutablePointer<Float>>, at: Int) -> Bool {
        guard let planes = frame.pointee.extended_data else { return false }
        let ch = channelCount
        let fmt = AVSampleFormat(rawValue: frame.pointee.format)
        switch fmt {
        case AV_SAMPLE_FMT_FLTP:
            for c in 0..<ch {
                let src = UnsafeRawPointer(planes[c]!).assumingMemoryBound(to: Float.self)
                (output[c] + at).update(from: src, count: n)
            }
        case AV_SAMPLE_FMT_S16P:
            for c in 0..<ch {
                let src = UnsafeRawPointer(planes[c]!).assumingMemoryBound(to: Int16.self)
                let dst = output[c] + at
                for i in 0..<n { dst[i] = Float(src[i]) * (1 / 32768) }
            }
        case AV_SAMPLE_FMT_S32P:
            for c in 0..<ch {
                let src = UnsafeRawPointer(planes[c]!).assumingMemoryBound(to: Int32.self)
                let dst = output[c] + at
                for i in 0..<n { dst[i] = Float(src[i]) * (1 / 2_147_483_648) }
            }
        case AV_SAMPLE_FMT_FLT:
            let src = UnsafeRawPointer(planes[0]!).assumingMemoryBound(to: Float.self)
            for c in 0..<ch { let dst = output[c] + at; for i in 0..<n { dst[i] = src[i * ch + c] } }
        case AV_SAMPLE_FMT_S16:
            let src = UnsafeRawPointer(planes[0]!).assumingMemoryBound(to: Int16.self)
            for c in 0..<ch { let dst = output[c] + at; for i in 0..<n { dst[i] = Float(src[i * ch + c]) * (1 / 32768) } }
        case AV_SAMPLE_FMT_S32:
            let src = UnsafeRawPointer(planes[0]!).assumingMemoryBound(to: Int32.self)
            for c in 0..<ch { let dst = output[c] + at; for i in 0..<n { dst[i] = Float(src[i * ch + c]) * (1 / 2_147_483_648) } }
        default:
            return false
        }
        return true
    }
}
