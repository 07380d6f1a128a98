// Extended Audio File Services, writing (issue 23): frames in the client's linear PCM, converted
// to planar floats (PCMDeinterleaver), then written in the file's format: linear PCM by
// PCMInterleaver's rule (or as floats), or AAC and ALAC packets from AQConvert's PacketEncoder
// into a CAF or an M4A with the encoder's cookie and, at the end, its priming and remainder in
// the packet table (an M4A's edit list). The file's channel count; a client at another rate is converted to the file's by libsoxr
// (AQConvert's RateConverter, as AudioConverter converts): N client frames become exactly
// round(N × file / client) file frames, the resampler's tail written at ExtAudioFileDispose.
import AQConvert
import AQTypes
import CAudioToolbox
import Foundation

/// An ExtAudioFileRef's writing. Used from one thread at a time.
final class ExtAudioFileWriter {
    let file: AudioFileWriteState
    let channels: Int
    private(set) var client: CFormat?
    private var encoder: PacketEncoder?
    /// The file was created at rate 0 (a compressed format): its rate is the client's, set with
    /// the client format before the first frame (issue 23, Apple's ConvertFile with a bit rate).
    let rateFollowsClient: Bool
    /// kExtAudioFileProperty_AudioConverter: a converter from the client format to the file's,
    /// made when first asked, whose encoder settings (the bit rate) the writer takes when
    /// kExtAudioFileProperty_ConverterConfig is set and at the first write.
    private(set) var converter: CConverter? {
        didSet {
            // Live while it is the writer's (AudioConverterSetProperty finds it), then gone.
            if let o = oldValue, o !== converter { _ = Converters.lock.withLock { Converters.live.removeValue(forKey: UnsafeMutableRawPointer(o.ref)) } }
            if let n = converter, n !== oldValue { Converters.lock.withLock { Converters.live[UnsafeMutableRawPointer(n.ref)] = n } }
        }
    }
    private var encoderBitRate = 0
    private var planes: [UnsafeMutablePointer<Float>] = []
    private var capacity = 0
    private var scratch: UnsafeMutableRawPointer?
    private var scratchBytes = 0
    private var packetsWritten: Int64 = 0
    /// File frames written (after rate conversion: the file's rate).
    private(set) var framesWritten: Int64 = 0
    /// Client frames taken by ExtAudioFileWrite (before rate conversion).
    private var clientFramesWritten: Int64 = 0
    /// Client frames to the file's rate, when the client's rate is another.
    private var rate: RateConverter?
    private var converted: [UnsafeMutablePointer<Float>] = []
    private var convertedCapacity = 0
    private static let rateChunk = 4096
    private var finished = false

    /// Writes into `file`; compressed formats get an encoder (whose cookie goes into the file).
    init(file: AudioFileWriteState, rateFollowsClient: Bool = false) throws(AudioFileFailure) {
        self.file = file
        self.rateFollowsClient = rateFollowsClient
        let f = file.format
        channels = Int(f.channelsPerFrame)
        if f.formatID == AudioFormatID.linearPCM {
            encoder = nil
            guard [16, 24, 32].contains(f.bitsPerChannel) || (f.formatFlags.contains(.isFloat) && f.bitsPerChannel == 64) else {
                throw AudioFileFailure(status: kExtAudioFileError_InvalidDataFormat, "8-bit files are not written through ExtAudioFile yet")
            }
            if ExtAudioFileReader.clientFormatProblem(f.c, file: f) == nil { client = f.c }
        } else {
            do { encoder = try PacketEncoder(format: f) } catch {
                throw AudioFileFailure(status: kExtAudioFileError_InvalidDataFormat, "no encoder for the file: \(error)")
            }
            try file.setCookie(encoder!.magicCookie)
        }
    }

    deinit {
        converter = nil
        for p in planes { p.deallocate() }
        for p in converted { p.deallocate() }
        scratch?.deallocate()
    }

    func setClient(_ c: CFormat) throws(AudioFileFailure) {
        if let problem = ExtAudioFileReader.clientFormatProblem(c, file: file.format, rateMayDiffer: true) {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidDataFormat, "client format: \(problem)")
        }
        if rateFollowsClient && clientFramesWritten == 0 && c.mSampleRate != file.format.sampleRate {
            // The file's rate is the client's: the encoder made again for it.
            var f = file.format
            f.sampleRate = c.mSampleRate
            do { f = try PacketEncoder.completed(f) } catch {
                throw AudioFileFailure(status: kExtAudioFileError_InvalidDataFormat, "client format: \(error)")
            }
            try file.setSampleRate(c.mSampleRate)
            try remakeEncoder(bitRate: encoderBitRate)
            converter = nil
        }
        let fileRate = file.format.sampleRate
        if c.mSampleRate != fileRate {
            guard clientFramesWritten == 0 || rate?.inputRate == c.mSampleRate else {
                throw AudioFileFailure(status: kExtAudioFileError_InvalidOperationOrder, "the client's rate changes after frames were written")
            }
            if rate?.inputRate != c.mSampleRate {
                do { rate = try RateConverter(inputRate: c.mSampleRate, outputRate: fileRate, channels: channels) } catch {
                    throw AudioFileFailure(status: kExtAudioFileError_InvalidDataFormat, "client format: \(error)")
                }
                for p in converted { p.deallocate() }
                convertedCapacity = RateConverter.maximumOutputFrames(inputFrames: Self.rateChunk, inputRate: c.mSampleRate, outputRate: fileRate) + 4096
                let cap = convertedCapacity
                converted = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: cap) }
            }
        } else if rate != nil {
            guard clientFramesWritten == 0 else {
                throw AudioFileFailure(status: kExtAudioFileError_InvalidOperationOrder, "the client's rate changes after frames were written")
            }
            rate = nil
        }
        if let old = client, withUnsafeBytes(of: old, { Array($0) }) != withUnsafeBytes(of: c, { Array($0) }) { converter = nil }
        client = c
    }

    /// The encoder made again at `bitRate` (before the first frame), its cookie into the file.
    private func remakeEncoder(bitRate: Int) throws(AudioFileFailure) {
        guard encoder != nil else { return }
        do { encoder = try PacketEncoder(format: file.format, bitRate: bitRate) } catch {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidDataFormat, "no encoder for the file: \(error)")
        }
        encoderBitRate = bitRate
        try file.setCookie(encoder!.magicCookie)
    }

    /// kExtAudioFileProperty_AudioConverter: the converter from the client format to the file's
    /// (compressed files with a client format), made on first ask.
    func audioConverter() throws(AudioFileFailure) -> CConverter {
        if let converter { return converter }
        guard encoder != nil, let client else {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidProperty, "a converter is there for a compressed file once the client format is set")
        }
        let c = try CConverter(input: client, output: file.format.c)
        converter = c
        return c
    }

    /// kExtAudioFileProperty_ConverterConfig (and the first write): takes the converter's
    /// encoder settings (the bit rate) while no frame was written.
    func syncConverter() throws(AudioFileFailure) {
        guard clientFramesWritten == 0, let e = converter?.encoding, e.bitRate != encoderBitRate else { return }
        try remakeEncoder(bitRate: e.bitRate)
    }

    /// Writes `frames` frames from `list`'s buffers (the client's format).
    func write(_ frames: Int, from list: UnsafePointer<CAudioToolbox.AudioBufferList>) throws(AudioFileFailure) {
        guard let client else {
            throw AudioFileFailure(status: kExtAudioFileError_NonPCMClientFormat, "set kExtAudioFileProperty_ClientDataFormat to linear PCM first")
        }
        guard frames > 0 else { return }
        if clientFramesWritten == 0 { try syncConverter() }
        let nonInterleaved = client.mFormatFlags & UInt32(kAudioFormatFlagIsNonInterleaved) != 0
        let buffers = UnsafeRawPointer(list).advanced(by: 8).assumingMemoryBound(to: CAudioToolbox.AudioBuffer.self)
        let bufferCount = nonInterleaved ? channels : 1
        guard Int(list.pointee.mNumberBuffers) >= bufferCount else {
            throw AudioFileFailure(status: paramError, "\(bufferCount) buffers needed, \(list.pointee.mNumberBuffers) given")
        }
        for b in 0..<bufferCount {
            guard let data = buffers[b].mData, Int(buffers[b].mDataByteSize) >= frames * Int(client.mBytesPerFrame) else {
                throw AudioFileFailure(status: paramError, "buffer \(b) holds fewer than \(frames) frames")
            }
            _ = data
        }
        ensure(frames)
        // The client's samples as planar floats.
        var one = client
        if nonInterleaved {
            // Each buffer is one channel: read as an interleaved one-channel format.
            one.mChannelsPerFrame = 1
            one.mFormatFlags &= ~UInt32(kAudioFormatFlagIsNonInterleaved)
        }
        let deinterleaver: PCMDeinterleaver
        do { deinterleaver = try PCMDeinterleaver(format: SFormat(c: one)) } catch {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidDataFormat, "client format: \(error)")
        }
        for b in 0..<bufferCount {
            let target = nonInterleaved ? [planes[b]] : planes
            target.withUnsafeBufferPointer { deinterleaver.convert(buffers[b].mData!, frames: frames, into: $0.baseAddress!, offset: 0) }
        }
        clientFramesWritten += Int64(frames)
        guard let rate else { return try output(planes, frames) }
        var done = 0
        while done < frames {
            let k = min(Self.rateChunk, frames - done)
            let input = planes.map { UnsafePointer($0 + done) }
            let n = input.withUnsafeBufferPointer { i in
                converted.withUnsafeBufferPointer { o in rate.process(input: i.baseAddress!, frames: k, output: o.baseAddress!, capacity: convertedCapacity) }
            }
            try output(converted, n)
            done += k
        }
    }

    /// Writes `frames` frames of `source` (planes at the file's rate) into the file.
    private func output(_ source: [UnsafeMutablePointer<Float>], _ frames: Int) throws(AudioFileFailure) {
        guard frames > 0 else { return }
        if let encoder {
            var packets: [[UInt8]] = []
            source.map { UnsafePointer($0) }.withUnsafeBufferPointer { encoder.encode($0.baseAddress!, frames: frames, into: &packets) }
            try writePackets(packets)
        } else {
            ensureScratch(frames)
            let bytes = storePCM(source, frames)
            try file.writeBytes(start: file.dataBytes, count: bytes, from: scratch!)
        }
        framesWritten += Int64(frames)
    }

    /// Ends the file: the encoder's last packets and its packet table. Then the caller closes it.
    func finish() throws(AudioFileFailure) {
        guard !finished else { return }
        finished = true
        converter = nil  // its AudioConverterRef ends with the file
        if let rate {
            // What the resampler still holds: the file gets exactly round(N × file / client).
            while true {
                let n = converted.withUnsafeBufferPointer { rate.flush(output: $0.baseAddress!, capacity: convertedCapacity) }
                if n == 0 { break }
                try output(converted, n)
            }
        }
        guard let encoder else { return }
        var packets: [[UInt8]] = []
        encoder.finish(into: &packets)
        try writePackets(packets)
        let t = encoder.packetTableInfo
        file.packets?.priming = t.primingFrames
        file.packets?.remainder = t.remainderFrames
    }

    private func writePackets(_ packets: [[UInt8]]) throws(AudioFileFailure) {
        for p in packets where !p.isEmpty {
            var d = CPacketDescription(mStartOffset: 0, mVariableFramesInPacket: 0, mDataByteSize: UInt32(p.count))
            let result = p.withUnsafeBytes { raw in
                Result { () throws(AudioFileFailure) in
                    try file.writePackets(start: packetsWritten, count: 1, descriptions: &d, byteCount: p.count, from: raw.baseAddress!)
                }
            }
            _ = try result.get()
            packetsWritten += 1
        }
    }

    /// The planes' `frames` frames in the file's PCM, into `scratch`; returns the bytes.
    private func storePCM(_ planes: [UnsafeMutablePointer<Float>], _ frames: Int) -> Int {
        let f = file.format
        let big = f.formatFlags.contains(.isBigEndian)
        let bytes = frames * Int(f.bytesPerFrame)
        if f.formatFlags.contains(.isFloat) {
            var p = scratch!
            for i in 0..<frames {
                for c in 0..<channels {
                    if f.bitsPerChannel == 64 {
                        let v = Double(planes[c][i]).bitPattern
                        p.storeBytes(of: big ? v.bigEndian : v.littleEndian, as: UInt64.self)
                        p += 8
                    } else {
                        let v = planes[c][i].bitPattern
                        p.storeBytes(of: big ? v.bigEndian : v.littleEndian, as: UInt32.self)
                        p += 4
                    }
                }
            }
        } else {
            PCMInterleaver(bits: Int(f.bitsPerChannel), bigEndian: big).interleave(frames: frames, channels: channels, into: scratch!) { c, i in planes[c][i] }
        }
        return bytes
    }

    /// Room for `frames` frames in the planes and the scratch bytes.
    private func ensure(_ frames: Int) {
        if frames > capacity {
            for p in planes { p.deallocate() }
            capacity = frames
            planes = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frames) }
        }
        ensureScratch(frames)
    }

    /// Room for `frames` frames in the scratch bytes.
    private func ensureScratch(_ frames: Int) {
        let need = frames * max(Int(file.format.bytesPerFrame), 8 * channels)
        if need > scratchBytes {
            scratch?.deallocate()
            scratchBytes = need
            scratch = .allocate(byteCount: need, alignment: 16)
        }
    }
}
