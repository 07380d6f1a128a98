import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// Latency compensation on the hand-driven device (issue 11): an input queue's time stamps are
/// capture times, the device frame a sound reached the inputs at minus the device's capture
/// latency; the host time is that of the same (earlier) frame. Deterministic: the test renders
/// the cycles and delivers the events on its own thread.
@Suite struct InputLatencyTests {
    static let mono = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 1, bits: 32, isFloat: true)

    /// One buffer the callback received: its time stamp and its samples.
    struct Got: @unchecked Sendable {
        var time: AudioTimeStamp
        var samples: [Float]
    }

    /// A mono input queue on a hand-driven device whose capture latency is `capture`, with
    /// `count` buffers of `frames` frames re-enqueued by the callback.
    final class Rig {
        let device = ManualDevice(sampleRate: 48000, channels: 1, inputChannels: 1)
        let engine: AudioQueueEngine
        let queue: AudioInputQueue
        let got = Recorder<Got>()

        init(capture: Int, playback: Int = 0, format: AudioStreamBasicDescription = InputLatencyTests.mono, frames: Int = 500) throws {
            device.latency = DeviceLatency(capture: capture, playback: playback)
            engine = try AudioQueueEngine(device: device, capacities: RenderCapacities(queues: 2, buffersPerQueue: 8, commands: 64, outputChannels: 1, inputChannels: 1, captureFrames: 16384))
            let got = self.got
            let channels = Int(format.channelsPerFrame)
            queue = try engine.newInput(format: format) { q, b, t, _ in
                let n = b.audioDataByteSize / Int(format.bytesPerFrame)
                let p = b.audioData.bindMemory(to: Float.self, capacity: max(n * channels, 1))
                got.append(Got(time: t, samples: (0..<n).map { p[$0 * channels] }))
                try? q.enqueue(b)
            }
            for _ in 0..<4 { try queue.enqueue(try queue.allocateBuffer(capacity: frames * Int(format.bytesPerFrame))) }
        }

        /// Renders `samples` (captured from the device's current frame on) in cycles of 256,
        /// delivering after each cycle as the events thread would.
        func feed(_ samples: [Float]) {
            var done = 0
            while done < samples.count {
                let n = min(256, samples.count - done)
                _ = device.render(frames: n, cycle: n, inputs: [Array(samples[done..<(done + n)])])
                engine.deliverPendingEvents()
                done += n
            }
        }

        /// The time stamps (start sample + index) of the non-zero samples received.
        var impulses: [Int64] {
            got.values.flatMap { g in g.samples.indices.filter { g.samples[$0] != 0 }.map { Int64(g.time.sampleTime) + Int64($0) } }
        }
    }

    /// An impulse that reaches the inputs at device frame d is stamped d − L: start sample +
    /// index == d − L for every impulse, across buffer and cycle boundaries; the host time is
    /// the device's host time of the (earlier) start frame, even before device frame 0.
    @Test(arguments: [0, 1, 300, 1009])
    func impulsesAreStampedAtTheirCaptureTime(capture: Int) throws {
        let rig = try Rig(capture: capture)
        _ = try rig.queue.start(at: AudioTimeStamp(sampleTime: 0))
        let arrivals = [0, 1, 255, 256, 499, 500, 777, 2047]
        var samples = [Float](repeating: 0, count: 3000)
        for d in arrivals { samples[d] = 1 }
        rig.feed(samples)
        #expect(rig.impulses == arrivals.map { Int64($0 - capture) })
        let values = rig.got.values
        try #require(values.count >= 5)
        #expect(values.first?.time.sampleTime == Double(-capture))
        for g in values {
            #expect(g.time.flags.contains(.sampleTimeValid) && g.time.flags.contains(.hostTimeValid))
            #expect(g.time.hostTime == rig.device.hostTime(ofFrame: Int64(g.time.sampleTime)))
        }
        // The host time of frame d − L is L frames before that of d, to the nanosecond's rounding.
        let first = values[0].time.hostTime
        let arrivalHost = rig.device.hostTime(ofFrame: 0)
        #expect(Int64(bitPattern: arrivalHost &- first) == Int64((Double(capture) * 1e9 / 48000).rounded()))
    }

    /// A queue at another rate: its (fractional) start times are those of the device-rate queue
    /// minus L exactly, buffer for buffer; host times move with them.
    @Test func anotherRateShiftsByTheCaptureLatency() throws {
        let q44 = AudioStreamBasicDescription.linearPCM(sampleRate: 44100, channels: 1, bits: 32, isFloat: true)
        var samples = [Float](repeating: 0, count: 4000)
        for d in [100, 1500, 3001] { samples[d] = 1 }
        let plain = try Rig(capture: 0, format: q44, frames: 441)
        let late = try Rig(capture: 300, format: q44, frames: 441)
        for rig in [plain, late] {
            _ = try rig.queue.start(at: AudioTimeStamp(sampleTime: 0))
            rig.feed(samples)
        }
        let a = plain.got.values.map(\.time), b = late.got.values.map(\.time)
        try #require(a.count >= 3 && a.count == b.count)
        for (x, y) in zip(a, b) {
            #expect(x.sampleTime - y.sampleTime == 300)
            // (each device has its own host time origin)
            let hx = Int64(bitPattern: x.hostTime &- plain.device.hostTimeOrigin)
            let hy = Int64(bitPattern: y.hostTime &- late.device.hostTimeOrigin)
            #expect(hx - hy == Int64((300 * 1e9 / 48000.0).rounded()))
        }
        // The samples are the same: only the time stamps move.
        #expect(plain.got.values.map(\.samples) == late.got.values.map(\.samples))
    }

    /// The latency is read when a buffer is handed back: a change applies from the next buffer
    /// handed back on, and each buffer's frames stay consecutive in arrival time.
    @Test func aChangeAppliesFromTheNextBufferHandedBack() throws {
        let rig = try Rig(capture: 0)
        _ = try rig.queue.start(at: AudioTimeStamp(sampleTime: 0))
        rig.feed([Float](repeating: 0, count: 512))  // buffer 1 (0…499) handed back
        #expect(rig.got.values.map(\.time.sampleTime) == [0])
        rig.device.latency = DeviceLatency(capture: 300)
        rig.feed([Float](repeating: 0, count: 512))  // buffer 2 (500…999) handed back
        rig.device.latency = DeviceLatency(capture: 64)
        rig.feed([Float](repeating: 0, count: 512))  // buffer 3 (1000…1499) handed back
        #expect(rig.got.values.map(\.time.sampleTime) == [0, 500 - 300, 1000 - 64])
    }

    /// The engine shows the device's latencies (playback: what a performer hears is that many
    /// frames late) and follows changes.
    @Test func engineShowsTheDeviceLatency() throws {
        let rig = try Rig(capture: 12, playback: 345)
        #expect(rig.engine.latency == DeviceLatency(capture: 12, playback: 345))
        #expect(rig.engine.device.latency == rig.engine.latency)
        rig.device.latency = DeviceLatency(capture: 0, playback: 7)
        #expect(rig.engine.latency == DeviceLatency(capture: 0, playback: 7))
        #expect(ManualDevice().latency == DeviceLatency())
    }
}
