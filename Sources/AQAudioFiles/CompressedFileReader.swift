import AQEngine
import AQFileStream
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads a compressed audio file (MP3, ADTS AAC, CAF with ALAC, AAC or Apple IMA4, AIFC with
/// Apple IMA4, FLAC, MP4/M4A with AAC, ALAC, FLAC or Opus, Ogg with FLAC, Opus or Vorbis) through the file-stream parser, 64 KiB at
/// a time, and fills queue buffers with whole packets and their packet
/// descriptions. Memory holds at most one chunk plus one buffer's worth of packets.
///
/// CAF files whose packet table (`pakt`) comes after the audio data (as ffmpeg writes them)
/// are fed to the parser with the chunks after `data` moved before it (read with `pread`, the
/// file is not changed), since a push parser must know the packet sizes before the packets.
/// MP4 files whose `moov` follows `mdat` are fed `moov` first, then their samples from the
/// offset the parser's seek to packet 0 gives.
///
/// Thread safety: not thread-safe; one thread at a time (it may move between threads when
/// the calls are serialised).
package final class CompressedFileReader {
    /// The file.
    package let url: URL
    /// The container (`MPG3`, `adts`, `caff`, `flac`, `mp4f`, `m4af`, `ogg `).
    package private(set) var fileType: FourCharCode = FourCharCode(rawValue: 0)
    /// The stream's format.
    package private(set) var format: AudioStreamBasicDescription
    /// The magic cookie (AAC, ALAC, FLAC, Opus, Vorbis), or empty.
    package private(set) var magicCookie: [UInt8] = []
    /// Gapless information (MP3 LAME tag, CAF `pakt`, FLAC STREAMINFO's sample count, MP4
    /// `iTunSMPB` or edit list, Opus pre-skip), if the file has it.
    package private(set) var packetTableInfo: AudioFilePacketTableInfo?

    let fd: Int32
    private var stream: AudioFileStream!
    /// (file offset, length) pieces fed to the parser in order.
    private var segments: [(offset: Int64, length: Int64)] = []
    private var segment = 0
    private var segmentDone: Int64 = 0
    private var resumeAtFirstPacket = false
    private var fileSize: Int64 = 0
    private var discontinuityNext = false
    private let chunk: UnsafeMutableRawPointer
    private var endOfFile = false
    // Parsed packets not yet handed out.
    private var pending: [UInt8] = []
    private var pendingDescs: [AudioStreamPacketDescription] = []
    private var head = 0
    /// Packets handed out or parsed (for the probe's counts).
    private(set) var packetsParsed = 0
    private(set) var framesParsed: Int64 = 0
    private var lastPacket: [UInt8] = []
    private var keepLast = false

    /// True for the formats this reader handles.
    package static func isCompressed(_ f: AudioStreamBasicDescription) -> Bool {
        f.formatID == AudioFormatID.mpegLayer3 || f.formatID == AudioFormatID.mpeg4AAC || f.formatID == AudioFormatID.appleLossless
            || f.formatID == AudioFormatID.mpegLayer2 || f.formatID == AudioFormatID.mpegLayer1
            || f.formatID == AudioFormatID.flac || f.formatID == AudioFormatID.opus || f.formatID == AudioFormatID.vorbis
            || f.formatID == AudioFormatID.appleIMA4
    }

    /// Opens `url` and parses its header.
    /// - Throws: ``SessionError`` (`.unreadableFile`, `.unsupportedAudio`) naming the file.
    package init(url: URL) throws(SessionError) {
        self.url = url
        let path = url.path
        fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            throw SessionError(.unreadableFile, file: path, "cannot open audio file: \(String(cString: strerror(errno)))")
        }
        chunk = .allocate(byteCount: AudioFileReader.chunkBytes, alignment: 16)
        format = .linearPCM(sampleRate: 48000, channels: 1, bits: 16)
        let plan = Self.plan(fd)
        segments = plan.segments
        resumeAtFirstPacket = plan.resume
        fileSize = plan.size
        do {
            stream = try AudioFileStream(
                propertyListener: { _, p, flags in if p == .magicCookieData { flags.insert(.cacheProperty) } },
                packets: { [unowned self] data, count, descs in self.accept(data, count, descs) })
        } catch {
            throw SessionError(.unsupportedAudio, file: path, "\(error)")
        }
        while !stream.isReadyToProducePackets && !endOfFile { try readChunk() }
        guard stream.isReadyToProducePackets, let f = stream.dataFormat else {
            throw SessionError(.unsupportedAudio, file: path, "the file ends before its audio data")
        }
        format = f
        fileType = stream.fileType ?? FourCharCode(rawValue: 0)
        magicCookie = stream.magicCookie ?? []
        packetTableInfo = stream.packetTableInfo
    }

    deinit {
        close(fd)
        chunk.deallocate()
    }

    /// The pieces of the file to feed (``AudioFileReadingOrder``): the whole file, or for a
    /// CAF with chunks after `data`, the header, every other chunk in order, then `data`.
    static func plan(_ fd: Int32) -> (segments: [(offset: Int64, length: Int64)], resume: Bool, size: Int64) {
        var st = stat()
        let size = fstat(fd, &st) == 0 ? Int64(st.st_size) : Int64.max
        let order = AudioFileReadingOrder.make(fileSize: size) { offset, count in
            var b = [UInt8](repeating: 0, count: count)
            let n = pread(fd, &b, count, off_t(offset))
            return n > 0 ? Array(b[0..<n]) : []
        }
        return (order.segments.map { ($0.offset, $0.length) }, order.resumeAtFirstPacket, size)
    }

    private func readChunk() throws(SessionError) {
        if segment == segments.count, resumeAtFirstPacket, stream.isReadyToProducePackets {
            // An MP4 read moov first: its samples are where the sample table says.
            resumeAtFirstPacket = false
            do {
                let start = try stream.seek(toPacket: 0).byteOffset
                segments.append((start, max(0, fileSize - start)))
                discontinuityNext = true
            } catch {
                throw SessionError(.unsupportedAudio, file: url.path, "\(error)")
            }
        }
        guard segment < segments.count else { endOfFile = true; return }
        let s = segments[segment]
        let want = Int(min(Int64(AudioFileReader.chunkBytes), s.length - segmentDone))
        let got = want > 0 ? pread(fd, chunk, want, off_t(s.offset + segmentDone)) : 0
        if got < 0 {
            if errno == EINTR { return }
            throw SessionError(.unreadableFile, file: url.path, "read error: \(String(cString: strerror(errno)))")
        }
        if got == 0 {
            segment += 1
            segmentDone = 0
            return
        }
        segmentDone += Int64(got)
        if segmentDone >= s.length { segment += 1; segmentDone = 0 }
        do {
            let flags: AudioFileStreamParseFlags = discontinuityNext ? .discontinuity : []
            discontinuityNext = false
            try stream.parse(UnsafeRawBufferPointer(start: chunk, count: got), flags: flags)
        } catch {
            throw SessionError(.unsupportedAudio, file: url.path, "\(error)")
        }
    }

    private func accept(_ data: UnsafeRawBufferPointer, _ count: Int, _ descs: UnsafeBufferPointer<AudioStreamPacketDescription>?) {
        var made: [AudioStreamPacketDescription] = []
        if descs == nil {
            // Constant-size compressed packets (Apple IMA4) come without descriptions.
            guard let f = stream?.dataFormat, f.bytesPerPacket > 0, f.framesPerPacket > 0, !f.isLinearPCM else { return }
            let size = Int(f.bytesPerPacket)
            made = (0..<min(count, data.count / size)).map {
                AudioStreamPacketDescription(startOffset: Int64($0 * size), variableFramesInPacket: 0, dataByteSize: UInt32(size))
            }
        }
        for i in 0..<(descs?.count ?? made.count) {
            let d = descs?[i] ?? made[i]
            let start = Int(d.startOffset)
            let bytes = UnsafeRawBufferPointer(rebasing: data[start..<(start + Int(d.dataByteSize))])
            pendingDescs.append(AudioStreamPacketDescription(
                startOffset: Int64(pending.count), variableFramesInPacket: d.variableFramesInPacket, dataByteSize: d.dataByteSize))
            pending.append(contentsOf: bytes)
            packetsParsed += 1
            let perPacket = stream?.dataFormat?.framesPerPacket ?? format.framesPerPacket
            framesParsed += Int64(d.variableFramesInPacket > 0 ? d.variableFramesInPacket : perPacket)
        }
        // The last packet is kept apart for the probe (ALAC's last packet states its own
        // length); it may arrive while the header is still being read, so always.
        if let last = pendingDescs.last {
            lastPacket = Array(pending[Int(last.startOffset)..<(Int(last.startOffset) + Int(last.dataByteSize))])
        }
        if keepLast {
            pending.removeAll(keepingCapacity: true)
            pendingDescs.removeAll(keepingCapacity: true)
        }
    }

    /// True when every packet has been handed out.
    package var isAtEnd: Bool { endOfFile && head == pendingDescs.count }

    /// Fills `buffer` with whole packets (at most its packet description capacity and its
    /// byte capacity), setting `audioDataByteSize` and `packetDescriptionCount`.
    /// - Returns: packets written; 0 at the end.
    /// - Throws: ``SessionError`` for a read error, a parser error, or a packet larger than
    ///   the buffer.
    package func read(into buffer: AudioQueueBuffer) throws(SessionError) -> Int {
        let maxPackets = buffer.packetDescriptionCapacity
        while pendingDescs.count - head < maxPackets && !endOfFile { try readChunk() }
        guard let out = buffer.packetDescriptions else { return 0 }
        var n = 0
        var bytes = 0
        let base = head < pendingDescs.count ? Int(pendingDescs[head].startOffset) : 0
        while n < maxPackets, head + n < pendingDescs.count {
            let d = pendingDescs[head + n]
            let size = Int(d.dataByteSize)
            if bytes + size > buffer.audioDataBytesCapacity {
                if n == 0 {
                    throw SessionError(.unsupportedAudio, file: url.path, "a packet of \(size) bytes is larger than the buffer (\(buffer.audioDataBytesCapacity) bytes)")
                }
                break
            }
            out[n] = AudioStreamPacketDescription(startOffset: Int64(bytes), variableFramesInPacket: d.variableFramesInPacket, dataByteSize: d.dataByteSize)
            bytes += size
            n += 1
        }
        if bytes > 0 { pending.withUnsafeBytes { buffer.audioData.copyMemory(from: $0.baseAddress! + base, byteCount: bytes) } }
        buffer.audioDataByteSize = bytes
        buffer.packetDescriptionCount = n
        head += n
        if head == pendingDescs.count {
            pending.removeAll(keepingCapacity: true)
            pendingDescs.removeAll(keepingCapacity: true)
            head = 0
        }
        return n
    }

    /// Hands the next packet (its bytes and description, offset 0) to `body`; nil at the end.
    /// The bytes are valid only during the call. (The feeder's decoding path,
    /// ``TrackSource``.)
    /// - Throws: ``SessionError`` for a read or parser error.
    package func nextPacket<T>(_ body: (UnsafeRawBufferPointer, AudioStreamPacketDescription) -> T) throws(SessionError) -> T? {
        while head == pendingDescs.count && !endOfFile { try readChunk() }
        guard head < pendingDescs.count else { return nil }
        let d = pendingDescs[head]
        let r = pending.withUnsafeBytes { all in
            body(UnsafeRawBufferPointer(rebasing: all[Int(d.startOffset)..<(Int(d.startOffset) + Int(d.dataByteSize))]),
                AudioStreamPacketDescription(startOffset: 0, variableFramesInPacket: d.variableFramesInPacket, dataByteSize: d.dataByteSize))
        }
        head += 1
        if head == pendingDescs.count {
            pending.removeAll(keepingCapacity: true)
            pendingDescs.removeAll(keepingCapacity: true)
            head = 0
        }
        return r
    }

    /// The largest packet the parser says the file has (for sizing buffers).
    package var packetSizeUpperBound: Int {
        if case .uint32(let v)? = try? stream.value(of: .packetSizeUpperBound), v > 0 { return Int(v) }
        return 8192
    }

    /// The granule position of the last Ogg page in the file's last 128 KiB.
    static func lastGranule(_ fd: Int32) -> Int64? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        let size = Int64(st.st_size)
        let n = Int(min(size, 128 << 10))
        var tail = [UInt8](repeating: 0, count: n)
        guard pread(fd, &tail, n, off_t(size - Int64(n))) == n else { return nil }
        return oggLastGranule(tail)
    }

    /// Reads the header and counts the frames a decoder will play: the gapless valid-frame
    /// count when the file records one (MP3 LAME tag, FLAC STREAMINFO, MP4 `iTunSMPB` or edit
    /// list and sample durations); for Ogg, the last page's granule position (minus the
    /// priming: Opus's pre-skip); else every packet's frames (parsing the whole file, packets
    /// dropped as they stream by); for Apple Lossless in CAF, the last packet's own frame
    /// count (ffmpeg's CAF records whole packets as valid). Nil when the file is not compressed.
    static func probe(_ url: URL) throws(SessionError) -> AudioFileInfo? {
        let r = try CompressedFileReader(url: url)
        guard isCompressed(r.format) else { return nil }
        // MP3's LAME tag, FLAC's STREAMINFO and MP4's edit list and sample durations give
        // the exact length.
        let exact = r.format.formatID == AudioFormatID.mpegLayer3 || r.format.formatID == AudioFormatID.flac
            || r.fileType == AudioFileTypeID.mpeg4 || r.fileType == AudioFileTypeID.m4a
        if exact, let pt = r.packetTableInfo, pt.numberValidFrames > 0 {
            return AudioFileInfo(fileType: r.fileType, format: r.format, frameCount: pt.numberValidFrames)
        }
        if r.fileType == AudioFileTypeID.ogg, let granule = lastGranule(r.fd) {
            // Ogg: the last page's granule position is the stream's end (Opus counts the
            // pre-skip in it).
            let priming = Int64(r.packetTableInfo?.primingFrames ?? 0)
            return AudioFileInfo(fileType: r.fileType, format: r.format, frameCount: max(0, granule - priming))
        }
        r.keepLast = true
        r.pending.removeAll()
        r.pendingDescs.removeAll()
        while !r.endOfFile { try r.readChunk() }
        var frames = r.framesParsed
        if r.format.formatID == AudioFormatID.appleLossless, r.fileType == AudioFileTypeID.caf,
            let last = r.lastPacket.withUnsafeBytes({ PacketInspection.alacFrames($0) }) {
            frames += Int64(last) - Int64(r.format.framesPerPacket)
        }
        if let pt = r.packetTableInfo {
            frames -= Int64(pt.primingFrames)
            if pt.numberValidFrames > 0 { frames = min(frames, pt.numberValidFrames) }
        }
        return AudioFileInfo(fileType: r.fileType, format: r.format, frameCount: max(0, frames))
    }
}
