import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// `kAudioQueueParam_Pan` and `kAudioQueueParam_VolumeRampTime` (issue 22) on the hand-driven
/// device: every sample the exact value of the documented law (docs/c-api.md, "Pan and volume
/// ramps"), computed here from the law itself, not from the engine's code.
@Suite struct PanAndRampTests {
    /// A buffer of `frames` frames holding `values[c]` on channel c (int16: 16384 is 0.5 exactly).
    func constant(_ q: AudioQueue, frames: Int, values: [Int16]) throws -> AudioQueueBuffer {
        let b = try q.allocateBuffer(capacity: frames * 2 * values.count)
        let p = b.audioData.bindMemory(to: Int16.self, capacity: frames * values.count)
        for i in 0..<frames { for (c, v) in values.enumerated() { p[i * values.count + c] = v } }
        b.audioDataByteSize = frames * 2 * values.count
        return b
    }

    /// The mono law: equal power, unity at the centre; exactly 0 and √2 at the hard positions.
    static func monoLaw(_ p: Float) -> (Float, Float) {
        if p == -1 { return (Float(2.0.squareRoot()), 0) }
        if p == 1 { return (0, Float(2.0.squareRoot())) }
        if p == 0 { return (1, 1) }
        let theta = (Double(p) + 1) * Double.pi / 4
        return (Float(2.0.squareRoot() * cos(theta)), Float(2.0.squareRoot() * sin(theta)))
    }

    /// A mono queue on a stereo device: left = 0.5 × √2 cos θ, right = 0.5 × √2 sin θ.
    @Test(arguments: [Float(-1), -0.5, 0, 0.3, 1])
    func monoPanIsEqualPowerWithUnityCentre(pan: Float) throws {
        let (engine, device) = try manualEngine(channels: 2)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try q.setParameter(.pan, pan)
        #expect(q.parameter(.pan) == pan)
        try q.enqueue(try constant(q, frames: 1000, values: [16384]))
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        let out = device.render(frames: 1000, cycle: 256)
        let (l, r) = Self.monoLaw(pan)
        #expect(out[0].allSatisfy { $0 == 0.5 * l }, "left \(out[0][0]), law \(0.5 * l)")
        #expect(out[1].allSatisfy { $0 == 0.5 * r }, "right \(out[1][0]), law \(0.5 * r)")
        // Equal power: left² + right² is the centre's, 2 × 0.5².
        #expect(abs(out[0][0] * out[0][0] + out[1][0] * out[1][0] - 0.5) < 1e-6)
    }

    /// A stereo queue: balance. The far side fades linearly, the near side stays; the volume
    /// multiplies with it (gain × factor first, then the sample).
    @Test func stereoPanIsBalance() throws {
        let (engine, device) = try manualEngine(channels: 2)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        try q.setParameter(.volume, 0.5)  // stopped: at once
        try q.setParameter(.pan, 0.5)
        try q.enqueue(try constant(q, frames: 2048, values: [16384, 8192]))  // 0.5, 0.25
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        var out = device.render(frames: 512, cycle: 256)
        #expect(out[0].allSatisfy { $0 == 0.5 * (0.5 * 0.5) }, "left \(out[0][0])")  // far side: 1 − 0.5
        #expect(out[1].allSatisfy { $0 == 0.25 * (0.5 * 1) }, "right \(out[1][0])")
        // Panned the other way while it plays: from the first frame of the next cycle.
        try q.setParameter(.pan, -0.25)
        out = device.render(frames: 512, cycle: 256)
        #expect(out[0].allSatisfy { $0 == 0.5 * (0.5 * 1) }, "left \(out[0][0])")
        #expect(out[1].allSatisfy { $0 == 0.25 * (0.5 * 0.75) }, "right \(out[1][0])")
        // Back to the centre: exactly the unpanned mix.
        try q.setParameter(.pan, 0)
        out = device.render(frames: 512, cycle: 256)
        #expect(out[0].allSatisfy { $0 == 0.5 * 0.5 } && out[1].allSatisfy { $0 == 0.25 * 0.5 })
    }

    /// A source of more than two channels is not panned (Apple: "no effect").
    @Test func multichannelIsNotPanned() throws {
        let (engine, device) = try manualEngine(channels: 4)
        defer { engine.close() }
        let q = try engine.newOutput(format: .linearPCM(sampleRate: 48000, channels: 4, bits: 16)) { _, _ in }
        try q.setParameter(.pan, -1)
        try q.enqueue(try constant(q, frames: 300, values: [16384, 8192, 4096, 2048]))
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        let out = device.render(frames: 300, cycle: 100)
        for (c, v) in [Float(0.5), 0.25, 0.125, 0.0625].enumerated() { #expect(out[c].allSatisfy { $0 == v }, "channel \(c)") }
    }

    /// VolumeRampTime 0.1 s at 48 kHz: a volume change ramps over exactly 4800 frames, from the
    /// first frame of the cycle that applies it (which plays the old gain) to exactly the new
    /// gain on frame 4800 of the ramp. Each cycle's gain is recomputed from the ramp's start:
    /// frame k of the ramp, in the cycle starting at ramp frame c, has g(c) + step × (k − c),
    /// with g(c) = from + step × c and step = (to − from) / 4800, never past the target, and
    /// exactly `to` from frame 4800 on. Down and up, with cycles that do and do not divide it.
    @Test(arguments: [64, 256, 1000], [(Float(1), Float(0.2)), (1, 0.3), (1, 0.7), (0.1, 0.9), (0.25, 0.6)])
    func volumeRampTimeEndsOnItsFrame(cycle: Int, ramp: (from: Float, to: Float)) throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try q.setParameter(.volumeRampTime, 0.1)
        #expect(q.parameter(.volumeRampTime) == 0.1)
        try q.setParameter(.volume, ramp.from)  // stopped: at once
        try q.enqueue(try constant(q, frames: 12000, values: [16384]))
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        let before = device.render(frames: cycle * 2, cycle: cycle)[0]
        #expect(before.allSatisfy { $0 == 0.5 * ramp.from })
        try q.setParameter(.volume, ramp.to)
        let out = device.render(frames: 6000, cycle: cycle)[0]
        let rampFrames = 4800
        let (from, to) = ramp
        let step = (to - from) / Float(rampFrames)
        func limited(_ v: Float) -> Float { step > 0 ? min(v, to) : max(v, to) }
        var expected: [Float] = []
        var c = 0
        while expected.count < out.count {
            let g = c == 0 ? from : limited(from + step * Float(c))
            for k in 0..<min(cycle, out.count - expected.count) {
                expected.append(0.5 * (c + k >= rampFrames ? to : limited(g + step * Float(k))))
            }
            c += cycle
        }
        let first = out.indices.first { out[$0] != expected[$0] }
        #expect(first == nil, "frame \(first ?? -1): \(first.map { out[$0] } ?? 0), law \(first.map { expected[$0] } ?? 0)")
        #expect(out[0] == 0.5 * from, "the first frame of the ramp plays the old gain")
        #expect(out[rampFrames - 1] != 0.5 * to, "still ramping on frame 4799")
        #expect(out[rampFrames...].allSatisfy { $0 == 0.5 * to }, "exactly the target from frame 4800 on")
        // The ideal line, to within rounding: the law is linear from the old gain to the new.
        for k in stride(from: 0, to: rampFrames, by: 97) {
            #expect(abs(out[k] - 0.5 * (from + (to - from) * Float(k) / Float(rampFrames))) < 1e-5, "frame \(k)")
        }
        #expect(q.parameter(.volume) == to)
    }

    /// Without VolumeRampTime (0, the default) a change ramps over the engine's 5 ms: exactly
    /// the target 240 frames after the cycle that applied it.
    @Test func defaultRampIsFiveMilliseconds() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        #expect(q.parameter(.volumeRampTime) == 0)
        try q.enqueue(try constant(q, frames: 4000, values: [16384]))
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        _ = device.render(frames: 256, cycle: 256)
        try q.setParameter(.volume, 0)
        let out = device.render(frames: 1024, cycle: 128)[0]
        #expect(out[0] == 0.5 && out[239] > 0 && out[240] == 0 && out[240...].allSatisfy { $0 == 0 })
    }

    /// Out-of-range values and buffer events other than Volume are kAudioQueueErr_InvalidParameter.
    @Test func badValuesAreRefused() throws {
        let (engine, _) = try manualEngine(channels: 2)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        for (id, v) in [(AudioQueueParameterID.pan, Float(1.5)), (.pan, -1.01), (.pan, .nan), (.volumeRampTime, -1), (.volumeRampTime, .infinity), (.volumeRampTime, 3601)] {
            #expect(throws: AudioQueueError.self) { try q.setParameter(id, v) }
            do { try q.setParameter(id, v) } catch { #expect(error.code == .invalidParameter) }
        }
        #expect(q.parameter(.pan) == 0 && q.parameter(.volumeRampTime) == 0)
        let b = try constant(q, frames: 100, values: [0])
        do {
            try q.enqueue(b, parameterEvents: [AudioQueueParameterEvent(.pan, 0.5)])
            Issue.record("a pan event was taken")
        } catch { #expect(error.code == .invalidParameter) }
    }
}
