import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// Playback and recording queues answer the calls they share (`AudioQueueCommon`) alike: the
/// same device rule, the same result codes on a disposed queue, the same property bytes.
@Suite struct AudioQueueCommonTests {
    /// One engine with inputs, a playback and a recording queue on it.
    static func queues() throws -> (AudioQueueEngine, [any AudioQueueCommon]) {
        let device = ManualDevice(sampleRate: 48000, channels: 2, inputChannels: 2)
        let engine = try AudioQueueEngine(device: device, capacities: RenderCapacities(queues: 4, buffersPerQueue: 8, commands: 64, outputChannels: 2, inputChannels: 2, captureFrames: 8192))
        let output = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        let input = try engine.newInput(format: int16Stereo48k) { _, _, _, _ in }
        return (engine, [output, input])
    }

    func code(_ body: () throws -> Void) -> AudioQueueError.Code? {
        do { try body(); return nil } catch let e as AudioQueueError { return e.code } catch { return nil }
    }

    @Test func bothKindsTakeOnlyTheirEnginesDevice() throws {
        let (engine, queues) = try Self.queues()
        defer { engine.close() }
        for q in queues {
            #expect(code { try q.setCurrentDevice("manual") } == nil, "\(type(of: q))")
            #expect(code { try q.setCurrentDevice("another") } == .invalidDevice, "\(type(of: q))")
            #expect(try q.property(AudioQueuePropertyID.currentDevice.rawValue) == Array("manual".utf8), "\(type(of: q))")
        }
    }

    @Test func bothKindsRunTheVerbsAndTheBuffers() throws {
        let (engine, queues) = try Self.queues()
        defer { engine.close() }
        for q in queues {
            let b = try q.allocateBuffer(capacity: 4096, packetDescriptions: 0)
            #expect(b.audioDataBytesCapacity == 4096)
            try q.pause()
            try q.flush()
            try q.reset()
            try q.stop(immediately: true)
            #expect(!q.isRunning, "\(type(of: q))")
            try q.freeBuffer(b)
            #expect(code { try q.freeBuffer(b) } == .invalidBuffer, "\(type(of: q)): a buffer freed twice")
            let t = q.createTimeline()
            #expect(q.currentTime(timeline: t).discontinuity == false, "\(type(of: q))")
        }
    }
}
