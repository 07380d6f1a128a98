import AQFileStream
import AQTypes
import ArgumentParser
import Foundation

/// `aqsync info FILE [--json]`: feeds the file to the file-stream parser in 64 KiB chunks, as a
/// stream, and prints what it finds. An unreadable or invalid file exits with status 1 and one
/// line on stderr naming the file and the reason.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Show what the file-stream parser finds in an audio file.")

    @Argument(help: "The audio file (WAVE, RF64, Wave64, AIFF, AIFC, CAF, NeXT/Sun, MP3, ADTS AAC, FLAC, MP4/M4A, Ogg FLAC/Opus/Vorbis).")
    var file: String

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func run() throws {
        do {
            let summary = try Self.scan(path: file)
            print(json ? summary.json : summary.text)
        } catch {
            FileHandle.standardError.write(Data("aqsync: \(file): \(error.reason)\n".utf8))
            throw ExitCode(1)
        }
    }

    struct InfoFailure: Error { var reason: String }

    /// What `info` reports.
    struct Summary {
        var fileFormat: FourCharCode
        var format: AudioStreamBasicDescription
        var packetCount: UInt64
        var primingFrames: Int64
        var remainderFrames: Int64
        var frameCount: Int64
        var dataOffset: Int64
        var byteCount: UInt64
        var maximumPacketSize: UInt32
        var bitRate: UInt32
        var cookieBytes: Int

        var duration: Double { format.sampleRate > 0 ? Double(frameCount) / format.sampleRate : 0 }

        var json: String {
            func q(_ s: String) -> String {
                var out = "\""
                for u in s.unicodeScalars {
                    switch u {
                    case "\"": out += "\\\""
                    case "\\": out += "\\\\"
                    case _ where u.value < 0x20 || u.value > 0x7E: out += String(format: "\\u%04x", u.value)
                    default: out.unicodeScalars.append(u)
                    }
                }
                return out + "\""
            }
            let fields: [(String, String)] = [
                ("file_format", q(fileFormat.description)),
                ("format_id", q(format.formatID.description)),
                ("format_flags", "\(format.formatFlags.rawValue)"),
                ("sample_rate", "\(format.sampleRate)"),
                ("channels", "\(format.channelsPerFrame)"),
                ("bits_per_channel", "\(format.bitsPerChannel)"),
                ("bytes_per_packet", "\(format.bytesPerPacket)"),
                ("frames_per_packet", "\(format.framesPerPacket)"),
                ("packet_count", "\(packetCount)"),
                ("frame_count", "\(frameCount)"),
                ("priming_frames", "\(primingFrames)"),
                ("remainder_frames", "\(remainderFrames)"),
                ("data_offset", "\(dataOffset)"),
                ("audio_data_byte_count", "\(byteCount)"),
                ("maximum_packet_size", "\(maximumPacketSize)"),
                ("bit_rate", "\(bitRate)"),
                ("magic_cookie_bytes", "\(cookieBytes)"),
                ("duration_seconds", "\(duration)"),
            ]
            return "{" + fields.map { "\(q($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
        }

        var text: String {
            let f = format
            var lines = [
                "file format:      \(fileFormat)",
                "data format:      '\(f.formatID)' \(f.sampleRate) Hz, \(f.channelsPerFrame) ch, \(f.bitsPerChannel) bits, flags 0x\(String(f.formatFlags.rawValue, radix: 16))",
                "packets:          \(packetCount) × \(f.framesPerPacket == 0 ? "variable" : String(f.framesPerPacket)) frames, \(f.bytesPerPacket == 0 ? "variable" : String(f.bytesPerPacket)) bytes",
                "frames:           \(frameCount) (priming \(primingFrames), remainder \(remainderFrames))",
                "duration:         \(String(format: "%.6f", duration)) s",
                "audio data:       \(byteCount) bytes at offset \(dataOffset)",
                "max packet size:  \(maximumPacketSize) bytes",
                "bit rate:         \(bitRate) bit/s",
            ]
            if cookieBytes > 0 { lines.append("magic cookie:     \(cookieBytes) bytes") }
            return lines.joined(separator: "\n")
        }
    }

    /// Streams the file through the parser.
    static func scan(path: String) throws(InfoFailure) -> Summary {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot open file for reading" : "no such file"
            throw InfoFailure(reason: reason)
        }
        defer { try? handle.close() }
        var packets: UInt64 = 0
        var payload: UInt64 = 0
        var frames: Int64 = 0
        var lastALACFrames: Int?
        let stream: AudioFileStream
        do {
            stream = try AudioFileStream(
                propertyListener: { _, property, flags in
                    if property == .magicCookieData { flags.insert(.cacheProperty) }
                },
                packets: { data, count, descriptions in
                    packets += UInt64(count)
                    if let descriptions {
                        for d in descriptions {
                            payload += UInt64(d.dataByteSize)
                            frames += Int64(d.variableFramesInPacket)
                        }
                        // ALAC's last packet states its own (shorter) length.
                        if let last = descriptions.last {
                            let start = Int(last.startOffset)
                            lastALACFrames = PacketInspection.alacFrames(
                                UnsafeRawBufferPointer(rebasing: data[start..<(start + Int(last.dataByteSize))]))
                        }
                    } else {
                        payload += UInt64(data.count)
                    }
                })
        } catch {
            throw InfoFailure(reason: error.description)
        }
        // Files are read in the order a push parser needs (a CAF's pakt before its data).
        let size = Int64((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? Int64.max)
        let order = AudioFileReadingOrder.make(fileSize: size) { offset, count in
            guard (try? handle.seek(toOffset: UInt64(offset))) != nil else { return [] }
            return [UInt8]((try? handle.read(upToCount: count)) ?? Data())
        }
        if let header = order.replacementHeader {
            // A WAVE past 4 GiB whose data size wrapped around: a corrected copy of its header.
            let result = header.withUnsafeBytes { raw -> AudioFileStreamError? in
                do throws(AudioFileStreamError) { try stream.parse(raw) } catch { return error }
                return nil
            }
            if let error = result { throw InfoFailure(reason: error.description) }
        }
        for segment in order.segments {
            let skip = Int64(order.replacementHeader?.count ?? 0)
            let offset = max(segment.offset, segment.offset == 0 ? skip : 0)
            do {
                try handle.seek(toOffset: UInt64(offset))
            } catch {
                throw InfoFailure(reason: "read error: \(error.localizedDescription)")
            }
            var left = segment.length - (offset - segment.offset)
            while left > 0 {
                let chunk: Data
                do {
                    chunk = try handle.read(upToCount: Int(min(left, 64 << 10))) ?? Data()
                } catch {
                    throw InfoFailure(reason: "read error: \(error.localizedDescription)")
                }
                if chunk.isEmpty { break }
                left -= Int64(chunk.count)
                let result = chunk.withUnsafeBytes { raw -> AudioFileStreamError? in
                    do throws(AudioFileStreamError) { try stream.parse(raw) } catch { return error }
                    return nil
                }
                if let error = result { throw InfoFailure(reason: error.description) }
            }
        }
        if order.resumeAtFirstPacket, stream.isReadyToProducePackets {
            // An MP4 read moov first: the samples are where its table says.
            let start: Int64
            do {
                start = try stream.seek(toPacket: 0).byteOffset
                try handle.seek(toOffset: UInt64(start))
            } catch {
                throw InfoFailure(reason: "\(error)")
            }
            var first = true
            while true {
                let chunk: Data
                do {
                    chunk = try handle.read(upToCount: 64 << 10) ?? Data()
                } catch {
                    throw InfoFailure(reason: "read error: \(error.localizedDescription)")
                }
                if chunk.isEmpty { break }
                let flags: AudioFileStreamParseFlags = first ? .discontinuity : []
                first = false
                let result = chunk.withUnsafeBytes { raw -> AudioFileStreamError? in
                    do throws(AudioFileStreamError) { try stream.parse(raw, flags: flags) } catch { return error }
                    return nil
                }
                if let error = result { throw InfoFailure(reason: error.description) }
            }
        }
        guard stream.isReadyToProducePackets, let format = stream.dataFormat else {
            if stream.fileType == nil {
                throw InfoFailure(reason: AudioFileStreamError.unsupportedFileType.with(detail: "not a recognised audio file").description)
            }
            throw InfoFailure(reason: AudioFileStreamError.dataUnavailable.with(detail: "file ends before its audio data").description)
        }
        let packetCount = stream.audioDataPacketCount ?? packets
        let table = stream.packetTableInfo
        let totalFrames = format.framesPerPacket > 0
            ? Int64(clamping: packetCount).multipliedReportingOverflow(by: Int64(format.framesPerPacket)).partialValue : frames
        let priming = Int64(table?.primingFrames ?? 0)
        let remainder = Int64(table?.remainderFrames ?? 0)
        var frameCount = table.map { $0.numberValidFrames } ?? max(0, totalFrames - priming - remainder)
        if format.formatID == AudioFormatID.appleLossless, let last = lastALACFrames, format.framesPerPacket > 0 {
            // ffmpeg's CAF counts the short last packet as whole: its own header says how long it is.
            frameCount = min(frameCount, max(0, totalFrames - Int64(format.framesPerPacket) + Int64(last) - priming))
        }
        if stream.fileType == AudioFileTypeID.ogg {
            // Ogg: the last page's granule position is where the stream ends.
            let tailStart = max(0, size - (128 << 10))
            if (try? handle.seek(toOffset: UInt64(tailStart))) != nil,
                let tail = try? handle.read(upToCount: Int(size - tailStart)),
                let granule = oggLastGranule([UInt8](tail))
            {
                frameCount = max(0, granule - priming)
            }
        }
        var bitRate: UInt32 = 0
        if case .uint32(let b)? = try? stream.value(of: .bitRate) { bitRate = b }
        return Summary(
            fileFormat: stream.fileType ?? FourCharCode(rawValue: 0), format: format, packetCount: packetCount,
            primingFrames: priming, remainderFrames: remainder, frameCount: frameCount,
            dataOffset: order.fileOffset(ofStreamOffset: stream.dataOffset ?? 0), byteCount: stream.audioDataByteCount ?? payload,
            maximumPacketSize: stream.maximumPacketSize ?? 0, bitRate: bitRate,
            cookieBytes: stream.magicCookie?.count ?? 0)
    }
}
