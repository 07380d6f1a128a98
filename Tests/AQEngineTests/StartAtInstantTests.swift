import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// Issue 26: starting at an instant of a system clock, through the hand-driven device (whose
/// host time of frame f is `hostTimeOrigin + f / rate`), with offsets between the clocks given
/// by hand: no sleeps, no dependence on the machine's clocks.
@Suite struct StartAtInstantTests {
    /// The narrowest bracket is kept, and the offset is the clock's reading minus the middle
    /// of its host-time bracket.
    @Test func offsetIsTakenFromTheNarrowestBracket() {
        // (host before, clock, host after) per sample: widths 1000, 40, 300.
        var script: [Int64] = [
            10_000, 5_000_000_500, 11_000,
            20_000, 5_000_010_020, 20_040,
            30_000, 5_000_020_100, 30_300,
        ]
        let offset = SystemClockOffset.measure(.realtime, samples: 3) { _ in script.removeFirst() }
        #expect(offset.bracketNanoseconds == 40)
        #expect(offset.nanoseconds == 5_000_010_020 - 20_020)
        #expect(script.isEmpty)
        // A bracket the clock went backwards in (a negative width) is never kept.
        var bad: [Int64] = [100, 7_000, 50, 200, 9_000, 260]
        let o2 = SystemClockOffset.measure(.monotonicRaw, samples: 2) { _ in bad.removeFirst() }
        #expect(o2.bracketNanoseconds == 60 && o2.nanoseconds == 9_000 - 230)
        // Host time itself needs no measurement.
        #expect(SystemClockOffset.measure(.monotonic) == SystemClockOffset(clock: .monotonic, nanoseconds: 0))
    }

    @Test func instantToHostTime() {
        let o = SystemClockOffset(clock: .realtime, nanoseconds: 1_700_000_000_000_000_000)
        #expect(SystemInstant(clock: .realtime, nanoseconds: 1_700_000_000_123_456_789).hostTime(offset: o) == 123_456_789)
        // Before boot: 0. On host time: unchanged, whatever offset is given.
        #expect(SystemInstant(clock: .realtime, nanoseconds: 5).hostTime(offset: o) == 0)
        #expect(SystemInstant(clock: .monotonic, nanoseconds: 42).hostTime(offset: o) == 42)
        // The measured offset of the real clocks: a narrow bracket, and round trip within it.
        let m = SystemClockOffset.measure(.realtime)
        #expect(m.bracketNanoseconds < 1_000_000)
        let now = SystemInstant.now(.realtime)
        let host = Int64(now.hostTime(offset: m))
        #expect(abs(host - Int64(HostClock.now())) < 50_000_000)
    }

    /// A realtime instant lands on the device frame whose host time it is, rounded to the
    /// nearest frame; every queue of a group starts there.
    @Test func queuesStartOnTheFrameOfTheInstant() throws {
        let (engine, device) = try manualEngine(channels: 2)
        defer { engine.close() }
        var queues: [AudioQueue] = []
        for i in 0..<2 {
            let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
            try q.setOutputChannels([i])
            let b = try q.allocateBuffer(capacity: 200)
            fillMono16(b, frames: 100, impulses: [0])
            try q.enqueue(b)
            queues.append(q)
        }
        #expect(throws: AudioQueueError.self) { try engine.startFrame(at: .now(.monotonic)) }  // no cycle yet
        _ = device.render(frames: 512, cycle: 256)
        let offset = SystemClockOffset(clock: .realtime, nanoseconds: 1_800_000_000_000_000_000)
        // Frame 9000.4 (host time of frame 9000 + 0.4 frame) rounds to 9000; 9000.6 to 9001.
        let f9000 = Int64(device.hostTime(ofFrame: 9000))
        let frameNs = 1e9 / 48000
        func instant(_ hostNs: Int64) -> SystemInstant { SystemInstant(clock: .realtime, nanoseconds: hostNs + offset.nanoseconds) }
        #expect(try engine.startFrame(at: instant(f9000 + Int64(0.4 * frameNs)), offset: offset) == 9000)
        #expect(try engine.startFrame(at: instant(f9000 + Int64(0.6 * frameNs)), offset: offset) == 9001)
        let ts = try #require(engine.deviceTime(at: instant(f9000), offset: offset))
        #expect(abs(ts.sampleTime - 9000) < 1e-3 && ts.hostTime == UInt64(f9000))
        let frame = try engine.start(queues, atInstant: instant(f9000), offset: offset)
        #expect(frame == 9000)
        let out = device.render(frames: 10_000, cycle: 128)
        for i in 0..<2 { #expect(nonZero(out[i]) == [9000 - 512]) }
    }

    /// An instant before the nearest start time is refused (nothing starts), never moved.
    @Test func anInstantTooCloseIsRefused() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let b = try q.allocateBuffer(capacity: 200)
        fillMono16(b, frames: 100, impulses: [0])
        try q.enqueue(b)
        _ = device.render(frames: 4800, cycle: 256)
        let offset = SystemClockOffset(clock: .monotonicRaw, nanoseconds: -3_000)
        let past = SystemInstant(clock: .monotonicRaw, nanoseconds: Int64(device.hostTime(ofFrame: 4000)) + offset.nanoseconds)
        do {
            _ = try engine.start([q], atInstant: past, offset: offset)
            Issue.record("a past instant started")
        } catch {
            #expect(error.code == .cannotStart)
            #expect(error.message.contains("before the earliest frame"), "\(error.message)")
        }
        let out = device.render(frames: 4800, cycle: 256)[0]
        #expect(nonZero(out).isEmpty)
        // The nearest start itself is accepted.
        let nearest = SystemInstant(clock: .monotonicRaw, nanoseconds: Int64(device.hostTime(ofFrame: 9600)) + offset.nanoseconds)
        #expect(try engine.start([q], atInstant: nearest, offset: offset) == 9600)
        #expect(nonZero(device.render(frames: 256, cycle: 256)[0]) == [0])
    }

    /// The rate measured between two anchors: used when sure, refused when the anchors are
    /// too close or disagree with the cycle's own estimate (frames lost or kept between them).
    @Test func rateOverALongBaseline() {
        let earlier = DeviceTimebase(anchorFrame: 48_000, anchorHostTime: 1_000_000_000, nominalRate: 48000, rateScalar: 1)
        // 48 000 frames in 1.000 010 s: the device runs 10 ppm slow; the cycle said 1.0002.
        let latest = DeviceTimebase(anchorFrame: 96_000, anchorHostTime: 2_000_010_000, nominalRate: 48000, rateScalar: 1.0002)
        let r = latest.refined(since: earlier)
        #expect(r != nil && abs(r!.rateScalar - 1.00001) < 1e-12 && r!.anchorFrame == 96_000)
        // 0.5 s on, the refined line is 0.25 frame from the cycle's (190 ppm × 0.5 s = 95 µs ≈ 4.6 frames apart).
        let host = UInt64(2_500_010_000)
        #expect(abs(r!.sampleTime(forHostTime: host) - (96_000 + 0.5 * 48000 / 1.00001)) < 1e-6)
        #expect(latest.refined(since: DeviceTimebase(anchorFrame: 90_000, anchorHostTime: 1_875_000_000, nominalRate: 48000, rateScalar: 1)) == nil)  // 0.125 s
        // 256 frames lost between: 5333 ppm off the cycle's estimate.
        let lost = DeviceTimebase(anchorFrame: 95_744, anchorHostTime: 2_000_010_000, nominalRate: 48000, rateScalar: 1)
        #expect(lost.refined(since: earlier) == nil)
        #expect(latest.refined(since: latest) == nil)
    }

    /// A cycle anchor on a clock running `ppm` off nominal (48 kHz) from host time `origin` at
    /// frame 0, shifted by `jumpNs` (a re-anchored clock), whose own estimate is `ownPpm` off.
    static func anchor(_ frame: Int64, ppm: Double, origin: UInt64 = 1_000_000_000, jumpNs: Int64 = 0, ownPpm: Double? = nil) -> DeviceTimebase {
        let nsPerFrame = 1e9 / (48000 * (1 + ppm * 1e-6))
        let host = Int64(origin) + Int64((Double(frame) * nsPerFrame).rounded()) + jumpNs
        return DeviceTimebase(anchorFrame: frame, anchorHostTime: UInt64(host), nominalRate: 48000, rateScalar: 1 / (1 + (ownPpm ?? ppm) * 1e-6))
    }

    /// Nine reference cycles of 128 frames from `first`, and a latest cycle at `latest`.
    static func references(from first: Int64, ppm: Double, origin: UInt64 = 1_000_000_000, ownPpm: Double? = nil) -> [DeviceTimebase] {
        (0..<9).map { anchor(first + Int64($0) * 128, ppm: ppm, origin: origin, ownPpm: ownPpm) }
    }

    /// The rate a start at an instant takes, judged from made-up anchor sequences (no server,
    /// no sleeps): a straight clock is measured; a clock that reset just before has no
    /// baseline and takes its latest cycle's rate, or is refused when that is implausible; a
    /// fallback window whose rate reads −16 000 ppm (the CI of 18d5d55) is refused, and so is a
    /// line re-anchored inside the baseline or one its latest cycle disagrees with.
    @Test func baselineRateIsJudged() throws {
        // A straight clock 40 ppm fast, 0.5 s of baseline; one cycle's estimate +300 ppm (µs rounding).
        let straight = BaselineRate.judge(latest: Self.anchor(24_000 + 4 * 128, ppm: 40, ownPpm: 300), references: Self.references(from: 0, ppm: 40), minimumSeconds: 0.1)
        #expect(straight.verdict == .measured && straight.timebases.count == 9 && straight.reason.isEmpty)
        #expect(abs(straight.ppm - 40) < 0.5, "\(straight.ppm)")
        #expect(abs(straight.seconds - 0.5) < 1e-4, "\(straight.seconds)")
        // Its prediction 0.3 s on: on the clock's own line, within a hundredth of a frame.
        let latest = Self.anchor(24_000 + 4 * 128, ppm: 40)
        let host = latest.anchorHostTime + 300_000_000
        let want = Double(latest.anchorFrame) + 0.3 * 48000 * (1 + 40e-6)
        #expect(straight.timebases.allSatisfy { abs($0.sampleTime(forHostTime: host) - want) < 0.01 })

        // The clock reset just before: the references (taken after the reset, as the caller
        // must) are 0.05 s back, no baseline: the latest cycle's own rate, when plausible…
        let fresh = BaselineRate.judge(latest: Self.anchor(2_400 + 9 * 128, ppm: 0, ownPpm: 200), references: Self.references(from: 0, ppm: 0), minimumSeconds: 0.1)
        #expect(fresh.verdict == .noBaseline && fresh.timebases.count == 1 && abs(fresh.ppm - 200) < 1e-6 && fresh.seconds == 0)
        // …and no references at all is the same.
        #expect(BaselineRate.judge(latest: Self.anchor(4_800, ppm: 0), references: [], minimumSeconds: 0.1).verdict == .noBaseline)
        // …refused when the filter, just reset, estimates the cycle 16 000 ppm off.
        let freshOff = BaselineRate.judge(latest: Self.anchor(2_400 + 9 * 128, ppm: 0, ownPpm: -16_000), references: Self.references(from: 0, ppm: 0), minimumSeconds: 0.1)
        #expect(freshOff.verdict == .implausible && freshOff.timebases.isEmpty)
        #expect(freshOff.reason.contains("own rate is -16000.0 ppm off nominal") && freshOff.reason.contains("no baseline"), "\(freshOff.reason)")

        // The 0.15 s fallback baseline whose line, and the cycle's own estimate with it, reads
        // −16 132 ppm: consistent, but no server's clock runs so; refused, whatever its anchors.
        let fallback = BaselineRate.judge(latest: Self.anchor(7_200 + 4 * 128, ppm: -16_132), references: Self.references(from: 0, ppm: -16_132), minimumSeconds: 0.1)
        #expect(fallback.verdict == .implausible && fallback.timebases.isEmpty)
        #expect(abs(fallback.ppm + 16_132) < 1 && abs(fallback.seconds - 0.15 * 1.016_396) < 1e-3, "\(fallback.ppm) \(fallback.seconds)")
        #expect(fallback.reason.contains("ppm off nominal over the 0.15") && fallback.reason.contains("beyond ±1000.0 ppm"), "\(fallback.reason)")
        // Just inside the bound it is a rate (a cheap USB device's 900 ppm).
        let usb = BaselineRate.judge(latest: Self.anchor(24_000 + 9 * 128, ppm: -900), references: Self.references(from: 0, ppm: -900), minimumSeconds: 0.1)
        #expect(usb.verdict == .measured && abs(usb.ppm + 900) < 0.5)

        // The clock re-anchored inside the baseline (its times moved 2.4 ms on, frames went
        // on): the line reads 4 800 ppm over 0.5 s: refused, never taken for a rate.
        let reanchored = BaselineRate.judge(latest: Self.anchor(24_000 + 9 * 128, ppm: 0, jumpNs: 2_400_000), references: Self.references(from: 0, ppm: 0), minimumSeconds: 0.1)
        #expect(reanchored.verdict == .implausible)
        // A smaller bend the latest cycle disagrees with (its filter now 3 000 ppm off a line
        // that read 0): the anchors are inconsistent, refused.
        let bent = BaselineRate.judge(latest: Self.anchor(24_000 + 9 * 128, ppm: 0, ownPpm: -3_000), references: Self.references(from: 0, ppm: 0), minimumSeconds: 0.1)
        #expect(bent.verdict == .implausible && bent.reason.contains("disagrees"), "\(bent.reason)")
        // refined(since:) itself never gives an implausible rate.
        #expect(Self.anchor(7_200, ppm: -16_132).refined(since: Self.anchor(0, ppm: -16_132), minimumSeconds: 0.1) == nil)
        #expect(Self.anchor(7_200, ppm: -500).refined(since: Self.anchor(0, ppm: -500), minimumSeconds: 0.1) != nil)
    }

    /// Over 9 successive anchors: one whose cycle's own estimate bends (−3 000 ppm off a line
    /// that reads 0) is left out like a noisy anchor and the others place the instant; when 5
    /// of the 9 bend, the start is refused with the reason and the count.
    @Test func anchorsWhoseRateIsRefusedAreLeftOut() throws {
        let references = Self.references(from: 0, ppm: 0)
        func anchors(bent: Set<Int>) -> [DeviceTimebase] {
            (0..<9).map { k in Self.anchor(24_000 + Int64(k) * 128, ppm: 0, ownPpm: bent.contains(k) ? -3_000 : 0) }
        }
        // The instant: 0.3 s after the last anchor, frame 24 000 + 8 × 128 + 14 400.
        let host = Self.anchor(24_000 + 8 * 128 + 14_400, ppm: 0).anchorHostTime
        let one = BaselineRate.deviceTime(ofHostTime: host, anchors: anchors(bent: [3]), references: references, minimumSeconds: 0.1)
        let t = try #require(one.time)
        #expect(abs(t.sampleTime - 39_424) < 0.01 && t.spread < 0.01 && t.rate.verdict == .measured, "\(t)")
        let most = BaselineRate.deviceTime(ofHostTime: host, anchors: anchors(bent: [0, 2, 4, 6, 8]), references: references, minimumSeconds: 0.1)
        #expect(most.time == nil && most.refusal.contains("disagrees") && most.refusal.hasSuffix("(at 5 of 9 anchors)"), "\(most.refusal)")
        let none = BaselineRate.deviceTime(ofHostTime: host, anchors: [], references: references, minimumSeconds: 0.1)
        #expect(none.time == nil)
    }
}
