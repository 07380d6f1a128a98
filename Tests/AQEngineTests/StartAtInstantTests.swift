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
}
