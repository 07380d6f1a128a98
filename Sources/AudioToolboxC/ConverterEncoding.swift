// An AudioConverter's encoding (issue 23): linear PCM, routed and rate-converted by the
// converter's ConverterStage, encoded by AQConvert's PacketEncoder (libavcodec: AAC LC, ALAC)
// into whole packets with their descriptions. Its properties: the compression cookie, AAC's
// bit rate, the codec quality (kept), the prime info, the largest packet. Used from one thread at a time, like its
// converter; the encoder is made at the first need (after the bit rate had its chance).
import AQConvert
import AQTypes
import CAudioToolbox

final class ConverterEncoding {
    /// The destination completed (PacketEncoder.completed: frames per packet, flags).
    let format: CFormat
    let isAAC: Bool
    /// kAudioConverterEncodeBitRate as set (0: the encoder's default).
    private(set) var bitRate = 0
    /// kAudioConverterCodecQuality as set (kept and read back: libavcodec's encoders run at their
    /// defaults, AAC's quality following its bit rate, ALAC's lossless whatever it says).
    var codecQuality = UInt32(kAudioConverterQuality_High)
    private var encoder: PacketEncoder?
    /// Packets encoded and not given yet (from `next`), and whether the stream was finished.
    private var packets: [[UInt8]] = []
    private var next = 0
    private(set) var finished = false
    private var framesFed = 0

    /// Checks that `source` is linear PCM and completes `destination`.
    init(destination: CFormat, source: SFormat) throws(AudioFileFailure) {
        guard source.formatID == AudioFormatID.linearPCM else {
            throw AudioFileFailure(status: kAudioConverterErr_FormatNotSupported, "an encoder's source is linear PCM")
        }
        var d = SFormat(c: destination)
        if d.sampleRate == 0 { d.sampleRate = source.sampleRate }
        do { format = try PacketEncoder.completed(d).c } catch {
            throw AudioFileFailure(status: kAudioConverterErr_FormatNotSupported, "destination: \(error)")
        }
        isAAC = d.formatID == AudioFormatID.mpeg4AAC
        _ = try encoderMade()  // libavcodec refuses what it cannot encode now, not at the first fill
    }

    /// The encoder, made on first use.
    func encoderMade() throws(AudioFileFailure) -> PacketEncoder {
        if let encoder { return encoder }
        do {
            let e = try PacketEncoder(format: SFormat(c: format), bitRate: bitRate)
            encoder = e
            return e
        } catch {
            throw AudioFileFailure(status: kAudioConverterErr_FormatNotSupported, "encoder: \(error)")
        }
    }

    /// kAudioConverterEncodeBitRate: AAC only, before the first frame is encoded.
    func setBitRate(_ r: Int) throws(AudioFileFailure) {
        guard isAAC else { throw AudioFileFailure(status: kAudioConverterErr_PropertyNotSupported, "ALAC has no bit rate to set") }
        guard framesFed == 0 else { throw AudioFileFailure(status: kAudioConverterErr_OperationNotSupported, "the bit rate is set before the first fill") }
        bitRate = r
        encoder = nil
        _ = try encoderMade()
    }

    func maximumPacketSize() throws(AudioFileFailure) -> UInt32 { UInt32(try encoderMade().maximumPacketSize) }

    func primeInfo() throws(AudioFileFailure) -> AudioConverterPrimeInfo {
        let e = try encoderMade()
        return AudioConverterPrimeInfo(leadingFrames: UInt32(e.primingFrames), trailingFrames: UInt32(finished ? e.remainderFrames : 0))
    }

    /// The compression cookie, the bit rate or the codec quality, in their C layout.
    func property(_ id: UInt32) throws(AudioFileFailure) -> [UInt8] {
        let e = try encoderMade()
        if id == UInt32(kAudioConverterCompressionMagicCookie) { return e.magicCookie }
        if id == UInt32(kAudioConverterCodecQuality) { return withUnsafeBytes(of: codecQuality) { Array($0) } }
        guard isAAC else { throw AudioFileFailure(status: kAudioConverterErr_PropertyNotSupported, "ALAC has no bit rate") }
        return withUnsafeBytes(of: UInt32(e.bitRate)) { Array($0) }
    }

    /// AudioConverterReset: a new stream (the encoder reopened, its priming again).
    func reset() {
        encoder?.reset()
        packets = []
        next = 0
        finished = false
        framesFed = 0
    }

    /// The next packet not given yet, if any.
    var pending: [UInt8]? { next < packets.count ? packets[next] : nil }

    func gavePacket() {
        next += 1
        if next == packets.count {
            packets.removeAll(keepingCapacity: true)
            next = 0
        }
    }

    /// Encodes `frames` planar frames (one pointer a channel).
    func encode(_ planes: [UnsafePointer<Float>], frames: Int) throws(AudioFileFailure) {
        let e = try encoderMade()
        planes.withUnsafeBufferPointer { e.encode($0.baseAddress!, frames: frames, into: &packets) }
        framesFed += frames
    }

    /// The input ended: the encoder's last packets.
    func finish() throws(AudioFileFailure) {
        try encoderMade().finish(into: &packets)
        finished = true
    }
}

extension CConverter {
    /// AudioConverterFillComplexBuffer to AAC or ALAC: whole packets into the first buffer, each
    /// described; returns the packets made and the status to answer.
    func fillPackets(_ proc: AudioConverterComplexInputDataProc, _ user: UnsafeMutableRawPointer?, packets wanted: Int,
                     into list: UnsafeMutablePointer<CAudioToolbox.AudioBufferList>,
                     descriptions: UnsafeMutablePointer<CPacketDescription>?) throws(AudioFileFailure) -> (Int, OSStatus) {
        guard let encoding else { return (0, paramError) }
        guard let descriptions else {
            throw AudioFileFailure(status: kAudioConverterErr_RequiresPacketDescriptionsError, "an encoder's packets need their descriptions")
        }
        guard list.pointee.mNumberBuffers >= 1, let data = list.pointee.mBuffers.mData else {
            throw AudioFileFailure(status: paramError, "no output buffer")
        }
        let room = Int(list.pointee.mBuffers.mDataByteSize)
        let framesPerPacket = Int(output.mFramesPerPacket)
        var made = 0, bytes = 0
        var status: OSStatus = 0
        while made < wanted {
            if let p = encoding.pending {
                guard bytes + p.count <= room else {
                    if made == 0 { throw AudioFileFailure(status: kAudioConverterErr_InvalidOutputSize, "a packet of \(p.count) bytes does not fit in \(room)") }
                    break
                }
                p.withUnsafeBytes { (data + bytes).copyMemory(from: $0.baseAddress!, byteCount: p.count) }
                descriptions[made] = CPacketDescription(mStartOffset: Int64(bytes), mVariableFramesInPacket: 0, mDataByteSize: UInt32(p.count))
                bytes += p.count
                made += 1
                encoding.gavePacket()
                continue
            }
            if encoding.finished { break }
            if let s = try refill(proc, user, frames: framesPerPacket) {
                if s != 0 {
                    status = s
                    break
                }
                try encoding.finish()
                continue
            }
            let k = stage.held - stage.given
            try encoding.encode(stage.out.map { UnsafePointer($0 + stage.given) }, frames: k)
            stage.gave(k)
        }
        list.pointee.mBuffers.mDataByteSize = UInt32(bytes)
        return (made, status)
    }
}
