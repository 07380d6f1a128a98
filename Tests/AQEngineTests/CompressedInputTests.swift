import AQConvert
import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// Compressed recording (issue 11): input queues of AAC LC and Apple Lossless on the hand-driven
/// device. The packets the callback receives, decoded back with the project's decoder from the
/// queue's magic cookie, hold the impulses fed at known device frames exactly where the buffers'
/// start times say (ALAC sample for sample; AAC ±1 frame, its priming before the start).
@Suite struct CompressedInputTests {
    static func format(_ id: FourCharCode, rate: Double = 48000, channels: UInt32 = 2, flags: UInt32 = 0) -> AudioStreamBasicDescription {
        AudioStreamBasicDescription(
            sampleRate: rate, formatID: id, formatFlags: AudioFormatFlags(rawValue: flags), bytesPerPacket: 0,
            framesPerPacket: 0, bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 0)
    }

    /// One buffer the callback received.
    struct Got: @unchecked Sendable {
        var time: AudioTimeStamp
        var bytes: [UInt8]
        var descriptions: [AudioStreamPacketDescription]
        /// The buffer's own descriptions (``AudioQueueBuffer/packetDescriptions``).
        var inBuffer: [AudioStreamPacketDescription]
        /// Its packets, cut by the descriptions.
        var packets: [[UInt8]] { descriptions.map { Array(bytes[Int($0.startOffset)..<(Int($0.startOffset) + Int($0.dataByteSize))]) } }
    }

    final class Rig {
        let device: ManualDevice
        let engine: AudioQueueEngine
        let got = Recorder<Got>()
        let queue: AudioInputQueue

        init(format: AudioStreamBasicDescription, count: Int = 3, packetsPerBuffer: Int = 2, descriptions: Int? = nil, inputs: Int = 2) throws {
            device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: inputs)
            engine = try AudioQueueEngine(device: device, capacities: RenderCapacities(queues: 4, buffersPerQueue: 8, commands: 64, outputChannels: 2, inputChannels: 4, captureFrames: 16384))
            let got = self.got
            queue = try engine.newInput(format: format) { q, b, t, descriptions in
                let bytes = Array(UnsafeRawBufferPointer(start: b.audioData, count: b.audioDataByteSize))
                let inBuffer = b.packetDescriptions.map { Array(UnsafeBufferPointer(start: $0, count: b.packetDescriptionCount)) } ?? []
                got.append(Got(time: t, bytes: bytes, descriptions: descriptions, inBuffer: inBuffer))
                try? q.enqueue(b)
            }
            for _ in 0..<count {
                let b = try queue.allocateBuffer(capacity: packetsPerBuffer * queue.maximumPacketSize, packetDescriptions: descriptions ?? packetsPerBuffer)
                try queue.enqueue(b)
            }
        }

        func feedDelivering(_ inputs: [[Float]], cycle: Int) {
            let frames = inputs.map(\.count).max() ?? 0
            var done = 0
            while done < frames {
                let n = min(cycle, frames - done)
                _ = device.render(frames: n, cycle: n, inputs: inputs.map { Array($0[done..<(done + n)]) })
                engine.deliverPendingEvents()
                done += n
            }
        }

        /// Buffers with packets, in order.
        var full: [Got] { got.values.filter { !$0.descriptions.isEmpty } }

        /// Every packet received, decoded from the first with the queue's cookie.
        func decoded() throws -> [[Float]] {
            let d = try PacketDecoder(format: queue.format, magicCookie: queue.magicCookie)
            let packets = full.flatMap(\.packets)
            let fpp = Int(queue.format.framesPerPacket)
            let capacity = (packets.count + 1) * fpp
            let channels = Int(queue.format.channelsPerFrame)
            let planes = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: capacity) }
            defer { planes.forEach { $0.deallocate() } }
            var n = 0
            planes.withUnsafeBufferPointer { p in
                for packet in packets {
                    n += packet.withUnsafeBytes { d.decode($0, framesIfCorrupt: fpp, into: p.baseAddress!, offset: n, capacity: capacity) }
                }
                n += d.drain(into: p.baseAddress!, offset: n, capacity: capacity)
            }
            #expect(d.corruptPackets == 0)
            return planes.map { Array(UnsafeBufferPointer(start: $0, count: n)) }
        }

        /// Descriptions consistent with the bytes: contiguous from 0, sizes adding up to the
        /// buffer's size, no frame count (constant frames per packet), the same in the buffer;
        /// start times one after another by whole packets.
        func checkDescriptions(ratio: Double = 1) {
            let fpp = Double(queue.format.framesPerPacket)
            var previous: (time: Double, packets: Int)?
            for g in full {
                var offset: Int64 = 0
                for d in g.descriptions {
                    #expect(d.startOffset == offset && d.variableFramesInPacket == 0 && d.dataByteSize > 0)
                    offset += Int64(d.dataByteSize)
                }
                #expect(Int(offset) == g.bytes.count)
                #expect(g.inBuffer == g.descriptions || g.inBuffer.isEmpty)
                #expect(g.time.flags.contains(.sampleTimeValid) && g.time.flags.contains(.hostTimeValid))
                if let p = previous {
                    #expect(abs(g.time.sampleTime - (p.time + Double(p.packets) * fpp * ratio)) < 1e-6)
                }
                previous = (g.time.sampleTime, g.descriptions.count)
            }
        }
    }

    static func quantised16(_ x: Float) -> Float {
        Float(Int16(clamping: Int((Double(max(-1, min(1, x))) * 32768).rounded()))) / 32768
    }

    /// 16-bit ALAC: every recorded frame decodes back exactly (the float input quantised to 16
    /// bits) at the device frame the start times say; no priming; the stop flushes the last
    /// packet (short: its shortfall the remainder) before it returns.
    @Test(arguments: [64, 331])
    func alacDecodesBackExactlyAtTheStartTimes(cycle: Int) throws {
        let rig = try Rig(format: Self.format(AudioFormatID.appleLossless))
        #expect(rig.queue.format.framesPerPacket == 4096 && rig.queue.primingFrames == 0)
        let start: Int64 = 1009
        #expect(try rig.queue.start(at: AudioTimeStamp(sampleTime: Double(start))) == start)
        let frames = 30000
        var inputs = [[Float]](repeating: [Float](repeating: 0, count: frames), count: 2)
        for i in 0..<frames { inputs[0][i] = Float(sin(Double(i) * 0.013)) * 0.4; inputs[1][i] = Float(i % 97) / 200 - 0.2 }
        for f in [1008, 1009, 5105, 5106, 17000, 29999] { inputs[0][f] = 1; inputs[1][f] = -1 }
        rig.feedDelivering(inputs, cycle: cycle)
        let before = rig.got.values.count
        try rig.queue.stop(immediately: true)
        #expect(rig.got.values.count > before, "the stop hands back the last packets before it returns")
        rig.checkDescriptions()
        let full = rig.full
        #expect(full.first?.time.sampleTime == Double(start))
        #expect(full.first?.time.hostTime == rig.device.hostTime(ofFrame: start))
        let recorded = frames - Int(start)
        let packets = full.reduce(0) { $0 + $1.descriptions.count }
        #expect(packets == (recorded + 4095) / 4096)
        #expect(rig.queue.remainderFrames == packets * 4096 - recorded)
        #expect(rig.queue.lostFrames == 0)
        let out = try rig.decoded()
        #expect(out[0].count == recorded, "the last packet is short: it decodes to the frames left")
        // Decoded frame j is device frame start + j.
        for c in 0..<2 {
            var bad = 0
            for j in 0..<recorded where out[c][j] != Self.quantised16(inputs[c][Int(start) + j]) { bad += 1 }
            #expect(bad == 0, "channel \(c): \(bad) frames differ")
            #expect(out[c][recorded...].allSatisfy { $0 == 0 })
        }
        // Each buffer's start time is the device frame of its first packet's first frame.
        var j = 0
        for g in full {
            #expect(g.time.sampleTime == Double(start) + Double(j))
            j += g.descriptions.count * 4096
        }
    }

    /// AAC LC: the first buffer's start time is the start minus the priming (1024 frames); the
    /// impulses decode at the frames the start times say, ±1; the packets decode to priming +
    /// frames recorded + remainder.
    @Test(arguments: [128, 509])
    func aacImpulsesAtTheStartTimes(cycle: Int) throws {
        let rig = try Rig(format: Self.format(AudioFormatID.mpeg4AAC), packetsPerBuffer: 3)
        #expect(rig.queue.format.framesPerPacket == 1024 && rig.queue.format.formatFlags.rawValue == 2)
        let priming = rig.queue.primingFrames
        #expect(priming == 1024)
        let start: Int64 = 2000
        try rig.queue.start(at: AudioTimeStamp(sampleTime: Double(start)))
        let frames = 40000
        let left = [2000, 4099, 10007, 25000, 39000]
        let right = [3001, 20480, 33333]
        var inputs = [[Float]](repeating: [Float](repeating: 0, count: frames), count: 2)
        for f in left { inputs[0][f] = 0.8 }
        for f in right { inputs[1][f] = -0.6 }
        rig.feedDelivering(inputs, cycle: cycle)
        try rig.queue.stop(immediately: true)
        rig.checkDescriptions()
        let full = rig.full
        let first = try #require(full.first)
        #expect(first.time.sampleTime == Double(start - Int64(priming)))
        #expect(first.time.hostTime == rig.device.hostTime(ofFrame: start - Int64(priming)))
        let recorded = frames - Int(start)
        let packets = full.reduce(0) { $0 + $1.descriptions.count }
        #expect(packets * 1024 == priming + recorded + rig.queue.remainderFrames)
        #expect(rig.queue.lostFrames == 0)
        let out = try rig.decoded()
        let t0 = Int(first.time.sampleTime)
        for (c, list) in [(0, left), (1, right)] {
            for d in list {
                let expected = d - t0
                let window = (expected - 300)..<min(expected + 300, out[c].count)
                let peak = window.max { abs(out[c][$0]) < abs(out[c][$1]) }!
                #expect(abs(peak - expected) <= 1, "channel \(c), impulse at device frame \(d): decoded at \(peak + t0)")
            }
        }
    }

    /// AAC at 44100 Hz on a 48 kHz device: the rate path, start times fractional and exact.
    @Test func aacAtAnotherRate() throws {
        let rig = try Rig(format: Self.format(AudioFormatID.mpeg4AAC, rate: 44100, channels: 1), packetsPerBuffer: 2, inputs: 1)
        let ratio = 48000.0 / 44100
        let start: Int64 = 1000
        try rig.queue.start(at: AudioTimeStamp(sampleTime: Double(start)))
        let frames = 24000
        let impulses = [3000, 9001, 17777]
        var x = [Float](repeating: 0, count: frames)
        for d in impulses { x[d] = 0.8 }
        rig.feedDelivering([x], cycle: 256)
        try rig.queue.stop(immediately: true)
        rig.checkDescriptions(ratio: ratio)
        let first = try #require(rig.full.first)
        #expect(abs(first.time.sampleTime - (Double(start) - 1024 * ratio)) < 1e-6)
        let out = try rig.decoded()
        for d in impulses {
            let expected = Int(((Double(d) - first.time.sampleTime) / ratio).rounded())
            let window = (expected - 300)..<(expected + 300)
            let peak = window.max { abs(out[0][$0]) < abs(out[0][$1]) }!
            #expect(abs(peak - expected) <= 1, "impulse at device frame \(d): peak at queue frame \(peak), expected \(expected)")
        }
    }

    /// The magic cookie is readable from creation, through the API and by ID (with its size),
    /// and the project's decoder opens with it; linear PCM queues have an empty one.
    @Test func magicCookieFromCreation() throws {
        let device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: 2)
        let engine = try AudioQueueEngine(device: device)
        let id = AudioQueuePropertyID.magicCookie.rawValue
        for f in [Self.format(AudioFormatID.mpeg4AAC), Self.format(AudioFormatID.appleLossless, channels: 1)] {
            let q = try engine.newInput(format: f) { _, _, _, _ in }
            #expect(!q.magicCookie.isEmpty)
            #expect(try q.propertySize(id) == q.magicCookie.count)
            #expect(try q.property(id) == q.magicCookie)
            _ = try PacketDecoder(format: q.format, magicCookie: try q.property(id))
            if f.formatID == AudioFormatID.appleLossless { #expect(q.magicCookie.count == 24) }
            #expect(try q.property(AudioQueuePropertyID.isRunning.rawValue) == [0, 0, 0, 0])
            try q.dispose(immediately: true)
            do { _ = try q.propertySize(id); Issue.record("stale handle answered") } catch { #expect(error.code == .invalidQueue) }
        }
        let pcm = try engine.newInput(format: .linearPCM(sampleRate: 48000, channels: 1, bits: 16)) { _, _, _, _ in }
        #expect(try pcm.propertySize(id) == 0)
        do { _ = try pcm.property(AudioQueuePropertyID.channelLayout.rawValue); Issue.record("accepted") } catch {
            #expect(error.code == .invalidProperty)
        }
    }

    /// Formats an input queue does not record stay `unsupportedDataFormat`; buffers too small
    /// for a packet are `invalidParameter`.
    @Test func refusedFormatsAndBuffers() throws {
        let device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: 2)
        let engine = try AudioQueueEngine(device: device)
        var fpp = Self.format(AudioFormatID.appleLossless)
        fpp.framesPerPacket = 1024
        var bpp = Self.format(AudioFormatID.mpeg4AAC)
        bpp.bytesPerPacket = 512
        for f in [
            Self.format(AudioFormatID.mpegLayer3), Self.format("aach"), Self.format(AudioFormatID.mpeg4AAC, flags: 5),
            fpp, bpp, Self.format(AudioFormatID.appleLossless, channels: 3), Self.format(AudioFormatID.mpeg4AAC, rate: 4000),
        ] {
            do { _ = try engine.newInput(format: f) { _, _, _, _ in }; Issue.record("accepted \(f)") } catch {
                #expect(error.code == .unsupportedDataFormat)
            }
        }
        let q = try engine.newInput(format: Self.format(AudioFormatID.appleLossless)) { _, _, _, _ in }
        do { _ = try q.allocateBuffer(capacity: q.maximumPacketSize - 1, packetDescriptions: 4); Issue.record("accepted") } catch {
            #expect(error.code == .invalidParameter)
        }
        do { _ = try q.allocateBuffer(capacity: q.maximumPacketSize, packetDescriptions: -1); Issue.record("accepted") } catch {
            #expect(error.code == .invalidParameter)
        }
    }

    /// With no buffer enqueued packets are lost and counted in device frames; the next buffer's
    /// start time jumps by whole packets. Buffers without description storage take as many
    /// packets as fit, the descriptions given to the callback.
    @Test func lostPacketsAndBuffersWithoutDescriptions() throws {
        let rig = try Rig(format: Self.format(AudioFormatID.appleLossless, channels: 1), count: 0, inputs: 1)
        try rig.queue.start(at: AudioTimeStamp(sampleTime: 0))
        rig.feedDelivering([[Float](repeating: 0.25, count: 4096 * 2)], cycle: 512)
        #expect(rig.queue.lostFrames == 8192 && rig.queue.discontinuityCount >= 1)
        let b = try rig.queue.allocateBuffer(capacity: 8 * rig.queue.maximumPacketSize)
        try rig.queue.enqueue(b)
        rig.feedDelivering([[Float](repeating: 0.25, count: 4096 * 3)], cycle: 512)
        try rig.queue.stop(immediately: true)
        let full = rig.full
        #expect(full.count == 1)
        #expect(full.first?.time.sampleTime == 8192)
        #expect(full.first?.descriptions.count == 3 && full.first?.inBuffer.isEmpty == true)
        rig.checkDescriptions()
    }

    /// Reset discards the buffer in progress and the encoder's stream; flush hands back what
    /// was encoded so far, ending the stream (the next buffer starts a new one, priming again).
    @Test func flushEndsTheStreamAndResetDiscards() throws {
        let rig = try Rig(format: Self.format(AudioFormatID.mpeg4AAC, channels: 1), packetsPerBuffer: 50, inputs: 1)
        try rig.queue.start(at: AudioTimeStamp(sampleTime: 0))
        rig.feedDelivering([[Float](repeating: 0.1, count: 5000)], cycle: 500)
        #expect(rig.full.isEmpty)
        try rig.queue.flush()
        let first = try #require(rig.full.first)
        #expect(first.time.sampleTime == -1024)
        #expect(first.descriptions.count * 1024 == 1024 + 5000 + rig.queue.remainderFrames)
        rig.feedDelivering([[Float](repeating: 0.1, count: 3000)], cycle: 500)
        try rig.queue.reset()
        #expect(rig.full.count == 1, "reset hands buffers back empty")
        rig.feedDelivering([[Float](repeating: 0.1, count: 3000)], cycle: 500)
        try rig.queue.stop(immediately: true)
        let last = try #require(rig.full.last)
        #expect(rig.full.count == 2)
        // A new stream started at the first frame read after the reset (device frame 8000).
        #expect(last.time.sampleTime == 8000 - 1024)
    }

    /// A stop that is not immediate ends the take with the next whole packet: the buffer in
    /// progress comes back full, the others empty, nothing padded (remainder 0).
    @Test func stopNotImmediatelyEndsOnAWholePacket() throws {
        let rig = try Rig(format: Self.format(AudioFormatID.appleLossless, channels: 1), count: 3, packetsPerBuffer: 1, inputs: 1)
        try rig.queue.start(at: AudioTimeStamp(sampleTime: 0))
        rig.feedDelivering([[Float](repeating: 0.5, count: 4096 * 2 + 1000)], cycle: 500)
        #expect(rig.full.count == 2)
        try rig.queue.stop(immediately: false)
        #expect(rig.queue.isRunning)
        rig.feedDelivering([[Float](repeating: 0.5, count: 4096 * 2)], cycle: 500)
        #expect(!rig.queue.isRunning)
        let full = rig.full
        #expect(full.count == 3 && full.last?.time.sampleTime == 8192)
        #expect(rig.got.values.count == 5, "the two other buffers come back empty")
        #expect(rig.queue.remainderFrames == 0)
        let out = try rig.decoded()
        #expect(out[0].count == 3 * 4096 && out[0].allSatisfy { $0 == 0.5 })
    }

    /// A pause ends the stream: at the resumption the encoder's last packets come back; the next
    /// stream starts at the resumption frame, its first buffer stamped a priming before it.
    @Test func pauseAndResumeStartANewStream() throws {
        let rig = try Rig(format: Self.format(AudioFormatID.mpeg4AAC, channels: 1), count: 3, packetsPerBuffer: 50, inputs: 1)
        try rig.queue.start(at: AudioTimeStamp(sampleTime: 0))
        rig.feedDelivering([[Float](repeating: 0.1, count: 3000)], cycle: 500)
        try rig.queue.pause()
        rig.feedDelivering([[Float](repeating: 0.1, count: 2000)], cycle: 500)
        #expect(try rig.queue.start() == 5000)
        let first = try #require(rig.full.first)
        #expect(first.time.sampleTime == -1024)
        let tail = first.descriptions.count * 1024 - 1024 - 3000
        #expect(tail >= 0 && tail < 2048 && rig.queue.remainderFrames == tail)
        rig.feedDelivering([[Float](repeating: 0.1, count: 3000)], cycle: 500)
        try rig.queue.stop(immediately: true)
        let full = rig.full
        #expect(full.count == 2 && full.last?.time.sampleTime == 5000 - 1024)
        #expect((full.last?.descriptions.count ?? 0) * 1024 == 1024 + 3000 + rig.queue.remainderFrames)
        #expect(rig.queue.lostFrames == 0, "paused frames are not lost ones")
    }

    /// A queue read later than the capture ring holds loses the oldest frames (counted); the
    /// stream starts again at the first frame still there, exact (ALAC, no priming).
    @Test func aQueueBehindTheRingStartsANewStream() throws {
        let rig = try Rig(format: Self.format(AudioFormatID.appleLossless, channels: 1), count: 2, packetsPerBuffer: 8, inputs: 1)
        try rig.queue.start(at: AudioTimeStamp(sampleTime: 0))
        let x = (0..<20000).map { Float($0 % 1000) / 2000 }
        _ = rig.device.render(frames: 20000, cycle: 256, inputs: [x])  // the ring keeps 16384
        rig.engine.deliverPendingEvents()
        try rig.queue.stop(immediately: true)
        #expect(rig.queue.lostFrames == 20000 - 16384)
        let first = try #require(rig.full.first)
        #expect(first.time.sampleTime == Double(20000 - 16384))
        let out = try rig.decoded()
        #expect(out[0].count == 16384)
        #expect(out[0] == x[(20000 - 16384)...].map(Self.quantised16))
    }
}
