@testable import AQCore
@testable import AQEngine
import AQTypes
import Foundation
import Testing

/// Issue 20: a slot is free only once the render thread applied its release.
@Suite struct SlotLifetimeTests {
    /// A queue disposed of after its drain while the command ring is full: its release cannot
    /// be sent, so its slot must not be handed to the next queue (which would be live twice on
    /// the render thread: mixed twice, and the renderer's list of live slots overrun). The
    /// release is sent before the next queue is made, and the new queue plays once.
    @Test func slotIsNotReusedBeforeItsReleaseWasApplied() throws {
        let (engine, device) = try manualEngine(
            channels: 1, capacities: RenderCapacities(queues: 3, buffersPerQueue: 4, commands: 16, outputChannels: 2))
        defer { engine.close() }
        let gate = Gate()
        let held = Counter()
        let b = try engine.newOutput(format: int16Mono48k) { _, _ in
            if held.value == 0 { held.add(); gate.arriveAndWait() }
        }
        let a = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let filler = try engine.newOutput(format: int16Mono48k) { _, _ in }
        func constant(_ q: AudioQueue, frames: Int) throws -> AudioQueueBuffer {
            let x = try q.allocateBuffer(capacity: frames * 2)
            fillMono16(x, frames: frames, impulses: Array(0..<frames), value: 16384)
            return x
        }
        try b.enqueue(try constant(b, frames: 16))
        try b.start()
        try a.enqueue(try constant(a, frames: 64))
        try a.start()
        _ = device.render(frames: 16, cycle: 16)
        gate.waitForArrival()  // the events thread is held in b's callback
        let slotA = Int(a.slot)
        try a.dispose(immediately: false)  // drains first
        _ = device.render(frames: 64, cycle: 64)  // a drains: its stop is reported
        // The command ring full: a's release, sent when its stop is handled, finds no room.
        var refused = false
        for _ in 0..<100 {
            do { try filler.setParameter(.volume, 0.5) } catch { refused = true; break }
        }
        try #require(refused)
        gate.open()
        engine.deliverPendingEvents()
        #expect(engine.shared.locked { engine.shared.unreleasedSlots } == [Int32(slotA)])
        #expect(!engine.shared.core.pointee.isSlotFree(slotA), "the render thread still has it")
        _ = device.render(frames: 16, cycle: 16)  // the ring drains
        let c = try engine.newOutput(format: int16Mono48k) { _, _ in }
        #expect(engine.shared.locked { engine.shared.unreleasedSlots }.isEmpty)
        try c.enqueue(try constant(c, frames: 64))
        try c.start()
        let out = device.render(frames: 64, cycle: 64)
        #expect(engine.shared.core.pointee.liveCount.pointee == 3, "b, the filler and c")
        #expect(out[0].allSatisfy { $0 == 0.5 }, "c plays once: \(out[0].prefix(4))")
    }
}

extension EngineShared {
    func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
