import Testing
@testable import AQCore

/// Issue 20: a live slot is never activated twice.
@Suite struct SlotActivationTests {
    /// An activation of a live slot changes nothing: the queue is mixed once, and the list of
    /// live slots keeps one entry per queue.
    @Test func activatingALiveSlotIsIgnored() throws {
        let rig = try Rig(queues: 2)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        rig.send(.enqueue(slot: 0, buffer: rig.buffer(token: 1, frames: 64, start: 0, impulses: Array(0..<64), value: 0.25)))
        rig.send(.start(slot: 0, frame: 0, run: 0))
        _ = rig.device.render(frames: 16, cycle: 16)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 2))
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 3))
        let out = rig.device.render(frames: 16, cycle: 16)
        #expect(rig.core.pointee.liveCount.pointee == 1)
        #expect(out[0].allSatisfy { $0 == 0.25 }, "the queue plays on, once: \(out[0].prefix(4))")
        #expect(!rig.core.pointee.isSlotFree(0))
        #expect(rig.core.pointee.isSlotFree(1))
        // Released, the slot is free and can be activated again.
        rig.send(.release(slot: 0))
        _ = rig.device.render(frames: 16, cycle: 16)
        #expect(rig.core.pointee.isSlotFree(0))
        #expect(rig.core.pointee.liveCount.pointee == 0)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 4))
        _ = rig.device.render(frames: 16, cycle: 16)
        #expect(rig.core.pointee.liveCount.pointee == 1)
        #expect(!rig.core.pointee.isSlotFree(0))
    }
}
