import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// Input (recording) queues on the hand-driven device: impulses fed at known device frames come
/// back in the callback's buffers exactly where the start times say (issue 11). Deterministic:
/// the test renders the cycles and delivers the events on its own thread.
@Suite struct InputQueueTests {
    static let float2 = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 2, bits: 32, isFloat: true)

    /// One buffer the callback received: its start time, its frames (planar floats decoded
    /// from the float32 format), and the buffer.
    struct Got: @unchecked Sendable {
        var time: AudioTimeStamp
        var planes: [[Float]]
        var bytes: [UInt8]
        var packets: Int
    }

    final class Rig {
        let device: ManualDevice
        let engine: AudioQueueEngine
        let got = Recorder<Got>()
        let queue: AudioInputQueue
        var buffers: [AudioQueueBuffer] = []

        /// A queue of `format` with `count` buffers of `frames` frames enqueued; `reenqueue`:
        /// the callback enqueues each buffer again.
        init(format: AudioStreamBasicDescription = InputQueueTests.float2, count: Int = 4, frames: Int = 509, reenqueue: Bool = true, inputs: Int = 2) throws {
            device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: inputs)
            engine = try AudioQueueEngine(device: device, capacities: RenderCapacities(queues: 4, buffersPerQueue: 8, commands: 64, outputChannels: 2, inputChannels: 4, captureFrames: 16384))
            let got = self.got
            let channels = Int(format.channelsPerFrame)
            let isFloat = format.formatFlags.contains(.isFloat)
            queue = try engine.newInput(format: format) { q, b, t, descriptions in
                let n = b.audioDataByteSize / Int(format.bytesPerFrame)
                var planes = [[Float]](repeating: [], count: channels)
                if isFloat {
                    let p = b.audioData.bindMemory(to: Float.self, capacity: n * channels)
                    for c in 0..<channels { planes[c] = (0..<n).map { p[$0 * channels + c] } }
                }
                let bytes = Array(UnsafeRawBufferPointer(start: b.audioData, count: b.audioDataByteSize))
                got.append(Got(time: t, planes: planes, bytes: bytes, packets: descriptions.count))
                if reenqueue { try? q.enqueue(b) }
            }
            for _ in 0..<count {
                let b = try queue.allocateBuffer(capacity: frames * Int(format.bytesPerFrame))
                try queue.enqueue(b)
                buffers.append(b)
            }
        }

        /// Renders `inputs` (planar, from the device's current frame) in cycles of `cycle`, then
        /// delivers on this thread.
        func feed(_ inputs: [[Float]], cycle: Int) {
            _ = device.render(frames: inputs.map(\.count).max() ?? 0, cycle: cycle, inputs: inputs)
            engine.deliverPendingEvents()
        }

        /// Renders `inputs` one cycle of `cycle` frames at a time, delivering after each (as the
        /// events thread would between cycles).
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

        /// Device frames of the non-zero samples of channel `c` over every buffer received.
        func impulses(channel c: Int) -> [Int64] {
            got.values.flatMap { g in g.planes[c].indices.filter { g.planes[c][$0] != 0 }.map { Int64(g.time.sampleTime) + Int64($0) } }
        }
    }

    /// Impulses at primes, on a cycle's first and last frame and across cycle boundaries appear
    /// in the callback's buffers at exactly the frames their start times say; nothing before
    /// the start time is recorded; buffers follow one another without a gap; the start time has
    /// both flags and the device's host time of that frame.
    @Test(arguments: [1, 64, 256, 331])
    func impulsesAppearWhereTheStartTimesSay(cycle: Int) throws {
        let rig = try Rig()
        let startFrame: Int64 = 1009
        #expect(try rig.queue.start(at: AudioTimeStamp(sampleTime: Double(startFrame))) == startFrame)
        let frames = 6000
        let left: [Int] = [1008, 1009, 1010, 1517, 2047, 2048, 2303, 4093, 5999]
        let right: [Int] = [997, 1024, 1535, 1536, 3001]
        var inputs = [[Float]](repeating: [Float](repeating: 0, count: frames), count: 2)
        for f in left { inputs[0][f] = 0.5 }
        for f in right { inputs[1][f] = -0.25 }
        rig.feedDelivering(inputs, cycle: cycle)
        let got = rig.got.values
        // 4991 frames recorded from 1009 on: nine full buffers of 509 frames so far.
        #expect(got.count == 4991 / 509)
        var expected = startFrame
        for g in got {
            #expect(Int64(g.time.sampleTime) == expected)
            #expect(g.time.flags.contains(.sampleTimeValid) && g.time.flags.contains(.hostTimeValid))
            #expect(g.time.hostTime == rig.device.hostTime(ofFrame: expected))
            #expect(g.planes[0].count == 509 && g.packets == 0)
            expected += Int64(g.planes[0].count)
        }
        let recordedEnd = expected
        #expect(rig.impulses(channel: 0) == left.map(Int64.init).filter { $0 >= startFrame && $0 < recordedEnd })
        #expect(rig.impulses(channel: 1) == right.map(Int64.init).filter { $0 >= startFrame && $0 < recordedEnd })
        #expect(rig.got.values.allSatisfy { g in g.planes[0].allSatisfy { $0 == 0 || $0 == 0.5 } })
        // Stopping now hands back the buffer in progress with the rest, up to frame 6000.
        try rig.queue.stop(immediately: true)
        let last = rig.got.values[got.count]
        #expect(Int64(last.time.sampleTime) == recordedEnd)
        #expect(Int64(last.planes[0].count) == Int64(frames) - recordedEnd)
        #expect(rig.impulses(channel: 0).last == 5999)
        #expect(rig.queue.lostFrames == 0)
    }

    /// Every format: the sample 0.5 (and −0.25) captured lands as the format's bytes.
    @Test(arguments: [
        (16, false, false, [0x00, 0x40, 0x00, 0xE0] as [UInt8]),
        (16, false, true, [0x40, 0x00, 0xE0, 0x00]),
        (24, false, false, [0x00, 0x00, 0x40, 0x00, 0x00, 0xE0]),
        (24, false, true, [0x40, 0x00, 0x00, 0xE0, 0x00, 0x00]),
        (32, false, false, [0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0xE0]),
        (32, false, true, [0x40, 0x00, 0x00, 0x00, 0xE0, 0x00, 0x00, 0x00]),
        (32, true, false, [0x00, 0x00, 0x00, 0x3F, 0x00, 0x00, 0x80, 0xBE]),
        (32, true, true, [0x3F, 0x00, 0x00, 0x00, 0xBE, 0x80, 0x00, 0x00]),
    ])
    func everyFormatEncodes(bits: Int, isFloat: Bool, bigEndian: Bool, expected: [UInt8]) throws {
        let format = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 2, bits: UInt32(bits), isFloat: isFloat, bigEndian: bigEndian)
        let rig = try Rig(format: format, count: 1, frames: 8, reenqueue: false)
        try rig.queue.start()
        var inputs = [[Float]](repeating: [Float](repeating: 0, count: 8), count: 2)
        inputs[0][3] = 0.5
        inputs[1][3] = -0.25
        rig.feed(inputs, cycle: 8)
        let g = try #require(rig.got.values.first)
        let bpf = bits / 8 * 2
        #expect(g.bytes.count == 8 * bpf)
        #expect(Array(g.bytes[(3 * bpf)..<(4 * bpf)]) == expected)
        #expect(g.bytes[0..<(3 * bpf)].allSatisfy { $0 == 0 })
    }

    /// No buffer enqueued: the frames are lost, counted, and the next buffer's start time jumps
    /// over them (a discontinuity); never a hang.
    @Test func starvationIsCountedAndVisible() throws {
        let rig = try Rig(count: 2, frames: 100, reenqueue: false)
        try rig.queue.start()
        rig.feed([[Float](repeating: 0, count: 1000)], cycle: 64)
        #expect(rig.got.values.map { Int64($0.time.sampleTime) } == [0, 100])
        #expect(rig.queue.lostFrames == 800)
        #expect(rig.queue.discontinuityCount == 1)
        try rig.queue.enqueue(rig.buffers[0])
        var x = [Float](repeating: 0, count: 100)
        x[0] = 1
        rig.feed([x], cycle: 100)
        let g = try #require(rig.got.values.last)
        #expect(Int64(g.time.sampleTime) == 1000)
        #expect(g.planes[0][0] == 1)
        #expect(rig.queue.lostFrames == 800)
    }

    /// A reader later than the capture ring holds loses the oldest frames, counted; what it
    /// records is at its frames.
    @Test func aQueueBehindTheRingLosesFramesCounted() throws {
        let rig = try Rig(count: 2, frames: 40000, reenqueue: false)
        try rig.queue.start()
        var ramp = [Float](repeating: 0, count: 20000)
        for i in 0..<ramp.count { ramp[i] = Float(i + 1) }
        rig.feed([ramp], cycle: 256)  // 20000 frames: the ring keeps 16384
        try rig.queue.stop(immediately: true)
        let g = try #require(rig.got.values.first)
        #expect(Int64(g.time.sampleTime) == 20000 - 16384)
        #expect(g.planes[0].first == Float(20000 - 16384 + 1))
        #expect(g.planes[0].count == 16384)
        #expect(rig.queue.lostFrames == 20000 - 16384)
    }

    /// Paused frames are not recorded; the buffer in progress is handed back at the resumption,
    /// so that each buffer's frames are consecutive device frames; the next buffer starts at
    /// the resumption frame.
    @Test func pauseAndResume() throws {
        let rig = try Rig(count: 3, frames: 1000, reenqueue: false)
        try rig.queue.start()
        func ramp(_ from: Int, _ n: Int) -> [[Float]] { [(0..<n).map { Float(from + $0 + 1) }] }
        rig.feed(ramp(0, 300), cycle: 128)
        try rig.queue.pause()
        #expect(rig.queue.isRunning)
        rig.feed(ramp(300, 200), cycle: 128)
        #expect(try rig.queue.start() == 500)
        rig.feed(ramp(500, 300), cycle: 128)
        try rig.queue.stop(immediately: true)
        let got = rig.got.values
        #expect(got.count == 3)
        #expect(got.map { Int64($0.time.sampleTime) } == [0, 500, 800])
        #expect(got[0].planes[0] == (0..<300).map { Float($0 + 1) })
        #expect(got[1].planes[0] == (500..<800).map { Float($0 + 1) })
        #expect(got[2].planes[0].isEmpty, "the third buffer comes back empty")
        #expect(!rig.queue.isRunning)
    }

    /// An immediate stop is synchronous: the buffer in progress and the others come back on
    /// this thread before it returns, and the IsRunning listener hears it. A stop after the
    /// buffer in progress keeps recording until that buffer is full.
    @Test func stopBothWays() throws {
        let rig = try Rig(count: 2, frames: 256, reenqueue: false)
        let heard = Recorder<Bool>()
        _ = try rig.queue.addPropertyListener(.isRunning) { q, _ in heard.append(q.isRunning) }
        try rig.queue.start()
        #expect(heard.values == [true])
        rig.feed([[Float](repeating: 0.125, count: 100)], cycle: 64)
        try rig.queue.stop(immediately: false)
        #expect(rig.queue.isRunning && rig.got.values.isEmpty)
        rig.feed([[Float](repeating: 0.125, count: 200)], cycle: 64)
        #expect(!rig.queue.isRunning)
        #expect(heard.values == [true, false])
        #expect(rig.got.values.map { $0.planes[0].count } == [256, 0])
        #expect(rig.got.values.map { Int64($0.time.sampleTime) } == [0, 256])
        // Immediately, from a new start: synchronous, the partial buffer first.
        try rig.queue.enqueue(rig.buffers[0])
        try rig.queue.enqueue(rig.buffers[1])
        try rig.queue.start()
        _ = rig.device.render(frames: 70, cycle: 70, inputs: [[Float](repeating: 0.5, count: 70)])
        try rig.queue.stop(immediately: true)
        #expect(!rig.queue.isRunning)
        #expect(rig.got.values.suffix(2).map { $0.planes[0].count } == [70, 0])
        #expect(Int64(rig.got.values.suffix(2).first!.time.sampleTime) == 300)
        #expect(heard.values == [true, false, true, false])
    }

    /// Reset hands every buffer back empty and recording goes on; flush hands back the buffer
    /// in progress with what it holds.
    @Test func resetAndFlush() throws {
        let rig = try Rig(count: 2, frames: 500, reenqueue: false)
        try rig.queue.start()
        rig.feed([[Float](repeating: 0.5, count: 100)], cycle: 50)
        try rig.queue.reset()
        #expect(rig.got.values.map { $0.planes[0].count } == [0, 0])
        #expect(rig.queue.isRunning)
        try rig.queue.enqueue(rig.buffers[0])
        rig.feed([[Float](repeating: 0.5, count: 100)], cycle: 50)
        try rig.queue.flush()
        let g = try #require(rig.got.values.last)
        #expect(Int64(g.time.sampleTime) == 100 && g.planes[0].count == 100)
    }

    /// Calls that belong to playback queues are `InvalidQueueType` (-66677) on a recording queue.
    @Test func invalidQueueType() throws {
        let rig = try Rig()
        #expect(throws: AudioQueueError.self) { _ = try rig.queue.prime() }
        do { _ = try rig.queue.prime() } catch { #expect(error.code == .invalidQueueType && error.status == -66677) }
        do { try rig.queue.setParameter(.volume, 0.5) } catch { #expect(error.code == .invalidQueueType) }
        do {
            _ = try rig.queue.enqueue(rig.buffers[0], trimFramesAtStart: 0, trimFramesAtEnd: 0, parameterEvents: [], startTime: nil)
            Issue.record("enqueue with parameters on an input queue succeeded")
        } catch { #expect(error.code == .invalidQueueType) }
    }

    /// Level metering of what comes in: peak and RMS per channel of the latest frames read.
    @Test func metering() throws {
        let rig = try Rig(count: 2, frames: 1024, reenqueue: true)
        do { _ = try rig.queue.currentLevelMeter(); Issue.record("meter read with metering off") } catch { #expect(error.code == .invalidProperty) }
        try rig.queue.setLevelMetering(true)
        try rig.queue.start()
        let n = 512
        rig.feed([[Float](repeating: 0.5, count: n), (0..<n).map { $0 % 2 == 0 ? 0.25 : -0.25 }], cycle: 128)
        let m = try rig.queue.currentLevelMeter()
        #expect(m.count == 2)
        #expect(m[0].peakPower == 0.5 && abs(m[0].averagePower - 0.5) < 1e-6)
        #expect(m[1].peakPower == 0.25 && abs(m[1].averagePower - 0.25) < 1e-6)
    }

    /// After dispose the handle is stale: every call is `invalidQueue`, no callback runs again.
    @Test func staleHandleAfterDispose() throws {
        let rig = try Rig(count: 2, frames: 64)
        try rig.queue.start()
        rig.feed([[Float](repeating: 0.5, count: 64)], cycle: 64)
        let before = rig.got.values.count
        #expect(before == 1)
        try rig.queue.dispose(immediately: true)
        #expect(!rig.queue.isRunning)
        rig.feed([[Float](repeating: 0.5, count: 640)], cycle: 64)
        #expect(rig.got.values.count == before)
        func expectStale(_ call: () throws -> Void) {
            do { try call(); Issue.record("a call through a stale handle succeeded") } catch {
                #expect((error as? AudioQueueError)?.code == .invalidQueue)
            }
        }
        expectStale { _ = try rig.queue.allocateBuffer(capacity: 64) }
        expectStale { try rig.queue.start() }
        expectStale { try rig.queue.stop(immediately: true) }
        expectStale { try rig.queue.enqueue(rig.buffers[1]) }
        expectStale { try rig.queue.dispose(immediately: true) }
    }

    /// A queue at 44.1 kHz on a 48 kHz device: the converted buffers follow one another
    /// exactly (each start time is the previous one plus its frames × 48000/44100), the first
    /// is the start frame, every impulse peaks at round((d − start) × 44100/48000) ± 1 (the
    /// converter's contract), and an immediate stop delivers exactly the converted length of
    /// what was captured (the filter's tail included).
    @Test(arguments: [64, 256, 331])
    func anotherRateKeepsExactTimes(cycle: Int) throws {
        let format = AudioStreamBasicDescription.linearPCM(sampleRate: 44100, channels: 1, bits: 32, isFloat: true)
        let rig = try Rig(format: format, count: 4, frames: 441, reenqueue: true, inputs: 1)
        let start: Int64 = 1000
        #expect(try rig.queue.start(at: AudioTimeStamp(sampleTime: Double(start))) == start)
        let frames = 12000
        let impulses = [3000, 4801, 9973]
        var x = [Float](repeating: 0, count: frames)
        for d in impulses { x[d] = 0.5 }
        rig.feedDelivering([x], cycle: cycle)
        try rig.queue.stop(immediately: true)
        // Buffers handed back empty by the stop carry the device frame it stopped at.
        let got = rig.got.values.filter { !$0.planes[0].isEmpty }
        #expect(rig.got.values.count - got.count == 3)
        let ratio = 48000.0 / 44100.0
        #expect(got.first?.time.sampleTime == Double(start))
        for (a, b) in zip(got, got.dropFirst()) {
            #expect(abs(b.time.sampleTime - (a.time.sampleTime + Double(a.planes[0].count) * ratio)) < 1e-6)
        }
        let all = got.flatMap { $0.planes[0] }
        #expect(all.count == 10106, "round(11000 × 44100 / 48000) frames")
        #expect(rig.queue.lostFrames == 0)
        for d in impulses {
            let expected = Int((Double(d - Int(start)) / ratio).rounded())
            let window = (expected - 20)..<(expected + 20)
            let peak = window.max { abs(all[$0]) < abs(all[$1]) }!
            #expect(abs(peak - expected) <= 1, "impulse at device frame \(d): peak at queue frame \(peak), expected \(expected)")
        }
    }

    /// Formats an input queue cannot record are refused.
    @Test func unsupportedFormats() throws {
        let device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: 2)
        let engine = try AudioQueueEngine(device: device)
        for f in [
            AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 3, bits: 16),
            AudioStreamBasicDescription.linearPCM(sampleRate: 500, channels: 2, bits: 16),
            AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 2, bits: 8),
        ] {
            do { _ = try engine.newInput(format: f) { _, _, _, _ in }; Issue.record("accepted \(f)") } catch {
                #expect(error.code == .unsupportedDataFormat)
            }
        }
        #expect(try engine.newInput(format: .linearPCM(sampleRate: 48000, channels: 2, bits: 24)) { _, _, _, _ in }.format.channelsPerFrame == 2)
    }
}

/// A recording queue's own time (`AudioQueueGetCurrentTime`), as a playback queue's: queue
/// frames since the start, not advancing while paused, 0 while stopped; at another rate scaled
/// by it; a timeline reports a discontinuity once.
@Suite struct InputQueueTimeTests {
    @Test func queueTimeAndPause() throws {
        let device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: 2)
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let q = try engine.newInput(format: .linearPCM(sampleRate: 24000, channels: 2, bits: 16)) { _, _, _, _ in }
        for _ in 0..<4 { try q.enqueue(try q.allocateBuffer(capacity: 40_000)) }
        #expect(q.currentTime().time.sampleTime == 0)
        _ = device.render(frames: 1000, cycle: 500)
        _ = try q.start(at: AudioTimeStamp(sampleTime: 2000))
        #expect(q.currentTime().time.sampleTime == 0)  // the start frame is not reached yet
        _ = device.render(frames: 5000, cycle: 500)  // device frames 1000..<6000: 4000 since the start
        #expect(q.currentTime().time.sampleTime == 2000)  // at half the device's rate
        try q.pause()
        _ = device.render(frames: 5000, cycle: 500)
        engine.deliverPendingEvents()
        #expect(q.currentTime().time.sampleTime == 2000)
        _ = try q.start()
        _ = device.render(frames: 1000, cycle: 500)
        #expect(q.currentTime().time.sampleTime == 2500)
        let tl = q.createTimeline()
        #expect(!q.currentTime(timeline: tl).discontinuity)
        device.skip(frames: 100)
        #expect(q.currentTime(timeline: tl).discontinuity)
        #expect(!q.currentTime(timeline: tl).discontinuity)
        try q.stop(immediately: true)
        #expect(q.currentTime().time.sampleTime == 0)
        try q.dispose(immediately: true)
        #expect(q.currentTime().time.sampleTime == 0)
    }
}
