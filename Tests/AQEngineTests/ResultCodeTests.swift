import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// Every result code of the reference that applies to output queues, provoked.
@Suite struct ResultCodeTests {
    func code(_ body: () throws -> Void) -> AudioQueueError.Code? {
        do { try body(); return nil } catch let e as AudioQueueError { return e.code } catch { return nil }
    }

    @Test func bufferCodes() throws {
        let (engine, _) = try manualEngine()
        defer { engine.close() }
        let q1 = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        let q2 = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        let b = try q1.allocateBuffer(capacity: 400)
        // Empty buffer.
        #expect(code { try q1.enqueue(b) } == .bufferEmpty)
        #expect(AudioQueueError.Code.bufferEmpty.rawValue == -66686)
        b.audioDataByteSize = 400
        // Trims that leave nothing.
        #expect(code { try q1.enqueue(b, trimFramesAtStart: 60, trimFramesAtEnd: 40) } == .bufferEmpty)
        // Another queue's buffer.
        #expect(code { try q2.enqueue(b) } == .invalidBuffer)
        #expect(AudioQueueError.Code.invalidBuffer.rawValue == -66687)
        try q1.enqueue(b, startTime: AudioTimeStamp(sampleTime: 1000))
        // Already enqueued.
        #expect(code { try q1.enqueue(b) } == .bufferEnqueuedTwice)
        #expect(AudioQueueError.Code.bufferEnqueuedTwice.rawValue == -66666)
        // Free while enqueued.
        #expect(code { try q1.freeBuffer(b) } == .bufferInQueue)
        #expect(AudioQueueError.Code.bufferInQueue.rawValue == -66679)
        // Start time out of order: before the end of the previous buffer (1000 + 100).
        let c = try q1.allocateBuffer(capacity: 400)
        c.audioDataByteSize = 400
        #expect(code { try q1.enqueue(c, startTime: AudioTimeStamp(sampleTime: 1099)) } == .invalidParameter)
        #expect(try q1.enqueue(c, startTime: AudioTimeStamp(sampleTime: 1100)).sampleTime == 1100)
        // Another queue's buffer freed through the wrong queue.
        #expect(code { try q2.freeBuffer(b) } == .invalidBuffer)
    }

    @Test func parameterAndPropertyCodes() throws {
        let (engine, _) = try manualEngine()
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        #expect(code { try q.setParameter(rawID: 99, 1) } == .invalidParameter)
        #expect(AudioQueueError.Code.invalidParameter.rawValue == -66682)
        let b = try q.allocateBuffer(capacity: 400)
        b.audioDataByteSize = 400
        #expect(code { try q.enqueue(b, parameterEvents: [AudioQueueParameterEvent(rawParameter: 7, value: 1)]) } == .invalidParameter)
        #expect(code { _ = try q.currentLevelMeter() } == .invalidProperty)
        #expect(AudioQueueError.Code.invalidProperty.rawValue == -66684)
        #expect(code { try q.setChannelLayout(.mono) } == .invalidPropertySize)
        #expect(AudioQueueError.Code.invalidPropertySize.rawValue == -66683)
        try q.setChannelLayout(.stereo)
        #expect(q.channelLayout == .stereo)
        #expect(q.deviceSampleRate == 48000)
        #expect(q.deviceChannelCount == 2)
        #expect(q.currentDevice == "manual")
        #expect(!q.isRunning)
    }

    /// Issue 22: enqueueing from the callbacks an immediate stop or a reset makes is
    /// `enqueueDuringReset` (Apple's rule); after the call returns the buffer enqueues again.
    /// A compressed buffer given more packet descriptions than it was allocated with takes
    /// them once grown; the new properties read as documented.
    @Test func enqueueDuringResetAndLaterProperties() throws {
        let (engine, _) = try manualEngine()
        defer { engine.close() }
        final class Box: @unchecked Sendable { var q: AudioQueue?; var codes: [AudioQueueError.Code?] = [] }
        let box = Box()
        let q = try engine.newOutput(format: int16Stereo48k) { q, b in
            box.codes.append(self.code { try q.enqueue(b) })
        }
        box.q = q
        let b = try q.allocateBuffer(capacity: 400)
        b.audioDataByteSize = 400
        try q.enqueue(b)
        #expect(code { try q.enqueue(b) } == .bufferEnqueuedTwice)
        try q.reset()
        try q.enqueue(b)
        try q.stop(immediately: true)
        #expect(box.codes == [.enqueueDuringReset, .enqueueDuringReset])
        #expect(AudioQueueError.Code.enqueueDuringReset.rawValue == -66632)
        #expect(try q.property(AudioQueuePropertyID.streamDescription.rawValue) == int16Stereo48k.propertyBytes)
        #expect(try q.property(AudioQueuePropertyID.maximumOutputPacketSize.rawValue) == [4, 0, 0, 0])
        #expect(code { try q.setProperty(AudioQueuePropertyID.decodeBufferSizeFrames.rawValue, [0, 0, 0, 0]) } == .invalidPropertyValue)
        try q.setProperty(AudioQueuePropertyID.decodeBufferSizeFrames.rawValue, [0, 0x20, 0, 0])
        #expect(try q.property(AudioQueuePropertyID.decodeBufferSizeFrames.rawValue) == [0, 0x20, 0, 0])
        #expect(code { try q.setProperty(AudioQueuePropertyID.converterError.rawValue, [0, 0, 0, 0]) } == .invalidProperty)
    }

    @Test func formatAndCapacityCodes() throws {
        let (engine, _) = try manualEngine(capacities: RenderCapacities(queues: 2, buffersPerQueue: 4, commands: 64, outputChannels: 2))
        defer { engine.close() }
        var nine = int16Stereo48k
        nine.channelsPerFrame = 9
        nine.bytesPerFrame = 18
        nine.bytesPerPacket = 18
        #expect(code { _ = try engine.newOutput(format: nine) { _, _ in } } == .unsupportedDataFormat)
        #expect(AudioQueueError.Code.unsupportedDataFormat.rawValue == 1_718_449_215)
        // MP3, AAC and ALAC are decoded (issue 6); other compressed formats are refused.
        var ac3 = int16Stereo48k
        ac3.formatID = "ac-3"
        #expect(code { _ = try engine.newOutput(format: ac3) { _, _ in } } == .unsupportedDataFormat)
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        _ = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        #expect(code { _ = try engine.newOutput(format: int16Stereo48k) { _, _ in } } == .capacityExceeded)
        // A queue holds buffersPerQueue - 1 buffers at once.
        for _ in 0..<3 {
            let b = try q.allocateBuffer(capacity: 4)
            b.audioDataByteSize = 4
            try q.enqueue(b)
        }
        let extra = try q.allocateBuffer(capacity: 4)
        extra.audioDataByteSize = 4
        #expect(code { try q.enqueue(extra) } == .capacityExceeded)
    }

    @Test func disposalPendingAndCannotStart() throws {
        let (engine, device) = try manualEngine()
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        let b = try q.allocateBuffer(capacity: 400)
        b.audioDataByteSize = 400
        // Disposal after the enqueued buffers: pending until they played.
        try q.enqueue(b)
        try q.start()
        try q.dispose(immediately: false)
        let c = try? q.allocateBuffer(capacity: 400)
        #expect(c == nil)
        #expect(code { try q.start() } == .disposalPending)
        #expect(code { try q.dispose(immediately: true) } == .disposalPending)
        #expect(AudioQueueError.Code.disposalPending.rawValue == -66685)
        _ = device.render(frames: 256, cycle: 256)
        engine.deliverPendingEvents()
        // Disposed of: the handle is stale.
        #expect(code { try q.enqueue(b) } == .invalidQueue)
        #expect(code { try q.dispose(immediately: true) } == .invalidQueue)
        #expect(AudioQueueError.Code.invalidQueue.rawValue == -50)
        let q2 = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        let running = Recorder<Bool>()
        q2.addPropertyListener(.isRunning) { q, _ in running.append(q.isRunning) }
        let b2 = try q2.allocateBuffer(capacity: 40000)
        b2.audioDataByteSize = 40000
        try q2.enqueue(b2)
        try q2.start()
        _ = device.render(frames: 256, cycle: 256)
        #expect(delivered(engine) { running.values == [true] })
        engine.deviceLost("the JACK server went away")
        #expect(delivered(engine) { running.values == [true, false] })
        #expect(q2.error?.code == .cannotStart)
        #expect(code { try q2.start() } == .cannotStart)
        #expect(AudioQueueError.Code.cannotStart.rawValue == -66681)
    }

    @Test func invalidRunState() throws {
        let (engine, device) = try manualEngine()
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        let b = try q.allocateBuffer(capacity: 40000)
        b.audioDataByteSize = 40000
        try q.enqueue(b)
        try q.start()
        _ = device.render(frames: 256, cycle: 256)
        #expect(delivered(engine) { q.isRunning })
        #expect(code { try q.setChannelLayout(.stereo) } == .invalidRunState)
        #expect(AudioQueueError.Code.invalidRunState.rawValue == -66678)
    }
}
