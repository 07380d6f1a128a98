import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24, "Known defects": the call sequences jackd2 makes to a client that was late,
/// replayed by hand through the follower's functions (no server), each against the offline
/// render. On jackd2 a late client is called twice back to back, and both calls read the
/// transport position that is current when they run: the position of the second (the first,
/// the cycle the client missed, runs after the server has already moved the transport on).
/// Measured with `jack_get_cycle_times` (docs/timing.md, "jackd2's double call of a late
/// client"); the transport's position is read the same way (`jack_transport_query` reads the
/// server's current position, jack2 `JackTransportEngine::Query`).
@Suite("Transport follower, jackd2's calls of a late client replayed")
struct TransportFollowerReplayTests {
    typealias T = TransportFollowerTests
    static let period = T.period

    struct Fixture {
        /// The session's files (removed when the last copy goes).
        let files: LoopRenderTests.Fixture
        let follower: TransportFollower
        let cb: TransportCallbacks
        let full: WAVFile
    }

    static func make() throws -> Fixture {
        let fx = try LoopRenderTests.make(loop: "")
        let session = try SessionLoader.load(fx.url)
        let refURL = fx.dir.file("ref.wav")
        try OfflineRenderer.render(session: session, to: refURL)
        let full = try WAVReader.read(refURL)
        let follower = try TransportFollower(session: session, deviceRate: 48000, outputs: 4, offset: T.offset, lead: 9000)
        return Fixture(files: fx, follower: follower, cb: follower.callbacks, full: full)
    }

    /// The first frame of `out` (one call's 4 outputs, from transport frame `f0`) that differs
    /// from the render at transport frame − offset, or nil.
    static func diff(_ out: [[Float]], _ full: WAVFile, from f0: Int64) -> String? {
        for c in 0..<4 {
            for i in 0..<out[c].count {
                let want = T.expected(full, c, f0 + Int64(i))
                if out[c][i] != want { return "output \(c + 1) transport frame \(f0 + Int64(i)): \(out[c][i]) vs \(want)" }
            }
        }
        return nil
    }

    /// Stopped at `target`, primed there, the start answered ready: the state of every
    /// rolling run's beginning.
    static func primedAndReady(_ x: Fixture, at target: Int64) {
        #expect(T.cycle(x.cb, rolling: false, frame: target).allSatisfy { $0.allSatisfy { $0 == 0 } })
        #expect(x.follower.waitUntilPrimed(at: target - T.offset, timeout: 10), "\(x.follower.error ?? "")")
        #expect(x.cb.sync(x.cb.context, target) == 1)
    }

    /// Mid-roll: the late client's first call (the cycle it missed, transport frame F) reads
    /// F + P, the second call reads F + P again. The second call plays the frames of the
    /// transport's frame it read (F + P), not silence, and the follower rolls on in place:
    /// no silent cycle, no priming half a second ahead (the defect: 82 rolling cycles silent
    /// in `commandFollowsTheTransport`, about 24 000 frames silent in `leadPlaysTheSessionOnce`).
    @Test func aDoubleCallMidRollPlaysTheTransportsFrameBothTimes() throws {
        let x = try Self.make()
        defer { x.follower.close() }
        let start: Int64 = 20_007 + T.offset
        Self.primedAndReady(x, at: start)
        var r = T.roll(x.cb, x.full, from: start, cycles: 10)
        #expect(r.diff == nil && r.heard, "\(r.diff ?? "nothing heard")")
        // Where it was primed (what aqsync logs as "primed at") stays the locate's frame while
        // the head moves on (the log had said "primed four periods past the locate target").
        #expect(x.follower.lastPriming == start - T.offset && x.follower.primedFrame == start - T.offset + Int64(10 * Self.period))
        let f = start + Int64(10 * Self.period)  // the cycle the client is late for
        let p = Int64(Self.period)
        let primings = x.follower.counters.primings
        // First call: the missed cycle, reading the next cycle's position.
        let first = T.cycle(x.cb, rolling: true, frame: f + p)
        #expect(Self.diff(first, x.full, from: f + p) == nil, "first call: \(Self.diff(first, x.full, from: f + p) ?? "")")
        // Second call, back to back: the same position.
        let second = T.cycle(x.cb, rolling: true, frame: f + p)
        #expect(Self.diff(second, x.full, from: f + p) == nil, "second call: \(Self.diff(second, x.full, from: f + p) ?? "")")
        #expect(x.follower.counters.missedCycles == 0, "\(x.follower.counters)")
        #expect(x.follower.counters.repeatedFrames == UInt64(Self.period), "\(x.follower.counters)")
        // It rolls on where the transport is, and asked for no priming: the rings are still
        // primed at the next cycle's frame.
        #expect(x.follower.primedFrame == f + 2 * p - T.offset)
        r = T.roll(x.cb, x.full, from: f + 2 * p, cycles: 40)
        #expect(r.diff == nil && r.heard, "after the double call: \(r.diff ?? "nothing heard")")
        #expect(x.follower.counters.missedCycles == 0 && x.follower.counters.primings == primings, "\(x.follower.counters)")
        #expect(x.follower.error == nil)
    }

    /// At the start: the late client's call for the last starting cycle already reads the
    /// first rolling cycle's position (transport frame T, rolling) and plays it; the second
    /// call reads T again. Both play T's frames; the follower does not go silent.
    @Test func aDoubleCallOnTheFirstRollingCyclePlaysItAgain() throws {
        let x = try Self.make()
        defer { x.follower.close() }
        let target: Int64 = 50_007 + T.offset
        Self.primedAndReady(x, at: target)
        for call in 1...2 {
            let out = T.cycle(x.cb, rolling: true, frame: target)
            #expect(Self.diff(out, x.full, from: target) == nil, "call \(call): \(Self.diff(out, x.full, from: target) ?? "")")
        }
        #expect(x.follower.counters.missedCycles == 0, "\(x.follower.counters)")
        let r = T.roll(x.cb, x.full, from: target + Int64(Self.period), cycles: 40)
        #expect(r.diff == nil && r.heard, "\(r.diff ?? "nothing heard")")
        #expect(x.follower.counters.missedCycles == 0, "\(x.follower.counters)")
    }

    /// A late client's double call after the rings wrapped, with the feeder topping the rings
    /// up between the two calls (they come back to back, 35–2500 µs apart, and the feeder runs
    /// whenever there is room): what plays again is still the transport's frame, because the
    /// feeder leaves ``TransportFollower/keptFrames`` behind the read position. The read
    /// position of the first call is chosen so that without them the feeder's next chunk would
    /// overwrite exactly the frames played again (read position a multiple of its 4096-frame
    /// chunks after the first call).
    @Test func aDoubleCallAfterTheRingsWrappedPlaysTheRightFrames() throws {
        let x = try Self.make()
        defer { x.follower.close() }
        let start: Int64 = T.offset
        Self.primedAndReady(x, at: start)
        var f = start
        let p = Int64(Self.period)
        // 69 120 frames (16 × 4096 + 3584): more than a ring holds (65 536), in steps the
        // feeder keeps up with, still inside the MP3 sweep (output 3).
        while f < start + 69_120 {
            _ = T.cycle(x.cb, rolling: true, frame: f)
            f += p
            if (f - start) % 8192 == 0 { #expect(x.follower.waitUntilFilled(timeout: 10)) }
        }
        #expect(x.follower.waitUntilFilled(timeout: 10))
        var heard = false
        for call in 1...2 {
            let out = T.cycle(x.cb, rolling: true, frame: f + p)
            #expect(Self.diff(out, x.full, from: f + p) == nil, "call \(call): \(Self.diff(out, x.full, from: f + p) ?? "")")
            if out.contains(where: { $0.contains { $0 != 0 } }) { heard = true }
            // The feeder tops up between the calls.
            #expect(x.follower.waitUntilFilled(timeout: 10))
        }
        #expect(heard)
        #expect(x.follower.counters.missedCycles == 0 && x.follower.counters.repeatedFrames == UInt64(p), "\(x.follower.counters)")
    }

    /// The transport far behind the rings while rolling (further than the frames kept behind
    /// the read position): no call of a late client does that, so it is a transport that
    /// moved without asking: silent, and joining `lead` frames on, as before.
    @Test func farBehindTheRingsIsAJoinNotARepeat() throws {
        let x = try Self.make()
        defer { x.follower.close() }
        let start: Int64 = 40_000 + T.offset
        Self.primedAndReady(x, at: start)
        var r = T.roll(x.cb, x.full, from: start, cycles: 50)
        #expect(r.diff == nil)
        let back = start + Int64(50 * Self.period) - TransportFollower.keptFrames - Int64(Self.period)
        #expect(T.cycle(x.cb, rolling: true, frame: back).allSatisfy { $0.allSatisfy { $0 == 0 } })
        #expect(x.follower.counters.missedCycles == 1)
        let join = back + 9216
        #expect(x.follower.waitUntilPrimed(at: join - T.offset, timeout: 10))
        r = T.roll(x.cb, x.full, from: join, cycles: 10)
        #expect(r.diff == nil && r.heard, "\(r.diff ?? "nothing heard")")
    }

    /// PipeWire's JACK (pipewire-jack 0.3.65), recorded in a run of
    /// `commandFollowsTheTransportOnPipeWire` on 2026-11-27 (each call's cycle times and the
    /// transport read at the call's start and again after the engine's mix): the call for the
    /// cycle at transport frame 515 (counter 108 032, cycle time 75 587 654 412 µs) came
    /// 11.3 ms after the previous one; `jack_transport_query` read 515 at its start, with that
    /// cycle's time, and 771, with the next cycle's time (75 587 659 745 µs), after the mix: the
    /// driver had moved its live position on during the call. The next call, 73 µs later, was
    /// the cycle at 771. Recorded frames shifted here to where the session sounds (the MP3
    /// sweep, output 3), the sequence unchanged.
    static func pipeWireCalls(from f0: Int64) -> (cycles: [Int64], atStart: [Int64], afterMix: [Int64]) {
        let p = Int64(period)
        let cycles = (0..<5).map { f0 + Int64($0) * p }
        var afterMix = cycles
        afterMix[2] = cycles[3]
        return (cycles, cycles, afterMix)
    }

    /// The transport as the device used to read it, after the engine's mix: the late call plays
    /// the next cycle's frames in its own cycle's buffer (what a recorder beside a witness
    /// records as frames from elsewhere: `commandFollowsTheTransportOnPipeWire`'s 512 wrong
    /// samples, docs/transport.md "Known defects" 4), and the next call plays them again.
    @Test func pipeWiresPositionReadAfterTheMixPlaysTheNextCycleInALateCall() throws {
        let x = try Self.make()
        defer { x.follower.close() }
        let start: Int64 = 20_007 + T.offset
        Self.primedAndReady(x, at: start)
        let calls = Self.pipeWireCalls(from: start)
        var wrong: [Int] = []
        for k in 0..<calls.cycles.count {
            let out = T.cycle(x.cb, rolling: true, frame: calls.afterMix[k])
            if Self.diff(out, x.full, from: calls.cycles[k]) != nil { wrong.append(k) }
            #expect(Self.diff(out, x.full, from: calls.afterMix[k]) == nil, "call \(k): \(Self.diff(out, x.full, from: calls.afterMix[k]) ?? "")")
        }
        #expect(wrong == [2], "calls whose output is not their cycle's frames: \(wrong)")
        let c = x.follower.counters
        #expect(c.skippedFrames == UInt64(Self.period) && c.repeatedFrames == UInt64(Self.period) && c.missedCycles == 0, "\(c)")
    }

    /// The same calls with the transport read with the cycle's times, before the mix (what the
    /// device does, `jackProcess`): every call plays its own cycle's frames; nothing skipped or
    /// played again.
    @Test func pipeWiresPositionReadAtTheCyclesStartPlaysEveryCycleExactly() throws {
        let x = try Self.make()
        defer { x.follower.close() }
        let start: Int64 = 20_007 + T.offset
        Self.primedAndReady(x, at: start)
        let calls = Self.pipeWireCalls(from: start)
        var heard = false
        for k in 0..<calls.cycles.count {
            let out = T.cycle(x.cb, rolling: true, frame: calls.atStart[k])
            #expect(Self.diff(out, x.full, from: calls.cycles[k]) == nil, "call \(k): \(Self.diff(out, x.full, from: calls.cycles[k]) ?? "")")
            if out[2].contains(where: { $0 != 0 }) { heard = true }
        }
        #expect(heard)
        let c = x.follower.counters
        #expect(c.skippedFrames == 0 && c.repeatedFrames == 0 && c.missedCycles == 0, "\(c)")
    }
}
