import AQEngine
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writes compressed packets (a recording queue's AAC or Apple Lossless buffers) to a Core Audio
/// Format file as they come, in constant memory: the take writer of sessions.
///
/// The file: the `caff` header, `desc` (the stream format), `kuki` (the magic cookie, when
/// there is one), `data` (edit count 0, then the packets), and at ``finish(primingFrames:remainderFrames:)``
/// `pakt` after the data (packet count, valid frames, priming and remainder frames, then each
/// packet's size, and its frames when the format's packets vary in frames, as variable-length
/// integers). While writing, the `data` chunk's size is −1 ("to the end of the file", as CAF
/// allows for a last chunk being written), so a take cut short by a crash still holds its
/// packets; ``finish(primingFrames:remainderFrames:)`` writes the real size. The packet table
/// is spooled to an unlinked temporary file once it passes 64 KiB, so memory stays constant
/// however long the take. The project's reader (``CompressedFileReader``, through
/// `AudioFileReadingOrder`) and FFmpeg both read `pakt` after `data`.
///
/// Typical use with an input queue: make the writer with the queue's ``AudioInputQueue/format``
/// and ``AudioInputQueue/magicCookie``, call ``write(_:descriptions:)`` in the input callback with
/// the buffer and the descriptions it received, and after the queue's stop call
/// ``finish(primingFrames:remainderFrames:)`` with ``AudioInputQueue/primingFrames`` and
/// ``AudioInputQueue/remainderFrames``.
///
/// Thread safety: not thread-safe; one thread at a time (it may move between threads when the
/// calls are serialised, as an input queue's callbacks are). Every call writes to the file and
/// may block on the disk: not for the render thread (input callbacks run on the events thread).
package final class CAFPacketWriter {
    /// The file written.
    package let url: URL
    /// The stream format written in `desc`.
    package let format: AudioStreamBasicDescription
    /// Packets written so far.
    package private(set) var packetsWritten: Int64 = 0
    /// Bytes of packets written so far.
    package private(set) var bytesWritten: Int64 = 0
    /// Frames of the packets written so far (the format's frames per packet each, or each
    /// description's frames when packets vary).
    package private(set) var packetFrames: Int64 = 0

    private let fd: Int32
    private let spool: Int32
    private var table: [UInt8] = []
    private var spooled: Int64 = 0
    private var dataSizeOffset: Int64 = 0
    private var finished = false
    private let spoolLimit = 64 << 10

    /// Creates (or truncates) the file and writes `caff`, `desc`, `kuki` and the `data` header.
    ///
    /// - Parameters:
    ///   - format: the packets' format (`mBytesPerPacket` 0: packets vary in size).
    ///   - magicCookie: the format's cookie (``AudioInputQueue/magicCookie``); no `kuki` when empty.
    /// - Throws: ``SessionError`` `.output` naming the file (cannot create it, a format of
    ///   fixed-size packets, which needs no packet table: write linear PCM with ``WAVWriter``).
    package init(url: URL, format: AudioStreamBasicDescription, magicCookie: [UInt8]) throws(SessionError) {
        self.url = url
        self.format = format
        guard format.bytesPerPacket == 0, format.sampleRate > 0, format.channelsPerFrame > 0 else {
            throw SessionError(.output, file: url.path, "CAFPacketWriter writes packets of varying size (bytesPerPacket 0); got \(format.formatID) with \(format.bytesPerPacket) bytes a packet")
        }
        fd = open(url.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 {
            spool = -1
            throw SessionError(.output, file: url.path, "cannot create the file: \(String(cString: strerror(errno)))")
        }
        // The packet table's overflow: a file of its own, unlinked at once (gone when closed).
        let spoolPath = url.path + ".pakt-spool"
        spool = open(spoolPath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if spool >= 0 { unlink(spoolPath) }
        var h: [UInt8] = Array("caff".utf8) + be16(1) + be16(0)
        var desc: [UInt8] = []
        desc += be64(format.sampleRate.bitPattern)
        desc += be32(format.formatID.rawValue)
        desc += be32(format.formatFlags.rawValue)
        desc += be32(format.bytesPerPacket)
        desc += be32(format.framesPerPacket)
        desc += be32(format.channelsPerFrame)
        desc += be32(format.bitsPerChannel)
        h += Array("desc".utf8) + be64(UInt64(desc.count)) + desc
        if !magicCookie.isEmpty { h += Array("kuki".utf8) + be64(UInt64(magicCookie.count)) + magicCookie }
        h += Array("data".utf8)
        dataSizeOffset = Int64(h.count)
        h += be64(UInt64.max) + be32(0)
        try writeAll(h)
        if spool < 0 {
            throw SessionError(.output, file: url.path, "cannot create the packet table's spool file: \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        if !finished, fd >= 0 { close(fd) }
        if spool >= 0 { close(spool) }
    }

    /// Appends the packets `descriptions` describe in `bytes` (a buffer's ``AudioQueueBuffer/audioData``
    /// and the descriptions the input callback received), in order.
    ///
    /// - Throws: ``SessionError`` `.output`: a description outside the bytes, a write error
    ///   (disk full…), or the writer already finished.
    package func write(_ bytes: UnsafeRawBufferPointer, descriptions: [AudioStreamPacketDescription]) throws(SessionError) {
        guard !finished else { throw SessionError(.output, file: url.path, "the file is finished") }
        for d in descriptions {
            let start = Int(clamping: d.startOffset), n = Int(d.dataByteSize)
            guard d.startOffset >= 0, n > 0, start <= bytes.count - n else {
                throw SessionError(.output, file: url.path, "a packet description (offset \(d.startOffset), \(d.dataByteSize) bytes) lies outside the \(bytes.count) bytes given")
            }
        }
        for d in descriptions {
            try writeAll(UnsafeRawBufferPointer(rebasing: bytes[Int(d.startOffset)..<(Int(d.startOffset) + Int(d.dataByteSize))]))
            appendVarint(UInt64(d.dataByteSize))
            let frames = format.framesPerPacket > 0 ? Int64(format.framesPerPacket) : Int64(d.variableFramesInPacket)
            if format.framesPerPacket == 0 { appendVarint(UInt64(d.variableFramesInPacket)) }
            packetsWritten += 1
            bytesWritten += Int64(d.dataByteSize)
            packetFrames += frames
            if table.count >= spoolLimit { try spill() }
        }
    }

    /// Appends the packets of `buffer` (its ``AudioQueueBuffer/audioDataByteSize`` bytes) that
    /// `descriptions` describe: the input callback's arguments as they come.
    /// - Throws: as ``write(_:descriptions:)``.
    package func write(_ buffer: AudioQueueBuffer, descriptions: [AudioStreamPacketDescription]) throws(SessionError) {
        try write(UnsafeRawBufferPointer(start: buffer.audioData, count: buffer.audioDataByteSize), descriptions: descriptions)
    }

    /// Writes the `pakt` chunk after the data, the `data` chunk's size, and closes the file.
    /// Valid frames are the packets' frames minus `primingFrames` and `remainderFrames`
    /// (``AudioInputQueue/primingFrames`` and ``AudioInputQueue/remainderFrames`` after the stop).
    /// Calling it again does nothing.
    ///
    /// - Throws: ``SessionError`` `.output` on a write error, or when priming and remainder
    ///   exceed the frames written (the file is then closed with valid frames 0).
    package func finish(primingFrames: Int, remainderFrames: Int) throws(SessionError) {
        if finished { return }
        finished = true
        defer { close(fd) }
        let priming = max(0, primingFrames), remainder = max(0, remainderFrames)
        let valid = packetFrames - Int64(priming) - Int64(remainder)
        var head: [UInt8] = Array("pakt".utf8) + be64(UInt64(24 + spooled + Int64(table.count)))
        head += be64(UInt64(packetsWritten)) + be64(UInt64(max(0, valid)))
        head += be32(UInt32(clamping: priming)) + be32(UInt32(clamping: remainder))
        try writeAll(head)
        // The spooled table, then the rest in memory.
        var copied: Int64 = 0
        var block = [UInt8](repeating: 0, count: spoolLimit)
        while copied < spooled {
            let n = block.withUnsafeMutableBytes { pread(spool, $0.baseAddress!, Int(min(Int64(spoolLimit), spooled - copied)), off_t(copied)) }
            if n <= 0 { throw SessionError(.output, file: url.path, "cannot read the packet table's spool: \(String(cString: strerror(errno)))") }
            try writeAll(Array(block[0..<n]))
            copied += Int64(n)
        }
        try writeAll(table)
        table = []
        let size = be64(UInt64(4 + bytesWritten))
        let w = size.withUnsafeBytes { pwrite(fd, $0.baseAddress!, 8, off_t(dataSizeOffset)) }
        if w != 8 { throw SessionError(.output, file: url.path, "cannot write the data chunk's size: \(String(cString: strerror(errno)))") }
        if valid < 0 {
            throw SessionError(.output, file: url.path, "priming (\(priming)) and remainder (\(remainder)) frames exceed the \(packetFrames) frames written")
        }
    }

    private func appendVarint(_ v: UInt64) {
        var groups: [UInt8] = [UInt8(v & 0x7F)]
        var x = v >> 7
        while x > 0 {
            groups.append(UInt8(x & 0x7F) | 0x80)
            x >>= 7
        }
        table += groups.reversed()
    }

    private func spill() throws(SessionError) {
        var done = 0
        while done < table.count {
            let n = table.withUnsafeBytes { pwrite(spool, $0.baseAddress! + done, table.count - done, off_t(spooled + Int64(done))) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SessionError(.output, file: url.path, "cannot write the packet table's spool: \(String(cString: strerror(errno)))")
            }
            done += n
        }
        spooled += Int64(table.count)
        table.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: [UInt8]) throws(SessionError) { try AQAudioFiles.writeAll(fd, bytes, path: url.path) }

    private func writeAll(_ raw: UnsafeRawBufferPointer) throws(SessionError) { try AQAudioFiles.writeAll(fd, raw, path: url.path) }
}

private func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
private func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
private func be64(_ v: UInt64) -> [UInt8] { be32(UInt32(v >> 32)) + be32(UInt32(v & 0xFFFF_FFFF)) }
