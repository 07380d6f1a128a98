import CMembarrier
import Foundation
import Testing

@testable import AQCore

/// The renderer's gate (docs/architecture.md, "The gate") in both of its modes, the asymmetric
/// one (membarrier) and the compare-and-swap one, with a device that skips a cycle the control
/// side holds (realtime) and one that waits for it (hand-driven) (issue 20).
@Suite struct RenderGateTests {
    /// The modes this machine has: the compare-and-swap gate (0) always, the asymmetric one (1)
    /// where the process could register for membarrier(2).
    static var modes: [Int] { aq_membarrier_register() == 0 ? [0, 1] : [0] }

    /// A rig whose gate is in `mode`, with one mono queue playing from frame 0 a ramp whose
    /// sample at queue frame `f` is `f + 1`.
    func playingRig(mode: Int) throws -> Rig {
        let rig = try Rig(channels: 1)
        rig.core.pointee.gate.pointee.asymmetric.store(mode, ordering: .releasing)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        let p = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        for i in 0..<4096 { p[i] = Float(i + 1) }
        rig.storage.append(p)
        rig.send(.enqueue(slot: 0, buffer: ScheduledBuffer(token: 1, data: p, stride: 4096, frames: 4096, start: 0)))
        rig.send(.start(slot: 0, frame: 0, run: 0))
        return rig
    }

    /// The control side applies commands only while the render thread is out of a cycle, and
    /// leaves the gate open after applying them.
    @Test(arguments: modes)
    func controlAppliesOnlyOutsideACycle(mode: Int) throws {
        let rig = try Rig(channels: 1)
        let core = rig.core.pointee
        core.gate.pointee.asymmetric.store(mode, ordering: .releasing)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        let before = core.commandsApplied
        core.gate.pointee.inCycle.store(1, ordering: .releasing)  // as the render thread inside a cycle
        #expect(!core.applyPendingIfIdle(at: 0), "refused while the render thread is in a cycle")
        #expect(core.commandsApplied == before, "nothing applied meanwhile")
        #expect(core.gate.pointee.claimed.load(ordering: .acquiring) == 0, "the claim taken back")
        core.gate.pointee.inCycle.store(0, ordering: .releasing)
        #expect(core.applyPendingIfIdle(at: 0), "applied once the render thread is out")
        #expect(core.commandsApplied == before + 1)
        #expect(core.gate.pointee.claimed.load(ordering: .acquiring) == 0)
        #expect(core.gate.pointee.inCycle.load(ordering: .acquiring) == 0, "the gate left open")
    }

    /// A realtime device never waits: a cycle the control side holds is skipped (silent,
    /// counted, no command applied), and the next one plays on where the queue's timeline is
    /// at its frames (the skipped cycle's frames are not played).
    @Test(arguments: modes)
    func aRealtimeDeviceSkipsAHeldCycle(mode: Int) throws {
        let rig = try playingRig(mode: mode)
        let core = rig.core.pointee
        core.setWaitsForControl(false)
        #expect(nonZero(rig.device.render(frames: 64, cycle: 64)[0]).count == 64, "the queue plays")
        rig.holdGate()
        rig.send(.setVolume(slot: 0, volume: 0.5, rampFrames: 0))
        let applied = core.commandsApplied
        let skipped = core.statistics.skippedCycles
        let held = rig.device.render(frames: 64, cycle: 64)[0]
        #expect(nonZero(held).isEmpty, "the held cycle is silent")
        #expect(core.statistics.skippedCycles == skipped + 1, "and counted")
        #expect(core.commandsApplied == applied, "no command applied while the gate was held")
        rig.releaseGate()
        let next = rig.device.render(frames: 64, cycle: 64)[0]
        #expect(next == (128..<192).map { 0.5 * Float($0 + 1) }, "the next cycle applies the command and plays its own frames")
    }

    /// A hand-driven device waits for the control side instead: the cycle it was asked for
    /// while the gate was held is rendered once the gate opens, not skipped. (Whether the
    /// render thread reached the gate before it opened is not observable without a sleep; it is
    /// started first, and one that did not wait would have skipped the cycle.)
    @Test(arguments: modes)
    func aHandDrivenDeviceWaitsForAHeldGate(mode: Int) throws {
        let rig = try playingRig(mode: mode)
        let core = rig.core.pointee
        core.setWaitsForControl(true)
        rig.holdGate()
        let skipped = core.statistics.skippedCycles
        let started = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let out = RenderedOutput()
        let device = rig.device
        let thread = Thread {
            started.signal()
            out.set(device.render(frames: 64, cycle: 64)[0])
            done.signal()
        }
        thread.start()
        started.wait()
        rig.releaseGate()
        #expect(done.wait(timeout: .now() + 10) == .success, "the render returns once the gate opens")
        #expect(core.statistics.skippedCycles == skipped, "nothing skipped")
        #expect(nonZero(out.get()).count == 64, "the cycle played")
    }
}

/// One channel a render thread handed over (an NSLock: the test helpers' rule for TSan,
/// .ci/run).
final class RenderedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var samples: [Float] = []
    func set(_ s: [Float]) { lock.lock(); samples = s; lock.unlock() }
    func get() -> [Float] { lock.lock(); defer { lock.unlock() }; return samples }
}
