import AQEngine
import AQFileStream
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads a PCM audio file through the file-stream parser in fixed chunks, never whole: the
/// parser hands out packets, the reader keeps at most one request's worth plus one chunk.
/// Memory is fixed at creation (``init(url:trimStart:frames:maximumRequestFrames:)``) and does
/// not grow with the file's length.
///
/// Thread safety: not thread-safe; one thread at a time (it may move between threads when
/// the calls are serialised).
package final class AudioFileReader {
    /// Bytes read from the file per `read(2)`.
    package static let chunkBytes = 64 << 10

    /// The file.
    package let url: URL
    /// What the header says (format, container, frames).
    package private(set) var info: AudioFileInfo
    /// Bytes of one frame.
    package private(set) var bytesPerFrame = 0

    private let fd: Int32
    private let chunk: UnsafeMutableRawPointer
    private var staging: UnsafeMutableRawPointer
    private var stagingCapacity: Int
    private var head = 0
    private var tail = 0
    private var skipBytes: Int64
    private var remainingBytes: Int64
    private var endOfFile = false
    private var stream: AudioFileStream!
    private var fileSize: Int64 = 0
    /// Bytes fed in place of the file's first bytes (see ``AudioFileReadingOrder``).
    private var replacementHeader: [UInt8]?

    /// Opens `url` and parses its header.
    ///
    /// - Parameters:
    ///   - trimStart: frames skipped at the start of the audio.
    ///   - frames: frames delivered after the trim at most (nil: to the end).
    ///   - maximumRequestFrames: the largest ``read(into:maxFrames:)`` request (sizes the
    ///     staging memory).
    /// - Throws: ``SessionError`` (`.unreadableFile`, `.unsupportedAudio`) naming the file.
    package init(url: URL, trimStart: Int64 = 0, frames: Int64? = nil, maximumRequestFrames: Int = 8192) throws(SessionError) {
        self.url = url
        let path = url.path
        fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let e = errno
            let reason = e == ENOENT ? "no such file" : String(cString: strerror(e))
            throw SessionError(.unreadableFile, file: path, "cannot open audio file: \(reason)")
        }
        var st = stat()
        if fstat(fd, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR {
                close(fd)
                throw SessionError(.unreadableFile, file: path, "cannot read audio file: it is a directory")
            }
            fileSize = Int64(st.st_size)
        }
        chunk = .allocate(byteCount: Self.chunkBytes, alignment: 16)
        if fileSize > 0xFFFF_FFFF {
            // A WAVE past 4 GiB whose data size wrapped: the parser gets a corrected header.
            let fdCopy = fd
            replacementHeader = AudioFileReadingOrder.make(fileSize: fileSize) { offset, count in
                var b = [UInt8](repeating: 0, count: count)
                let n = pread(fdCopy, &b, count, off_t(offset))
                return n > 0 ? Array(b[0..<n]) : []
            }.replacementHeader
        }
        stagingCapacity = 0
        staging = .allocate(byteCount: 1, alignment: 16)
        skipBytes = 0
        remainingBytes = .max
        info = AudioFileInfo(fileType: FourCharCode(rawValue: 0), format: .linearPCM(sampleRate: 48000, channels: 1, bits: 16), frameCount: 0)
        do {
            stream = try AudioFileStream(
                propertyListener: { _, _, _ in },
                packets: { [unowned self] data, _, _ in self.accept(data) })
        } catch {
            // Every property is set: deinit runs after a throwing init and frees the memory.
            throw SessionError(.unsupportedAudio, file: path, "\(error)")
        }
        // Read until the parser reached the audio data (audio that came with the header is
        // kept in the staging area, sized below).
        // On failure deinit closes the file and frees the memory (every property is set).
        try readHeader(path: path, trimStart: trimStart, frames: frames, maximumRequestFrames: maximumRequestFrames)
    }

    private func readHeader(path: String, trimStart: Int64, frames: Int64?, maximumRequestFrames: Int) throws(SessionError) {
        // Until the format is known the staging area only needs room for one chunk.
        stagingCapacity = 2 * Self.chunkBytes + 64
        staging.deallocate()
        staging = .allocate(byteCount: stagingCapacity, alignment: 16)
        pendingHeader = true
        while !stream.isReadyToProducePackets && !endOfFile {
            try readChunk(path: path)
        }
        guard stream.isReadyToProducePackets, let format = stream.dataFormat else {
            if stream.fileType == nil {
                throw SessionError(.unsupportedAudio, file: path, "not an audio file (no WAVE, RF64, Wave64, AIFF, AIFC, CAF, NeXT, FLAC header or MP3/AAC frames)")
            }
            throw SessionError(.unsupportedAudio, file: path, "the file ends before its audio data")
        }
        let type = stream.fileType ?? FourCharCode(rawValue: 0)
        try Self.checkPlayable(format: format, fileType: type, path: path)
        let bpf = Int(format.bytesPerFrame)
        var count: Int64
        let offset = stream.dataOffset ?? 0
        let available = max(0, fileSize - offset) / Int64(bpf)
        if let packets = stream.audioDataPacketCount {
            count = min(Int64(clamping: packets), available)
        } else {
            count = available
        }
        info = AudioFileInfo(fileType: type, format: format, frameCount: count)
        bytesPerFrame = bpf
        // Everything delivered so far was staged whole; apply the trim and the length now.
        skipBytes = max(0, trimStart) * Int64(bpf)
        remainingBytes = frames.map { max(0, $0) * Int64(bpf) } ?? .max
        pendingHeader = false
        let staged = UnsafeRawBufferPointer(start: staging + head, count: tail - head)
        let needed = maximumRequestFrames * bpf + 2 * Self.chunkBytes + 2 * bpf + 64
        let old = staging
        staging = .allocate(byteCount: max(needed, staged.count), alignment: 16)
        stagingCapacity = max(needed, staged.count)
        head = 0
        tail = 0
        accept(staged)
        old.deallocate()
    }

    private var pendingHeader = false


    /// Refuses formats the engine cannot play, with a message naming what is wrong.
    static func checkPlayable(format f: AudioStreamBasicDescription, fileType: FourCharCode, path: String) throws(SessionError) {
        let pcm = f.formatID == AudioFormatID.linearPCM || f.formatID == AudioFormatID.uLaw || f.formatID == AudioFormatID.aLaw
        guard pcm else {
            throw SessionError(.unsupportedAudio, file: path, "'\(f.formatID)' audio is compressed in a way aqsync does not decode (it plays PCM, MP3, AAC, Apple Lossless and FLAC)")
        }
        guard f.channelsPerFrame >= 1 else { throw SessionError(.unsupportedAudio, file: path, "the file has no channels") }
        guard f.channelsPerFrame <= 8 else {
            throw SessionError(.unsupportedAudio, file: path, "the file has \(f.channelsPerFrame) channels; aqsync plays at most 8 per file")
        }
        guard f.sampleRate >= 8000 && f.sampleRate <= 192_000 else {
            throw SessionError(.unsupportedAudio, file: path, "sample rate \(f.sampleRate) Hz is outside 8000–192000 Hz")
        }
        guard f.bytesPerFrame > 0, f.framesPerPacket == 1 else {
            throw SessionError(.unsupportedAudio, file: path, "the audio is not interleaved PCM with one frame per packet")
        }
    }

    deinit {
        close(fd)
        chunk.deallocate()
        staging.deallocate()
    }

    /// True when every frame the reader will deliver has been delivered.
    package var isAtEnd: Bool { tail == head && (endOfFile || remainingBytes == 0) }

    /// Reads up to `maxFrames` frames (at most the `maximumRequestFrames` given at creation)
    /// into `destination` in the file's format. Returns the frames written; 0 at the end.
    ///
    /// - Throws: ``SessionError`` for a read error or a parser error in the file.
    package func read(into destination: UnsafeMutableRawPointer, maxFrames: Int) throws(SessionError) -> Int {
        let bpf = bytesPerFrame
        let want = maxFrames * bpf
        while tail - head < want && !endOfFile && remainingBytes > 0 {
            try readChunk(path: url.path)
        }
        let n = min(tail - head, want) / bpf * bpf
        if n > 0 {
            destination.copyMemory(from: staging + head, byteCount: n)
            head += n
            if head == tail { head = 0; tail = 0 }
        }
        return n / bpf
    }

    private func readChunk(path: String) throws(SessionError) {
        if let header = replacementHeader {
            replacementHeader = nil
            guard lseek(fd, off_t(header.count), SEEK_SET) >= 0 else {
                throw SessionError(.unreadableFile, file: path, "seek error: \(String(cString: strerror(errno)))")
            }
            let result: Result<Void, AudioFileStreamError> = header.withUnsafeBytes { raw in
                do throws(AudioFileStreamError) { try stream.parse(raw); return .success(()) } catch { return .failure(error) }
            }
            if case .failure(let error) = result { throw SessionError(.unsupportedAudio, file: path, "\(error)") }
            return
        }
        let got = Glibc.read(fd, chunk, Self.chunkBytes)
        if got < 0 {
            if errno == EINTR { return }
            throw SessionError(.unreadableFile, file: path, "read error: \(String(cString: strerror(errno)))")
        }
        if got == 0 { endOfFile = true; return }
        do {
            try stream.parse(UnsafeRawBufferPointer(start: chunk, count: got))
        } catch {
            throw SessionError(.unsupportedAudio, file: path, "\(error)")
        }
    }

    /// Packets from the parser: skip the trim, keep up to the length, stage the rest.
    private func accept(_ data: UnsafeRawBufferPointer) {
        guard var p = data.baseAddress, data.count > 0 else { return }
        var count = data.count
        if !pendingHeader {
            if skipBytes > 0 {
                let s = Int(min(skipBytes, Int64(count)))
                skipBytes -= Int64(s)
                p += s
                count -= s
            }
            count = Int(min(Int64(count), remainingBytes))
            remainingBytes -= Int64(count)
        }
        guard count > 0 else { return }
        if stagingCapacity - tail < count {
            // Compact; the area is sized so that this always makes room.
            let live = tail - head
            if head > 0 { (staging).copyMemory(from: staging + head, byteCount: live) }
            head = 0
            tail = live
            if stagingCapacity - tail < count {
                let bigger = UnsafeMutableRawPointer.allocate(byteCount: tail + count, alignment: 16)
                bigger.copyMemory(from: staging, byteCount: tail)
                staging.deallocate()
                staging = bigger
                stagingCapacity = tail + count
            }
        }
        (staging + tail).copyMemory(from: p, byteCount: count)
        tail += count
    }

    /// Reads the header of `url` and returns what it says (format, container, frame count).
    /// Reads only as much of the file as the header needs.
    ///
    /// - Throws: ``SessionError`` naming the file: missing, unreadable, not audio, or a format
    ///   aqsync cannot play (compressed, more than 8 channels, ...).
    package static func probe(_ url: URL) throws(SessionError) -> AudioFileInfo {
        // MP3, ADTS AAC, CAF with ALAC/AAC and FLAC are read by CompressedFileReader (issues 6, 14).
        if let info = try? CompressedFileReader.probe(url) { return info }
        return try AudioFileReader(url: url, frames: 0, maximumRequestFrames: 1).info
    }
}
