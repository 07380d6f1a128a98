import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// Latency per port (issue 21) on the hand-driven device: the device reports a capture latency
/// per input and a playback latency per output, the engine passes them on, and an input queue
/// subtracts the largest capture latency of the inputs it records (one time axis for all its
/// channels), saying with each buffer which value it used.
@Suite struct PerPortLatencyTests {
    /// Per-channel values, the summary (the largest of each side), setting the summary sets
    /// every channel, channels the device does not have report 0.
    @Test func deviceAndEngineReportEachChannel() throws {
        let device = ManualDevice(sampleRate: 48000, channels: 3, inputChannels: 2)
        #expect(device.latency == DeviceLatency())
        device.setCaptureLatency(300, ofInput: 1)
        device.setPlaybackLatency(100, ofOutput: 0)
        device.setPlaybackLatency(400, ofOutput: 2)
        let engine = try AudioQueueEngine(device: device, capacities: RenderCapacities(queues: 2, outputChannels: 3, inputChannels: 2))
        defer { engine.close() }
        #expect(engine.captureLatency(ofInput: 0) == 0 && engine.captureLatency(ofInput: 1) == 300)
        #expect(engine.captureLatency(ofInput: 2) == 0 && engine.captureLatency(ofInput: -1) == 0)
        #expect((0..<4).map { engine.playbackLatency(ofOutput: $0) } == [100, 0, 400, 0])
        #expect(engine.latency == DeviceLatency(capture: 300, playback: 400))
        #expect(engine.captureLatency(ofInputs: 0..<1) == 0 && engine.captureLatency(ofInputs: 0..<2) == 300)
        #expect(engine.playbackLatency(ofOutputs: [0, 1]) == 100 && engine.playbackLatency(ofOutputs: []) == 0)
        device.latency = DeviceLatency(capture: 7, playback: 9)
        #expect(engine.captureLatency(ofInput: 0) == 7 && engine.captureLatency(ofInput: 1) == 7)
        #expect((0..<3).map { engine.playbackLatency(ofOutput: $0) } == [9, 9, 9])
        // A side without channels keeps the value set as its summary (as before issue 21).
        let outputsOnly = ManualDevice(channels: 1)
        outputsOnly.latency = DeviceLatency(capture: 12, playback: 345)
        #expect(outputsOnly.latency == DeviceLatency(capture: 12, playback: 345))
    }

    /// One buffer the callback received: its time stamp, the capture latency it says was
    /// subtracted, and channel by channel the indices of its non-zero samples.
    struct Got: @unchecked Sendable {
        var time: AudioTimeStamp
        var latency: Int
        var impulses: [[Int]]
    }

    /// Inputs 0 (capture latency 0) and 1 (300) both receive impulses at the same device frames.
    /// A mono queue (input 0) stamps them at their arrival; a stereo queue (inputs 0 and 1)
    /// stamps both channels 300 frames earlier (the largest of its ports), and every buffer says
    /// 300. A mono queue on a device whose input 0 alone has latency 300 moves by 300.
    @Test(arguments: [(first: 0, second: 300, channels: 1, expected: 0),
                      (first: 0, second: 300, channels: 2, expected: 300),
                      (first: 300, second: 0, channels: 1, expected: 300),
                      (first: 300, second: 0, channels: 2, expected: 300)])
    func aQueueSubtractsTheLargestLatencyOfItsInputs(first: Int, second: Int, channels: Int, expected: Int) throws {
        let device = ManualDevice(sampleRate: 48000, channels: 1, inputChannels: 2)
        device.setCaptureLatency(first, ofInput: 0)
        device.setCaptureLatency(second, ofInput: 1)
        let engine = try AudioQueueEngine(device: device, capacities: RenderCapacities(queues: 2, outputChannels: 1, inputChannels: 2, captureFrames: 16384))
        defer { engine.close() }
        let format = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: UInt32(channels), bits: 32, isFloat: true)
        let got = Recorder<Got>()
        let queue = try engine.newInput(format: format) { q, b, t, _ in
            let n = b.audioDataByteSize / Int(format.bytesPerFrame)
            let p = b.audioData.bindMemory(to: Float.self, capacity: max(n * channels, 1))
            got.append(Got(time: t, latency: b.captureLatency, impulses: (0..<channels).map { c in (0..<n).filter { p[$0 * channels + c] != 0 } }))
            try? q.enqueue(b)
        }
        for _ in 0..<4 { try queue.enqueue(try queue.allocateBuffer(capacity: 500 * Int(format.bytesPerFrame))) }
        #expect(queue.captureLatency == expected)
        _ = try queue.start(at: AudioTimeStamp(sampleTime: 0))
        let arrivals = [0, 255, 256, 499, 500, 777, 2047]
        var samples = [Float](repeating: 0, count: 3000)
        for d in arrivals { samples[d] = 1 }
        var done = 0
        while done < samples.count {
            let n = min(256, samples.count - done)
            let cycle = Array(samples[done..<(done + n)])
            _ = device.render(frames: n, cycle: n, inputs: [cycle, cycle])
            engine.deliverPendingEvents()
            done += n
        }
        let values = got.values
        try #require(values.count >= 5)
        #expect(values.allSatisfy { $0.latency == expected })
        for c in 0..<channels {
            let stamped = values.flatMap { g in g.impulses[c].map { Int64(g.time.sampleTime) + Int64($0) } }
            #expect(stamped == arrivals.map { Int64($0 - expected) }, "channel \(c)")
        }
    }
}
