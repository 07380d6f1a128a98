import CFloatMode
import Testing
@testable import AQCore

/// Issue 20: the render thread flushes denormals to zero.
@Suite struct DenormalTests {
    /// A denormal sample mixed at a volume below 1 would stay a (slow) denormal; the render
    /// thread flushes it to zero.
    @Test func denormalInputMixesToZero() throws {
        let rig = try Rig()
        // From its bits: a division would give 0 on a test thread that already rendered (a
        // render leaves the flush mode set on its thread).
        let denormal = Float(bitPattern: 0x0010_0000)  // 2^-129
        #expect(denormal.isSubnormal)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        rig.send(.setVolume(slot: 0, volume: 0.5, rampFrames: 0))
        rig.send(.enqueue(slot: 0, buffer: rig.buffer(token: 1, frames: 64, start: 0, impulses: Array(0..<64), value: denormal)))
        rig.send(.start(slot: 0, frame: 0, run: 0))
        let out = rig.device.render(frames: 64, cycle: 64)
        #expect(out[0].allSatisfy { $0 == 0 }, "\(out[0].prefix(4))")
        // The same buffer at a normal level plays (the test's samples do reach the output).
        let rig2 = try Rig()
        rig2.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        rig2.send(.setVolume(slot: 0, volume: 0.5, rampFrames: 0))
        rig2.send(.enqueue(slot: 0, buffer: rig2.buffer(token: 1, frames: 64, start: 0, impulses: Array(0..<64), value: 0.25)))
        rig2.send(.start(slot: 0, frame: 0, run: 0))
        #expect(rig2.device.render(frames: 64, cycle: 64)[0].allSatisfy { $0 == 0.125 })
    }

    /// A render leaves the flush bits set on its thread; the hand-driven device gives its
    /// caller's thread its own mode back.
    @Test func renderSetsFlushToZeroAndTheHandDrivenDeviceRestoresIt() throws {
        let bits = aq_float_flush_bits()
        try #require(bits != 0, "an architecture without a known flush mode")
        let saved = aq_float_mode()
        defer { aq_set_float_mode(saved) }
        aq_set_float_mode(saved & ~bits)
        let rig = try Rig()
        _ = rig.device.render(frames: 32, cycle: 32)
        #expect(aq_float_mode() & bits == 0, "the caller's mode is given back")
        let a = UnsafeMutablePointer<Float>.allocate(capacity: 32), b = UnsafeMutablePointer<Float>.allocate(capacity: 32)
        defer { a.deallocate(); b.deallocate() }
        var outs = [a, b]
        outs.withUnsafeMutableBufferPointer { p in
            rig.core.pointee.render(
                CycleInfo(frame: 32, frames: 32, hostTimeNs: 0, nextHostTimeNs: 0),
                outputs: UnsafePointer(p.baseAddress!), channelCount: 2)
        }
        #expect(aq_float_mode() & bits == bits, "the render thread flushes denormals")
    }
}
