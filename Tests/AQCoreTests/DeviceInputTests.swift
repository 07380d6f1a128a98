import Testing
@testable import AQCore

/// The hand-driven device's inputs reach the renderer, and the renderer's capture ring hands
/// them to the control side at exactly the device frames they were captured at (issue 11).
@Suite struct DeviceInputTests {
    final class InputRig {
        let core: UnsafeMutablePointer<RenderCore>
        let device: ManualDevice
        init(inputs: Int, ring: Int = 4096) throws {
            core = RenderCore.allocate(
                sampleRate: 48000,
                capacities: RenderCapacities(queues: 2, buffersPerQueue: 4, commands: 16, outputChannels: 2, inputChannels: inputs, captureFrames: ring))
            device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: inputs)
            try device.start(rendering: RenderTarget(core))
        }
        deinit {
            device.stop()
            RenderCore.deallocate(core)
        }
        /// Reads `frames` captured frames of `channels` channels from device frame `from`.
        func read(from: Int64, frames: Int, channels: Int) -> (first: Int64, data: [[Float]]) {
            var planes = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
            let ptrs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
            let store = UnsafeMutablePointer<Float>.allocate(capacity: frames * channels)
            defer { ptrs.deallocate(); store.deallocate() }
            for c in 0..<channels { ptrs[c] = store + c * frames }
            let r = core.pointee.readCapture(from: from, maxFrames: frames, into: ptrs, channels: channels)
            for c in 0..<channels { for i in 0..<r.frames { planes[c][i] = ptrs[c][i] } }
            return (r.first, planes.map { Array($0.prefix(r.frames)) })
        }
    }

    /// Impulses fed at prime frames, at a cycle's first and last frame and across cycle
    /// boundaries come back from the capture ring at exactly those device frames, on their own
    /// channel; the per-cycle input meter sees them.
    @Test(arguments: [1, 64, 256, 331])
    func impulsesComeBackAtTheirFrames(cycle: Int) throws {
        let rig = try InputRig(inputs: 2)
        let frames = 3000
        let left = [0, 255, 256, 511, 1009, 2999], right = [7, 1013, 2048]
        var inputs = [[Float]](repeating: [Float](repeating: 0, count: frames), count: 2)
        for f in left { inputs[0][f] = 0.5 }
        for f in right { inputs[1][f] = -0.25 }
        _ = rig.device.render(frames: frames, cycle: cycle, inputs: inputs)
        let window = rig.core.pointee.captureWindow
        #expect(window.first == 0)
        #expect(window.end == Int64(frames))
        let r = rig.read(from: 0, frames: frames, channels: 3)
        #expect(r.first == 0)
        #expect(r.data[0].indices.filter { r.data[0][$0] != 0 } == left)
        #expect(r.data[1].indices.filter { r.data[1][$0] != 0 } == right)
        #expect(r.data[0][2999] == 0.5 && r.data[1][7] == -0.25)
        #expect(r.data[2].allSatisfy { $0 == 0 }, "a channel the device lacks reads as silence")
        let status = rig.core.pointee.inputStatus
        #expect(status.framesSeen == Int64(frames))
        #expect(status.channels == 2)
        // The last cycle holds frame 2999 on the left only.
        #expect(rig.core.pointee.inputPeak(channel: 0) == 0.5)
        #expect(rig.core.pointee.takeInputPeak(channel: 1) == 0.25)
        #expect(rig.core.pointee.takeInputPeak(channel: 1) == 0, "the held peak restarts after a read")
    }

    /// A reader further behind than the ring is long loses the oldest frames: the read starts at
    /// the first frame still there, exactly `end − ring`, and its frames are the right ones.
    @Test func aReaderTooFarBehindLosesTheOldestFrames() throws {
        let rig = try InputRig(inputs: 1, ring: 1024)
        let frames = 5000
        var ramp = [Float](repeating: 0, count: frames)
        for i in 0..<frames { ramp[i] = Float(i) }
        _ = rig.device.render(frames: frames, cycle: 128, inputs: [ramp])
        let r = rig.read(from: 100, frames: 4900, channels: 1)
        #expect(r.first == Int64(frames - 1024))
        #expect(r.data[0].count == 1024)
        #expect(r.data[0].first == Float(frames - 1024) && r.data[0].last == Float(frames - 1))
        // Nothing newer yet: 0 frames from the end on.
        #expect(rig.read(from: Int64(frames), frames: 10, channels: 1).data[0].isEmpty)
    }

    /// Frames the device skipped read back as silence and are counted; frames after the jump
    /// are at their device frames; `render(frames:into:)` on a device with inputs captures silence.
    @Test func skippedFramesAreSilence() throws {
        let rig = try InputRig(inputs: 1)
        _ = rig.device.render(frames: 100, cycle: 50, inputs: [[Float](repeating: 1, count: 100)])
        rig.device.skip(frames: 37)
        var x = [Float](repeating: 0, count: 60)
        x[0] = 0.75
        _ = rig.device.render(frames: 60, cycle: 60, inputs: [x])
        _ = rig.device.render(frames: 20, cycle: 20)
        #expect(rig.core.pointee.skippedCaptureFrames == 37)
        let r = rig.read(from: 0, frames: 217, channels: 1)
        #expect(r.first == 0 && r.data[0].count == 217)
        #expect(r.data[0][0..<100].allSatisfy { $0 == 1 })
        #expect(r.data[0][100..<137].allSatisfy { $0 == 0 })
        #expect(r.data[0][137] == 0.75)
        #expect(r.data[0][138...].allSatisfy { $0 == 0 })
    }

    /// A device without inputs captures nothing: the window stays empty.
    @Test func noInputsNoCapture() throws {
        let rig = try InputRig(inputs: 0)
        _ = rig.device.render(frames: 512, cycle: 256)
        #expect(rig.core.pointee.captureWindow.first == -1)
        #expect(rig.core.pointee.inputStatus.framesSeen == 0)
    }
}
