import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// `dispose(immediately:whenDisposed:)`: the completion the C API releases a handle with
/// (instead of polling the queue until it is gone).
@Suite struct DisposalCompletionTests {
    /// A mono queue playing one buffer of `frames` frames from device frame 0, one 256-frame
    /// cycle rendered and its events delivered.
    static func playing(frames: Int) throws -> (AudioQueueEngine, ManualDevice, AudioQueue) {
        let (engine, device) = try manualEngine(channels: 1)
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let b = try q.allocateBuffer(capacity: frames * 2)
        fillMono16(b, frames: frames, impulses: [10])
        try q.enqueue(b)
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        _ = device.render(frames: 256, cycle: 256)
        engine.deliverPendingEvents()
        return (engine, device, q)
    }

    /// An asynchronous disposal completes when the last buffer has played: the handler runs
    /// once, then, and calls through the queue are refused as stale.
    @Test func asynchronousDisposalCallsBackOnceWhenTheLastBufferPlayed() throws {
        let (engine, device, q) = try Self.playing(frames: 1000)
        defer { engine.close() }
        let done = Counter()
        try q.dispose(immediately: false, whenDisposed: { done.add() })
        #expect(done.value == 0)
        #expect(throws: AudioQueueError.self) { try q.dispose(immediately: true, whenDisposed: { done.add(100) }) }
        _ = device.render(frames: 256, cycle: 256)
        engine.deliverPendingEvents()
        #expect(done.value == 0, "the buffer has 1000 frames; 512 played")
        _ = device.render(frames: 1024, cycle: 256)
        engine.deliverPendingEvents()
        #expect(done.value == 1)
        #expect(throws: AudioQueueError.self) { try q.start() }
        engine.deliverPendingEvents()
        #expect(done.value == 1)
    }

    /// Immediately, or a queue that is not playing: the handler runs before dispose returns.
    @Test func disposalThatCompletesAtOnceCallsBackBeforeReturning() throws {
        let (engine, _) = try manualEngine(channels: 1)
        defer { engine.close() }
        let done = Counter()
        let a = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try a.dispose(immediately: true, whenDisposed: { done.add() })
        #expect(done.value == 1)
        let b = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try b.dispose(immediately: false, whenDisposed: { done.add(10) })
        #expect(done.value == 11)
    }

    /// A disposal still draining when the engine closes completes with the close.
    @Test func closingTheEngineCompletesAPendingDisposal() throws {
        let (engine, _, q) = try Self.playing(frames: 10000)
        let done = Counter()
        try q.dispose(immediately: false, whenDisposed: { done.add() })
        #expect(done.value == 0)
        engine.close()
        #expect(done.value == 1)
    }
}
