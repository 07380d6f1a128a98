import AQCore
import Testing

/// Cycle sequences recorded in real runs, replayed through the keeper: jackd2's from aqsync's
/// own process callback in issue 21's scenario (private jackd 1.9.21, dummy backend, 48 kHz,
/// `--no-realtime`, period 256, then `jack_bufsize 128`, `1024`, `64` while playing, on a
/// loaded 2-core machine that xrunned hundreds of times); PipeWire's from a C probe
/// (docs/pipewire.md (d)).
///
/// Each line is what the callback read: the server's counter, the cycle's frames, the cycle's
/// start in the server's microseconds (`jack_get_cycle_times`), and whether the buffer-size
/// notice had arrived. The host time the device hands the keeper is those microseconds moved
/// to CLOCK_MONOTONIC by an offset read from the clocks in every call (jackd2's clock is
/// CLOCK_MONOTONIC_RAW), so two calls for the same cycle carry host times a few hundred
/// nanoseconds apart: `replay` adds that jitter.
@Suite("DeviceTimekeeper replay of recorded cycles")
struct DeviceTimekeeperReplayTests {
    struct Call { var counter: UInt32; var frames: Int32; var usecs: UInt64; var changed: Bool }

    static func parse(_ text: String) -> [Call] {
        text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ").compactMap { UInt64($0) }
            guard f.count == 4 else { return nil }
            return Call(counter: UInt32(f[0]), frames: Int32(f[1]), usecs: f[2], changed: f[3] != 0)
        }
    }

    /// jackd2 after xruns: it skips the client for cycle 291072, then calls it twice for cycle
    /// 291200 (same counter, same cycle time). Run 4 of the issue-21 reproduction.
    static let doubleCall = parse("""
        290304 128 429902364 0
        290432 128 429848011 0
        290560 128 429909602 0
        290688 128 429854003 0
        290816 128 429856997 0
        290944 128 429859996 0
        291200 128 429865994 0
        291200 128 429865994 0
        291328 128 429869002 0
        291456 128 429872010 0
        291584 128 429942312 0
        291712 128 429878047 0
        291840 128 429881076 0
        291968 128 429884105 0
        """)

    /// Two double calls a few hundred cycles apart, each after a skipped cycle, with calls whose
    /// cycle time was read late (later than the next cycle's) between them. Same run.
    static let twoDoubleCalls = parse("""
        302336 128 430130878 0
        302464 128 430133925 0
        302592 128 430136972 0
        302720 128 430140018 0
        302848 128 430210372 0
        303104 128 430149178 0
        303232 128 430152237 0
        303488 128 430158363 0
        303488 128 430158363 0
        303616 128 430161434 0
        303744 128 430164505 0
        303872 128 430242334 0
        304000 128 430170656 0
        304128 128 430173740 0
        304256 128 430176823 0
        304384 128 430179905 0
        304512 128 430182990 0
        304640 128 430186070 0
        304896 128 430192242 0
        304896 128 430192242 0
        305024 128 430195335 0
        305152 128 430198428 0
        305280 128 430282356 0
        """)

    /// The period change 256 → 128 in run 6: the counter moves by the new period (128) after
    /// the last 256-frame cycle, with the notice already in.
    static let periodChange = parse("""
        195840 256 534067304 0
        196096 256 534072768 0
        196352 256 534078233 0
        196480 128 534094794 1
        196608 128 534097460 0
        196736 128 534100129 0
        """)

    /// PipeWire 0.3.65 at quantum 256, a client whose cycle 500 slept 10.67 ms (docs/pipewire.md
    /// (d), recorded with docs/tools/jack-clock-probe.c): the next call's counter and cycle
    /// time both moved two periods on, and the sink had played silence for the late cycle.
    static let pipewireOverrun = parse("""
        2086272 256 1014740584 0
        2086528 256 1014745918 0
        2087040 256 1014756584 0
        """)

    /// On PipeWire (following the wall clock, its default) the recorded overrun is one period
    /// lost and skipped: the sample time jumps with the sink's counter. Kept (jackd2's policy)
    /// it is counted and not skipped.
    @Test func aRecordedPipeWireOverrunIsSkippedWhenFollowingTheWallClock() {
        let (follow, steps) = Self.replay(Self.pipewireOverrun, policy: .followWallClock, repeatsAreCycles: false)
        #expect(steps.map(\.frame) == [0, 256, 768])
        #expect(steps[2].continuity == .framesLost && steps[2].lostFrames == 256)
        #expect(follow.skippedFrames == 256)
        let (keep, kept) = Self.replay(Self.pipewireOverrun, policy: .keepEveryFrame, repeatsAreCycles: false)
        #expect(kept.map(\.frame) == [0, 256, 512])
        #expect(keep.lostFrames == 256 && keep.skippedFrames == 0)
    }

    /// Replays `calls` through a keeper under `policy`, as the JACK device does (host time with
    /// the per-call conversion jitter, the server's cycle time as the cycle's identity).
    /// Returns the keeper and the steps.
    static func replay(
        _ calls: [Call], policy: LostTimePolicy, repeatsAreCycles: Bool = true
    ) -> (DeviceTimekeeper, [DeviceTimekeeper.Step]) {
        var k = DeviceTimekeeper(sampleRate: 48000, policy: policy)
        k.repeatedCallsAreCycles = repeatsAreCycles
        var steps: [DeviceTimekeeper.Step] = []
        for (i, c) in calls.enumerated() {
            let jitter: UInt64 = i % 2 == 0 ? 0 : 417  // ns: the clock offset read anew each call
            let host = c.usecs &* 1000 &+ 7_000_000_000 &+ jitter
            steps.append(k.advance(counter: c.counter, cycleTime: c.usecs, frames: c.frames, hostNs: host, periodChanged: c.changed))
        }
        return (k, steps)
    }

    /// True when call `i` repeats the previous call's (counter, cycle time).
    static func isAgain(_ calls: [Call], _ i: Int) -> Bool {
        i > 0 && calls[i - 1].counter == calls[i].counter && calls[i - 1].usecs == calls[i].usecs
    }

    /// jackd2, keeping every frame (its default): the second call of a double call is the
    /// cycle after the first (`.lateCycle`), rendered and counted; the sample time is exactly
    /// the frames of every call; the two-period jump before it is no loss. Recorded with the
    /// server's counter beside a C client's own count, the recorder took both calls' outputs
    /// in 12 of 16 double calls (docs/timing.md): leaving the second silent put every later
    /// frame a period late there (the witness-judged live tests failed by +256 that way).
    @Test func aDoubleCallOnJackd2IsTwoCyclesWhenKeepingEveryFrame() {
        for calls in [Self.doubleCall, Self.twoDoubleCalls] {
            let (k, steps) = Self.replay(calls, policy: .keepEveryFrame)
            var expected: Int64 = 0
            var doubles = 0
            for (i, (c, s)) in zip(calls, steps).enumerated() {
                if Self.isAgain(calls, i) {
                    doubles += 1
                    #expect(s.continuity == .lateCycle, "call \(i) at counter \(c.counter)")
                } else {
                    #expect(s.continuity != .repeated && s.continuity != .lateCycle, "call \(i) at counter \(c.counter)")
                }
                #expect(s.frame == expected, "call \(i): the sample time is the frames of the calls before it")
                expected += Int64(c.frames)
            }
            #expect(doubles > 0)
            #expect(k.repeatedCycles == 0 && k.skippedFrames == 0)
            #expect(k.nextFrame == expected)
        }
        let (k, _) = Self.replay(Self.doubleCall, policy: .keepEveryFrame)
        #expect(k.lostFrames == 0, "the jump before the double call was the late cycle, not a loss")
    }

    /// Following the wall clock, or on PipeWire (whose second call is not a cycle), the second
    /// call does not advance and is not rendered (`.repeated`), whatever the host-time jitter:
    /// the server's clock did not move. (With the host time as the cycle's identity, jackd2's
    /// CLOCK_MONOTONIC_RAW conversion jitter hid every repeat.)
    @Test(arguments: [(LostTimePolicy.followWallClock, true), (.followWallClock, false), (.keepEveryFrame, false)])
    func aRepeatedCallDoesNotAdvanceWhereItIsNoCycle(policy: LostTimePolicy, repeatsAreCycles: Bool) {
        for calls in [Self.doubleCall, Self.twoDoubleCalls] {
            let (k, steps) = Self.replay(calls, policy: policy, repeatsAreCycles: repeatsAreCycles)
            var expected: Int64 = 0
            var repeats = 0
            for (i, (c, s)) in zip(calls, steps).enumerated() {
                if Self.isAgain(calls, i) {
                    repeats += 1
                    #expect(s.continuity == .repeated, "call \(i) at counter \(c.counter) repeats the previous one")
                    #expect(s.frame == expected, "a repeated call does not advance")
                    continue
                }
                #expect(s.continuity != .repeated, "call \(i) at counter \(c.counter) is a new cycle")
                expected += s.lostFrames > 0 && policy == .followWallClock ? s.lostFrames : 0
                #expect(s.frame == expected, "call \(i): the sample time is the frames rendered (and skipped) before it")
                expected += Int64(c.frames)
            }
            #expect(repeats > 0)
            #expect(k.repeatedCycles == Int64(repeats))
            #expect(k.nextFrame == expected)
        }
    }

    /// The recorded period change keeps every frame: contiguous sample time, no loss, no repeat.
    @Test(arguments: [LostTimePolicy.keepEveryFrame, .followWallClock])
    func aRecordedPeriodChangeKeepsEveryFrame(policy: LostTimePolicy) {
        let (k, steps) = Self.replay(Self.periodChange, policy: policy)
        #expect(steps.map(\.frame) == [0, 256, 512, 768, 896, 1024])
        #expect(steps[3].continuity == .periodChangeArtefact)
        #expect(k.lostFrames == 0 && k.repeatedCycles == 0)
    }

    /// Without the server's own cycle time, host times that differ by conversion jitter alone
    /// still make the keeper take the second call for a new cycle: the device must pass
    /// `cycleTime` (the JACK device does). Here the identity falls back to `hostNs`, and the
    /// same call with identical host times is still recognised.
    @Test func withoutACycleTimeIdenticalHostTimesStillIdentifyACycle() {
        var k = DeviceTimekeeper(sampleRate: 48000)
        _ = k.advance(counter: 1000, frames: 128, hostNs: 5_000_000, periodChanged: false)
        let again = k.advance(counter: 1000, frames: 128, hostNs: 5_000_000, periodChanged: false)
        #expect(again.continuity == .repeated && again.frame == 128)
    }
}
