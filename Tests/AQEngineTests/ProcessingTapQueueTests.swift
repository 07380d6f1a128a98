import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// Processing taps on a playback queue on the hand-driven device (issue 22): what the tap does
/// is heard sample for sample; a siphon changes nothing; dispose stops the callbacks; the
/// result codes of making and removing taps.
@Suite struct ProcessingTapQueueTests {
    static let period = 256

    /// A halving PreEffects or PostEffects tap: pulls its source and halves it in place.
    static func halving(_ flags: AudioQueueProcessingTapFlags, calls: UnsafeMutablePointer<Int>) -> (AudioQueueProcessingTap, Int, inout AudioTimeStamp, inout AudioQueueProcessingTapFlags, UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>?>) -> Int {
        { tap, frames, _, _, data in
            calls.pointee += 1
            for c in 0..<data.count { data[c] = nil }
            let got = try! tap.getSourceAudio(frames: frames, into: data)
            for c in 0..<data.count { for i in 0..<got.frames { data[c]![i] *= 0.5 } }
            return got.frames
        }
    }

    /// Plays 0.3 s of a 16-bit tone (at `playRate` through time/pitch when not 1) on a fresh
    /// manual engine, with the tap `setUp` makes; returns the output.
    static func play(playRate: Float = 1, _ setUp: (AudioQueue) throws -> Void = { _ in }) throws -> [Float] {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        if playRate != 1 {
            try q.setTimePitchEnabled(true)
            try q.setParameter(.playRate, playRate)
        }
        try setUp(q)
        for b in 0..<3 {
            let buf = try q.allocateBuffer(capacity: 4800 * 2)
            let p = buf.audioData.bindMemory(to: Int16.self, capacity: 4800)
            for k in 0..<4800 { p[k] = Int16(16000 * sin(2 * Double.pi * 440 * Double(b * 4800 + k) / 48000)) }
            buf.audioDataByteSize = 4800 * 2
            try q.enqueue(buf)
        }
        try q.start()
        try q.stop(immediately: false)
        var out: [Float] = []
        while out.count < 48000 {
            out += device.render(frames: period, cycle: period)[0]
            engine.deliverPendingEvents()
        }
        return out
    }

    @Test(arguments: [AudioQueueProcessingTapFlags.preEffects, .postEffects])
    func halvingTapIsHeardHalved(flags: AudioQueueProcessingTapFlags) throws {
        let reference = try Self.play()
        let calls = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        defer { calls.deallocate() }
        calls.pointee = 0
        let tapped = try Self.play { q in
            let tap = try q.newProcessingTap(flags: flags, callback: Self.halving(flags, calls: calls))
            #expect(tap.maxFrames == 2048)
        }
        #expect(reference.contains { abs($0) > 0.4 })
        #expect(tapped == reference.map { $0 * 0.5 })
        #expect(calls.pointee == 9)  // 3 buffers of 4800 frames: 2048 + 2048 + 704 each
    }

    /// PostEffects sees time/pitch's output (PlayRate 2: half the frames); PreEffects its input.
    @Test func postEffectsSeesTheStretchedAudio() throws {
        var pre = 0, post = 0
        _ = try Self.play(playRate: 2) { q in
            _ = try q.newProcessingTap(flags: [.preEffects, .siphon]) { _, n, _, _, _ in pre += n; return 0 }
        }
        _ = try Self.play(playRate: 2) { q in
            _ = try q.newProcessingTap(flags: [.postEffects, .siphon]) { _, n, _, _, _ in post += n; return 0 }
        }
        #expect(pre == 14400)
        #expect(post == 7200)
    }

    /// PostEffects at PlayRate 2: GetQueueTime's frame counts add up to the queue frames
    /// enqueued (14 400) over the 7200 stretched frames, at ascending queue times.
    @Test func postEffectsQueueTimeCountsQueueFrames() throws {
        var frames = 0, queueFrames = 0
        var times: [Double] = []
        _ = try Self.play(playRate: 2) { q in
            _ = try q.newProcessingTap(flags: [.postEffects, .siphon]) { tap, n, _, _, _ in
                let t = try! tap.queueTime()
                frames += n
                queueFrames += t.frameCount
                times.append(t.sampleTime)
                return 0
            }
        }
        #expect(frames == 7200)
        #expect(queueFrames == 14400)
        #expect(times == times.sorted() && times.first == 0)
    }

    /// The callback runs on the enqueuing thread; a stop starts a new stream (StartOfStream).
    @Test func runsOnTheEnqueuingThreadAndRestartsAfterAStop() throws {
        let (engine, _) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        var threads: [pthread_t] = []
        var starts: [Bool] = []
        var stamps: [Double] = []
        _ = try q.newProcessingTap(flags: [.preEffects, .siphon]) { _, _, ts, flags, _ in
            threads.append(pthread_self())
            starts.append(flags.contains(.startOfStream))
            stamps.append(ts.sampleTime)
            return 0
        }
        let b = try q.allocateBuffer(capacity: 200)
        b.audioDataByteSize = 200
        let c = try q.allocateBuffer(capacity: 200)
        c.audioDataByteSize = 200
        try q.enqueue(b)
        try q.enqueue(c)
        try q.stop(immediately: true)
        try q.enqueue(b)
        #expect(threads.count == 3 && threads.allSatisfy { pthread_equal($0, pthread_self()) != 0 })
        #expect(starts == [true, false, true])
        #expect(stamps == [0, 100, 0])
    }

    /// A siphon sees every frame once in order; the audio is unchanged.
    @Test func siphonSeesEverythingAndChangesNothing() throws {
        let reference = try Self.play()
        var seen: [Float] = []
        let out = try Self.play { q in
            _ = try q.newProcessingTap(flags: [.preEffects, .siphon]) { _, n, _, _, data in
                seen += Array(UnsafeBufferPointer(start: data[0]!, count: n))
                return 0
            }
        }
        #expect(out == reference)
        #expect(seen.count == 14400)
        let input = (0..<14400).map { Float(Int16(16000 * sin(2 * Double.pi * 440 * Double($0) / 48000))) / 32768 }
        #expect(seen == input)
    }

    /// Result codes: bad flags, a second tap, a started queue; dispose stops the callbacks.
    @Test func resultCodesAndDispose() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        var calls = 0
        let cb: AudioQueueProcessingTap.Callback = { _, _, _, _, _ in calls += 1; return 0 }
        for bad: AudioQueueProcessingTapFlags in [[], [.preEffects, .postEffects], .siphon, [.preEffects, .startOfStream]] {
            do { _ = try q.newProcessingTap(flags: bad, callback: cb); Issue.record("flags \(bad.rawValue) accepted") } catch { #expect(error.code == .invalidParameter) }
        }
        let tap = try q.newProcessingTap(flags: [.postEffects, .siphon], callback: cb)
        do { _ = try q.newProcessingTap(flags: .preEffects, callback: cb); Issue.record("second tap") } catch { #expect(error.code == .tooManyTaps) }
        let b = try q.allocateBuffer(capacity: 200)
        b.audioDataByteSize = 200
        try q.enqueue(b)
        #expect(calls == 1)
        try q.start()
        _ = device.render(frames: Self.period, cycle: Self.period)
        do { try q.disposeProcessingTap(tap); Issue.record("dispose while running") } catch { #expect(error.code == .invalidRunState) }
        try q.stop(immediately: true)
        try q.disposeProcessingTap(tap)
        do { try q.disposeProcessingTap(tap); Issue.record("disposed twice") } catch { #expect(error.code == .invalidParameter) }
        try q.enqueue(b)
        #expect(calls == 1)
    }
}
