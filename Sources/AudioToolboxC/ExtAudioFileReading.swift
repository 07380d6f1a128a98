// Extended Audio File Services, reading (issue 23): an opened file's packets decoded by AQConvert's
// PacketDecoder (libavcodec, the samples `ffmpeg -f f32le` gives) or its PCM converted by
// PCMDeinterleaver, into planar floats, then written in the client's linear PCM. The client's
// frame 0 is the file's first frame after the encoder's priming (the packet table's), and the
// remainder is left out. Seeking decodes from a few packets before the frame asked for (the
// decoder's pre-roll: its state then is what decoding from the start gives), so a read after a
// seek gives the same samples as reading through. Any channel count (the file's channels routed
// as AudioConverter's default map routes them); a client at another rate reads through
// ExtAudioFileRateStage (ExtAudioFileRateReading.swift).
import AQConvert
import AQFileStream
import AQTypes
import CAudioToolbox
import Foundation

/// An ExtAudioFileRef's reading. Used from one thread at a time.
final class ExtAudioFileReader {
    let file: AudioFileReadState
    let channels: Int
    /// The file's frames before the client's frame 0, and the client's frames in all.
    let priming: Int64
    let remainder: Int64
    private(set) var length: Int64
    /// The client's format (nil: not set, for a file whose own format cannot be given).
    private(set) var client: CFormat?
    /// The file-rate frame (after the priming) the next read starts at, when the client's rate
    /// is the file's.
    private(set) var position: Int64 = 0
    /// The rate conversion, when the client's rate is not the file's.
    private var rateStage: ExtAudioFileRateStage?
    /// Per client channel, the file's plane it reads (Apple's default map: the first file
    /// channels to the first client channels, extra file channels dropped, extra client
    /// channels silent), the silent plane for the extras.
    private(set) var clientPlanes: [UnsafeMutablePointer<Float>] = []
    private let silentPlane: UnsafeMutablePointer<Float>

    /// Made anew for a restart at the first packet (libavcodec's flush does not leave every
    /// decoder as a new one is, and reading from the start must give what a new decoder, as
    /// ffmpeg's, gives); flushed for a restart later on (MP3), where the pre-roll settles it.
    private var decoder: PacketDecoder?
    private let deinterleaver: PCMDeinterleaver?
    /// Linear PCM is decoded in chunks of this many frames (its "packets" here).
    private static let pcmChunk = 4096
    /// Where each unit (packet, or PCM chunk) starts among the file's frames, and how many units.
    private var unitStarts: [Int64]
    private let unitCount: Int
    /// Units decoded before the one a seek lands in, whose output is dropped.
    private let preroll: Int
    private let planes: [UnsafeMutablePointer<Float>]
    private let capacity: Int
    private var bytes: UnsafeMutableRawPointer
    private var bytesCapacity: Int
    /// The decoded frames held: `pendingCount` frames from file frame `pendingStart`.
    private var pendingStart: Int64 = 0
    private var pendingCount = 0
    private var nextUnit = 0

    init(file: AudioFileReadState) throws(AudioFileFailure) {
        self.file = file
        let f = file.format
        channels = Int(f.channelsPerFrame)
        let table = file.parser.packetTableInfo
        priming = Int64(max(0, table?.primingFrames ?? 0))
        remainder = Int64(max(0, table?.remainderFrames ?? 0))
        if let table, table.numberValidFrames > 0 {
            length = min(table.numberValidFrames, max(0, file.totalFrames - priming))
        } else {
            length = max(0, file.totalFrames - priming - remainder)
        }
        if f.formatID == AudioFormatID.linearPCM || f.formatID == AudioFormatID.uLaw || f.formatID == AudioFormatID.aLaw {
            do { deinterleaver = try PCMDeinterleaver(format: f) } catch {
                throw AudioFileFailure(status: kExtAudioFileError_InvalidDataFormat, "the file's PCM: \(error)")
            }
            decoder = nil
            unitCount = Int((file.totalFrames + Int64(Self.pcmChunk) - 1) / Int64(Self.pcmChunk))
            unitStarts = []
            preroll = 0
            capacity = Self.pcmChunk
        } else {
            decoder = try Self.makeDecoder(file)
            deinterleaver = nil
            var starts: [Int64] = []
            if file.constantPacketBytes > 0 {
                // Constant-size compressed packets (Apple IMA4) are read from the file: the
                // format's frames each.
                let fpp = Int64(max(1, f.framesPerPacket))
                starts = (0...file.packetCount).map { $0 * fpp }
                unitCount = Int(file.packetCount)
            } else {
                starts.reserveCapacity(file.packets.count + 1)
                var at: Int64 = 0
                for p in file.packets {
                    starts.append(at)
                    at += Int64(p.variableFramesInPacket > 0 ? p.variableFramesInPacket : f.framesPerPacket)
                }
                starts.append(at)
                unitCount = file.packets.count
            }
            unitStarts = starts
            // MP3's bit reservoir and synthesis filter settle in a few packets; lossless codecs
            // need none. AAC's decoder carries state a restart cannot rebuild (its noise
            // substitution's random generator runs through the whole stream), and Opus's
            // filters keep their past for ever: those (and Vorbis) are decoded from the first
            // packet to be exact, and so are MPEG Layers I and II (issue 23): libavcodec's
            // decoder for them is the fixed-point one (16-bit output), whose rounding carries
            // an error-feedback state through the whole stream — a restart differs by one
            // 16-bit step whatever the preroll (measured with 1 to 8 packets). A seek backwards decodes from the start again, a seek forwards decodes on through
            // the frames skipped. Apple IMA4 too: libavcodec's decoder keeps its own running
            // predictor when a packet's header (9 bits of it) is near it, so a restart's state
            // differs from a run's.
            switch f.formatID {
            case AudioFormatID.appleLossless, AudioFormatID.flac: preroll = 0
            case AudioFormatID.mpegLayer3: preroll = 4
            default: preroll = Int.max / 4
            }
            capacity = max(PacketDecoder.maximumFramesPerPacket(f), 1) * 2
        }
        let frames = capacity
        planes = (0..<max(1, channels)).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frames) }
        silentPlane = .allocate(capacity: frames)
        silentPlane.initialize(repeating: 0, count: frames)
        clientPlanes = planes
        bytesCapacity = max(Int(file.maximumPacketSize), 1) * (deinterleaver != nil ? Self.pcmChunk : 1)
        bytes = .allocate(byteCount: bytesCapacity, alignment: 16)
        if deinterleaver != nil, Self.clientFormatProblem(f.c, file: f) == nil { client = f.c }
        try trimLastPacket()
    }

    /// A lossless file's last packet may hold fewer frames than the format's packets (ALAC's
    /// states its own length; a CAF's packet table may count it whole): it is decoded once, and
    /// the length follows what it holds.
    private func trimLastPacket() throws(AudioFileFailure) {
        let id = file.format.formatID
        guard decoder != nil, id == AudioFormatID.appleLossless || id == AudioFormatID.flac, unitCount > 0 else { return }
        let last = unitCount - 1
        let nominal = unitStarts[last + 1] - unitStarts[last]
        let held = Int64(try decode(last))
        decoder = try Self.makeDecoder(file)
        guard held > 0, held < nominal else { return }
        unitStarts[last + 1] = unitStarts[last] + held
        length = min(length, max(0, unitStarts[last + 1] - priming))
    }

    static func makeDecoder(_ file: AudioFileReadState) throws(AudioFileFailure) -> PacketDecoder {
        do { return try PacketDecoder(format: file.format, magicCookie: file.parser.magicCookie ?? []) } catch {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidDataFormat, "no decoder for the file: \(error)")
        }
    }

    deinit {
        for p in planes { p.deallocate() }
        silentPlane.deallocate()
        bytes.deallocate()
    }

    /// Why `c` cannot be the client format of a file in `f` (nil: it can). `converting`: an
    /// AudioConverter's destination, which may have another rate and channel count.
    static func clientFormatProblem(_ c: CFormat, file f: SFormat, converting: Bool = false, rateMayDiffer: Bool = false, channelsMayDiffer: Bool = false) -> String? {
        let flags = c.mFormatFlags
        let isFloat = flags & UInt32(kAudioFormatFlagIsFloat) != 0
        let nonInterleaved = flags & UInt32(kAudioFormatFlagIsNonInterleaved) != 0
        guard c.mFormatID == UInt32(kAudioFormatLinearPCM) else { return "not linear PCM" }
        guard converting || rateMayDiffer || c.mSampleRate == f.sampleRate else { return "another rate (\(c.mSampleRate) Hz; the file's is \(f.sampleRate) Hz)" }
        guard c.mSampleRate == f.sampleRate || (c.mSampleRate >= 1000 && c.mSampleRate <= 768_000) else { return "a rate of \(c.mSampleRate) Hz (1000…768000 Hz)" }
        guard converting || channelsMayDiffer || c.mChannelsPerFrame == f.channelsPerFrame else { return "another channel count: channel mapping is not there yet" }
        guard c.mChannelsPerFrame >= 1, c.mChannelsPerFrame <= 64 else { return "\(c.mChannelsPerFrame) channels (1…64)" }
        guard c.mFramesPerPacket == 1 else { return "not one frame a packet" }
        if isFloat {
            guard c.mBitsPerChannel == 32 else { return "floats of \(c.mBitsPerChannel) bits" }
        } else {
            guard flags & UInt32(kAudioFormatFlagIsSignedInteger) != 0, [16, 24, 32].contains(c.mBitsPerChannel) else {
                return "integers other than signed 16, 24 or 32 bits"
            }
        }
        let sampleBytes = c.mBitsPerChannel / 8
        let frameBytes = nonInterleaved ? sampleBytes : sampleBytes * c.mChannelsPerFrame
        guard c.mBytesPerFrame == frameBytes, c.mBytesPerPacket == frameBytes else { return "not packed (\(c.mBytesPerFrame) bytes a frame)" }
        return nil
    }

    func setClient(_ c: CFormat) throws(AudioFileFailure) {
        if let problem = Self.clientFormatProblem(c, file: file.format, rateMayDiffer: true, channelsMayDiffer: true) {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidDataFormat, "client format: \(problem)")
        }
        // The read position stays (in file frames) across a change of client format.
        let at = tell
        if c.mSampleRate != file.format.sampleRate {
            let stage = try ExtAudioFileRateStage(fileRate: file.format.sampleRate, clientRate: c.mSampleRate, channels: Int(c.mChannelsPerFrame), fileLength: length)
            stage.seek(toFile: at)
            rateStage = stage
        } else {
            rateStage = nil
            position = at
        }
        client = c
        clientPlanes = ConverterStage.defaultMap(from: min(channels, planes.count), to: Int(c.mChannelsPerFrame)).map { $0 >= 0 ? planes[$0] : silentPlane }
    }

    /// The next read starts at file frame `frame` (at the file's rate, as Apple's QA1609 says;
    /// with a client at another rate, at that frame's client frame: ExtAudioFileRateStage).
    func seek(_ frame: Int64) throws(AudioFileFailure) {
        guard frame >= 0 else { throw AudioFileFailure(status: kExtAudioFileError_InvalidSeek, "frame \(frame)") }
        if let rateStage { rateStage.seek(toFile: frame) } else { position = frame }
    }

    /// ExtAudioFileTell: the read position in file frames.
    var tell: Int64 { rateStage?.fileFrame ?? position }

    /// The routed frames (``clientPlanes``) at file-rate position `p` (a client frame when the
    /// rates are equal): their index in the planes and how many (at most `n`; 0 at the end).
    func source(at p: Int64, max n: Int) throws(AudioFileFailure) -> (Int, Int) {
        guard p >= 0, p < length else { return (0, 0) }
        let raw = p + priming
        if raw < pendingStart || raw >= pendingStart + Int64(pendingCount) {
            try fill(raw)
            if raw < pendingStart || raw >= pendingStart + Int64(pendingCount) { return (0, 0) }  // the file ended early
        }
        let from = Int(raw - pendingStart)
        return (from, min(pendingCount - from, n, Int(length - p)))
    }

    /// Reads up to `frames` frames into `list`'s buffers; returns the frames read.
    func read(_ frames: Int, into list: UnsafeMutablePointer<CAudioToolbox.AudioBufferList>) throws(AudioFileFailure) -> Int {
        guard let client else {
            throw AudioFileFailure(status: kExtAudioFileError_NonPCMClientFormat, "set kExtAudioFileProperty_ClientDataFormat to linear PCM first")
        }
        let nonInterleaved = client.mFormatFlags & UInt32(kAudioFormatFlagIsNonInterleaved) != 0
        let buffers = UnsafeMutableRawPointer(list).advanced(by: 8).assumingMemoryBound(to: CAudioToolbox.AudioBuffer.self)
        let clientChannels = clientPlanes.count
        let bufferCount = nonInterleaved ? clientChannels : 1
        guard Int(list.pointee.mNumberBuffers) >= bufferCount else {
            throw AudioFileFailure(status: paramError, "\(bufferCount) buffers needed, \(list.pointee.mNumberBuffers) given")
        }
        let frameBytes = Int(client.mBytesPerFrame)
        var room = frames
        for b in 0..<bufferCount {
            guard buffers[b].mData != nil else { throw AudioFileFailure(status: paramError, "buffer \(b) has no data") }
            room = min(room, Int(buffers[b].mDataByteSize) / frameBytes)
        }
        var produced = 0
        if let rateStage {
            produced = try rateStage.read(room, format: client, buffers: buffers, planes: clientPlanes) { p, n throws(AudioFileFailure) in
                try self.source(at: p, max: n)
            }
        }
        while rateStage == nil && produced < room {
            let (from, k) = try source(at: position, max: room - produced)
            if k == 0 { break }  // the end (or the file ended early)
            PlanarPCM.store(clientPlanes, from: from, count: k, at: produced, format: client, channels: clientChannels, buffers: buffers)
            produced += k
            position += Int64(k)
        }
        for b in 0..<bufferCount { buffers[b].mDataByteSize = UInt32(produced * frameBytes) }
        return produced
    }

    /// Decodes until the frames held contain file frame `raw` (or the units run out).
    private func fill(_ raw: Int64) throws(AudioFileFailure) {
        let target = unit(containing: raw)
        // Behind what is held, or far ahead of it: start over a few units before.
        if raw < pendingStart || target < nextUnit - 1 || target > nextUnit + max(preroll, 1) {
            let start = max(0, target - preroll)
            if decoder != nil {
                if start == 0 { decoder = try Self.makeDecoder(file) } else { decoder?.reset() }
            }
            nextUnit = start
            pendingStart = unitStart(start)
            pendingCount = 0
        }
        while raw >= pendingStart + Int64(pendingCount) && nextUnit < unitCount {
            pendingStart = unitStart(nextUnit)
            pendingCount = try decode(nextUnit)
            nextUnit += 1
        }
    }

    private func unitStart(_ u: Int) -> Int64 {
        decoder == nil ? Int64(u) * Int64(Self.pcmChunk) : unitStarts[min(u, unitStarts.count - 1)]
    }

    /// The unit holding file frame `raw` (the last one past the end).
    private func unit(containing raw: Int64) -> Int {
        guard unitCount > 0 else { return 0 }
        if decoder == nil { return min(Int(raw / Int64(Self.pcmChunk)), unitCount - 1) }
        var lo = 0, hi = unitCount - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if unitStarts[mid] <= raw { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// Decodes unit `u` into the planes; returns its frames.
    private func decode(_ u: Int) throws(AudioFileFailure) -> Int {
        let planePointers = planes
        return try planePointers.withUnsafeBufferPointer { p throws(AudioFileFailure) -> Int in
            if let deinterleaver {
                let (n, _) = try file.readPackets(start: Int64(u) * Int64(Self.pcmChunk), maxPackets: Self.pcmChunk, capacity: bytesCapacity, out: bytes, descriptions: nil)
                deinterleaver.convert(bytes, frames: n, into: p.baseAddress!, offset: 0)
                return n
            }
            var d = CPacketDescription()
            let (n, size) = try file.readPackets(start: Int64(u), maxPackets: 1, capacity: bytesCapacity, out: bytes, descriptions: &d)
            guard n == 1 else { return 0 }
            let frames = Int(unitStarts[u + 1] - unitStarts[u])
            return decoder!.decode(UnsafeRawBufferPointer(start: bytes, count: size), framesIfCorrupt: frames, into: p.baseAddress!, offset: 0, capacity: capacity)
        }
    }
}
