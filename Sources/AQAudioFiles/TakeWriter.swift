import AQConvert
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writes a take to its file as it is recorded: a header first, the samples as they come, the
/// sizes fixed up by ``finish()``. A file is valid at every ``finish()``, also after a write
/// error: what was written in whole frames stays, the header says exactly that much.
///
/// Thread safety: not thread-safe; one thread at a time (the take's writer thread).
package protocol TakeWriter: AnyObject {
    /// The file written.
    var url: URL { get }
    /// Frames written so far (in the file, in whole frames).
    var framesWritten: Int64 { get }
    /// Appends `frames` frames taken from interleaved float samples: frame `i`, channel `c` of
    /// the take is `source[i * stride + offset + c]`. Integers are x × 2^(bits−1) by the
    /// project's one rule (``PCMInterleaver``: NaN → 0, rounded to nearest, ties away from zero,
    /// clipped).
    ///
    /// - Throws: ``SessionError`` `.output` on a write error (disk full, file too large for
    ///   the container); the frames written before stay valid once ``finish()`` ran.
    func write(_ source: UnsafePointer<Float>, frames: Int, stride: Int, offset: Int) throws(SessionError)
    /// Appends `frames` frames of silence (the same errors as ``write(_:frames:stride:offset:)``).
    func writeSilence(frames: Int) throws(SessionError)
    /// Writes the final sizes into the header and closes the file; a second call does nothing.
    ///
    /// - Throws: ``SessionError`` `.output` when the header cannot be written.
    func finish() throws(SessionError)
}

/// Makes the writer of a take: `(file, sample rate, channels) → writer`.
package typealias TakeWriterMaker = @Sendable (URL, Int, Int) throws(SessionError) -> any TakeWriter

extension TakeFormat {
    /// The one place that says which formats can be written, and makes their writers: linear
    /// PCM in WAV, CAF and AIFF (``PCMTakeWriter``); Apple Lossless and AAC LC in CAF
    /// (``CompressedTakeWriter``). The loader calls this to check a session before playback;
    /// the recorder calls the maker it returns.
    ///
    /// - Throws: the reason the format cannot be recorded, for people.
    package func writerMaker() throws(TakeFormatUnavailable) -> TakeWriterMaker {
        switch sample {
        case .int, .float32:
            let format = self
            return { (url: URL, rate: Int, channels: Int) throws(SessionError) -> any TakeWriter in
                try PCMTakeWriter(url: url, format: format, sampleRate: rate, channels: channels)
            }
        case .alac, .aac:
            guard container == .caf else {
                throw TakeFormatUnavailable("\(self): ALAC and AAC takes are written to .caf files")
            }
            let format = self
            return { (url: URL, rate: Int, channels: Int) throws(SessionError) -> any TakeWriter in
                try CompressedTakeWriter(url: url, format: format, sampleRate: rate, channels: channels)
            }
        }
    }
}

/// Why a take's format cannot be recorded (see ``TakeFormat/writerMaker()``).
///
/// Thread safety: a plain value; any thread.
package struct TakeFormatUnavailable: Error, Sendable {
    /// For people.
    package var message: String
    /// Makes one.
    package init(_ message: String) { self.message = message }
}

/// Linear PCM takes in WAV (little-endian; `WAVE_FORMAT_IEEE_FLOAT` with a `fact` chunk for
/// float), CAF (little-endian `lpcm`) and AIFF (big-endian integers; AIFF-C `fl32` for float).
/// WAV and AIFF hold at most 4 GiB of audio (32-bit sizes): a write past that is refused with
/// a clear error and the file keeps what fits (record long takes to `.caf`, which has no
/// limit). Memory: one conversion block, grown to the largest write.
///
/// Thread safety: not thread-safe; one thread at a time.
package final class PCMTakeWriter: TakeWriter {
    /// The file written.
    package let url: URL
    /// The format written.
    package let format: TakeFormat
    /// Frames per second in the header.
    package let sampleRate: Int
    /// Channels.
    package let channels: Int
    /// Frames written so far, in whole frames.
    package private(set) var framesWritten: Int64 = 0
    private var fd: Int32
    private let headerBytes: Int
    private let bytesPerFrame: Int
    private var block: UnsafeMutableRawPointer
    private var blockBytes: Int
    private var finished = false
    /// The header's size fields hold 32 bits (WAV, AIFF).
    private let maxDataBytes: Int64

    /// Creates (or truncates) the file and writes a provisional header.
    ///
    /// - Throws: ``SessionError`` `.output` naming the file; a compressed format is a
    ///   programming error here (``TakeFormat/writerMaker()`` refuses it first).
    package init(url: URL, format: TakeFormat, sampleRate: Int, channels: Int) throws(SessionError) {
        precondition(!format.sample.isCompressed, "PCMTakeWriter writes linear PCM only")
        self.url = url
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        bytesPerFrame = format.sample.bytesPerSample * channels
        blockBytes = 8192 * bytesPerFrame
        block = .allocate(byteCount: blockBytes, alignment: 8)
        fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 {
            let e = String(cString: strerror(errno))
            block.deallocate()
            throw SessionError(.output, file: url.path, "cannot create the take: \(e)")
        }
        let header = Self.header(format: format, rate: sampleRate, channels: channels, dataBytes: 0, frames: 0, final: false)
        headerBytes = header.count
        maxDataBytes = format.container == .caf ? Int64.max : Int64(UInt32.max) - Int64(headerBytes) - 8
        do throws(SessionError) {
            try writeAll(header)
        } catch {
            close(fd)
            fd = -1
            block.deallocate()
            throw error
        }
    }

    deinit {
        if !finished { try? finish() }
        block.deallocate()
    }

    /// Bytes of header before the samples (for tests and readers).
    package var dataOffset: Int { headerBytes }

    package func write(_ source: UnsafePointer<Float>, frames: Int, stride: Int, offset: Int) throws(SessionError) {
        var done = 0
        while done < frames {
            let n = min(frames - done, blockBytes / bytesPerFrame)
            convert(source + (done * stride), frames: n, stride: stride, offset: offset)
            try append(n)
            done += n
        }
    }

    package func writeSilence(frames: Int) throws(SessionError) {
        var done = 0
        while done < frames {
            let n = min(frames - done, blockBytes / bytesPerFrame)
            block.initializeMemory(as: UInt8.self, repeating: 0, count: n * bytesPerFrame)
            try append(n)
            done += n
        }
    }

    package func finish() throws(SessionError) {
        if finished { return }
        finished = true
        guard fd >= 0 else { return }
        defer { close(fd); fd = -1 }
        let dataBytes = framesWritten * Int64(bytesPerFrame)
        // A short write left part of a frame: cut it, so the file holds whole frames only.
        _ = ftruncate(fd, off_t(Int64(headerBytes) + dataBytes + (format.container == .wav && dataBytes % 2 == 1 ? 1 : 0)))
        if format.container == .wav && dataBytes % 2 == 1 {
            // RIFF chunks are padded to an even size.
            var zero: UInt8 = 0
            _ = pwrite(fd, &zero, 1, off_t(Int64(headerBytes) + dataBytes))
        }
        let header = Self.header(format: format, rate: sampleRate, channels: channels, dataBytes: dataBytes, frames: framesWritten, final: true)
        let r = header.withUnsafeBytes { pwrite(fd, $0.baseAddress, header.count, 0) }
        if r != header.count {
            throw SessionError(.output, file: url.path, "cannot write the take's header: \(String(cString: strerror(errno)))")
        }
    }

    // MARK: - Internals

    private func append(_ n: Int) throws(SessionError) {
        let bytes = n * bytesPerFrame
        if Int64(framesWritten) * Int64(bytesPerFrame) + Int64(bytes) > maxDataBytes {
            throw SessionError(.output, file: url.path, "the take reached the 4 GiB limit of a \(format.container == .wav ? "WAV" : "AIFF") file (\(framesWritten) frames kept): record long takes to .caf")
        }
        if let failure = writeFully(fd, UnsafeRawBufferPointer(start: block, count: bytes)) {
            framesWritten += Int64(failure.written / bytesPerFrame)
            throw SessionError(.output, file: url.path, "cannot write the take: \(writeErrorText(failure.errno))")
        }
        framesWritten += Int64(n)
    }

    private func writeAll(_ data: [UInt8]) throws(SessionError) {
        if let failure = data.withUnsafeBytes({ writeFully(fd, $0) }) {
            throw SessionError(.output, file: url.path, "cannot write the take: \(writeErrorText(failure.errno))")
        }
    }

    private func convert(_ src: UnsafePointer<Float>, frames: Int, stride: Int, offset: Int) {
        let big = format.container == .aiff
        switch format.sample {
        case .float32:
            let out = block.bindMemory(to: UInt32.self, capacity: frames * channels)
            for i in 0..<frames {
                for c in 0..<channels {
                    let bits = src[i * stride + offset + c].bitPattern
                    out[i * channels + c] = big ? bits.bigEndian : bits.littleEndian
                }
            }
        case .int(let b):
            // Integers by the project's one rule (``PCMInterleaver``).
            PCMInterleaver(bits: b, bigEndian: big).interleave(frames: frames, channels: channels, into: block) { c, i in
                src[i * stride + offset + c]
            }
        case .alac, .aac:
            break
        }
    }

    /// The container's header for `dataBytes` bytes of samples (`final`: sizes known).
    static func header(format: TakeFormat, rate: Int, channels: Int, dataBytes: Int64, frames: Int64, final: Bool) -> [UInt8] {
        var h = Bytes()
        let bps = format.sample.bytesPerSample
        let bits = bps * 8
        let isFloat = format.sample == .float32
        switch format.container {
        case .wav:
            let fmtSize = isFloat ? 18 : 16
            let factSize = isFloat ? 12 : 0
            let pad = dataBytes % 2
            let chunks: Int64 = Int64(4 + 8 + fmtSize + factSize + 8)
            let riff: Int64 = chunks + dataBytes + pad
            h.ascii("RIFF"); h.le32(UInt32(clamping: riff)); h.ascii("WAVE")
            h.ascii("fmt "); h.le32(UInt32(fmtSize))
            h.le16(isFloat ? 3 : 1); h.le16(UInt16(channels)); h.le32(UInt32(rate))
            h.le32(UInt32(rate * bps * channels)); h.le16(UInt16(bps * channels)); h.le16(UInt16(bits))
            if isFloat {
                h.le16(0)
                h.ascii("fact"); h.le32(4); h.le32(UInt32(clamping: frames))
            }
            h.ascii("data"); h.le32(UInt32(clamping: dataBytes))
        case .caf:
            h.ascii("caff"); h.be16(1); h.be16(0)
            h.ascii("desc"); h.be64(32)
            h.be64(Double(rate).bitPattern); h.ascii("lpcm")
            h.be32(UInt32((isFloat ? 1 : 0) | 2))  // float, little-endian
            h.be32(UInt32(bps * channels)); h.be32(1); h.be32(UInt32(channels)); h.be32(UInt32(bits))
            h.ascii("data"); h.be64(final ? UInt64(dataBytes + 4) : UInt64.max)  // -1: still being written
            h.be32(0)  // edit count
        case .aiff:
            let commSize = isFloat ? 18 + 4 + 22 : 18  // AIFF-C: compression type + pstring "32-bit floating point"
            let fver = isFloat ? 12 : 0
            let fixed: Int64 = Int64(4 + fver + 8 + commSize + 8 + 8)
            let form: Int64 = fixed + dataBytes
            h.ascii("FORM"); h.be32(UInt32(clamping: form)); h.ascii(isFloat ? "AIFC" : "AIFF")
            if isFloat { h.ascii("FVER"); h.be32(4); h.be32(0xA280_5140) }
            h.ascii("COMM"); h.be32(UInt32(commSize))
            h.be16(UInt16(channels)); h.be32(UInt32(clamping: frames)); h.be16(UInt16(bits))
            h.extended80(Double(rate))
            if isFloat {
                h.ascii("fl32")
                let name = "32-bit floating point"
                h.bytes.append(UInt8(name.utf8.count)); h.ascii(name)  // 1 + 21 = 22 bytes: even, no pad
            }
            h.ascii("SSND"); h.be32(UInt32(clamping: 8 + dataBytes)); h.be32(0); h.be32(0)
        }
        return h.bytes
    }

    struct Bytes {
        var bytes: [UInt8] = []
        mutating func ascii(_ s: String) { bytes += Array(s.utf8) }
        mutating func le16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        mutating func le32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        mutating func be16(_ v: UInt16) { withUnsafeBytes(of: v.bigEndian) { bytes += $0 } }
        mutating func be32(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { bytes += $0 } }
        mutating func be64(_ v: UInt64) { withUnsafeBytes(of: v.bigEndian) { bytes += $0 } }
        /// An IEEE 754 80-bit extended (AIFF's sample rate), for a positive integer rate.
        mutating func extended80(_ x: Double) {
            var v = UInt64(x)
            var exponent: UInt16 = 16383 + 63
            if v == 0 { exponent = 0 }
            while v != 0 && v & (1 << 63) == 0 { v <<= 1; exponent -= 1 }
            be16(exponent); be64(v)
        }
    }
}
