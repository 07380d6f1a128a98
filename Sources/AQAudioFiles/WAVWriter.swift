import AQConvert
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Sample formats ``WAVWriter`` writes.
///
/// Thread safety: a plain value; any thread.
package enum WAVSampleFormat: String, Sendable, CaseIterable {
    /// 32-bit IEEE float (`WAVE_FORMAT_IEEE_FLOAT`), samples as they are (not clipped).
    case f32
    /// 16-bit PCM: x × 32768 by the project's rule (``PCMInterleaver``: NaN → 0, rounded to
    /// nearest, ties away from zero, clipped to −32768…32767).
    case s16
    /// 24-bit PCM: x × 8388608 by the same rule, clipped to −8388608…8388607.
    case s24

    /// Bytes of one sample.
    package var bytesPerSample: Int {
        switch self {
        case .f32: 4
        case .s16: 2
        case .s24: 3
        }
    }
}

/// Writes a RIFF/WAVE file as it goes (planar float in, interleaved out); the sizes in the
/// header are filled in by ``finish()``. Memory: one block of the largest write.
///
/// Thread safety: not thread-safe; one thread at a time.
package final class WAVWriter {
    /// The file written.
    package let url: URL
    /// Frames per second in the header.
    package let sampleRate: Int
    /// Channels.
    package let channels: Int
    /// How samples are stored.
    package let format: WAVSampleFormat
    /// Frames written so far.
    package private(set) var framesWritten: Int64 = 0
    /// Samples that were outside −1…1 and were clipped (integer formats only).
    package private(set) var clippedSamples: Int64 = 0

    private let fd: Int32
    private var block: UnsafeMutableRawPointer
    private var blockBytes = 0
    private var finished = false

    /// Creates (or truncates) the file and writes a provisional header.
    ///
    /// - Throws: ``SessionError`` `.output` naming the file.
    package init(url: URL, sampleRate: Int, channels: Int, format: WAVSampleFormat) throws(SessionError) {
        self.url = url
        self.sampleRate = sampleRate
        self.channels = channels
        self.format = format
        fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 {
            throw SessionError(.output, file: url.path, "cannot create output file: \(String(cString: strerror(errno)))")
        }
        block = .allocate(byteCount: 1, alignment: 16)
        // On failure deinit closes the file and frees the block (every property is set).
        try writeAll(header(dataBytes: 0))
    }

    deinit {
        if !finished { close(fd) }
        block.deallocate()
    }

    private var headerSize: Int { format == .f32 ? 58 : 44 }

    /// The header for `dataBytes` bytes of samples. f32: `fmt ` of 18 bytes (cbSize 0) and a
    /// `fact` chunk, as the format asks for non-PCM data; PCM: the plain 16-byte `fmt `.
    func header(dataBytes: Int64) -> [UInt8] {
        var h: [UInt8] = []
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { h += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { h += $0 } }
        let blockAlign = channels * format.bytesPerSample
        let data = UInt32(clamping: dataBytes)
        h += Array("RIFF".utf8)
        u32(UInt32(clamping: Int64(headerSize - 8) + Int64(data)))
        h += Array("WAVE".utf8)
        h += Array("fmt ".utf8)
        if format == .f32 {
            u32(18); u16(3)
        } else {
            u32(16); u16(1)
        }
        u16(UInt16(channels))
        u32(UInt32(sampleRate))
        u32(UInt32(sampleRate * blockAlign))
        u16(UInt16(blockAlign))
        u16(UInt16(format.bytesPerSample * 8))
        if format == .f32 {
            u16(0)
            h += Array("fact".utf8)
            u32(4)
            u32(UInt32(clamping: framesWritten))
        }
        h += Array("data".utf8)
        u32(data)
        return h
    }

    /// Appends `frames` frames: `planar[c]` points at channel c's samples.
    ///
    /// - Throws: ``SessionError`` `.output` on a write error (disk full...).
    package func write(planar: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int) throws(SessionError) {
        let bytes = frames * channels * format.bytesPerSample
        if bytes > blockBytes {
            block.deallocate()
            block = .allocate(byteCount: bytes, alignment: 16)
            blockBytes = bytes
        }
        switch format {
        case .f32:
            let out = block.bindMemory(to: UInt32.self, capacity: frames * channels)
            for c in 0..<channels {
                let src = planar[c]
                for f in 0..<frames { out[f * channels + c] = src[f].bitPattern.littleEndian }
            }
        case .s16, .s24:
            // Integers by the project's one rule (``PCMInterleaver``), little-endian.
            let clipped = PCMInterleaver(bits: format.bytesPerSample * 8).interleave(
                planar: planar, frames: frames, channels: channels, into: block)
            clippedSamples += Int64(clipped)
        }
        try writeAll(UnsafeRawBufferPointer(start: block, count: bytes))
        framesWritten += Int64(frames)
    }

    /// Writes the final sizes into the header and closes the file. Calling it twice does
    /// nothing.
    ///
    /// - Throws: ``SessionError`` `.output` when the file would exceed the 4 GiB RIFF limit or
    ///   on a write error.
    package func finish() throws(SessionError) {
        if finished { return }
        finished = true
        defer { close(fd) }
        let dataBytes = framesWritten * Int64(channels * format.bytesPerSample)
        if dataBytes + Int64(headerSize) > Int64(UInt32.max) {
            throw SessionError(.output, file: url.path, "the render is \(dataBytes) bytes, beyond the 4 GiB a WAV file can hold")
        }
        if lseek(fd, 0, SEEK_SET) < 0 {
            throw SessionError(.output, file: url.path, "cannot seek: \(String(cString: strerror(errno)))")
        }
        try writeAll(header(dataBytes: dataBytes))
    }

    private func writeAll(_ bytes: [UInt8]) throws(SessionError) { try AQAudioFiles.writeAll(fd, bytes, path: url.path) }

    private func writeAll(_ raw: UnsafeRawBufferPointer) throws(SessionError) { try AQAudioFiles.writeAll(fd, raw, path: url.path) }
}
