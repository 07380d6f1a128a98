import AQConvert
import AQTypes
import Foundation

/// Writes a compressed take (`format = "alac"` or `"aac"`, CAF only) as it is recorded: the
/// recorder's float frames go through a ``PacketEncoder`` (libavcodec: Apple Lossless from
/// 24-bit source data, or AAC LC at 96 kbit/s a channel) into a ``CAFPacketWriter`` (`desc`,
/// `kuki`, `data`, and the `pakt` packet table with the encoder's priming and remainder frames,
/// so that file frame 0 is the take's first frame for any reader that honours the table).
///
/// Encoding is done here rather than by a compressed input queue so that the recorder places,
/// drops and pads whole frames exactly as for PCM takes (a packet cannot be cut at a frame).
///
/// Memory: one encoder, the packets of one write, the writer's table (spooled to disk past
/// 64 KiB): constant however long the take.
///
/// Thread safety: not thread-safe; one thread at a time (the take's writer thread).
package final class CompressedTakeWriter: TakeWriter {
    package let url: URL
    /// Frames fed to the encoder. Up to one packet's worth of them reach the file only at
    /// ``finish()``, which writes them all.
    package private(set) var framesWritten: Int64 = 0
    private let encoder: PacketEncoder
    private let file: CAFPacketWriter
    private var packets: [[UInt8]] = []
    private var finished = false

    /// Creates the file and writes its header and magic cookie.
    ///
    /// - Throws: ``SessionError`` `.output` when the format cannot be encoded (e.g. AAC above
    ///   96 kHz) or the file cannot be created.
    package init(url: URL, format: TakeFormat, sampleRate: Int, channels: Int) throws(SessionError) {
        self.url = url
        let alac = format.sample == .alac
        let asbd = AudioStreamBasicDescription(
            sampleRate: Double(sampleRate), formatID: alac ? AudioFormatID.appleLossless : AudioFormatID.mpeg4AAC,
            formatFlags: AudioFormatFlags(rawValue: alac ? PacketEncoder.alac24BitSourceFlag : PacketEncoder.aacLowComplexityFlag),
            bytesPerPacket: 0, framesPerPacket: 0, bytesPerFrame: 0, channelsPerFrame: UInt32(channels), bitsPerChannel: 0)
        do {
            encoder = try PacketEncoder(format: asbd)
        } catch {
            throw SessionError(.output, file: url.path, "cannot record \(format): \(error.message)")
        }
        file = try CAFPacketWriter(url: url, format: encoder.format, magicCookie: encoder.magicCookie)
    }

    package func write(_ source: UnsafePointer<Float>, frames: Int, stride: Int, offset: Int) throws(SessionError) {
        encoder.encode(frames: frames, into: &packets) { c, i in source[i * stride + offset + c] }
        framesWritten += Int64(frames)
        try flushPackets()
    }

    package func writeSilence(frames: Int) throws(SessionError) {
        encoder.encode(frames: frames, into: &packets) { _, _ in 0 }
        framesWritten += Int64(frames)
        try flushPackets()
    }

    package func finish() throws(SessionError) {
        if finished { return }
        finished = true
        encoder.finish(into: &packets)
        var failure: SessionError?
        do throws(SessionError) { try flushPackets() } catch { failure = error }
        try file.finish(primingFrames: encoder.primingFrames, remainderFrames: encoder.remainderFrames)
        if let failure { throw failure }
    }

    /// Appends the packets the encoder completed, one description each.
    private func flushPackets() throws(SessionError) {
        defer { packets.removeAll(keepingCapacity: true) }
        for p in packets {
            let d = AudioStreamPacketDescription(startOffset: 0, variableFramesInPacket: 0, dataByteSize: UInt32(p.count))
            let r: Result<Void, SessionError> = p.withUnsafeBytes { raw in
                do throws(SessionError) { try file.write(raw, descriptions: [d]); return .success(()) } catch { return .failure(error) }
            }
            try r.get()
        }
    }
}
