import AQCore
import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// The take recorder on a hand-driven device: file frame 0 is session frame `start`, every
/// frame where the device captured it, exactly `length` frames; and memory does not grow with
/// the take's length (an hour-long recording, shortened).
@Suite("Take recorder", .serialized)
struct TakeRecorderTests {
    /// Frames a test renders at most while it waits for a take to finish. The take finishes
    /// only when a buffer shows what came after its end; a writer thread starved by a loaded
    /// machine can leave the queue without a buffer for a long stretch (those frames are lost,
    /// and shown only by the next buffer), so the limit is far past any take here: reaching it
    /// means the take never finishes.
    static let renderLimit: Int64 = 2_000_000
    /// The input between the impulses: never zero, so silence in a take marks lost frames.
    static let floor: Float = 0.01

    /// A hand-driven device that reports a latency (``ManualDevice`` reports none): what the
    /// take's placement reads.
    final class LatentDevice: HandDrivenDevice, @unchecked Sendable {
        let inner: ManualDevice
        let latency: DeviceLatency
        init(_ inner: ManualDevice, latency: DeviceLatency) { self.inner = inner; self.latency = latency }
        var uid: String { inner.uid }
        var sampleRate: Double { inner.sampleRate }
        var outputChannelCount: Int { inner.outputChannelCount }
        var inputChannelCount: Int { inner.inputChannelCount }
        var framesPerCycle: Int { inner.framesPerCycle }
        var schedulingLead: Int64 { inner.schedulingLead }
        var isRunning: Bool { inner.isRunning }
        func start(rendering target: RenderTarget) throws(DeviceError) { try inner.start(rendering: target) }
        func stop() { inner.stop() }
        var currentFrame: Int64 { inner.currentFrame }
        func hostTime(ofFrame frame: Int64) -> UInt64 { inner.hostTime(ofFrame: frame) }
        func render(frames: Int, into outputs: UnsafePointer<UnsafeMutablePointer<Float>>) -> Bool { inner.render(frames: frames, into: outputs) }
    }

    /// A device with `inputs` capture channels, an engine, and a session holding `take`.
    final class Rig {
        let device: ManualDevice
        let engine: AudioQueueEngine
        let session: Session
        let inputs: Int
        let cycle = 1024
        let ins: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
        let outs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

        init(take: SessionTake, inputs: Int, latency: DeviceLatency? = nil) throws {
            self.inputs = inputs
            let manual = ManualDevice(sampleRate: 48000, channels: 1, inputChannels: inputs, framesPerCycle: 1024)
            device = manual
            let d: any AudioDevice = latency.map { LatentDevice(manual, latency: $0) } ?? manual
            engine = try AudioQueueEngine(device: d, capacities: RenderCapacities(queues: 8, inputChannels: inputs, captureFrames: 1 << 16))
            session = Session(url: URL(fileURLWithPath: "/tmp/s.toml"), name: "s", sampleRate: nil, output: SessionOutput(channels: 1), tracks: [], takes: [take])
            ins = .allocate(capacity: inputs)
            for c in 0..<inputs { ins[c] = .allocate(capacity: cycle); ins[c].initialize(repeating: 0, count: cycle) }
            outs = .allocate(capacity: 1)
            outs[0] = .allocate(capacity: cycle)
        }
        deinit {
            engine.close()
            for c in 0..<inputs { ins[c].deallocate() }
            ins.deallocate()
            outs[0].deallocate()
            outs.deallocate()
        }

        /// Waits (no sleep: the writer's own progress) until `recorder` has written all it can
        /// of what was rendered since device frame `from`, less the buffer in progress: so a
        /// test renders as fast as the writer goes, never faster than the buffers hold.
        func pace(_ recorder: TakeRecorder, from: Int64, bufferFrames: Int) {
            let want = min(recorder.length, device.currentFrame - from) - Int64(bufferFrames)
            // Delivering as the events thread would: buffers the writer enqueued again take
            // the frames still in the ring (those past it are lost, and shown by the jump).
            // Frames the queue lost for want of a buffer are gone at once (not waited for).
            while !recorder.isFinished && { let r = recorder.report(); return r.frames + r.lostFrames < want }() {
                engine.deliverPendingEvents()
                sched_yield()
            }
        }

        /// Delivers events (the queue reads the capture ring only then, on the hand-driven
        /// device) until `recorder` is finished, `timeout` seconds at most: the writer thread may
        /// give a buffer back after the test's last delivery. Returns whether it finished.
        func deliverUntilFinished(_ recorder: TakeRecorder, timeout: Double) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while !recorder.isFinished && Date() < deadline {
                engine.deliverPendingEvents()
                sched_yield()
            }
            return recorder.isFinished
        }

        /// One cycle whose input channel c holds `value(c, deviceFrame)`, then the events.
        func cycle(_ value: (Int, Int64) -> Float) {
            let f = device.currentFrame
            for c in 0..<inputs { for i in 0..<cycle { ins[c][i] = value(c, f + Int64(i)) } }
            device.render(frames: cycle, inputs: UnsafePointer(ins), into: UnsafePointer(outs))
            engine.deliverPendingEvents()
        }
    }

    /// Impulses at known device frames land at file frame (device frame − session start −
    /// start); the take has exactly `length` frames; channels come from the take's own range
    /// of device inputs.
    @Test func placementAndLength() throws {
        let dir = try TempDir()
        let take = SessionTake(file: dir.file("t.wav"), format: TakeFormat(container: .wav, sample: .float32), channels: 2, start: .frames(3000), length: .frames(20_001))
        let rig = try Rig(take: take, inputs: 3)
        let recorder = try TakeRecorder(take: take, session: rig.session, engine: rig.engine, inputOffset: 1, options: .init(bufferFrames: 700, buffers: 4))
        let sessionStart: Int64 = 5000
        try recorder.start(sessionStart: sessionStart)
        let base = sessionStart + 3000
        // Channel 0 is not the take's; channels 1 and 2 are. Impulses before the take (dropped),
        // at its first frame, inside, at its last frame, and after it (not recorded).
        let marks: [Int64] = [base - 1, base, base + 777, base + 12_345, base + 20_000, base + 20_001]
        while !recorder.isFinished && rig.device.currentFrame < base + Self.renderLimit {
            rig.cycle { c, f in c == 0 ? 0.9 : (marks.contains(f) ? (c == 1 ? 0.5 : -0.25) : 0) }
            rig.pace(recorder, from: base, bufferFrames: 700)
        }
        #expect(rig.deliverUntilFinished(recorder, timeout: 10))
        let r = recorder.report()
        #expect(r.completed && r.error == nil && r.frames == 20_001 && r.lostFrames == 0 && r.leadingSilence == 0, "\(r.summary)")
        #expect(r.sessionFrame == 3000 && r.firstRecordedSessionFrame == 3000, "\(r)")
        recorder.close()
        let file = try WAVReader.read(take.file)
        #expect(file.frameCount == 20_001 && file.channels.count == 2)
        #expect(ImpulseFinder.find(file.channels[0], threshold: 0.25) == [0, 777, 12_345, 20_000])
        #expect(ImpulseFinder.find(file.channels[1].map { -$0 }, threshold: 0.1) == [0, 777, 12_345, 20_000])
    }

    /// Compressed takes (CAF): placed, cut and padded to the frame as PCM ones; read back with
    /// the project's reader and decoder (the packet table's priming dropped): ALAC exactly the
    /// captured samples at exactly their frames, AAC's impulses within a frame of theirs.
    @Test(arguments: [TakeFormat.Sample.alac, .aac])
    func compressedTakesLandOnTheirFrames(sample: TakeFormat.Sample) throws {
        let dir = try TempDir()
        let take = SessionTake(file: dir.file("t.caf"), format: TakeFormat(container: .caf, sample: sample), channels: 1, start: .frames(3000), length: .frames(20_001))
        let rig = try Rig(take: take, inputs: 2)
        let recorder = try TakeRecorder(take: take, session: rig.session, engine: rig.engine, inputOffset: 1, options: .init(bufferFrames: 700, buffers: 4))
        let sessionStart: Int64 = 5000
        try recorder.start(sessionStart: sessionStart)
        let base = sessionStart + 3000
        let marks: [Int64] = [base - 1, base + 5, base + 777, base + 12_345, base + 19_990, base + 20_001]
        while !recorder.isFinished && rig.device.currentFrame < base + Self.renderLimit {
            rig.cycle { c, f in c == 1 && marks.contains(f) ? 0.5 : 0 }
            rig.pace(recorder, from: base, bufferFrames: 700)
        }
        #expect(rig.deliverUntilFinished(recorder, timeout: 10))
        let r = recorder.report()
        #expect(r.completed && r.error == nil && r.frames == 20_001 && r.lostFrames == 0, "\(r.summary)")
        recorder.close()
        let back = try CAFPacketWriterTests.readBack(take.file)
        #expect(back.frames.count == 1 && back.frames[0].count == 20_001)
        let expected = [5, 777, 12_345, 19_990]
        if sample == .alac {
            let hits = back.frames[0].indices.filter { back.frames[0][$0] != 0 }
            #expect(hits == expected && hits.allSatisfy { back.frames[0][$0] == 0.5 }, "ALAC: \(hits.prefix(10))")
        } else {
            for e in expected {
                let window = max(0, e - 300)..<min(20_001, e + 300)
                let peak = window.max { abs(back.frames[0][$0]) < abs(back.frames[0][$1]) }!
                #expect(abs(peak - e) <= 1, "AAC: impulse at take frame \(e) peaks at \(peak)")
            }
        }
    }

    /// Compensated for a playback latency of P frames: a frame captured at device frame
    /// session start + start + P + k (the performer heard session frame start + k P frames
    /// after the engine wrote it) is file frame k. (Capture latency is left out here: input
    /// queues' start times take it out, which is the device's and the engine's part.)
    @Test func compensatesThePlaybackLatency() throws {
        let dir = try TempDir()
        let take = SessionTake(file: dir.file("t.wav"), format: TakeFormat(container: .wav, sample: .float32), start: .frames(1000), length: .frames(10_000))
        let rig = try Rig(take: take, inputs: 1, latency: DeviceLatency(capture: 0, playback: 300))
        let recorder = try TakeRecorder(take: take, session: rig.session, engine: rig.engine, inputOffset: 0, options: .init(bufferFrames: 512, buffers: 4))
        let sessionStart: Int64 = 4096
        try recorder.start(sessionStart: sessionStart)
        let base = sessionStart + 1000 + 300
        let marks: Set<Int64> = [base - 1, base, base + 4321, base + 9999, base + 10_000]
        while !recorder.isFinished && rig.device.currentFrame < base + Self.renderLimit {
            rig.cycle { _, f in marks.contains(f) ? 0.5 : 0 }
            rig.pace(recorder, from: base, bufferFrames: 512)
        }
        #expect(rig.deliverUntilFinished(recorder, timeout: 10))
        let r = recorder.report()
        #expect(r.completed && r.frames == 10_000 && r.lostFrames == 0 && r.leadingSilence == 0 && r.latency.playback == 300, "\(r.summary)")
        #expect(r.summary.contains("10000 frames from session frame 1000 (compensated: capture 0 + playback 300 frames)"), "\(r.summary)")
        recorder.close()
        let file = try WAVReader.read(take.file)
        #expect(ImpulseFinder.find(file.channels[0], threshold: 0.25) == [0, 4321, 9999])
    }

    /// Frames the queue lost (read after the capture ring overwrote them) are written as
    /// silence and counted: the take keeps its place and its length, every impulse recorded
    /// is on its own frame.
    @Test func lostFramesKeepThePlace() throws {
        let dir = try TempDir()
        let take = SessionTake(file: dir.file("t.wav"), format: TakeFormat(container: .wav, sample: .int(bits: 16)), length: .frames(200_000))
        let rig = try Rig(take: take, inputs: 1)
        let recorder = try TakeRecorder(take: take, session: rig.session, engine: rig.engine, inputOffset: 0, options: .init(bufferFrames: 2048, buffers: 4))
        let start = rig.device.currentFrame
        try recorder.start(sessionStart: start)
        let cycle = rig.cycle
        let f1 = rig.ins[0]
        // 100 cycles (102400 frames) rendered with no events delivered: more than the ring's
        // 65536 frames, so the queue reads behind it.
        for _ in 0..<100 {
            let f = rig.device.currentFrame
            for i in 0..<cycle { f1[i] = (f + Int64(i) - start) % 1000 == 0 ? 0.5 : Self.floor }
            rig.device.render(frames: cycle, inputs: UnsafePointer(rig.ins), into: UnsafePointer(rig.outs))
        }
        while !recorder.isFinished && rig.device.currentFrame < start + Self.renderLimit {
            rig.cycle { _, f in (f - start) % 1000 == 0 ? 0.5 : Self.floor }
            rig.pace(recorder, from: start, bufferFrames: 2048)
        }
        #expect(rig.deliverUntilFinished(recorder, timeout: 10))
        let r = recorder.report()
        recorder.close()
        let file = try WAVReader.read(take.file)
        #expect(file.frameCount == 200_000 && r.frames == 200_000, "\(r.summary)")
        let clicks = ImpulseFinder.find(file.channels[0], threshold: 0.25)
        #expect(clicks.allSatisfy { $0 % 1000 == 0 }, "an impulse off its frame: \(clicks.filter { $0 % 1000 != 0 })")
        // The frames before the first buffer the queue could fill count as a late beginning.
        let missing = Int(r.lostFrames + r.leadingSilence)
        #expect(missing > 0 && r.completed, "\(r.summary)")
        // Every captured frame is non-zero (the floor between the impulses), so the silence
        // written in place of what was lost shows exactly where it is: as many silent frames
        // as the report counts, and an impulse on every multiple of 1000 outside them.
        let recorded = file.channels[0].indices.filter { file.channels[0][$0] != 0 }
        #expect(recorded.count == 200_000 - missing, "\(recorded.count) frames recorded, \(r.summary)")
        let expected = recorded.filter { $0 % 1000 == 0 }
        #expect(clicks == expected, "\(clicks.count) clicks, \(expected.count) expected, \(r.summary)")
    }

    /// Finishing early (Ctrl-C) keeps every frame captured: the file holds exactly the frames
    /// from the take's start to the last cycle rendered, the header says so.
    @Test func finishKeepsEverythingCaptured() throws {
        let dir = try TempDir()
        let take = SessionTake(file: dir.file("t.caf"), format: TakeFormat(container: .caf, sample: .int(bits: 16)), channels: 1, length: .frames(1_000_000))
        let rig = try Rig(take: take, inputs: 1)
        let recorder = try TakeRecorder(take: take, session: rig.session, engine: rig.engine, inputOffset: 0, options: .init(bufferFrames: 4096, buffers: 4))
        let start = rig.device.currentFrame
        try recorder.start(sessionStart: start)
        for _ in 0..<37 {
            rig.cycle { _, f in (f - start) % 1000 == 0 ? 0.5 : 0 }
            rig.pace(recorder, from: start, bufferFrames: 4096)
        }
        recorder.finish()
        let r = recorder.report()
        #expect(r.frames == 37 * 1024 && !r.completed && r.error == nil && r.lostFrames == 0, "\(r.summary)")
        recorder.close()
        let samples = try TakeWriterTests.read(take.file)
        #expect(samples.count == 37 * 1024)
        #expect(ImpulseFinder.find(samples, threshold: 0.25) == Array(stride(from: 0, to: 37 * 1024, by: 1000)))
    }

    /// Refused before anything plays: a take with no length that starts after the last track
    /// ends; a WAV or AIFF take longer than 4 GiB (CAF takes it).
    @Test func refusedBeforePlayback() throws {
        let dir = try TempDir()
        let late = SessionTake(file: dir.file("late.wav"), format: TakeFormat(container: .wav), start: .frames(5000))
        let rig = try Rig(take: late, inputs: 2)
        do {
            _ = try TakeRecorder(take: late, session: rig.session, engine: rig.engine, inputOffset: 0)
            Issue.record("a take without a length after the session's end was accepted")
        } catch {
            #expect(error.kind == .invalidValue && error.message.contains("give it a length"), "\(error)")
        }
        for container in [TakeFormat.Container.wav, .aiff] {
            let huge = SessionTake(file: dir.file("huge.\(container.rawValue)"), format: TakeFormat(container: container, sample: .float32), channels: 2, length: .seconds(8 * 3600))
            do {
                _ = try TakeRecorder(take: huge, session: rig.session, engine: rig.engine, inputOffset: 0)
                Issue.record("an 8-hour stereo float \(container) take was accepted")
            } catch {
                #expect(error.kind == .unwritableFile && error.message.contains("past the 4 GiB") && error.message.contains("record to .caf"), "\(error)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("late.wav").path), "nothing created for a refused take")
    }

    /// Resident memory after 10 s and after 60 s of a recording (two 48 kHz channels, 24-bit
    /// WAV, driven as fast as the writer keeps up): within 4 MB. Nothing grows with the length.
    @Test func constantMemory() throws {
        let dir = try TempDir()
        let take = SessionTake(file: dir.file("long.wav"), format: TakeFormat(container: .wav, sample: .int(bits: 24)), channels: 2, length: .seconds(3600))
        let rig = try Rig(take: take, inputs: 2)
        let recorder = try TakeRecorder(take: take, session: rig.session, engine: rig.engine, inputOffset: 0)
        let start = rig.device.currentFrame
        try recorder.start(sessionStart: start)
        var rss10: Int?
        let tenSeconds: Int64 = 480_000, sixtySeconds: Int64 = 2_880_000
        while rig.device.currentFrame - start < sixtySeconds {
            rig.cycle { c, f in sinf(Float(f % 48000) * (c == 0 ? 0.01 : 0.02)) * 0.5 }
            // Keep within the buffers' reach of the writer (no sleep: the writer's progress).
            rig.pace(recorder, from: start, bufferFrames: 4096)
            if rss10 == nil && rig.device.currentFrame - start >= tenSeconds { rss10 = residentKB() }
        }
        let rss60 = residentKB()
        recorder.finish()
        let r = recorder.report()
        recorder.close()
        #expect(r.lostFrames == 0 && r.frames >= sixtySeconds, "\(r.summary)")
        let grew = rss60 - (rss10 ?? 0)
        print("take recorder RSS: \(rss10 ?? 0) kB after 10 s, \(rss60) kB after 60 s (+\(grew) kB)")
        #expect(grew < 4096, "RSS grew by \(grew) kB between 10 s and 60 s of recording")
    }

    /// VmRSS of this process, in kB (read whole: String(contentsOfFile:) stops short on /proc).
    func residentKB() -> Int {
        guard let fh = FileHandle(forReadingAtPath: "/proc/self/status") else { return 0 }
        defer { try? fh.close() }
        let text = String(decoding: fh.readDataToEndOfFile(), as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }
}
