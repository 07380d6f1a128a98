import AQCore
import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// `--capture`'s recorder on a hand-driven device: every device input into one float WAV, file
/// frame k at device frame `startFrame` + k (raw); frames the queue lost are silence in their
/// place and counted; a file that cannot be created is refused.
@Suite("Capture recorder", .serialized)
struct CaptureRecorderTests {
    /// A device with 3 inputs, an engine on it, and the recorder's cycle.
    final class Rig {
        let device = ManualDevice(sampleRate: 48000, channels: 1, inputChannels: 3, framesPerCycle: 1024)
        let engine: AudioQueueEngine
        let cycle = 1024

        init(captureFrames: Int = 1 << 16) throws {
            engine = try AudioQueueEngine(device: device, capacities: RenderCapacities(queues: 8, inputChannels: 3, captureFrames: captureFrames))
        }
        deinit { engine.close() }

        /// One cycle whose input channel c holds `value(c, deviceFrame)`.
        func cycle(_ value: (Int, Int64) -> Float) {
            let f = device.currentFrame
            let inputs = (0..<3).map { c in (0..<cycle).map { value(c, f + Int64($0)) } }
            _ = device.render(frames: cycle, cycle: cycle, inputs: inputs)
        }

        /// Delivers events (the queue reads the ring only then on this device) until the
        /// recorder has accounted for `frames` frames, written or lost (10 s at most: the
        /// writer thread's own progress, not a sleep).
        func deliver(_ recorder: CaptureRecorder, until frames: Int64) {
            let deadline = Date().addingTimeInterval(10)
            func behind() -> Bool { let r = recorder.report(); return r.frames + r.lostFrames < frames }
            while behind() && Date() < deadline {
                engine.deliverPendingEvents()
                sched_yield()
            }
        }
    }

    /// Impulses at known device frames on each input land at file frame (device frame −
    /// startFrame), every channel in the file; nothing lost.
    @Test func everyInputAtItsDeviceFrame() throws {
        let dir = try TempDir()
        let rig = try Rig()
        for _ in 0..<3 { rig.cycle { _, _ in 0 } }  // the recording starts later than frame 0
        let recorder = try CaptureRecorder(url: dir.file("cap.wav"), engine: rig.engine, channels: 3, options: .init(bufferFrames: 700, buffers: 4))
        let start = try recorder.start()
        #expect(start == rig.device.currentFrame)
        let marks: [Int64] = [0, 1, 699, 700, 5000, 12_345, 20_479].map { start + $0 }
        while rig.device.currentFrame < start + 20_480 {
            rig.cycle { c, f in marks.contains(f) ? [0.5, -0.25, 0.75][c] : 0 }
            rig.deliver(recorder, until: rig.device.currentFrame - start - 700)
        }
        recorder.finish()
        let r = recorder.report()
        #expect(r.frames == 20_480 && r.lostFrames == 0 && r.error == nil && r.startFrame == start && r.channels == 3, "\(r)")
        #expect(r.summary(name: "cap.wav", sessionStart: start + 100) == "capture: 20480 frames written to cap.wav (in_1…in_3, raw: file frame 0 is device frame \(start), session frame -100)")
        recorder.close()
        let file = try WAVReader.read(dir.file("cap.wav"))
        #expect(file.frameCount == 20_480 && file.channels.count == 3)
        let expected = marks.map { Int($0 - start) }
        #expect(ImpulseFinder.find(file.channels[0], threshold: 0.25) == expected)
        #expect(ImpulseFinder.find(file.channels[1].map { -$0 }, threshold: 0.1) == expected)
        #expect(ImpulseFinder.find(file.channels[2], threshold: 0.25) == expected)
    }

    /// A reader further behind than the ring: the frames it lost are silence in their place
    /// and counted, the later impulses stay exactly at their device frames.
    @Test func lostFramesKeepTheTimeline() throws {
        let dir = try TempDir()
        let rig = try Rig(captureFrames: 8192)
        let recorder = try CaptureRecorder(url: dir.file("cap.wav"), engine: rig.engine, channels: 1, options: .init(bufferFrames: 1024, buffers: 8))
        let start = try recorder.start()
        let marks: [Int64] = [100, 30_000, 40_000].map { start + $0 }
        // 20 cycles without reading: the ring (8192 frames) is overwritten. (Frames may also be
        // lost later for want of a buffer, when the writer thread is slow to give one back.)
        for _ in 0..<20 { rig.cycle { _, f in marks.contains(f) ? 0.5 : 0.01 } }
        var total = Int64(20 * rig.cycle)
        while rig.device.currentFrame < start + 45_056 {
            rig.deliver(recorder, until: total - 2048)
            rig.cycle { _, f in marks.contains(f) ? 0.5 : 0.01 }
            total += Int64(rig.cycle)
        }
        rig.deliver(recorder, until: total - 2048)
        recorder.finish()
        let r = recorder.report()
        #expect(r.lostFrames > 0 && r.error == nil, "\(r)")
        #expect(r.summary(name: "cap.wav", sessionStart: start).contains("frames dropped: silence in their place"))
        recorder.close()
        let file = try WAVReader.read(dir.file("cap.wav"))
        #expect(Int64(file.frameCount) == r.frames)
        // Every frame rendered is in the file or counted lost; those lost before a frame that
        // was recorded are silence in the file (the input never is).
        let silent = Int64(file.channels[0].filter { $0 == 0 }.count)
        #expect(r.frames + r.lostFrames - silent == rig.device.currentFrame - start, "\(r), \(silent) silent, \(rig.device.currentFrame - start) rendered")
        #expect(file.channels[0].prefix(20 * 1024 - 8192).allSatisfy { $0 == 0 }, "the frames the ring overwrote, silence at their place")
        // The first impulse went with the frames lost; the later ones are where they were captured.
        #expect(ImpulseFinder.find(file.channels[0], threshold: 0.25) == [30_000, 40_000])
    }

    /// A recorder nobody holds any more is deinitialised (its writer thread holds only the
    /// shared core), and its deinit closes the file valid with every frame recorded.
    @Test func aRecorderNobodyHoldsClosesItsFile() throws {
        let dir = try TempDir()
        let rig = try Rig()
        weak var gone: CaptureRecorder?
        do {
            let recorder = try CaptureRecorder(url: dir.file("cap.wav"), engine: rig.engine, channels: 2, options: .init(bufferFrames: 1024, buffers: 4))
            gone = recorder
            let start = try recorder.start()
            while rig.device.currentFrame < start + 8192 {
                rig.cycle { c, f in f == start + 5000 ? Float(c + 1) / 4 : 0 }
                rig.deliver(recorder, until: rig.device.currentFrame - start - 1024)
            }
        }
        #expect(gone == nil, "the recorder outlived its last reference")
        let file = try WAVReader.read(dir.file("cap.wav"))
        #expect(file.frameCount >= 7168 && file.channels.count == 2, "\(file.frameCount) frames")
        #expect(ImpulseFinder.find(file.channels[1], threshold: 0.25) == [5000])
    }

    /// A file that cannot be created: refused before anything records.
    @Test func unwritableFileIsRefused() throws {
        let rig = try Rig()
        #expect(throws: SessionError.self) {
            _ = try CaptureRecorder(url: URL(fileURLWithPath: "/nonexistent-dir-aqsync/capture.wav"), engine: rig.engine, channels: 2)
        }
    }
}
