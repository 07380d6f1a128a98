import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// `kAudioQueueProperty_ChannelAssignments` on the hand-driven device (issue 22): a playback
/// queue's channels on the outputs assigned, exactly; a recording queue's channels read from the
/// inputs assigned, exactly, also when changed while it records; defaults, result codes and the
/// property by ID.
@Suite struct ChannelAssignmentTests {
    static let float2 = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 2, bits: 32, isFloat: true)

    @Test func playbackChannelsLandOnTheOutputsAssigned() throws {
        let (engine, device) = try manualEngine(channels: 4)
        defer { engine.close() }
        let q = try engine.newOutput(format: Self.float2) { _, _ in }
        let uid = device.uid
        #expect(q.channelAssignments == [1, 2].map { AudioQueueChannelAssignment(deviceUID: uid, channelNumber: $0) })
        try q.setChannelAssignments([4, 3].map { AudioQueueChannelAssignment(deviceUID: uid, channelNumber: $0) })
        #expect(q.channelAssignments.map(\.channelNumber) == [4, 3])
        #expect(try q.property(AudioQueuePropertyID.channelAssignments.rawValue) == [4, 0, 0, 0, 3, 0, 0, 0])
        let b = try q.allocateBuffer(capacity: 256 * 8)
        let p = b.audioData.bindMemory(to: Float.self, capacity: 512)
        for i in 0..<256 {
            p[2 * i] = Float(i + 1) / 512
            p[2 * i + 1] = -Float(i + 1) / 1024
        }
        b.audioDataByteSize = 256 * 8
        try q.enqueue(b)
        try q.start()
        let out = device.render(frames: 256, cycle: 64)
        #expect(out[0].allSatisfy { $0 == 0 } && out[1].allSatisfy { $0 == 0 })
        #expect(out[3] == (0..<256).map { Float($0 + 1) / 512 }, "left on output 4")
        #expect(out[2] == (0..<256).map { -Float($0 + 1) / 1024 }, "right on output 3")
    }

    @Test func refusals() throws {
        let (engine, device) = try manualEngine(channels: 2)
        defer { engine.close() }
        let q = try engine.newOutput(format: Self.float2) { _, _ in }
        let uid = device.uid
        func codes(_ a: [AudioQueueChannelAssignment]) -> AudioQueueError.Code? {
            do { try q.setChannelAssignments(a); return nil } catch { return error.code }
        }
        let one = AudioQueueChannelAssignment(deviceUID: uid, channelNumber: 1)
        #expect(codes([one]) == .invalidPropertySize)
        #expect(codes([one, one, one]) == .invalidPropertySize)
        #expect(codes([one, AudioQueueChannelAssignment(deviceUID: "elsewhere", channelNumber: 1)]) == .invalidDevice)
        #expect(codes([one, AudioQueueChannelAssignment(deviceUID: uid, channelNumber: 0)]) == .invalidPropertyValue)
        #expect(codes([one, AudioQueueChannelAssignment(deviceUID: uid, channelNumber: 3)]) == .invalidPropertyValue)
        #expect(codes([one, one]) == nil)
        #expect(q.channelAssignments.map(\.channelNumber) == [1, 1])
        // A channel layout replaces the assignments.
        try q.setChannelLayout(.stereo)
        #expect(q.channelAssignments.map(\.channelNumber) == [1, 2])
        #expect(q.assignedOutputChannels == nil)
    }

    @Test func listenersHearASet() throws {
        let (engine, device) = try manualEngine(channels: 2)
        defer { engine.close() }
        let q = try engine.newOutput(format: Self.float2) { _, _ in }
        let heard = Recorder<AudioQueuePropertyID>()
        _ = q.addPropertyListener(.channelAssignments) { _, id in heard.append(id) }
        try q.setChannelAssignments([2, 1].map { AudioQueueChannelAssignment(deviceUID: device.uid, channelNumber: $0) })
        #expect(heard.values == [.channelAssignments])
    }

    final class InputRig {
        let device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: 4)
        let engine: AudioQueueEngine
        let queue: AudioInputQueue
        let got = Recorder<(Double, [[Float]])>()

        init(format: AudioStreamBasicDescription = ChannelAssignmentTests.float2) throws {
            engine = try AudioQueueEngine(device: device, capacities: RenderCapacities(
                queues: 4, buffersPerQueue: 8, commands: 64, outputChannels: 2, inputChannels: 4, captureFrames: 16384))
            let got = self.got
            let channels = Int(format.channelsPerFrame)
            queue = try engine.newInput(format: format) { q, b, t, _ in
                let n = b.audioDataByteSize / Int(format.bytesPerFrame)
                let p = b.audioData.bindMemory(to: Float.self, capacity: n * channels)
                got.append((t.sampleTime, (0..<channels).map { c in (0..<n).map { p[$0 * channels + c] } }))
                try? q.enqueue(b)
            }
            for _ in 0..<4 { try queue.enqueue(try queue.allocateBuffer(capacity: 500 * Int(format.bytesPerFrame))) }
        }

        /// Channel `c` of everything recorded, by device frame.
        func recorded(_ c: Int) -> [Int64: Float] {
            var m: [Int64: Float] = [:]
            for (t, planes) in got.values { for (i, x) in planes[c].enumerated() { m[Int64(t) + Int64(i)] = x } }
            return m
        }
    }

    @Test func recordingChannelsReadTheInputsAssigned() throws {
        let rig = try InputRig()
        defer { rig.engine.close() }
        let uid = rig.device.uid
        #expect(rig.queue.channelAssignments == [1, 2].map { AudioQueueChannelAssignment(deviceUID: uid, channelNumber: $0) })
        let heard = Recorder<AudioQueuePropertyID>()
        _ = try rig.queue.addPropertyListener(.channelAssignments) { _, id in heard.append(id) }
        try rig.queue.setChannelAssignments([4, 2].map { AudioQueueChannelAssignment(deviceUID: uid, channelNumber: $0) })
        #expect(heard.values == [.channelAssignments])
        #expect(rig.queue.channelAssignments.map(\.channelNumber) == [4, 2])
        #expect(throws: AudioQueueError.self) {
            try rig.queue.setChannelAssignments([5, 1].map { AudioQueueChannelAssignment(deviceUID: uid, channelNumber: $0) })
        }
        #expect(throws: AudioQueueError.self) {
            try rig.queue.setChannelAssignments([AudioQueueChannelAssignment(deviceUID: "x", channelNumber: 1), .init(deviceUID: uid, channelNumber: 1)])
        }
        try rig.queue.start(at: AudioTimeStamp(sampleTime: 0))
        // Each input carries its own ramp: input k frame i = (k + 1) + i / 4096.
        let frames = 3000
        let inputs = (0..<4).map { k in (0..<frames).map { Float(k + 1) + Float($0) / 4096 } }
        _ = rig.device.render(frames: 1500, cycle: 256, inputs: inputs.map { Array($0[0..<1500]) })
        rig.engine.deliverPendingEvents()
        // Changed while recording: from the next frame the queue reads.
        try rig.queue.setChannelAssignments([1, 3].map { AudioQueueChannelAssignment(deviceUID: uid, channelNumber: $0) })
        _ = rig.device.render(frames: 1500, cycle: 256, inputs: inputs.map { Array($0[1500...]) })
        rig.engine.deliverPendingEvents()
        try rig.queue.stop(immediately: true)
        let c0 = rig.recorded(0), c1 = rig.recorded(1)
        #expect(c0.count == frames && c1.count == frames)
        // Every frame is one of its two sources exactly; the switch happens once, in order.
        var switched0: Int64?
        for f in 0..<Int64(frames) {
            let i = Int(f)
            let a = c0[f], b = c1[f]
            if a == inputs[3][i] && b == inputs[1][i] {
                #expect(switched0 == nil, "frame \(f) still on inputs 4 and 2 after the switch")
            } else if a == inputs[0][i] && b == inputs[2][i] {
                if switched0 == nil { switched0 = f }
            } else {
                Issue.record("frame \(f): \(String(describing: a)), \(String(describing: b)) is neither assignment's")
            }
        }
        #expect(switched0 == 1500, "switched at \(String(describing: switched0)): the first frame read after the set")
    }

    @Test func captureLatencyIsThatOfTheInputsAssigned() throws {
        let rig = try InputRig()
        defer { rig.engine.close() }
        rig.device.setCaptureLatency(100, ofInput: 0)
        rig.device.setCaptureLatency(300, ofInput: 2)
        rig.device.setCaptureLatency(50, ofInput: 3)
        #expect(rig.queue.captureLatency == 100)
        try rig.queue.setChannelAssignments([4, 2].map { AudioQueueChannelAssignment(deviceUID: rig.device.uid, channelNumber: $0) })
        #expect(rig.queue.captureLatency == 50)
        try rig.queue.setChannelAssignments([1, 3].map { AudioQueueChannelAssignment(deviceUID: rig.device.uid, channelNumber: $0) })
        #expect(rig.queue.captureLatency == 300)
    }

    @Test func convertingRecordingQueueReadsTheInputsAssigned() throws {
        // At 24 kHz the queue converts: a constant input stays that constant.
        var f = Self.float2
        f.sampleRate = 24000
        let rig = try InputRig(format: f)
        defer { rig.engine.close() }
        try rig.queue.setChannelAssignments([3, 3].map { AudioQueueChannelAssignment(deviceUID: rig.device.uid, channelNumber: $0) })
        try rig.queue.start(at: AudioTimeStamp(sampleTime: 0))
        let inputs: [[Float]] = [0.1, 0.2, 0.3, 0.4].map { [Float](repeating: $0, count: 9600) }
        _ = rig.device.render(frames: 9600, cycle: 256, inputs: inputs)
        rig.engine.deliverPendingEvents()
        let middle = rig.got.values.flatMap { $0.1[0] }.dropFirst(1000).prefix(2000)
        let middle1 = rig.got.values.flatMap { $0.1[1] }.dropFirst(1000).prefix(2000)
        #expect(middle.count == 2000 && middle.allSatisfy { abs($0 - 0.3) < 1e-3 }, "channel 1 reads input 3")
        #expect(middle1.allSatisfy { abs($0 - 0.3) < 1e-3 }, "channel 2 reads input 3")
    }
}
