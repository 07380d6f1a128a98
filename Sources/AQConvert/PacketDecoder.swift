import AQTypes
import CAVCodec
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a ``PacketDecoder`` could not be made.
///
/// Thread safety: a plain value; use from any thread.
public struct PacketDecoderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the caller got wrong or what is missing, in words.
    public enum Kind: Hashable, Sendable {
        /// The format ID is not one ``PacketDecoder`` decodes (`.mp3`, `aac `, `alac`, `flac`, `ima4`…),
        /// or the format's rate, channel count or (IMA4) packet shape is out of range.
        case unsupportedFormat
        /// The format needs a magic cookie (AAC, Apple Lossless) and none was given.
        case missingMagicCookie
        /// The magic cookie could not be understood, or libavcodec refused it.
        case badMagicCookie
        /// libavcodec has no decoder for the format, or could not open it, or could not be loaded
        /// (the message then is ``AVCodecLibrary/load()``'s: "libavcodec.so.59 could not be loaded: …").
        case decoderUnavailable
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

/// Decodes compressed audio packets (MPEG Layer I, II and III, AAC-LC, HE-AAC and HE-AAC v2,
/// Apple Lossless, FLAC, Opus, Vorbis, Apple IMA4) to planar Float32 at the format's rate with libavcodec,
/// and MPEG Layer III with libmpg123 when it loads (``library``; docs/codecs.md, "MP3 through libmpg123").
/// An AAC format's ID names the layers decoded (``aacDecoderConfig(formatID:asc:)``).
///
/// Feed packets in stream order with ``decode(_:framesIfCorrupt:into:offset:capacity:)``; at the
/// end of a stream call ``drain(into:offset:capacity:)`` (it sends libavcodec the end-of-stream
/// packet and returns what the decoder still held), then ``reset()`` before the next stream.
///
/// **Corrupt packets.** A packet libavcodec refuses (or that decodes to a rate or channel count
/// other than the format's) does not stop the stream: the decoder writes `framesIfCorrupt`
/// frames of silence in its place, so that later audio keeps its place, and counts it in
/// ``corruptPackets``. The next packet is decoded normally.
///
/// **Samples.** Whatever libavcodec's sample format (float, 16- or 32-bit integers, planar or
/// interleaved), frames are written as Float32 scaled as FFmpeg's own conversion does
/// (x / 32768, x / 2147483648, floats copied), so output matches `ffmpeg -f f32le` bit for bit;
/// libmpg123's MP3 output differs from FFmpeg's by rounding (below 1e-5).
///
/// Thread safety: **not thread-safe.** One control or worker thread at a time (it may be handed
/// between threads between calls). Never the render thread: libavcodec allocates and its time
/// per packet is unbounded. The static members are pure and may be called from any thread.
public final class PacketDecoder {
    /// The stream format (`.mp3`, `aac `, `alac`, `flac`, `opus`, `vorb`, `ima4`…). Any thread may read it.
    public let format: AudioStreamBasicDescription
    /// Channels of the decoded output.
    public let channelCount: Int
    /// The most frames one packet decodes to (used to size output storage).
    public let maximumFramesPerPacket: Int
    /// Packets that failed to decode since the decoder was made (each replaced by silence).
    public private(set) var corruptPackets: Int = 0
    /// Decoded frames that did not fit into the capacity given and were dropped.
    public private(set) var droppedFrames: Int = 0

    /// The library this decoder decodes with: `libmpg123` (MPEG Layer III, when it loads and
    /// `AQSYNC_MP3_DECODER` is not `libavcodec`) or `libavcodec` (every other format). Any thread.
    public var library: String {
        switch backend {
        case .mpg123: return "libmpg123"
        case .avcodec: return "libavcodec"
        }
    }

    /// A restart (a new decoder, or ``reset()``, fed from some packet on) gives, once its
    /// pre-roll is decoded, the same samples bit for bit as a decode from the stream's first
    /// packet only when it begins on a packet whose index (from the stream's first) is a
    /// multiple of this: 4 for MP3 through libmpg123 (its synthesis filter bank keeps a phase
    /// that turns with every frame: a mono stream restarted on an odd packet differs by 6e-8
    /// ever after), 1 for libavcodec. ``AQSession``'s track sources align their pre-roll to it.
    /// Any thread.
    public var restartAlignment: Int {
        switch backend {
        case .mpg123: return 4
        case .avcodec: return 1
        }
    }

    private enum Backend {
        case avcodec(AVCodecStream)
        case mpg123(MPG123Stream)
    }
    private let backend: Backend
    private var packetsSinceReset = 0

    /// True for the formats this decoder handles: `.mp1`, `.mp2`, `.mp3`, `aac `, `aach`, `aacp`,
    /// `alac`, `flac`, `opus`, `vorb`, `ima4`. Any thread.
    public static func canDecode(_ format: AudioStreamBasicDescription) -> Bool {
        codecID(format.formatID) != nil
    }

    /// True when the format cannot be decoded without a magic cookie (AAC, Apple Lossless,
    /// Opus, whose OpusHead gives the channel mapping, and Vorbis, whose headers are its codebooks;
    /// MP3 needs none; FLAC frame headers carry what the decoder needs, its STREAMINFO cookie
    /// is used when set). Any thread.
    public static func needsMagicCookie(_ format: AudioStreamBasicDescription) -> Bool {
        isAAC(format.formatID) || format.formatID == AudioFormatID.appleLossless
            || format.formatID == opusFormatID || format.formatID == vorbisFormatID
    }

    /// The most frames one packet of `format` holds: the format's `framesPerPacket` when set,
    /// else 1152 (MP3), 1024 (AAC), 4096 (ALAC), 16384 (FLAC with variable block sizes; a
    /// decoder given the STREAMINFO cookie knows the stream's own maximum), 5760 (Opus: 120 ms;
    /// Opus formats name 960 frames per packet, a decoder instance allows 5760), 4096 (Vorbis:
    /// half its largest block), 64 (Apple IMA4). Any thread.
    public static func maximumFramesPerPacket(_ format: AudioStreamBasicDescription) -> Int {
        if format.framesPerPacket > 0 { return Int(format.framesPerPacket) }
        switch format.formatID {
        case AudioFormatID.mpegLayer3, AudioFormatID.mpegLayer2: return 1152
        case AudioFormatID.mpegLayer1: return 384
        case AudioFormatID.mpeg4AAC: return 1024
        case AudioFormatID.mpeg4AAC_HE, AudioFormatID.mpeg4AAC_HE_V2: return 2048
        case flacFormatID: return 16384
        case opusFormatID: return 5760
        case vorbisFormatID: return 4096
        case AudioFormatID.appleIMA4: return 64
        default: return 4096
        }
    }

    static func codecID(_ id: FourCharCode) -> AVCodecID? {
        switch id {
        case AudioFormatID.mpegLayer3: return AV_CODEC_ID_MP3
        case AudioFormatID.mpegLayer2: return AV_CODEC_ID_MP2
        case AudioFormatID.mpegLayer1: return AV_CODEC_ID_MP1
        case AudioFormatID.mpeg4AAC, AudioFormatID.mpeg4AAC_HE, AudioFormatID.mpeg4AAC_HE_V2: return AV_CODEC_ID_AAC
        case AudioFormatID.appleLossless: return AV_CODEC_ID_ALAC
        case flacFormatID: return AV_CODEC_ID_FLAC
        case opusFormatID: return AV_CODEC_ID_OPUS
        case vorbisFormatID: return AV_CODEC_ID_VORBIS
        // Apple IMA4: libavcodec's QuickTime IMA ADPCM decoder takes a whole packet (one
        // 34-byte block per channel, channel after channel) and gives 64 frames.
        case AudioFormatID.appleIMA4: return AV_CODEC_ID_ADPCM_IMA_QT
        default: return nil
        }
    }

    /// True for the AAC format IDs: `aac ` (the LC core), `aach` (HE-AAC), `aacp` (HE-AAC v2). Any thread.
    public static func isAAC(_ id: FourCharCode) -> Bool {
        id == AudioFormatID.mpeg4AAC || id == AudioFormatID.mpeg4AAC_HE || id == AudioFormatID.mpeg4AAC_HE_V2
    }

    /// The AudioSpecificConfig libavcodec is given for an AAC `format` and the stream's own
    /// `asc`: the layers the format ID names, whatever the stream signals. `aac `: the LC core
    /// only, SBR signalled absent (libavcodec then skips SBR data and decodes at the core's
    /// rate, as Core Audio's LC decoder plays an HE stream's core); `aach`: SBR present at the
    /// full rate, parametric stereo absent (a v2 stream plays its mono downmix); `aacp`: both
    /// present. Streams whose config cannot be rebuilt (a core other than LC, a program config
    /// element) keep their own. Any thread (pure).
    public static func aacDecoderConfig(formatID: FourCharCode, asc: [UInt8]) -> [UInt8] {
        guard let c = AACStreamConfig(audioSpecificConfig: asc) else { return asc }
        let he = formatID == AudioFormatID.mpeg4AAC_HE || formatID == AudioFormatID.mpeg4AAC_HE_V2
        return c.decoderConfig(sbr: he, ps: formatID == AudioFormatID.mpeg4AAC_HE_V2) ?? asc
    }

    /// The format IDs this decoder opens with the libavcodec loaded (MPEG Layers I–III, AAC, HE-AAC,
    /// HE-AAC v2, Apple Lossless, FLAC, Opus, Vorbis, Apple IMA4: those whose decoder libavcodec
    /// has), in that order; when libavcodec cannot be loaded, only MPEG Layer III if libmpg123
    /// decodes it (``MPG123Library``). Any thread but the render
    /// thread: the first call in the process may load libavcodec (``AVCodecLibrary/load()``).
    public static func decodableFormatIDs() -> [FourCharCode] {
        let avcodec = AVCodecLibrary.load() == nil
        let mpg123 = mp3ThroughMPG123 && MPG123Library.load() == nil
        return [AudioFormatID.mpegLayer1, AudioFormatID.mpegLayer2, AudioFormatID.mpegLayer3, AudioFormatID.mpeg4AAC,
         AudioFormatID.mpeg4AAC_HE, AudioFormatID.mpeg4AAC_HE_V2, AudioFormatID.appleLossless, flacFormatID, opusFormatID, vorbisFormatID,
         AudioFormatID.appleIMA4]
            .filter { id in
                if id == AudioFormatID.mpegLayer3 && mpg123 { return true }
                return avcodec && (codecID(id).map { aq_avcodec_find_decoder($0) != nil } ?? false)
            }
    }

    /// Checks that `format` is one this decoder can open (format ID, rate, channel count, a
    /// libavcodec decoder present; for Apple IMA4 a packet of 34 × channels bytes and 64 frames,
    /// either left 0 for the format's own) without needing its magic cookie yet. Any thread but
    /// the render thread: a format that passes the other checks loads libavcodec if no decoder or
    /// encoder did yet (``AVCodecLibrary/load()``: blocks for milliseconds, once a process).
    /// - Throws: ``PacketDecoderError`` of kind `.unsupportedFormat`, or `.decoderUnavailable`
    ///   (also when libavcodec cannot be loaded: "libavcodec.so.59 could not be loaded: …").
    public static func validate(_ format: AudioStreamBasicDescription) throws(PacketDecoderError) {
        guard let id = codecID(format.formatID) else {
            throw PacketDecoderError(kind: .unsupportedFormat, message: "format \(format.formatID) is not MPEG Layer I, II or III, AAC (LC, HE, HE v2), Apple Lossless, FLAC, Opus, Vorbis or Apple IMA4")
        }
        guard format.sampleRate.isFinite, format.sampleRate >= 8000, format.sampleRate <= 192_000 else {
            throw PacketDecoderError(kind: .unsupportedFormat, message: "sample rate \(format.sampleRate) Hz is outside 8000…192000 Hz")
        }
        guard (1...8).contains(format.channelsPerFrame) else {
            throw PacketDecoderError(kind: .unsupportedFormat, message: "\(format.channelsPerFrame) channels (1 to 8 are supported)")
        }
        if format.formatID == AudioFormatID.appleIMA4 {
            guard format.bytesPerPacket == 0 || format.bytesPerPacket == 34 * format.channelsPerFrame,
                format.framesPerPacket == 0 || format.framesPerPacket == 64
            else {
                throw PacketDecoderError(kind: .unsupportedFormat, message: "Apple IMA4 packets are 34 × \(format.channelsPerFrame) bytes of 64 frames, not \(format.bytesPerPacket) bytes of \(format.framesPerPacket) frames")
            }
        }
        if usesMPG123(format) { return }
        if let why = AVCodecLibrary.load() {
            throw PacketDecoderError(kind: .decoderUnavailable, message: why)
        }
        guard aq_avcodec_find_decoder(id) != nil else {
            throw PacketDecoderError(kind: .decoderUnavailable, message: "libavcodec has no decoder for \(format.formatID)")
        }
    }

    /// True when `format` decodes through libmpg123: MPEG Layer III with one or two channels,
    /// libmpg123 loads (``MPG123Library/load()``; the first call may load it), and the
    /// environment variable `AQSYNC_MP3_DECODER` is not `libavcodec` (read once a process).
    /// Any thread but the render thread.
    static func usesMPG123(_ format: AudioStreamBasicDescription) -> Bool {
        format.formatID == AudioFormatID.mpegLayer3 && (1...2).contains(format.channelsPerFrame)
            && mp3ThroughMPG123 && MPG123Library.load() == nil
    }

    /// False when `AQSYNC_MP3_DECODER=libavcodec` (FFmpeg's decoder for MP3 too: its output is
    /// `ffmpeg -f f32le`'s bit for bit, libmpg123's differs by rounding, a few 1e-6 at most).
    static let mp3ThroughMPG123: Bool = {
        guard let v = getenv("AQSYNC_MP3_DECODER") else { return true }
        return String(cString: v) != "libavcodec"
    }()

    /// Opens a decoder for `format`. The first decoder or encoder of a process loads libavcodec
    /// (``AVCodecLibrary/load()``): make it on a control, feeder or worker thread, never the
    /// render thread.
    ///
    /// - Parameters:
    ///   - format: `.mp3`, `aac ` (AAC-LC), `alac`, `flac`, `opus` (48000 Hz), `vorb` or `ima4`
    ///     (each packet one 34-byte block per channel), 1–8 channels, 8000–192000 Hz.
    ///   - magicCookie: the format's magic cookie as Audio File Stream Services gives it: for
    ///     AAC an AudioSpecificConfig (ADTS) or an `esds` ES descriptor (CAF, MP4); for ALAC
    ///     the 24-byte ALACSpecificConfig, bare or inside `frma`/`alac` atoms; for FLAC the
    ///     STREAMINFO block (bare, after `fLaC`, or as a `dfLa` box holds it; optional); for
    ///     Opus the OpusHead packet, for Vorbis its three headers in Xiph lacing (required).
    ///     Ignored for MP3 and IMA4.
    /// - Throws: ``PacketDecoderError`` (`'fmt?'`).
    public init(format: AudioStreamBasicDescription, magicCookie: [UInt8] = []) throws(PacketDecoderError) {
        try PacketDecoder.validate(format)
        self.format = format
        channelCount = Int(format.channelsPerFrame)
        if PacketDecoder.usesMPG123(format), let stream = MPG123Stream(rate: format.sampleRate, channels: channelCount) {
            maximumFramesPerPacket = PacketDecoder.maximumFramesPerPacket(format)
            backend = .mpg123(stream)
            return
        }
        // libmpg123 refused the stream's parameters after loading: libavcodec decodes it.
        if let why = AVCodecLibrary.load() {
            throw PacketDecoderError(kind: .decoderUnavailable, message: why)
        }
        let id = PacketDecoder.codecID(format.formatID)!
        var extra: [UInt8] = []
        var quieten = false
        if PacketDecoder.isAAC(format.formatID) {
            guard !magicCookie.isEmpty else {
                throw PacketDecoderError(kind: .missingMagicCookie, message: "AAC needs a magic cookie (AudioSpecificConfig or esds)")
            }
            guard let asc = PacketDecoder.audioSpecificConfig(fromCookie: magicCookie) else {
                throw PacketDecoderError(kind: .badMagicCookie, message: "the AAC magic cookie (\(magicCookie.count) bytes) holds no AudioSpecificConfig")
            }
            extra = PacketDecoder.aacDecoderConfig(formatID: format.formatID, asc: asc)
            quieten = extra != asc && format.formatID != AudioFormatID.mpeg4AAC_HE_V2
        } else if format.formatID == AudioFormatID.appleLossless {
            guard !magicCookie.isEmpty else {
                throw PacketDecoderError(kind: .missingMagicCookie, message: "Apple Lossless needs a magic cookie (ALACSpecificConfig)")
            }
            guard let atom = PacketDecoder.alacAtom(fromCookie: magicCookie) else {
                throw PacketDecoderError(kind: .badMagicCookie, message: "the ALAC magic cookie (\(magicCookie.count) bytes) holds no ALACSpecificConfig")
            }
            extra = atom
        } else if format.formatID == opusFormatID {
            guard !magicCookie.isEmpty else {
                throw PacketDecoderError(kind: .missingMagicCookie, message: "Opus needs a magic cookie (the OpusHead packet)")
            }
            guard magicCookie.count >= 19, magicCookie[0..<8] == [0x4F, 0x70, 0x75, 0x73, 0x48, 0x65, 0x61, 0x64] else {
                throw PacketDecoderError(kind: .badMagicCookie, message: "the Opus magic cookie (\(magicCookie.count) bytes) is not an OpusHead")
            }
            extra = magicCookie
        } else if format.formatID == vorbisFormatID {
            guard !magicCookie.isEmpty else {
                throw PacketDecoderError(kind: .missingMagicCookie, message: "Vorbis needs a magic cookie (its three header packets)")
            }
            extra = magicCookie
        } else if format.formatID == flacFormatID, !magicCookie.isEmpty {
            guard let info = PacketDecoder.flacStreamInfo(fromCookie: magicCookie) else {
                throw PacketDecoderError(kind: .badMagicCookie, message: "the FLAC magic cookie (\(magicCookie.count) bytes) holds no STREAMINFO")
            }
            extra = info
        }
        guard let codec = aq_avcodec_find_decoder(id) else {
            throw PacketDecoderError(kind: .decoderUnavailable, message: "libavcodec has no decoder for \(format.formatID)")
        }
        var most = PacketDecoder.maximumFramesPerPacket(format)
        if format.formatID == AudioFormatID.appleLossless, extra.count >= 36 {
            // ALACSpecificConfig.frameLength, big-endian, after the 12-byte atom header.
            let fl = Int(extra[12]) << 24 | Int(extra[13]) << 16 | Int(extra[14]) << 8 | Int(extra[15])
            if fl > 0 && fl <= 1 << 16 { most = max(most, fl) }
        }
        if format.formatID == flacFormatID, extra.count == 34 {
            // STREAMINFO's maximum block size, big-endian, at byte 2.
            let mb = Int(extra[2]) << 8 | Int(extra[3])
            if mb > 0 { most = max(format.framesPerPacket > 0 ? most : 0, mb) }
        }
        if format.formatID == opusFormatID { most = 5760 }
        maximumFramesPerPacket = most
        backend = .avcodec(try AVCodecStream(codec: codec, format: format, extradata: extra, quietAbsentLayers: quieten))
    }

    static func errorText(_ code: Int32) -> String {
        var buf = [CChar](repeating: 0, count: 128)
        _ = aq_av_strerror(code, &buf, 128)
        let bytes = buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Starts a new stream: drops whatever the decoder holds (bit reservoir, overlap) so the
    /// next packet decodes as the first of a stream. The corrupt-packet count is kept.
    public func reset() {
        switch backend {
        case .avcodec(let s): s.reset()
        case .mpg123(let s): s.reset()
        }
        packetsSinceReset = 0
    }

    /// Decodes one packet and writes its frames at `offset` in each of the `channelCount`
    /// planes of `output` (each with room for `capacity` frames).
    ///
    /// - Parameters:
    ///   - packet: the packet's bytes (copied; the pointer need only live during the call).
    ///   - framesIfCorrupt: frames of silence to write if the packet does not decode (the
    ///     packet's frame count from its description or the format).
    /// - Returns: frames written (decoded, or silence for a corrupt packet), at most
    ///   `capacity − offset`; anything beyond is dropped and counted in ``droppedFrames``.
    public func decode(
        _ packetBytes: UnsafeRawBufferPointer, framesIfCorrupt: Int,
        into output: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int, capacity: Int
    ) -> Int {
        if packetBytes.count == 0 { return silence(framesIfCorrupt, output, offset, capacity) }
        let written: Int
        switch backend {
        case .mpg123(let s):
            written = s.decode(packetBytes, into: output, offset: offset, capacity: capacity, dropped: &droppedFrames)
        case .avcodec(let s):
            switch s.decode(packetBytes, into: output, offset: offset, capacity: capacity, dropped: &droppedFrames) {
            case .refused: return silence(framesIfCorrupt, output, offset, capacity)
            case .partial(let n): return n + silence(framesIfCorrupt, output, offset + n, capacity)
            case .decoded(let n): written = n
            }
        }
        let first = packetsSinceReset == 0
        packetsSinceReset += 1
        // Vorbis's first packet of a stream only primes the overlap: nothing comes out.
        if written == 0, first, format.formatID == vorbisFormatID { return 0 }
        // A packet that decodes to nothing although it should hold frames (an ALAC packet
        // that ends at once, say) is as lost as one the library refuses.
        if written < 0 || (written == 0 && framesIfCorrupt > 0) {
            return silence(framesIfCorrupt, output, offset, capacity)
        }
        return written
    }

    /// Ends the stream: writes the frames the decoder still held (none for libmpg123's and
    /// FFmpeg's MP3 decoders and FFmpeg's AAC and ALAC decoders, which have no frame delay; the
    /// call is there for decoders that do). Call ``reset()`` before decoding another stream.
    /// - Returns: frames written at `offset`.
    public func drain(into output: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int, capacity: Int) -> Int {
        switch backend {
        case .avcodec(let s): return s.drain(into: output, offset: offset, capacity: capacity, dropped: &droppedFrames)
        case .mpg123: return 0
        }
    }

    private func silence(_ frames: Int, _ output: UnsafePointer<UnsafeMutablePointer<Float>>, _ offset: Int, _ capacity: Int) -> Int {
        corruptPackets += 1
        let n = max(0, min(frames, capacity - offset))
        if n > 0 { for c in 0..<channelCount { (output[c] + offset).update(repeating: 0, count: n) } }
        droppedFrames += max(0, frames - n)
        return n
    }


    // MARK: - Magic cookies

    /// The AudioSpecificConfig in an AAC magic cookie: the cookie itself when it is one (ADTS
    /// gives 2 bytes), or the DecoderSpecificInfo (tag 5) inside an `esds` ES descriptor
    /// (tag 3), with or without the atom's 4 version/flags bytes. Any thread (pure).
    public static func audioSpecificConfig(fromCookie c: [UInt8]) -> [UInt8]? {
        // An MPEG-4 descriptor: tag, then a length in up to four 7-bit groups.
        func descriptor(at i: Int) -> (tag: UInt8, body: Int, length: Int)? {
            guard i < c.count else { return nil }
            var j = i + 1
            var len = 0
            for _ in 0..<4 {
                guard j < c.count else { return nil }
                let b = c[j]
                j += 1
                len = len << 7 | Int(b & 0x7F)
                if b & 0x80 == 0 { break }
            }
            guard j + len <= c.count else { return nil }
            return (c[i], j, len)
        }
        func findDSI(from start: Int, to end: Int) -> [UInt8]? {
            var i = start
            while i < end, let d = descriptor(at: i) {
                switch d.tag {
                case 0x05: return Array(c[d.body..<(d.body + d.length)])
                case 0x03:
                    // ES_Descriptor: ES_ID (2), flags (1), then optional fields by flag.
                    guard d.body + 3 <= c.count else { return nil }
                    let flags = c[d.body + 2]
                    var k = d.body + 3
                    if flags & 0x80 != 0 { k += 2 }
                    if flags & 0x40 != 0, k < c.count { k += 1 + Int(c[k]) }
                    if flags & 0x20 != 0 { k += 2 }
                    if let r = findDSI(from: k, to: d.body + d.length) { return r }
                case 0x04:
                    // DecoderConfigDescriptor: 13 fixed bytes, then DecoderSpecificInfo.
                    if let r = findDSI(from: d.body + 13, to: d.body + d.length) { return r }
                default: break
                }
                i = d.body + d.length
            }
            return nil
        }
        guard !c.isEmpty else { return nil }
        if c[0] == 0x03 { return findDSI(from: 0, to: c.count) }
        if c.count > 4 && c[4] == 0x03 && c[0] == 0 { return findDSI(from: 4, to: c.count) }
        // A bare AudioSpecificConfig: 5 bits of object type (1…31) first.
        return c.count >= 2 && c[0] >> 3 != 0 ? c : nil
    }

    /// The 34-byte FLAC STREAMINFO in a cookie: the block itself, or after a metadata block
    /// header (4 bytes), preceded by `fLaC`, a `dfLa` box's version and flags, or a whole
    /// `dfLa` box header. Any thread (pure).
    public static func flacStreamInfo(fromCookie c: [UInt8]) -> [UInt8]? {
        if c.count == 34 { return c }
        for at in [0, 4, 8, 12] where at + 38 <= c.count {
            if c[at] & 0x7F == 0, c[at + 1] == 0, c[at + 2] == 0, c[at + 3] == 34 {
                return Array(c[(at + 4)..<(at + 38)])
            }
        }
        return nil
    }

    /// libavcodec's ALAC extradata (a 36-byte `alac` atom: size, `alac`, version, then the
    /// 24-byte ALACSpecificConfig) from a cookie that is the bare config, the `alac` atom, or
    /// `frma` + `alac` atoms as CAF files hold it. Any thread (pure).
    public static func alacAtom(fromCookie c: [UInt8]) -> [UInt8]? {
        if c.count == 24 { return [0, 0, 0, 36, 0x61, 0x6C, 0x61, 0x63, 0, 0, 0, 0] + c }
        var i = 0
        while i + 36 <= c.count {
            let size = Int(c[i]) << 24 | Int(c[i + 1]) << 16 | Int(c[i + 2]) << 8 | Int(c[i + 3])
            if c[i + 4] == 0x61, c[i + 5] == 0x6C, c[i + 6] == 0x61, c[i + 7] == 0x63, size == 36 {
                return [0, 0, 0, 36] + Array(c[(i + 4)..<(i + 36)])
            }
            i += 1
        }
        return nil
    }
}

/// FLAC's format ID, `'flac'` (AQFileStream's `AudioFormatID.flac`; AQConvert does not
/// depend on AQFileStream).
let flacFormatID: FourCharCode = "flac"

/// Opus's format ID, `'opus'` (AQFileStream's `AudioFormatID.opus`).
let opusFormatID: FourCharCode = "opus"

/// Vorbis's format ID, `'vorb'` (AQFileStream's `AudioFormatID.vorbis`).
let vorbisFormatID: FourCharCode = "vorb"
