import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

@Suite struct SchedulingTests {
    /// Buffers with start times at awkward queue frames, trims, and a start at a prime device
    /// frame: every impulse on its exact frame, through the engine's public API.
    @Test(arguments: [64, 256, 1000])
    func impulsesAtExactFrames(cycle: Int) throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let a = try q.allocateBuffer(capacity: 2000)
        fillMono16(a, frames: 1000, impulses: [0, 13, 999])
        let b = try q.allocateBuffer(capacity: 2000)
        fillMono16(b, frames: 1000, impulses: [5, 100, 900])
        let c = try q.allocateBuffer(capacity: 2000)
        fillMono16(c, frames: 1000, impulses: [0])
        #expect(try q.enqueue(a).sampleTime == 0)
        // b: trim 5 at the start (its impulse at 5 is the first played frame), start at 2003.
        let t = try q.enqueue(b, trimFramesAtStart: 5, trimFramesAtEnd: 50, startTime: AudioTimeStamp(sampleTime: 2003))
        #expect(t.sampleTime == 2003)
        // c right after b: b plays 945 frames.
        #expect(try q.enqueue(c).sampleTime == 2003 + 945)
        try q.start(at: AudioTimeStamp(sampleTime: 7919))
        let out = device.render(frames: 12_000, cycle: cycle)[0]
        let expected = [0, 13, 999, 2003, 2003 + 95, 2003 + 895, 2003 + 945].map { 7919 + $0 }
        #expect(nonZero(out) == expected)
        #expect(abs(out[7919] - 0.5) < 1e-6)
    }

    /// Several queues started together land on one frame; the group start returns it.
    @Test func groupStartOnOneFrame() throws {
        let (engine, device) = try manualEngine(channels: 4)
        defer { engine.close() }
        var queues: [AudioQueue] = []
        for i in 0..<4 {
            let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
            try q.setOutputChannels([i])
            let b = try q.allocateBuffer(capacity: 200)
            fillMono16(b, frames: 100, impulses: [i * 10])
            try q.enqueue(b)
            queues.append(q)
        }
        _ = device.render(frames: 300, cycle: 100)
        let frame = try engine.start(queues, at: AudioTimeStamp(sampleTime: 1234))
        #expect(frame == 1234)
        let out = device.render(frames: 2000, cycle: 128)
        for i in 0..<4 { #expect(nonZero(out[i]) == [1234 - 300 + i * 10]) }
        #expect(delivered(engine) { queues.allSatisfy { $0.startDeviceFrame == 1234 } })
    }

    /// A start time already past when asked is moved to the nearest start time.
    @Test func nearestStartTimeNeverEarlierThanAsked() throws {
        let (engine, device) = try manualEngine()
        defer { engine.close() }
        _ = device.render(frames: 512, cycle: 256)
        #expect(engine.nearestStartTime().sampleTime == 512)
        #expect(engine.nearestStartTime(AudioTimeStamp(sampleTime: 100)).sampleTime == 512)
        #expect(engine.nearestStartTime(AudioTimeStamp(sampleTime: 9999.2)).sampleTime == 10000)
        let ts = engine.nearestStartTime(AudioTimeStamp(sampleTime: 4800))
        #expect(ts.flags.contains(.hostTimeValid))
        #expect(abs(Int64(ts.hostTime) - Int64(device.hostTime(ofFrame: 4800))) <= 1)
    }

    /// Per-buffer volume takes effect on the buffer's first frame and is then the current value.
    @Test func volume() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let a = try q.allocateBuffer(capacity: 400)
        fillMono16(a, frames: 200, impulses: Array(0..<200))
        let b = try q.allocateBuffer(capacity: 400)
        fillMono16(b, frames: 200, impulses: Array(0..<200))
        try q.enqueue(a)
        try q.enqueue(b, parameterEvents: [AudioQueueParameterEvent(.volume, 0.5)])
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        let out = device.render(frames: 400, cycle: 64)[0]
        #expect(out[199] == 0.5)
        #expect(out[200] == 0.25)
        #expect(q.parameter(.volume) == 0.5, "the buffer's volume event is the value in force")
        try q.setParameter(.volume, 0)
        #expect(q.parameter(.volume) == 0)
    }

    /// A queue at 44.1 kHz on a 48 kHz device: queue frame q plays at round(q × 48000/44100),
    /// within a frame, and the total length is kept.
    @Test func rateConversionKeepsTime() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let fmt = AudioStreamBasicDescription.linearPCM(sampleRate: 44100, channels: 1, bits: 16)
        let q = try engine.newOutput(format: fmt) { _, _ in }
        let impulses = [1000, 5000, 20000]
        for k in 0..<6 {
            let b = try q.allocateBuffer(capacity: 8820)
            fillMono16(b, frames: 4410, impulses: impulses.filter { $0 / 4410 == k }.map { $0 % 4410 }, value: 32767)
            try q.enqueue(b)
        }
        try q.flush()
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        let out = device.render(frames: 30000, cycle: 256)[0]
        for i in impulses {
            let want = Int((Double(i) * 48000 / 44100).rounded())
            let window = (want - 20)...(want + 20)
            let peak = window.max { abs(out[$0]) < abs(out[$1]) }!
            #expect(abs(peak - want) <= 1, "impulse \(i) peaked at \(peak), want \(want)")
        }
    }
}
