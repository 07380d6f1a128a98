import Testing
@testable import AQCore

/// The renderer's steady-state fast path (a playing stereo queue on outputs 0/1 at a steady
/// gain, inside one buffer) must give exactly the sums of the general path. Metering sends a
/// queue through the general path without changing what it mixes, so the same schedule with
/// and without metering must render bit for bit the same output.
@Suite struct MixFastPathTests {
    /// Renders two stereo queues (buffers of awkward lengths, a late start, a gain ramp and a
    /// per-buffer volume) for `cycles` cycles of `frames` frames and returns both channels.
    func render(metering: Bool, frames: Int, cycles: Int) throws -> [[Float]] {
        let rig = try Rig(channels: 2)
        var tokens: UInt32 = 0
        func stereo(_ n: Int, start: Int64, seed: Int, volume: Float = .nan) -> ScheduledBuffer {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: 2 * n)
            for i in 0..<(2 * n) { p[i] = Float((i &* 7919 &+ seed &* 104_729) % 1999) / 1000 - 1 }
            rig.storage.append(p)
            tokens += 1
            return ScheduledBuffer(token: tokens, data: p, stride: Int32(n), frames: Int32(n), start: start, volume: volume)
        }
        for slot: Int32 in 0...1 {
            rig.send(.activate(slot: slot, channels: 2, map: .standard(channels: 2), generation: 1))
            rig.send(.setMetering(slot: slot, enabled: metering))
        }
        rig.send(.setVolume(slot: 0, volume: 0.7, rampFrames: 0))
        var start: Int64 = 0
        for (i, n) in [1000, 777, 2048, 31].enumerated() {
            rig.send(.enqueue(slot: 0, buffer: stereo(n, start: start, seed: i, volume: i == 2 ? 0.4 : .nan)))
            start += Int64(n)
        }
        rig.send(.enqueue(slot: 1, buffer: stereo(3001, start: 13, seed: 9)))
        rig.send(.start(slot: 0, frame: 5, run: 0))
        rig.send(.start(slot: 1, frame: 0, run: 0))
        var out = rig.device.render(frames: frames * cycles / 2, cycle: frames)
        // A gain ramp in the middle: the general path while it ramps, the fast path after.
        rig.send(.setVolume(slot: 1, volume: 0.2, rampFrames: Int32(frames * 3 + 7)))
        let rest = rig.device.render(frames: frames * cycles - frames * cycles / 2, cycle: frames)
        for c in 0..<2 { out[c] += rest[c] }
        return out
    }

    @Test(arguments: [32, 64, 256])
    func fastPathMatchesGeneralPath(frames: Int) throws {
        let general = try render(metering: true, frames: frames, cycles: 4096 / frames * 2)
        let fast = try render(metering: false, frames: frames, cycles: 4096 / frames * 2)
        #expect(nonZero(fast[0]).count > 3800, "the queues played (3856 frames from frame 5)")
        for c in 0..<2 {
            let firstDifference = fast[c].indices.first { fast[c][$0] != general[c][$0] }
            #expect(firstDifference == nil, "channel \(c) differs first at frame \(firstDifference ?? -1)")
        }
    }
}

/// The steady-state record (`HotSlot`, issue 13) must be dropped by every command and by a
/// jump in device time, and taken up again after the general path: a queue mixed through it
/// renders bit for bit what the general path renders. Metering keeps a queue on the general
/// path, so the same scenario with and without metering must match, through a mid-buffer gain
/// change, an enqueue while the queue plays, a channel swap, a pause and resume, a skipped stretch of device time, a
/// solo'd cycle and a cycle skipped while the gate was held.
@Suite struct SteadyStateRecordTests {
    func render(metering: Bool, frames: Int) throws -> [[Float]] {
        let rig = try Rig(channels: 2)
        var tokens: UInt32 = 0
        func stereo(_ n: Int, start: Int64, seed: Int) -> ScheduledBuffer {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: 2 * n)
            for i in 0..<(2 * n) { p[i] = Float((i &* 7919 &+ seed &* 104_729) % 1999) / 1000 - 1 }
            rig.storage.append(p)
            tokens += 1
            return ScheduledBuffer(token: tokens, data: p, stride: Int32(n), frames: Int32(n), start: start)
        }
        for slot: Int32 in 0...2 {
            rig.send(.activate(slot: slot, channels: 2, map: .standard(channels: 2), generation: 1))
            rig.send(.setMetering(slot: slot, enabled: metering))
            rig.send(.enqueue(slot: slot, buffer: stereo(9000 + Int(slot) * 13, start: 0, seed: Int(slot))))
            rig.send(.enqueue(slot: slot, buffer: stereo(5000, start: 9000 + Int64(slot) * 13, seed: 7 + Int(slot))))
            rig.send(.start(slot: slot, frame: Int64(slot) * 3, run: 0))
        }
        rig.send(.setVolume(slot: 1, volume: 0.5, rampFrames: 0))
        var out: [[Float]] = [[], []]
        func play(_ cycles: Int) {
            let o = rig.device.render(frames: frames * cycles, cycle: frames)
            for c in 0..<2 { out[c] += o[c] }
        }
        play(8)
        rig.send(.setVolume(slot: 0, volume: 0.3, rampFrames: 0))  // mid-buffer, no ramp
        play(5)
        rig.send(.enqueue(slot: 2, buffer: stereo(3000, start: 14026, seed: 20)))  // keeps the record
        play(3)
        rig.send(.setChannelMap(slot: 1, map: ChannelMap([1, 0])))  // swapped: general path
        play(5)
        rig.send(.setChannelMap(slot: 1, map: .standard(channels: 2)))
        play(3)
        rig.send(.pause(slot: 2))
        play(4)
        rig.send(.start(slot: 2, frame: nil, run: 1))  // resume
        play(6)
        rig.device.skip(frames: 333)  // a jump in device time: the record no longer holds
        play(6)
        rig.core.pointee.setSolo(0)
        play(2)
        rig.core.pointee.setSolo(nil)
        play(3)
        skipOneCycle(rig, frames: frames, into: &out)  // the records no longer hold after it
        play(4096 / frames * 3)
        return out
    }

    /// Renders one cycle while the gate is held as a control thread applying commands holds
    /// it, on a device that does not wait for it (as a realtime one): the renderer skips the
    /// cycle (silent) and its queues do not advance, so the next cycle must take the general
    /// path (which counts what is late) rather than the steady records.
    func skipOneCycle(_ rig: Rig, frames: Int, into out: inout [[Float]]) {
        let core = rig.core.pointee
        let waits = core.control.pointee.waitsForControl.load(ordering: .relaxed)
        core.control.pointee.waitsForControl.store(0, ordering: .relaxed)
        rig.holdGate()
        let skipped = core.statistics.skippedCycles
        let o = rig.device.render(frames: frames, cycle: frames)
        for c in 0..<2 { out[c] += o[c] }
        #expect(core.statistics.skippedCycles == skipped + 1, "the cycle was skipped")
        rig.releaseGate()
        core.control.pointee.waitsForControl.store(waits, ordering: .relaxed)
    }

    @Test(arguments: [32, 64, 256])
    func recordMatchesGeneralPath(frames: Int) throws {
        let general = try render(metering: true, frames: frames)
        let steady = try render(metering: false, frames: frames)
        #expect(nonZero(steady[0]).count > steady[0].count / 2, "the queues played")
        for c in 0..<2 {
            #expect(steady[c].count == general[c].count)
            let firstDifference = steady[c].indices.first { steady[c][$0] != general[c][$0] }
            #expect(firstDifference == nil, "channel \(c) differs first at frame \(firstDifference ?? -1)")
        }
    }

    /// Buffers that end exactly at a cycle's end: the next buffer's first cycle uses the
    /// record too, unless the device skipped frames at that moment, when the general path must
    /// count the next buffer's late frames as before. Output, late frames and every event
    /// match the general path's.
    func boundaries(metering: Bool, frames: Int) throws -> (out: [[Float]], late: UInt64, events: [String]) {
        let rig = try Rig(channels: 2)
        rig.send(.activate(slot: 0, channels: 2, map: .standard(channels: 2), generation: 1))
        rig.send(.setMetering(slot: 0, enabled: metering))
        for b in 0..<4 {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 4096)
            for i in 0..<(2 * 4096) { p[i] = Float((i &* 7919 &+ b &* 104_729) % 1999) / 1000 - 1 }
            rig.storage.append(p)
            rig.send(.enqueue(slot: 0, buffer: ScheduledBuffer(
                token: UInt32(b), data: p, stride: 4096, frames: 4096, start: Int64(b * 4096))))
        }
        rig.send(.start(slot: 0, frame: 0, run: 0))
        var out: [[Float]] = [[], []]
        func play(_ cycles: Int) {
            let o = rig.device.render(frames: frames * cycles, cycle: frames)
            for c in 0..<2 { out[c] += o[c] }
        }
        play(4096 / frames)  // up to the first boundary exactly
        play(4096 / frames)  // through the second buffer (on time: the record's first frame)
        rig.device.skip(frames: Int64(2 * frames))  // at the next boundary: buffer 3 is late
        play(4096 / frames * 2)
        let events = rig.events().map { String(describing: $0) }
        return (out, rig.core.pointee.statistics.lateFrames, events)
    }

    @Test(arguments: [32, 64, 256])
    func buffersEndingOnCycleBoundaries(frames: Int) throws {
        let general = try boundaries(metering: true, frames: frames)
        let steady = try boundaries(metering: false, frames: frames)
        #expect(general.late == UInt64(2 * frames), "the skipped frames of the third buffer are late")
        #expect(steady.late == general.late)
        #expect(steady.events == general.events)
        for c in 0..<2 {
            let firstDifference = steady.out[c].indices.first { steady.out[c][$0] != general.out[c][$0] }
            #expect(firstDifference == nil, "channel \(c) differs first at frame \(firstDifference ?? -1)")
        }
    }
}

/// Steady queues are mixed several at a time (two in issue 13, up to four since issue 20), and
/// the first one mixed writes the outputs instead of clearing them first (issue 13). Seven
/// queues (four and three: a group of four, and a pair and a queue alone) with
/// staggered starts (cycles where none plays, and where only some are steady), buffers ending
/// on and off cycle boundaries, and a queue on the general path between steady ones: the
/// output is bit for bit the general path's (metering on), and bit for bit the sum of the
/// queues added one after the other in order, computed here from the sources.
@Suite struct PairedMixTests {
    static let queues = 7

    /// Every source sample of queue `q`, channel `c`, at queue frame `f`.
    static func sample(_ q: Int, _ c: Int, _ f: Int) -> Float {
        Float(((f &* 7919) &+ (q &* 104_729) &+ c &* 31) % 1999) / 1000 - 1
    }
    static func gain(_ q: Int) -> Float { 0.3 + Float(q) * 0.11 }
    static func start(_ q: Int) -> Int64 { Int64(q) * 45 }
    /// Buffer lengths: 4096 for the even queues (ends on cycle boundaries of 32, 64, 256),
    /// 3001 for the odd ones (ends inside a cycle: the general path).
    static func bufferFrames(_ q: Int) -> Int { q % 2 == 0 ? 4096 : 3001 }

    func render(metering: Bool, frames: Int, cycles: Int) throws -> (out: [[Float]], events: [String]) {
        let rig = try Rig(channels: 2, queues: Self.queues)
        for q in 0..<Self.queues {
            let slot = Int32(q), n = Self.bufferFrames(q)
            rig.send(.activate(slot: slot, channels: 2, map: .standard(channels: 2), generation: 1))
            rig.send(.setMetering(slot: slot, enabled: metering))
            rig.send(.setVolume(slot: slot, volume: Self.gain(q), rampFrames: 0))
            for b in 0..<3 {
                let p = UnsafeMutablePointer<Float>.allocate(capacity: 2 * n)
                for c in 0..<2 { for i in 0..<n { p[c * n + i] = Self.sample(q, c, b * n + i) } }
                rig.storage.append(p)
                rig.send(.enqueue(slot: slot, buffer: ScheduledBuffer(
                    token: UInt32(q * 3 + b), data: p, stride: Int32(n), frames: Int32(n), start: Int64(b * n))))
            }
            rig.send(.start(slot: slot, frame: 100 + Self.start(q), run: 0))
        }
        let out = rig.device.render(frames: frames * cycles, cycle: frames)
        return (out, rig.events().map { String(describing: $0) })
    }

    @Test(arguments: [32, 64, 256])
    func pairsMatchTheGeneralPathAndTheSequentialSum(frames: Int) throws {
        let cycles = 9000 / frames
        let general = try render(metering: true, frames: frames, cycles: cycles)
        let paired = try render(metering: false, frames: frames, cycles: cycles)
        #expect(paired.events == general.events)
        #expect(paired.events.count >= Self.queues * 3, "every queue started and finished buffers")
        for c in 0..<2 {
            let firstDifference = paired.out[c].indices.first { paired.out[c][$0] != general.out[c][$0] }
            #expect(firstDifference == nil, "channel \(c) differs from the general path first at frame \(firstDifference ?? -1)")
            // The queues added one after the other onto zero, in the order they were made.
            var wrong: [Int] = []
            for f in 0..<paired.out[c].count {
                var sum: Float = 0
                for q in 0..<Self.queues {
                    let qf = f - 100 - Int(Self.start(q))
                    if qf >= 0 && qf < 3 * Self.bufferFrames(q) { sum = sum + Self.sample(q, c, qf) * Self.gain(q) }
                }
                if paired.out[c][f] != sum { wrong.append(f) }
            }
            #expect(wrong.count == 0, "channel \(c): \(wrong.count) frames differ from the sequential sum, first \(wrong.first ?? -1)")
        }
        #expect(paired.out[0][0..<100].allSatisfy { $0 == 0 }, "silence before any queue starts")
    }
}
