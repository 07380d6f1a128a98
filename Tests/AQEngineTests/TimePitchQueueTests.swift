import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// Time/pitch on output queues (issue 22): `PlayRate`, `Pitch`, the algorithms and the bypass
/// through the engine's API on the hand-driven device. Lengths are judged in device frames:
/// what the queue scheduled (exact by the stage's count) and the render cycle in which the
/// queue stopped after its last frame (within one period, 256 frames); frequencies by zero
/// crossings over the middle half of the output.
@Suite struct TimePitchQueueTests {
    static let rate = 48000.0
    static let period = 256

    /// A mono 16-bit queue on a manual engine with room for 128 buffers.
    static func makeQueue() throws -> (AudioQueueEngine, ManualDevice, AudioQueue) {
        let (engine, device) = try manualEngine(
            channels: 1, capacities: RenderCapacities(queues: 4, buffersPerQueue: 128, commands: 1024, outputChannels: 8))
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        return (engine, device, q)
    }

    /// Enqueues `seconds` of a `hz` sine at 0.5 in 0.1 s buffers.
    static func enqueueTone(_ q: AudioQueue, hz: Double, seconds: Double) throws {
        let per = 4800
        let total = Int(seconds * rate)
        var i = 0
        while i < total {
            let n = min(per, total - i)
            let b = try q.allocateBuffer(capacity: n * 2)
            let p = b.audioData.bindMemory(to: Int16.self, capacity: n)
            for k in 0..<n { p[k] = Int16(16384 * sin(2 * Double.pi * hz * Double(i + k) / rate)) }
            b.audioDataByteSize = n * 2
            try q.enqueue(b)
            i += n
        }
    }

    /// Starts the queue, stops it after its buffers, and renders period by period until it
    /// stops: the output, the device frame the queue started at, and the end of the cycle in
    /// which it was seen stopped.
    static func play(_ engine: AudioQueueEngine, _ device: ManualDevice, _ q: AudioQueue, limit: Int) throws -> (out: [Float], start: Int64, stopCycleEnd: Int) {
        try q.start()
        try q.stop(immediately: false)
        var out: [Float] = []
        var stopped = -1
        while out.count < limit {
            out += device.render(frames: period, cycle: period)[0]
            engine.deliverPendingEvents()
            if out.count > period && !q.isRunning { stopped = out.count; break }
        }
        return (out, q.startDeviceFrame ?? -1, stopped)
    }

    /// The longest run of frames below 0.01 between `x`'s first and last frame above 0.1 (a
    /// 440 Hz sine at 0.5 has none longer than a few frames at its zero crossings).
    static func longestQuiet(_ x: [Float]) -> Int {
        guard let on = x.firstIndex(where: { abs($0) > 0.1 }), let off = x.lastIndex(where: { abs($0) > 0.1 }) else { return 0 }
        var longest = 0, run = 0
        for i in on...off {
            run = abs(x[i]) < 0.01 ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }

    /// Frequency by rising zero crossings over the middle half of `x`'s non-silent stretch.
    static func frequency(_ x: [Float]) -> Double {
        guard let on = x.firstIndex(where: { abs($0) > 0.1 }), let off = x.lastIndex(where: { abs($0) > 0.1 }) else { return 0 }
        let a = on + (off - on) / 4, b = off - (off - on) / 4
        var crossings: [Int] = []
        for i in (a + 1)...b where x[i - 1] < 0 && x[i] >= 0 { crossings.append(i) }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * rate / Double(last - first)
    }

    /// PlayRate 2: 10 s in 5 s; 0.5: in 20 s; the pitch stays 440 Hz.
    @Test(arguments: [(Float(2), 240_000), (0.5, 960_000)])
    func playRateChangesTheLength(playRate: Float, expected: Int) throws {
        let (engine, device, q) = try Self.makeQueue()
        defer { engine.close() }
        try q.setTimePitchEnabled(true)
        try q.setParameter(.playRate, playRate)
        #expect(q.parameter(.playRate) == playRate)
        try Self.enqueueTone(q, hz: 440, seconds: 10)
        try q.flush()
        #expect(q.enqueuedDeviceFrames == Int64(expected), "scheduled \(q.enqueuedDeviceFrames) device frames")
        let r = try Self.play(engine, device, q, limit: expected + 10 * Self.period)
        let played = r.stopCycleEnd - Int(r.start)
        #expect(played >= expected && played <= expected + Self.period, "played \(played) device frames, want \(expected) ± \(Self.period)")
        let hz = Self.frequency(r.out)
        print("TimePitchQueueTests: PlayRate \(playRate): 10 s played in \(played) device frames (stopped in the cycle ending there), \(hz) Hz, longest quiet \(Self.longestQuiet(r.out))")
        #expect(abs(hz - 440) < 0.005 * 440, "\(hz) Hz")
    }

    /// Pitch +1200 cents: 880 Hz at the same length.
    @Test func pitchDoublesTheFrequencyAtTheSameLength() throws {
        let (engine, device, q) = try Self.makeQueue()
        defer { engine.close() }
        try q.setTimePitchEnabled(true)
        try q.setParameter(.pitch, 1200)
        try Self.enqueueTone(q, hz: 440, seconds: 2)
        try q.flush()
        #expect(q.enqueuedDeviceFrames == 96_000)
        let r = try Self.play(engine, device, q, limit: 96_000 + 10 * Self.period)
        let played = r.stopCycleEnd - Int(r.start)
        #expect(played >= 96_000 && played <= 96_000 + Self.period, "played \(played)")
        let hz = Self.frequency(r.out)
        print("TimePitchQueueTests: Pitch +1200: 2 s played in \(played) device frames, \(hz) Hz")
        #expect(abs(hz - 880) < 0.005 * 880, "\(hz) Hz")
    }

    /// Varispeed at rate 2: 880 Hz and half the length.
    @Test func varispeedDoublesTheFrequencyAndHalvesTheLength() throws {
        let (engine, device, q) = try Self.makeQueue()
        defer { engine.close() }
        try q.setTimePitchEnabled(true)
        try q.setTimePitchAlgorithm(.varispeed)
        try q.setParameter(.playRate, 2)
        try Self.enqueueTone(q, hz: 440, seconds: 2)
        try q.flush()
        #expect(q.enqueuedDeviceFrames == 48_000)
        let r = try Self.play(engine, device, q, limit: 48_000 + 10 * Self.period)
        let played = r.stopCycleEnd - Int(r.start)
        #expect(played >= 48_000 && played <= 48_000 + Self.period, "played \(played)")
        let hz = Self.frequency(r.out)
        print("TimePitchQueueTests: Varispeed 2: 2 s played in \(played) device frames, \(hz) Hz")
        #expect(abs(hz - 880) < 0.005 * 880, "\(hz) Hz")
    }

    /// Bypassed (at PlayRate 2 and Pitch 700): every impulse on its exact frame, unchanged.
    @Test func bypassPlaysUnchanged() throws {
        let (engine, device, q) = try Self.makeQueue()
        defer { engine.close() }
        try q.setTimePitchEnabled(true)
        try q.setTimePitchBypassed(true)
        try q.setParameter(.playRate, 2)
        try q.setParameter(.pitch, 700)
        let a = try q.allocateBuffer(capacity: 2000)
        fillMono16(a, frames: 1000, impulses: [0, 13, 999])
        let b = try q.allocateBuffer(capacity: 2000)
        fillMono16(b, frames: 1000, impulses: [5, 500])
        #expect(try q.enqueue(a).sampleTime == 0)
        #expect(try q.enqueue(b, startTime: AudioTimeStamp(sampleTime: 3000)).sampleTime == 3000)
        try q.start(at: AudioTimeStamp(sampleTime: 1024))
        let out = device.render(frames: 8192, cycle: 256)[0]
        #expect(nonZero(out) == [0, 13, 999, 3005, 3500].map { 1024 + $0 })
        #expect(out[1024] == 0.5)
    }

    /// The queue's time runs at the play rate: 1 s of device frames at rate 2 is 2 s of queue
    /// frames; a start time after a gap is placed by the queue's time (rate 2: half as many
    /// device frames).
    @Test func currentTimeRunsAtThePlayRate() throws {
        let (engine, device, q) = try Self.makeQueue()
        defer { engine.close() }
        try q.setTimePitchEnabled(true)
        try q.setParameter(.playRate, 2)
        try Self.enqueueTone(q, hz: 440, seconds: 4)
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        _ = device.render(frames: 48_000, cycle: 256)
        #expect(delivered(engine) { q.startDeviceFrame == 0 })
        let t = q.currentTime().time.sampleTime
        print("TimePitchQueueTests: queue time \(t) after 48000 device frames at PlayRate 2")
        #expect(abs(t - 96_000) <= 2 * Double(Self.period), "queue time \(t) after 48000 device frames at rate 2")
    }

    /// Out-of-range values are kAudioQueueErr_InvalidParameter; the property rules.
    @Test func badValuesGiveTheDocumentedCodes() throws {
        let (engine, device, q) = try Self.makeQueue()
        defer { engine.close() }
        func code(_ body: () throws -> Void) -> AudioQueueError.Code? {
            do { try body(); return nil } catch let e as AudioQueueError { return e.code } catch { return nil }
        }
        for v in [Float(0.49), 2.01, .nan, .infinity, 0] { #expect(code { try q.setParameter(.playRate, v) } == .invalidParameter) }
        for v in [Float(-2401), 2401, .nan] { #expect(code { try q.setParameter(.pitch, v) } == .invalidParameter) }
        #expect(q.parameter(.playRate) == 1 && q.parameter(.pitch) == 0)
        // Accepted without time/pitch (kept, read back; plays at rate 1).
        try q.setParameter(rawID: 2, 1.5)
        #expect(q.parameter(.playRate) == 1.5)
        // Properties: sizes, values, defaults.
        func u32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        #expect(try q.property(0x715F_7470) == u32(0))
        #expect(try q.property(0x7174_7061) == u32(0x7370_6563))
        #expect(try q.property(0x7174_7062) == u32(0))
        #expect(code { try q.setProperty(0x715F_7470, [1]) } == .invalidPropertySize)
        #expect(code { try q.setProperty(0x7174_7061, u32(0x1234)) } == .invalidPropertyValue)
        try q.setProperty(0x7174_7061, u32(0x7469_646F))
        #expect(q.timePitchAlgorithm == .timeDomain)
        try q.setProperty(0x715F_7470, u32(1))
        #expect(q.isTimePitchEnabled)
        // A buffer's PlayRate event out of range; an unknown parameter event.
        let b = try q.allocateBuffer(capacity: 2000)
        fillMono16(b, frames: 1000, impulses: [0])
        #expect(code { try q.enqueue(b, parameterEvents: [AudioQueueParameterEvent(.playRate, 3)]) } == .invalidParameter)
        #expect(code { try q.enqueue(b, parameterEvents: [AudioQueueParameterEvent(rawParameter: 99, value: 1)]) } == .invalidParameter)
        // A valid PlayRate event on an enqueue refused for its start time changes nothing.
        #expect(code { try q.enqueue(b, parameterEvents: [AudioQueueParameterEvent(.playRate, 0.75)], startTime: AudioTimeStamp(sampleTime: .nan)) } == .invalidParameter)
        #expect(q.parameter(.playRate) == 1.5)
        // With a buffer enqueued and flushed before the start (a replay could not make the
        // flush again), and while running: kAudioQueueErr_InvalidRunState.
        try q.enqueue(b, parameterEvents: [AudioQueueParameterEvent(.playRate, 2)])
        #expect(q.parameter(.playRate) == 2)
        try q.flush()
        #expect(code { try q.setTimePitchEnabled(false) } == .invalidRunState)
        #expect(code { try q.setProperty(0x7174_7061, u32(0x7673_7064)) } == .invalidRunState)
        try q.start()
        _ = device.render(frames: 512, cycle: 256)
        #expect(code { try q.setTimePitchEnabled(false) } == .invalidRunState)
        // Bypass may change at any time.
        try q.setTimePitchBypassed(true)
        #expect(try q.property(0x7174_7062) == u32(1))
        // A recording queue has none of these.
        let inputEngine = try AudioQueueEngine(device: ManualDevice(channels: 1, inputChannels: 1))
        defer { inputEngine.close() }
        let input = try inputEngine.newInput(format: int16Mono48k) { _, _, _, _ in }
        #expect(code { _ = try input.property(0x715F_7470) } == .invalidProperty)
        #expect(code { try input.setParameter(.playRate, 1) } == .invalidQueueType)
    }

    /// Apple's aqplay enqueues its first buffers, then enables time/pitch, chooses the
    /// algorithm, clears the bypass and sets PlayRate, then starts: everything enqueued before
    /// is processed again (no callback meanwhile), so all of it plays at the rate.
    @Test func settingsBeforeTheStartApplyToWhatWasEnqueued() throws {
        let (engine, device) = try manualEngine(
            channels: 1, capacities: RenderCapacities(queues: 4, buffersPerQueue: 128, commands: 1024, outputChannels: 8))
        defer { engine.close() }
        nonisolated(unsafe) var callbacks = 0
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in callbacks += 1 }
        try Self.enqueueTone(q, hz: 440, seconds: 2)
        #expect(q.enqueuedDeviceFrames == 96_000)
        try q.setTimePitchEnabled(true)
        try q.setTimePitchAlgorithm(.timeDomain)
        try q.setTimePitchBypassed(false)
        try q.setParameter(.playRate, 2)
        engine.deliverPendingEvents()
        #expect(callbacks == 0, "no buffer came back while the enqueued audio was processed again")
        // 2 s at rate 2: 48 000 device frames once SoundTouch's held frames are flushed.
        try q.flush()
        #expect(q.enqueuedDeviceFrames == 48_000, "scheduled \(q.enqueuedDeviceFrames) device frames")
        let r = try Self.play(engine, device, q, limit: 48_000 + 10 * Self.period)
        let played = r.stopCycleEnd - Int(r.start)
        #expect(played >= 48_000 && played <= 48_000 + Self.period, "played \(played) device frames")
        let hz = Self.frequency(r.out)
        #expect(abs(hz - 440) < 0.005 * 440, "\(hz) Hz")
        #expect(callbacks == 20, "every buffer came back once: \(callbacks)")
        #expect(Self.longestQuiet(r.out) < 48, "a gap of \(Self.longestQuiet(r.out)) quiet frames inside the tone")
        print("TimePitchQueueTests: time/pitch set after 2 s were enqueued, before the start: \(played) device frames, \(hz) Hz")
    }

    /// Apple's aqplay at `-r 0.5`: a 3 s 44.1 kHz tone through three 0.5 s buffers refilled
    /// from the callback, time/pitch set after the first three were enqueued, and at the end
    /// of the file a stop after the enqueued buffers from the callback (no flush): 6 s of tone
    /// on the 48 kHz device, without a gap before SoundTouch's end of stream (below).
    @Test func aqplaysLoopAtHalfRatePlaysWhole() throws {
        let (engine, device) = try manualEngine(
            channels: 1, capacities: RenderCapacities(queues: 4, buffersPerQueue: 128, commands: 1024, outputChannels: 8))
        defer { engine.close() }
        let total = 132_300, per = 22_050
        nonisolated(unsafe) var next = 0
        nonisolated(unsafe) var done = false
        @Sendable func fill(_ q: AudioQueue, _ b: AudioQueueBuffer) throws {
            let n = min(per, total - next)
            guard n > 0 else {
                if !done { done = true; try q.stop(immediately: false) }
                return
            }
            let p = b.audioData.bindMemory(to: Int16.self, capacity: n)
            for k in 0..<n { p[k] = Int16(16384 * sin(2 * Double.pi * 440 * Double(next + k) / 44100)) }
            b.audioDataByteSize = n * 2
            try q.enqueue(b)
            next += n
        }
        let q = try engine.newOutput(format: .linearPCM(sampleRate: 44100, channels: 1, bits: 16)) { q, b in try? fill(q, b) }
        for _ in 0..<3 { try fill(q, try q.allocateBuffer(capacity: per * 2)) }
        try q.setTimePitchEnabled(true)
        try q.setTimePitchAlgorithm(.timeDomain)
        try q.setParameter(.playRate, 0.5)
        try q.start()
        var out: [Float] = []
        while out.count < 300_000 {
            out += device.render(frames: Self.period, cycle: Self.period)[0]
            engine.deliverPendingEvents()
            if out.count > Self.period && !q.isRunning { break }
        }
        let on = out.firstIndex(where: { abs($0) > 0.1 }) ?? 0, off = out.lastIndex(where: { abs($0) > 0.1 }) ?? 0
        let hz = Self.frequency(out)
        // SoundTouch's end of a stream: its flush pushes silence through, and with tempo 0.5 the
        // last overlap-add sequences put about 30 ms of that silence before the stream's last
        // 20 ms (1430 frames at 2406 from the end here; its own `soundstretch -tempo=-50` gives
        // the same on this file: 1403 frames). Judged before that stretch, and the length.
        let body = Array(out[..<(off - 4096)])
        print("TimePitchQueueTests: aqplay's loop at rate 0.5: tone from \(on) to \(off) (\(off - on) frames), \(hz) Hz, longest quiet \(Self.longestQuiet(body)) before the last 4096 frames, \(Self.longestQuiet(out)) in all")
        #expect(abs((off - on) - 288_000) < 1024, "\(off - on) frames of tone, want 288 000")
        #expect(Self.longestQuiet(body) < 48, "a gap of \(Self.longestQuiet(body)) quiet frames inside the tone")
        #expect(abs(hz - 440) < 0.005 * 440, "\(hz) Hz")
    }

    /// A queue with a processing tap keeps the rule of before: its tap saw the enqueued audio
    /// once, so time/pitch may not change with buffers enqueued.
    @Test func withATapBuffersEnqueuedRefuseTheChange() throws {
        let (engine, _, q) = try Self.makeQueue()
        defer { engine.close() }
        _ = try q.newProcessingTap(flags: [.preEffects, .siphon]) { _, frames, _, _, _ in frames }
        try Self.enqueueTone(q, hz: 440, seconds: 0.2)
        do {
            try q.setTimePitchEnabled(true)
            Issue.record("enabled with a tap and buffers enqueued")
        } catch let e as AudioQueueError {
            #expect(e.code == .invalidRunState)
        }
        #expect(!q.isTimePitchEnabled)
    }

    /// PlayRate set without EnableTimePitch plays at rate 1 (Apple: "only applicable when the
    /// time/pitch processor has been enabled").
    @Test func playRateWithoutTimePitchPlaysAtRateOne() throws {
        let (engine, device, q) = try Self.makeQueue()
        defer { engine.close() }
        try q.setParameter(.playRate, 2)
        try Self.enqueueTone(q, hz: 440, seconds: 1)
        #expect(q.enqueuedDeviceFrames == 48_000)
        let r = try Self.play(engine, device, q, limit: 60_000)
        let played = r.stopCycleEnd - Int(r.start)
        #expect(played >= 48_000 && played <= 48_000 + Self.period)
    }

    /// A 44.1 kHz queue on the 48 kHz device: time/pitch at the queue's rate, then the rate
    /// converter; 10 s at rate 2 is round(220500 × 48000 / 44100) = 240000 device frames.
    @Test func playRateBeforeRateConversion() throws {
        let (engine, device) = try manualEngine(
            channels: 1, capacities: RenderCapacities(queues: 4, buffersPerQueue: 128, commands: 1024, outputChannels: 8))
        defer { engine.close() }
        let q = try engine.newOutput(format: .linearPCM(sampleRate: 44100, channels: 1, bits: 16)) { _, _ in }
        try q.setTimePitchEnabled(true)
        try q.setParameter(.playRate, 2)
        var i = 0
        while i < 441_000 {
            let b = try q.allocateBuffer(capacity: 8820)
            let p = b.audioData.bindMemory(to: Int16.self, capacity: 4410)
            for k in 0..<4410 { p[k] = Int16(16384 * sin(2 * Double.pi * 440 * Double(i + k) / 44100)) }
            b.audioDataByteSize = 8820
            try q.enqueue(b)
            i += 4410
        }
        try q.flush()
        #expect(q.enqueuedDeviceFrames == 240_000, "scheduled \(q.enqueuedDeviceFrames)")
        let r = try Self.play(engine, device, q, limit: 250_000)
        let played = r.stopCycleEnd - Int(r.start)
        #expect(played >= 240_000 && played <= 240_000 + Self.period, "played \(played)")
        let hz = Self.frequency(r.out)
        #expect(abs(hz - 440) < 0.005 * 440, "\(hz) Hz")
        print("TimePitchQueueTests: 44.1 kHz queue, PlayRate 2: 10 s played in \(played) device frames, \(hz) Hz")
    }

    /// A PlayRate event on the second buffer: 1 s at rate 1, then 1 s at rate 2 is 48000 +
    /// 24000 device frames; the queue's time reaches 96000 at its end.
    @Test func playRateEventTakesEffectAtItsBuffer() throws {
        let (engine, device, q) = try Self.makeQueue()
        defer { engine.close() }
        try q.setTimePitchEnabled(true)
        try Self.enqueueTone(q, hz: 440, seconds: 1)
        let b = try q.allocateBuffer(capacity: 96_000)
        let p = b.audioData.bindMemory(to: Int16.self, capacity: 48_000)
        for k in 0..<48_000 { p[k] = Int16(16384 * sin(2 * Double.pi * 440 * Double(48_000 + k) / Self.rate)) }
        b.audioDataByteSize = 96_000
        #expect(try q.enqueue(b, parameterEvents: [AudioQueueParameterEvent(.playRate, 2)]).sampleTime == 48_000)
        try q.flush()
        #expect(q.enqueuedDeviceFrames == 72_000, "scheduled \(q.enqueuedDeviceFrames)")
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        _ = device.render(frames: 72_000, cycle: 256)
        #expect(delivered(engine) { q.startDeviceFrame == 0 })
        let t = q.currentTime().time.sampleTime
        #expect(abs(t - 96_000) < 1, "queue time \(t) at device frame 72000")
    }

    /// What SoundTouch holds back: the device frames scheduled after each of the first five
    /// 0.1 s buffers (4800 frames) at rate 1, per algorithm (docs/c-api.md, "Latency").
    @Test(arguments: AudioQueueTimePitchAlgorithm.allCases)
    func heldBackFrames(algorithm: AudioQueueTimePitchAlgorithm) throws {
        let (engine, _, q) = try Self.makeQueue()
        defer { engine.close() }
        try q.setTimePitchEnabled(true)
        try q.setTimePitchAlgorithm(algorithm)
        var held: [Int64] = []
        for n in 1...5 {
            let b = try q.allocateBuffer(capacity: 9600)
            let p = b.audioData.bindMemory(to: Int16.self, capacity: 4800)
            for k in 0..<4800 { p[k] = Int16(16384 * sin(2 * Double.pi * 440 * Double(k) / Self.rate)) }
            b.audioDataByteSize = 9600
            try q.enqueue(b)
            held.append(Int64(n * 4800) - q.enqueuedDeviceFrames)
        }
        print("TimePitchQueueTests: \(algorithm) holds back \(held) frames after 1…5 buffers of 4800")
        #expect(held.allSatisfy { $0 >= 0 && $0 <= 12_000 })
    }

    /// Buffers of 256 frames: SoundTouch gives nothing for the first several (they are
    /// scheduled with no frames and still come back through the callback, in order), and the
    /// stream is exactly 40 × 256 / 1.5 frames long, rounded.
    @Test func smallBuffersThatGiveNoOutputStillComeBack() throws {
        let (engine, device) = try manualEngine(
            channels: 1, capacities: RenderCapacities(queues: 4, buffersPerQueue: 128, commands: 1024, outputChannels: 8))
        defer { engine.close() }
        let back = Recorder<ObjectIdentifier>()
        let q = try engine.newOutput(format: int16Mono48k) { _, b in back.append(ObjectIdentifier(b)) }
        var sent: [ObjectIdentifier] = []
        try q.setTimePitchEnabled(true)
        try q.setParameter(.playRate, 1.5)
        var zeroOutput = 0
        for n in 0..<40 {
            let b = try q.allocateBuffer(capacity: 512)
            let p = b.audioData.bindMemory(to: Int16.self, capacity: 256)
            for k in 0..<256 { p[k] = Int16(16384 * sin(2 * Double.pi * 440 * Double(n * 256 + k) / Self.rate)) }
            b.audioDataByteSize = 512
            let before = q.enqueuedDeviceFrames
            try q.enqueue(b)
            sent.append(ObjectIdentifier(b))
            if q.enqueuedDeviceFrames == before { zeroOutput += 1 }
        }
        try q.flush()
        #expect(zeroOutput > 0, "some buffers gave no output")
        #expect(q.enqueuedDeviceFrames == Int64((40.0 * 256 / 1.5).rounded()))
        let r = try Self.play(engine, device, q, limit: 20_000)
        #expect(r.stopCycleEnd > 0, "the queue stopped")
        engine.deliverPendingEvents()
        #expect(back.values == sent, "\(back.values.count) of 40 buffers came back, in order: \(back.values == sent)")
    }

    /// After playing at PlayRate 2 and a stop, a queue with time/pitch disabled again keeps
    /// time at rate 1 (queue time = device frames), whether it stopped at once or after its
    /// buffers.
    @Test(arguments: [true, false])
    func disablingAfterARateRestoresQueueTime(immediately: Bool) throws {
        let (engine, device, q) = try Self.makeQueue()
        defer { engine.close() }
        try q.setTimePitchEnabled(true)
        try q.setParameter(.playRate, 2)
        try Self.enqueueTone(q, hz: 440, seconds: 0.2)
        try q.start()
        if immediately {
            _ = device.render(frames: 2048, cycle: 256)
            try q.stop(immediately: true)
        } else {
            _ = try Self.play(engine, device, q, limit: 20_000)
        }
        #expect(delivered(engine) { !q.isRunning })
        try q.setTimePitchEnabled(false)
        try Self.enqueueTone(q, hz: 440, seconds: 1)
        let start = device.currentFrame
        try q.start(at: AudioTimeStamp(sampleTime: Double(start)))
        _ = device.render(frames: 24_000, cycle: 256)
        #expect(delivered(engine) { q.startDeviceFrame == start })
        let t = q.currentTime().time.sampleTime
        #expect(abs(t - 24_000) < 1, "queue time \(t) after 24000 device frames at rate 1")
    }
}
