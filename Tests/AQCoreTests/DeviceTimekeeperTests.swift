import AQCore
import Testing

/// A server's view of cycles, fed to the keeper: its 32-bit counter and host time, moved as
/// jackd2 and PipeWire move them.
private struct FakeServer {
    var counter: UInt32
    var hostNs: UInt64 = 1_000_000_000
    let rate = 48000.0

    /// Host time advance of `frames` frames at the nominal rate.
    mutating func pass(frames: Int64) { hostNs &+= UInt64(Double(frames) * 1e9 / rate) }
}

@Suite("DeviceTimekeeper")
struct DeviceTimekeeperTests {
    /// Runs `cycles` contiguous cycles of `n` frames; returns the keeper's frames.
    private func run(_ k: inout DeviceTimekeeper, _ s: inout FakeServer, cycles: Int, n: Int32) -> [Int64] {
        var frames: [Int64] = []
        for _ in 0..<cycles {
            let step = k.advance(counter: s.counter, frames: n, hostNs: s.hostNs, periodChanged: false)
            frames.append(step.frame)
            s.counter &+= UInt32(n)
            s.pass(frames: Int64(n))
        }
        return frames
    }

    @Test func samplesCountWhatWasRendered() {
        var k = DeviceTimekeeper(sampleRate: 48000)
        var s = FakeServer(counter: 4_294_960_000)  // wraps during the run
        let f = run(&k, &s, cycles: 100, n: 256)
        #expect(f == (0..<100).map { Int64($0) * 256 })
        #expect(k.lostFrames == 0)
    }

    /// jackd2 advances its counter by the new period at a period change: 256 → 128 moved it by
    /// 128 after a 256-frame cycle, 128 → 1024 by 1024 after a 128-frame cycle. No frame of
    /// the device's time is skipped or repeated.
    @Test func jackd2PeriodChangeArtefactsAreNotFollowed() {
        var k = DeviceTimekeeper(sampleRate: 48000)
        var s = FakeServer(counter: 1000)
        var expected: Int64 = 0
        var last: Int32 = 256
        for (n, cycles) in [(Int32(256), 10), (128, 10), (1024, 10), (64, 10)] {
            for i in 0..<cycles {
                if i == 0 && n != last {
                    s.counter &-= UInt32(last)  // undo the old period …
                    s.counter &+= UInt32(n)     // … and advance by the new one, as jackd2 does
                }
                let step = k.advance(counter: s.counter, frames: n, hostNs: s.hostNs, periodChanged: i == 0 && n != last)
                #expect(step.frame == expected)
                #expect(step.lostFrames == 0)
                expected += Int64(n)
                s.counter &+= UInt32(n)
                s.pass(frames: Int64(n))
            }
            last = n
        }
        #expect(k.lostFrames == 0 && k.skippedFrames == 0)
    }

    /// A cycle whose size differs is a period change even when the server's notice comes late.
    @Test func aNewCycleSizeIsAPeriodChangeEvenWithoutTheNotice() {
        var k = DeviceTimekeeper(sampleRate: 48000)
        var s = FakeServer(counter: 0)
        _ = run(&k, &s, cycles: 3, n: 256)
        s.counter &+= 256  // jackd2's artefact, 256 → 512
        let step = k.advance(counter: s.counter, frames: 512, hostNs: s.hostNs, periodChanged: false)
        #expect(step.frame == 768 && step.continuity == .periodChangeArtefact)
    }

    /// An xrun the server accounts for (counter and wall clock both three periods on): skipped
    /// under followWallClock, kept under keepEveryFrame; counted either way.
    @Test(arguments: [LostTimePolicy.followWallClock, .keepEveryFrame])
    func lostFramesFollowThePolicy(policy: LostTimePolicy) {
        var k = DeviceTimekeeper(sampleRate: 48000, policy: policy)
        var s = FakeServer(counter: 77)
        _ = run(&k, &s, cycles: 4, n: 256)
        s.counter &+= 768
        s.pass(frames: 768 + 100)  // the server woke late too
        let step = k.advance(counter: s.counter, frames: 256, hostNs: s.hostNs, periodChanged: false)
        #expect(step.continuity == .framesLost && step.lostFrames == 768)
        #expect(step.frame == (policy == .followWallClock ? 4 * 256 + 768 : 4 * 256))
        #expect(k.lostFrames == 768)
        #expect(k.skippedFrames == (policy == .followWallClock ? 768 : 0))
    }

    /// pipewire-jack calls a late client twice with one cycle's position when it catches up
    /// (measured with aqsync stopped for 12 ms on a private PipeWire at quantum 256: a cycle at
    /// counter P, its wall clock confirming the two periods lost, then 0.03 ms later a second
    /// call with the same counter and cycle time; docs/pipewire.md (d)). No graph cycle stands
    /// behind the second call: counting it put the device one period ahead of the sink's
    /// clock for good (every click after it played 256 frames early on the sink's counter).
    /// The device's frame minus the server's counter stays what it was, under either policy
    /// for everything but the lost frames themselves.
    @Test(arguments: [LostTimePolicy.followWallClock, .keepEveryFrame])
    func aRepeatedCycleDoesNotAdvanceTheSampleTime(policy: LostTimePolicy) {
        var k = DeviceTimekeeper(sampleRate: 48000, policy: policy)
        var s = FakeServer(counter: 4_294_966_000)  // wraps during the run
        _ = run(&k, &s, cycles: 4, n: 256)
        s.counter &+= 512  // two cycles missed (the process was stopped)
        s.pass(frames: 512)
        let late = k.advance(counter: s.counter, frames: 256, hostNs: s.hostNs, periodChanged: false)
        #expect(late.continuity == .framesLost && late.lostFrames == 512)
        let skipped: Int64 = policy == .followWallClock ? 512 : 0
        #expect(late.frame == 4 * 256 + skipped)
        let again = k.advance(counter: s.counter, frames: 256, hostNs: s.hostNs, periodChanged: false)
        #expect(again.continuity == .repeated && again.lostFrames == 0)
        s.counter &+= 256
        s.pass(frames: 256)
        let after = run(&k, &s, cycles: 3, n: 256)
        #expect(after == [5, 6, 7].map { Int64($0) * 256 + skipped }, "the cycles after the repeat follow the first call")
        #expect(again.frame == after[0])
        #expect(k.repeatedCycles == 1 && k.lostFrames == 512 && k.skippedFrames == skipped)
    }

    /// PipeWire moves a client to another driver: the counter lands millions of frames away,
    /// the wall clock goes on by one cycle. Followed, nothing skipped; and backwards too.
    @Test(arguments: [Int64(7_340_032), -5_000_000, 4096])
    func counterJumpsWithoutWallClockAreFollowed(jump: Int64) {
        var k = DeviceTimekeeper(sampleRate: 48000)
        var s = FakeServer(counter: 123_456)
        _ = run(&k, &s, cycles: 4, n: 256)
        s.counter = UInt32(truncatingIfNeeded: Int64(s.counter) + jump)
        let step = k.advance(counter: s.counter, frames: 256, hostNs: s.hostNs, periodChanged: false)
        #expect(step.continuity == .counterJump && step.counterJump == jump)
        #expect(step.frame == 4 * 256 && step.lostFrames == 0)
        s.counter &+= 256
        s.pass(frames: 256)
        #expect(k.advance(counter: s.counter, frames: 256, hostNs: s.hostNs, periodChanged: false).frame == 5 * 256)
    }

    /// A restarted server: its counter is unrelated; the wall-clock gap is the loss (skipped
    /// here, under followWallClock).
    @Test func resumptionSkipsTheWallClockGap() {
        var k = DeviceTimekeeper(sampleRate: 48000, policy: .followWallClock)
        var s = FakeServer(counter: 9_999)
        _ = run(&k, &s, cycles: 10, n: 256)  // next frame 2560, host at frame 2560
        k.resume()
        s.pass(frames: 96_000)  // two seconds away
        let step = k.advance(counter: 0, frames: 256, hostNs: s.hostNs, periodChanged: false)
        #expect(step.continuity == .resumed)
        #expect(step.lostFrames == 96_000)
        #expect(step.frame == 2560 + 96_000)
    }

    /// Under the default policy a restarted server resumes where the device stopped.
    @Test func resumptionKeepsItsPlaceByDefault() {
        var k = DeviceTimekeeper(sampleRate: 48000)
        #expect(k.policy == .keepEveryFrame)
        var s = FakeServer(counter: 9_999)
        _ = run(&k, &s, cycles: 10, n: 256)
        k.resume()
        s.pass(frames: 96_000)
        let step = k.advance(counter: 0, frames: 256, hostNs: s.hostNs, periodChanged: false)
        #expect(step.continuity == .resumed && step.lostFrames == 96_000 && step.frame == 2560)
        #expect(k.lostFrames == 96_000 && k.skippedFrames == 0)
    }

    /// A resume before any cycle is just a first cycle.
    @Test func resumeBeforeTheFirstCycleIsAFirstCycle() {
        var k = DeviceTimekeeper(sampleRate: 48000, firstFrame: 10)
        k.resume()
        let step = k.advance(counter: 5, frames: 64, hostNs: 1, periodChanged: false)
        #expect(step.continuity == .first && step.frame == 10)
    }
}
