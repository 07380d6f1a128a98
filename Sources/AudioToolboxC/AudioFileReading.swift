// Audio File Services, reading (issue 23): a file opened by AudioFileOpenURL, parsed once by
// AQFileStream's parser (every container it reads). Packets of constant size (linear PCM, IMA4…)
// are read from the file where the header puts them; packets of variable size (MP3, AAC, ALAC,
// FLAC, Opus, Vorbis…) are kept in memory as the parser delivered them, with their descriptions,
// because containers interleave them with other data (MP4 chunks, Ogg pages, ID3 tags) and the
// parser reports packets, not their places in the file. docs/c-api.md, "Audio File Services".
import AQFileStream
import AQTypes
import CAudioToolbox
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An audio file opened for reading. Used from one thread at a time (the AudioFileID's rule).
final class AudioFileReadState {
    let storage: any AudioFileStorage
    let parser: AudioFileStream
    let fileType: UInt32
    let format: SFormat
    /// The audio data's offset in the file and its length (clamped to the file's end).
    let dataOffset: Int64
    let dataByteCount: Int64
    let packetCount: Int64
    /// Constant-size packets are read from the file (`packets` stays empty).
    let constantPacketBytes: Int
    /// Variable-size packets: their bytes, one after another, and where each starts.
    private(set) var packetBytes: [UInt8] = []
    private(set) var packets: [SPacketDescription] = []
    let maximumPacketSize: UInt32
    let totalFrames: Int64

    /// Parses the file in `storage` (a file opened for reading, or the caller's callbacks), which
    /// it then owns (closing it on failure too). Blocks on the storage (reads all of it for
    /// variable-size packets).
    init(storage: any AudioFileStorage, hint: UInt32) throws(AudioFileFailure) {
        var collected: [UInt8] = []
        var descriptions: [SPacketDescription] = []
        var sawDescriptions = false
        let parser: AudioFileStream
        do {
            parser = try AudioFileStream(
                fileTypeHint: hint == 0 ? nil : FourCharCode(rawValue: hint),
                propertyListener: { _, _, _ in },
                packets: { data, count, d in
                    guard let d else { return }
                    sawDescriptions = true
                    for p in d {
                        // (A description outside the data would be the parser's bug: it is skipped,
                        // so that every kept description has its bytes.)
                        let start = Int(p.startOffset), end = start + Int(p.dataByteSize)
                        guard start >= 0, end <= data.count else { continue }
                        descriptions.append(SPacketDescription(
                            startOffset: Int64(collected.count), variableFramesInPacket: p.variableFramesInPacket, dataByteSize: p.dataByteSize))
                        collected.append(contentsOf: data[start..<end])
                    }
                    _ = count
                })
        } catch {
            storage.close()
            throw AudioFileFailure(status: kAudioFileUnsupportedFileTypeError, "file type hint: \(error)")
        }
        let fileSize = storage.size
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { chunk.deallocate() }
        // The order the parser needs (AQFileStream's AudioFileReadingOrder, as aqsync's session
        // reader feeds files): a CAF's chunks after `data` (its packet table) before it; an MP4's
        // `moov` first, then its samples from where the parser says packet 0 starts.
        let order = AudioFileReadingOrder.make(fileSize: fileSize) { offset, count in
            var b = [UInt8](repeating: 0, count: count)
            let n = b.withUnsafeMutableBytes { storage.readFully($0.baseAddress!, count, at: offset) }
            return n > 0 ? Array(b[0..<n]) : []
        }
        var segments = order.segments.map { (offset: $0.offset, length: $0.length) }
        var resume = order.resumeAtFirstPacket
        var discontinuity = false
        var index = 0
        do {
            feeding: while true {
                // Constant-size packets are not collected: the header is all that is needed.
                if parser.isReadyToProducePackets, let f = parser.dataFormat, f.bytesPerPacket > 0, !sawDescriptions { break }
                if index == segments.count {
                    guard resume, parser.isReadyToProducePackets else { break }
                    resume = false
                    let start = try parser.seek(toPacket: 0).byteOffset
                    segments.append((start, max(0, fileSize - start)))
                    discontinuity = true
                }
                let segment = segments[index]
                var done: Int64 = 0
                while done < segment.length {
                    let want = Int(min(Int64(chunk.count), segment.length - done))
                    let n = storage.read(chunk.baseAddress!, want, at: segment.offset + done)
                    if n < 0 { throw AudioFileFailure(status: kAudioFilePermissionsError, "read failed") }
                    if n == 0 { break }
                    try parser.parse(UnsafeRawBufferPointer(rebasing: chunk[0..<n]), flags: discontinuity ? .discontinuity : [])
                    discontinuity = false
                    done += Int64(n)
                    if parser.isReadyToProducePackets, let f = parser.dataFormat, f.bytesPerPacket > 0, !sawDescriptions { break feeding }
                }
                index += 1
            }
        } catch let e as AudioFileFailure {
            storage.close()
            throw e
        } catch let e as AudioFileStreamError {
            storage.close()
            throw AudioFileFailure(status: e.code, "the parser: \(e)")
        } catch {
            storage.close()
            throw AudioFileFailure(status: kAudioFileUnspecifiedError, "\(error)")
        }
        guard let format = parser.dataFormat, parser.isReadyToProducePackets, let dataOffset = parser.dataOffset else {
            storage.close()
            let status = parser.fileType == nil ? kAudioFileUnsupportedFileTypeError : kAudioFileInvalidFileError
            throw AudioFileFailure(status: status, "no audio data found")
        }
        self.storage = storage
        self.parser = parser
        self.fileType = parser.fileType?.rawValue ?? hint
        self.format = format
        // The parser's offset counts the bytes in the order they were fed (a CAF's chunks after
        // `data` first): the file's is where that byte lies.
        self.dataOffset = order.fileOffset(ofStreamOffset: dataOffset)
        if format.bytesPerPacket > 0 && !sawDescriptions {
            constantPacketBytes = Int(format.bytesPerPacket)
            let available = max(0, fileSize - dataOffset)
            let declared = parser.audioDataByteCount.map { Int64(clamping: $0) } ?? available
            let bytes = min(declared > 0 ? declared : available, available)
            packetCount = bytes / Int64(format.bytesPerPacket)
            dataByteCount = packetCount * Int64(format.bytesPerPacket)
            maximumPacketSize = format.bytesPerPacket
            totalFrames = packetCount * Int64(max(1, format.framesPerPacket))
        } else {
            constantPacketBytes = 0
            packetBytes = collected
            packets = descriptions
            packetCount = Int64(descriptions.count)
            // What the header says, but no more than the file holds (a truncated file).
            let available = max(0, fileSize - dataOffset)
            dataByteCount = min(parser.audioDataByteCount.map { Int64(clamping: $0) } ?? available, available)
            maximumPacketSize = descriptions.map(\.dataByteSize).max() ?? 0
            let perPacket = Int64(format.framesPerPacket)
            totalFrames = descriptions.reduce(0) { $0 + ($1.variableFramesInPacket > 0 ? Int64($1.variableFramesInPacket) : perPacket) }
        }
    }

    deinit { storage.close() }

    /// Reads up to `maxPackets` whole packets from `start` into `out` (`capacity` bytes),
    /// filling `descriptions` when given. Returns (packets, bytes); 0 packets past the end.
    func readPackets(start: Int64, maxPackets: Int, capacity: Int, out: UnsafeMutableRawPointer,
                     descriptions: UnsafeMutablePointer<CPacketDescription>?) throws(AudioFileFailure) -> (Int, Int) {
        guard start >= 0 else { throw AudioFileFailure(status: kAudioFileInvalidPacketOffsetError, "negative packet \(start)") }
        guard start < packetCount, maxPackets > 0 else { return (0, 0) }
        let wanted = Int(min(Int64(maxPackets), packetCount - start))
        if constantPacketBytes > 0 {
            let fits = min(wanted, capacity / constantPacketBytes)
            guard fits > 0 else { throw AudioFileFailure(status: paramError, "the buffer holds no whole packet") }
            let got = storage.readFully(out, fits * constantPacketBytes, at: dataOffset + start * Int64(constantPacketBytes))
            let n = got / constantPacketBytes
            if let descriptions {
                for i in 0..<n {
                    descriptions[i] = CPacketDescription(mStartOffset: Int64(i * constantPacketBytes), mVariableFramesInPacket: 0, mDataByteSize: UInt32(constantPacketBytes))
                }
            }
            return (n, n * constantPacketBytes)
        }
        var n = 0, bytes = 0
        while n < wanted {
            let p = packets[Int(start) + n]
            let size = Int(p.dataByteSize)
            if bytes + size > capacity { break }
            packetBytes.withUnsafeBytes { src in
                (out + bytes).copyMemory(from: src.baseAddress! + Int(p.startOffset), byteCount: size)
            }
            descriptions?[n] = CPacketDescription(mStartOffset: Int64(bytes), mVariableFramesInPacket: p.variableFramesInPacket, mDataByteSize: p.dataByteSize)
            bytes += size
            n += 1
        }
        guard n > 0 else { throw AudioFileFailure(status: paramError, "the buffer holds no whole packet") }
        return (n, bytes)
    }

    /// Reads audio-data bytes from `start` (from the data's start). Returns the count read.
    func readBytes(start: Int64, count: Int, out: UnsafeMutableRawPointer) throws(AudioFileFailure) -> Int {
        guard start >= 0 else { throw AudioFileFailure(status: kAudioFileInvalidPacketOffsetError, "negative byte offset \(start)") }
        let n = Int(max(0, min(Int64(count), dataByteCount - start)))
        return n == 0 ? 0 : storage.readFully(out, n, at: dataOffset + start)
    }
}

