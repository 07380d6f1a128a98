import Testing
@testable import AQCore

/// The renderer driven directly by commands through the hand-driven device.
final class Rig {
    let core: UnsafeMutablePointer<RenderCore>
    let device: ManualDevice
    var storage: [UnsafeMutablePointer<Float>] = []

    init(channels: Int = 2, queues: Int = 8) throws {
        core = RenderCore.allocate(sampleRate: 48000, capacities: RenderCapacities(queues: queues, buffersPerQueue: 16, commands: 256, outputChannels: 8))
        device = ManualDevice(sampleRate: 48000, channels: channels)
        try device.start(rendering: RenderTarget(core))
    }
    deinit {
        device.stop()
        for s in storage { s.deallocate() }
        RenderCore.deallocate(core)
    }
    func send(_ c: RenderCommand) { #expect(core.pointee.commands.push(c)) }
    /// Holds the renderer's gate as a control thread applying commands holds it, in the gate's
    /// mode (asymmetric: the claim; compare-and-swap: the cycle flag).
    func holdGate() {
        let gate = core.pointee.gate
        if gate.pointee.asymmetric.load(ordering: .relaxed) == 1 {
            gate.pointee.claimed.store(1, ordering: .releasing)
        } else {
            #expect(gate.pointee.inCycle.compareExchange(expected: 0, desired: 2, ordering: .acquiring).exchanged)
        }
    }
    /// Lets go of what ``holdGate()`` held.
    func releaseGate() {
        let gate = core.pointee.gate
        if gate.pointee.asymmetric.load(ordering: .relaxed) == 1 {
            gate.pointee.claimed.store(0, ordering: .releasing)
        } else {
            gate.pointee.inCycle.store(0, ordering: .releasing)
        }
    }
    /// A mono buffer of `frames` zeros with 1.0 at each index of `impulses`.
    func buffer(token: UInt32, frames: Int, start: Int64, impulses: [Int] = [0], value: Float = 1, volume: Float = .nan) -> ScheduledBuffer {
        let p = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        p.initialize(repeating: 0, count: frames)
        for i in impulses { p[i] = value }
        storage.append(p)
        return ScheduledBuffer(token: token, data: p, stride: Int32(frames), frames: Int32(frames), start: start, volume: volume)
    }
    func events() -> [RenderEvent] {
        var out: [RenderEvent] = []
        while let e = core.pointee.events.pop() { out.append(e) }
        return out
    }
}

func nonZero(_ x: [Float]) -> [Int] { x.indices.filter { x[$0] != 0 } }

@Suite struct RenderCoreTests {
    /// Impulses on prime frames, on the first and last frame of a cycle, and in a buffer that
    /// spans cycle boundaries land on exactly their frames.
    @Test(arguments: [1, 64, 256, 333])
    func impulsesLandOnTheirFrames(cycle: Int) throws {
        let rig = try Rig()
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        // Buffer A: 1000 frames at queue frame 0, impulses at 0, 255, 256, 511, 997.
        rig.send(.enqueue(slot: 0, buffer: rig.buffer(token: 1, frames: 1000, start: 0, impulses: [0, 255, 256, 511, 997])))
        // Buffer B: starts at queue frame 1009 (a prime, after a gap), impulse at its frame 4.
        rig.send(.enqueue(slot: 0, buffer: rig.buffer(token: 2, frames: 50, start: 1009, impulses: [4])))
        rig.send(.start(slot: 0, frame: 7919, run: 0))  // a prime device frame
        let out = rig.device.render(frames: 12_000, cycle: cycle)
        let expected = [0, 255, 256, 511, 997, 1013].map { 7919 + $0 }
        #expect(nonZero(out[0]) == expected)
        #expect(nonZero(out[1]) == expected, "a mono queue plays on every output")
        let ev = rig.events()
        var done: [UInt32] = []
        for e in ev { if case .bufferDone(_, _, let t, _, let played, let late) = e { done.append(t); #expect(played); #expect(late == 0) } }
        #expect(done == [1, 2])
        #expect(ev.contains { if case .started(0, _, _, 7919, 0) = $0 { true } else { false } })
    }

    /// A start whose frame has passed keeps its place: frames before now are skipped and counted.
    @Test func lateStartKeepsTheTimeline() throws {
        let rig = try Rig()
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        rig.send(.enqueue(slot: 0, buffer: rig.buffer(token: 1, frames: 1000, start: 0, impulses: [10, 700])))
        _ = rig.device.render(frames: 512, cycle: 256)  // frames 0..<512 go by
        rig.send(.start(slot: 0, frame: 100, run: 0))  // already past
        let out = rig.device.render(frames: 1024, cycle: 256)  // frames 512..<1536
        // Frame 700 of the buffer plays at device frame 800, i.e. index 288 of this render.
        #expect(nonZero(out[0]) == [288])
        let ev = rig.events()
        #expect(ev.contains { if case .bufferDone(_, _, 1, _, true, 412) = $0 { true } else { false } })
        #expect(ev.contains { if case .started(0, _, _, 100, 412) = $0 { true } else { false } })
        #expect(rig.core.pointee.statistics.lateFrames == 412)
    }

    /// A volume event takes effect on the buffer's first frame, exactly.
    @Test func volumeEventOnFirstFrame() throws {
        let rig = try Rig(channels: 1)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        let a = rig.buffer(token: 1, frames: 100, start: 0, impulses: Array(0..<100))
        let b = rig.buffer(token: 2, frames: 100, start: 100, impulses: Array(0..<100), volume: 0.25)
        rig.send(.enqueue(slot: 0, buffer: a))
        rig.send(.enqueue(slot: 0, buffer: b))
        rig.send(.start(slot: 0, frame: 37, run: 0))
        let out = rig.device.render(frames: 300, cycle: 64)
        #expect(out[0][136] == 1)
        #expect(out[0][137] == 0.25)
        #expect(out[0][236] == 0.25)
        #expect(out[0][237] == 0)
    }

    /// An immediate volume change ramps: no step larger than 1/ramp per frame.
    @Test func volumeRampsNeverSteps() throws {
        let rig = try Rig(channels: 1)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        rig.send(.enqueue(slot: 0, buffer: rig.buffer(token: 1, frames: 2000, start: 0, impulses: Array(0..<2000))))
        rig.send(.start(slot: 0, frame: 0, run: 0))
        _ = rig.device.render(frames: 256, cycle: 256)
        rig.send(.setVolume(slot: 0, volume: 0, rampFrames: 240))
        let out = rig.device.render(frames: 512, cycle: 128)[0]
        #expect(out[0] <= 1 && out[0] > 0.99)
        for i in 1..<out.count { #expect(abs(out[i] - out[i - 1]) <= 1.0 / 240 + 1e-6, "step at \(i)") }
        #expect(out[240] == 0)
        #expect(out[511] == 0)
    }

    /// Paused frames do not advance queue time; resume continues where it stopped.
    @Test func pauseAndResume() throws {
        let rig = try Rig(channels: 1)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        rig.send(.enqueue(slot: 0, buffer: rig.buffer(token: 1, frames: 1000, start: 0, impulses: [100, 600])))
        rig.send(.start(slot: 0, frame: 0, run: 0))
        var out = rig.device.render(frames: 512, cycle: 256)[0]
        #expect(nonZero(out) == [100])
        rig.send(.pause(slot: 0))  // at device frame 512 = queue frame 512
        out = rig.device.render(frames: 1000, cycle: 250)[0]
        #expect(nonZero(out).isEmpty)
        rig.send(.start(slot: 0, frame: 1700, run: 0))  // resume: queue frame 512 at device frame 1700
        out = rig.device.render(frames: 1000, cycle: 100)[0]  // device 1512..<2512
        #expect(nonZero(out) == [1700 + 88 - 1512])
    }

    /// Stop immediately returns every buffer unplayed; stop after drain waits for them.
    @Test func stopImmediatelyAndAfterDrain() throws {
        let rig = try Rig(channels: 1)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        rig.send(.activate(slot: 1, channels: 1, map: .standard(channels: 1), generation: 1))
        for t in 1...3 as ClosedRange<UInt32> {
            rig.send(.enqueue(slot: 0, buffer: rig.buffer(token: t, frames: 100, start: Int64(t - 1) * 100)))
            rig.send(.enqueue(slot: 1, buffer: rig.buffer(token: t, frames: 100, start: Int64(t - 1) * 100)))
        }
        rig.send(.start(slot: 0, frame: 0, run: 0))
        rig.send(.start(slot: 1, frame: 0, run: 0))
        _ = rig.device.render(frames: 150, cycle: 150)
        _ = rig.events()
        rig.send(.stop(slot: 0, immediately: true, epoch: 0))
        rig.send(.stop(slot: 1, immediately: false, epoch: 0))
        _ = rig.device.render(frames: 10, cycle: 10)
        var ev = rig.events()
        let unplayed = ev.compactMap { e -> UInt32? in if case .bufferDone(0, _, let t, _, false, _) = e { t } else { nil } }
        #expect(unplayed == [2, 3])
        #expect(ev.contains { if case .stopped(0, _, _, 150, _) = $0 { true } else { false } })
        #expect(!ev.contains { if case .stopped(1, _, _, _, _) = $0 { true } else { false } })
        _ = rig.device.render(frames: 200, cycle: 50)
        ev = rig.events()
        let played = ev.compactMap { e -> UInt32? in if case .bufferDone(1, _, let t, _, true, _) = e { t } else { nil } }
        #expect(played == [2, 3])
        #expect(ev.contains { if case .stopped(1, _, _, 300, _) = $0 { true } else { false } })
    }

    /// A stereo queue mapped to outputs 3 and 1 plays there and nowhere else.
    @Test func channelMap() throws {
        let rig = try Rig(channels: 4)
        rig.send(.activate(slot: 0, channels: 2, map: ChannelMap([3, 1]), generation: 1))
        let p = UnsafeMutablePointer<Float>.allocate(capacity: 20)
        p.initialize(repeating: 0, count: 20)
        p[2] = 0.5  // left, frame 2
        p[10 + 7] = -0.5  // right, frame 7
        rig.storage.append(p)
        rig.send(.enqueue(slot: 0, buffer: ScheduledBuffer(token: 1, data: p, stride: 10, frames: 10, start: 0)))
        rig.send(.start(slot: 0, frame: 5, run: 0))
        let out = rig.device.render(frames: 32, cycle: 16)
        #expect(nonZero(out[3]) == [7])
        #expect(out[3][7] == 0.5)
        #expect(nonZero(out[1]) == [12])
        #expect(nonZero(out[0]).isEmpty && nonZero(out[2]).isEmpty)
    }

    /// Releasing a slot returns its buffers and leaves other queues playing.
    @Test func releaseWhileOthersPlay() throws {
        let rig = try Rig(channels: 1)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        rig.send(.activate(slot: 1, channels: 1, map: .standard(channels: 1), generation: 1))
        rig.send(.enqueue(slot: 0, buffer: rig.buffer(token: 1, frames: 1000, start: 0, impulses: [900])))
        rig.send(.enqueue(slot: 1, buffer: rig.buffer(token: 1, frames: 1000, start: 0, impulses: [901])))
        rig.send(.start(slot: 0, frame: 0, run: 0))
        rig.send(.start(slot: 1, frame: 0, run: 0))
        _ = rig.device.render(frames: 500, cycle: 100)
        rig.send(.release(slot: 1))
        let out = rig.device.render(frames: 500, cycle: 100)[0]
        #expect(nonZero(out) == [400])
        let ev = rig.events()
        #expect(ev.contains { if case .bufferDone(1, _, 1, _, false, _) = $0 { true } else { false } })
    }

    /// Metering reports the peak and RMS of the latest cycle.
    @Test func metering() throws {
        let rig = try Rig(channels: 1)
        rig.send(.activate(slot: 0, channels: 1, map: .standard(channels: 1), generation: 1))
        rig.send(.setMetering(slot: 0, enabled: true))
        rig.send(.enqueue(slot: 0, buffer: rig.buffer(token: 1, frames: 100, start: 0, impulses: Array(0..<100), value: 0.5)))
        rig.send(.start(slot: 0, frame: 0, run: 0))
        _ = rig.device.render(frames: 100, cycle: 100)
        let m = rig.core.pointee.meter(slot: 0, channel: 0)
        #expect(m.peak == 0.5)
        #expect(abs(m.rms - 0.5) < 1e-6)
    }

    /// The clock anchor and discontinuity epoch.
    @Test func clockAnchorAndEpoch() throws {
        let rig = try Rig()
        #expect(rig.core.pointee.clock.anchor() == nil)
        _ = rig.device.render(frames: 512, cycle: 256)
        let a = try #require(rig.core.pointee.clock.anchor())
        #expect(a.frame == 256 && a.frames == 256)
        let e0 = rig.core.pointee.clock.epoch.count
        rig.device.skip(frames: 1000)
        #expect(rig.core.pointee.clock.epoch.count == e0 + 1)
        #expect(rig.core.pointee.clock.epoch.lastReason == .timeJump)
    }
}
