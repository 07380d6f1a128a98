import AQConvert
import AQCore
import AQEngine
import AQSession
import AQTypes
import Foundation
import Testing

/// Takes recorded by a compressed input queue (hand-driven device) written with
/// ``CAFPacketWriter``, read back with the project's reader and decoder and with FFmpeg (issue 11).
@Suite struct CAFPacketWriterTests {
    static func format(_ id: FourCharCode, channels: UInt32 = 2) -> AudioStreamBasicDescription {
        AudioStreamBasicDescription(
            sampleRate: 48000, formatID: id, formatFlags: [], bytesPerPacket: 0,
            framesPerPacket: 0, bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 0)
    }

    final class Failures: @unchecked Sendable {
        let lock = NSLock()
        var errors: [any Error] = []
        func add(_ e: any Error) { lock.lock(); errors.append(e); lock.unlock() }
    }

    /// Records `inputs` (planar, device frames from `start`) into a take at `url`; returns the
    /// queue (stopped) and the writer (finished).
    static func record(_ id: FourCharCode, _ inputs: [[Float]], start: Int64, to url: URL) throws -> (AudioInputQueue, CAFPacketWriter) {
        let device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: inputs.count)
        let engine = try AudioQueueEngine(device: device)
        let failures = Failures()
        let box = WriterBox()
        let queue = try engine.newInput(format: Self.format(id, channels: UInt32(inputs.count))) { q, b, _, descriptions in
            do { try box.writer?.write(b, descriptions: descriptions) } catch { failures.add(error) }
            try? q.enqueue(b)
        }
        let writer = try CAFPacketWriter(url: url, format: queue.format, magicCookie: queue.magicCookie)
        box.writer = writer
        for _ in 0..<3 { try queue.enqueue(try queue.allocateBuffer(capacity: 4 * queue.maximumPacketSize, packetDescriptions: 4)) }
        try queue.start(at: AudioTimeStamp(sampleTime: Double(start)))
        let frames = inputs[0].count
        var done = 0
        while done < frames {
            let n = min(480, frames - done)
            _ = device.render(frames: n, cycle: n, inputs: inputs.map { Array($0[done..<(done + n)]) })
            engine.deliverPendingEvents()
            done += n
        }
        try queue.stop(immediately: true)
        try writer.finish(primingFrames: queue.primingFrames, remainderFrames: queue.remainderFrames)
        #expect(failures.errors.isEmpty)
        return (queue, writer)
    }

    final class WriterBox: @unchecked Sendable { var writer: CAFPacketWriter? }

    /// Reads a take with the project's reader, decodes it from its cookie, drops the priming and
    /// keeps the valid frames.
    static func readBack(_ url: URL) throws -> (info: AudioFilePacketTableInfo?, format: AudioStreamBasicDescription, frames: [[Float]], packets: Int) {
        let reader = try CompressedFileReader(url: url)
        let device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: Int(reader.format.channelsPerFrame))
        let engine = try AudioQueueEngine(device: device)
        let q = try engine.newInput(format: reader.format) { _, _, _, _ in }
        let buffer = try q.allocateBuffer(capacity: 64 * q.maximumPacketSize, packetDescriptions: 64)
        let decoder = try PacketDecoder(format: reader.format, magicCookie: reader.magicCookie)
        let ch = Int(reader.format.channelsPerFrame), fpp = Int(reader.format.framesPerPacket)
        var planes = [[Float]](repeating: [], count: ch)
        let tmp = (0..<ch).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 64 * fpp) }
        defer { tmp.forEach { $0.deallocate() } }
        var packets = 0
        while true {
            let n = try reader.read(into: buffer)
            if n == 0 { break }
            packets += n
            var got = 0
            tmp.withUnsafeBufferPointer { p in
                for k in 0..<n {
                    let d = buffer.packetDescriptions![k]
                    got += decoder.decode(UnsafeRawBufferPointer(start: buffer.audioData + Int(d.startOffset), count: Int(d.dataByteSize)),
                                          framesIfCorrupt: fpp, into: p.baseAddress!, offset: got, capacity: 64 * fpp)
                }
            }
            for c in 0..<ch { planes[c] += UnsafeBufferPointer(start: tmp[c], count: got) }
        }
        #expect(decoder.corruptPackets == 0)
        if let info = reader.packetTableInfo {
            let from = Int(info.primingFrames)
            planes = planes.map { Array($0[from..<min($0.count, from + Int(info.numberValidFrames))]) }
        }
        return (reader.packetTableInfo, reader.format, planes, packets)
    }

    /// FFmpeg's view: the decoded samples (f32le) and ffprobe's stream frame count.
    static func ffmpegDecode(_ url: URL, channels: Int) throws -> [[Float]] {
        let raw = url.deletingPathExtension().appendingPathExtension("f32")
        let r = try runTool("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", url.path, "-f", "f32le", "-c:a", "pcm_f32le", raw.path])
        #expect(r.status == 0, "ffmpeg: \(r.output)")
        let data = try Data(contentsOf: raw)
        let n = data.count / 4 / channels
        var planes = [[Float]](repeating: [Float](repeating: 0, count: n), count: channels)
        data.withUnsafeBytes { b in
            for i in 0..<n { for c in 0..<channels { planes[c][i] = b.loadUnaligned(fromByteOffset: (i * channels + c) * 4, as: Float.self) } }
        }
        return planes
    }

    static func inputs(frames: Int, channels: Int, impulses: [Int]) -> [[Float]] {
        var x = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
        for c in 0..<channels { for i in 0..<frames { x[c][i] = Float(sin(Double(i) * 0.02 * Double(c + 1))) * 0.3 } }
        for d in impulses { for c in 0..<channels { x[c][d] = c == 0 ? 0.9 : -0.9 } }
        return x
    }

    /// An ALAC take: desc, kuki, data and pakt read back by the project's reader; decoded
    /// frames exactly the recorded ones (16-bit); FFmpeg reads it, with the same samples and the
    /// frame count the packet table says.
    @Test func alacTakeReadsBackExactly() throws {
        let dir = try TempDir()
        let url = dir.file("take.caf")
        let start: Int64 = 700
        let x = Self.inputs(frames: 20000, channels: 2, impulses: [700, 4800, 19999])
        let (queue, writer) = try Self.record(AudioFormatID.appleLossless, x, start: start, to: url)
        let recorded = 20000 - Int(start)
        #expect(writer.packetFrames == Int64(writer.packetsWritten) * 4096)
        let back = try Self.readBack(url)
        #expect(back.format.formatID == AudioFormatID.appleLossless && back.format.framesPerPacket == 4096)
        #expect(back.info == AudioFilePacketTableInfo(numberValidFrames: Int64(recorded), primingFrames: 0, remainderFrames: Int32(queue.remainderFrames)))
        #expect(back.packets == Int(writer.packetsWritten))
        #expect(back.frames[0].count == recorded)
        for c in 0..<2 {
            var bad = 0
            for j in 0..<recorded {
                let q = Float(Int16(clamping: Int((Double(x[c][Int(start) + j]) * 32768).rounded()))) / 32768
                if back.frames[c][j] != q { bad += 1 }
            }
            #expect(bad == 0, "channel \(c): \(bad) frames differ")
        }
        // FFmpeg: accepts the file, and its decoded samples start with the recorded ones.
        let probe = try runTool("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,channels,sample_rate", "-of", "default=nw=1", url.path])
        #expect(probe.status == 0 && probe.output.contains("codec_name=alac") && probe.output.contains("channels=2"), "\(probe.output)")
        let ff = try Self.ffmpegDecode(url, channels: 2)
        #expect(ff[0].count == recorded, "FFmpeg decodes \(ff[0].count) frames; the take holds \(recorded)")
        #expect(Array(ff[0].prefix(recorded)) == back.frames[0])
    }

    /// An AAC take: the packet table's priming (1024) and remainder; decoded from the file and
    /// the priming dropped, the impulses are at their frame after the start (±1); FFmpeg reads it.
    @Test func aacTakeWithPrimingAndRemainder() throws {
        let dir = try TempDir()
        let url = dir.file("take.caf")
        let start: Int64 = 1000
        let impulses = [1500, 9000, 22222]
        var x = [[Float]](repeating: [Float](repeating: 0, count: 30000), count: 1)
        for d in impulses { x[0][d] = 0.8 }
        let (queue, writer) = try Self.record(AudioFormatID.mpeg4AAC, x, start: start, to: url)
        let recorded = 30000 - Int(start)
        let back = try Self.readBack(url)
        #expect(back.info == AudioFilePacketTableInfo(numberValidFrames: Int64(recorded), primingFrames: 1024, remainderFrames: Int32(queue.remainderFrames)))
        #expect(Int(writer.packetsWritten) * 1024 == 1024 + recorded + queue.remainderFrames)
        #expect(back.frames[0].count == recorded)
        for d in impulses {
            let expected = d - Int(start)
            let window = max(0, expected - 300)..<min(recorded, expected + 300)
            let peak = window.max { abs(back.frames[0][$0]) < abs(back.frames[0][$1]) }!
            #expect(abs(peak - expected) <= 1, "impulse at device frame \(d): at take frame \(peak), expected \(expected)")
        }
        let probe = try runTool("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,sample_rate", "-of", "default=nw=1", url.path])
        #expect(probe.status == 0 && probe.output.contains("codec_name=aac"), "\(probe.output)")
        let ff = try Self.ffmpegDecode(url, channels: 1)
        // FFmpeg 5.1's CAF reader decodes every packet (priming and remainder included: the
        // frames recorded start at 1024); a reader that applies the pakt gives them alone.
        let skip = ff[0].count == recorded ? 0 : 1024
        #expect(ff[0].count == recorded || ff[0].count == Int(writer.packetsWritten) * 1024, "FFmpeg decodes \(ff[0].count) frames")
        for d in impulses {
            let expected = d - Int(start) + skip
            let window = max(0, expected - 300)..<min(ff[0].count, expected + 300)
            let peak = window.max { abs(ff[0][$0]) < abs(ff[0][$1]) }!
            #expect(abs(peak - expected) <= 1, "FFmpeg: impulse at device frame \(d) at \(peak), expected \(expected)")
        }
    }

    static func write(_ w: CAFPacketWriter, _ bytes: [UInt8], _ d: [AudioStreamPacketDescription]) throws {
        let p = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        defer { p.deallocate() }
        p.copyBytes(from: bytes)
        try w.write(UnsafeRawBufferPointer(rebasing: p[0..<bytes.count]), descriptions: d)
    }

    /// A long packet table (beyond the 64 KiB kept in memory) is spooled and written whole:
    /// every packet's size reads back.
    @Test func longPacketTableIsSpooled() throws {
        let dir = try TempDir()
        let url = dir.file("long.caf")
        let e = try PacketEncoder(format: Self.format(AudioFormatID.appleLossless, channels: 1))
        let w = try CAFPacketWriter(url: url, format: e.format, magicCookie: e.magicCookie)
        let count = 40000
        var bytes = [UInt8](repeating: 0, count: 300 * 8)
        for k in 0..<count / 8 {
            var descriptions: [AudioStreamPacketDescription] = []
            var at = 0
            for j in 0..<8 {
                let size = 130 + (k * 8 + j) % 150
                for i in 0..<size { bytes[at + i] = UInt8(truncatingIfNeeded: k * 8 + j + i) }
                descriptions.append(AudioStreamPacketDescription(startOffset: Int64(at), variableFramesInPacket: 0, dataByteSize: UInt32(size)))
                at += size
            }
            try Self.write(w, bytes, descriptions)
        }
        try w.finish(primingFrames: 0, remainderFrames: 100)
        let reader = try CompressedFileReader(url: url)
        #expect(reader.packetTableInfo == AudioFilePacketTableInfo(numberValidFrames: Int64(count) * 4096 - 100, primingFrames: 0, remainderFrames: 100))
        let device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: 1)
        let engine = try AudioQueueEngine(device: device)
        let q = try engine.newInput(format: reader.format) { _, _, _, _ in }
        let buffer = try q.allocateBuffer(capacity: 64 * q.maximumPacketSize, packetDescriptions: 64)
        var index = 0
        var bad = 0
        while true {
            let n = try reader.read(into: buffer)
            if n == 0 { break }
            for k in 0..<n {
                let d = buffer.packetDescriptions![k]
                let first = buffer.audioData.load(fromByteOffset: Int(d.startOffset), as: UInt8.self)
                if Int(d.dataByteSize) != 130 + index % 150 || first != UInt8(truncatingIfNeeded: index) { bad += 1 }
                index += 1
            }
        }
        #expect(index == count && bad == 0)
        // Writing after finish, or a description outside the bytes, is an error, not a crash.
        do { try Self.write(w, [UInt8](repeating: 0, count: 10), []); Issue.record("accepted") } catch {
            #expect((error as? SessionError)?.kind == .output)
        }
        let w2 = try CAFPacketWriter(url: dir.file("bad.caf"), format: e.format, magicCookie: e.magicCookie)
        do {
            try Self.write(w2, [UInt8](repeating: 0, count: 10), [AudioStreamPacketDescription(startOffset: 5, variableFramesInPacket: 0, dataByteSize: 6)])
            Issue.record("accepted")
        } catch { #expect((error as? SessionError)?.kind == .output) }
        do { _ = try CAFPacketWriter(url: dir.file("pcm.caf"), format: .linearPCM(sampleRate: 48000, channels: 1, bits: 16), magicCookie: []); Issue.record("accepted") } catch {
            #expect(error.kind == .output)
        }
    }
}
