#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// Capacities of the renderer, fixed when it is made. Running out is an error on the control
/// side, never a wait on the render thread.
public struct RenderCapacities: Sendable, Equatable {
    /// Queues that can exist at once.
    public var queues: Int
    /// Buffers one queue can have scheduled at once.
    public var buffersPerQueue: Int
    /// Commands in flight from control threads to the render thread.
    public var commands: Int
    /// Output channels the renderer can mix into.
    public var outputChannels: Int

    public init(queues: Int = 256, buffersPerQueue: Int = 64, commands: Int = 8192, outputChannels: Int = 32) {
        self.queues = queues
        self.buffersPerQueue = buffersPerQueue
        self.commands = commands
        self.outputChannels = outputChannels
    }
}

/// Render-thread statistics, readable from any thread.
public struct RenderStatistics: Sendable, Equatable {
    public var cycles: UInt64
    /// Frames of buffers and starts that had already passed when the render thread saw them.
    public var lateFrames: UInt64
    /// Events the render thread could not report because the event ring was full.
    public var droppedEvents: UInt64
}

enum SlotState: UInt8 { case free = 0, stopped, running, paused }

/// The render thread's view of one queue. Only the render thread touches it.
struct QueueSlot {
    var state: SlotState = .free
    var startReported = false
    var stopWhenDrained = false
    var headPlayed = false
    var metering = false
    /// After a reset: the next enqueued buffer fixes the origin so that it plays at once.
    var originPending = false
    var channels: Int32 = 0
    var map = ChannelMap.standard(channels: 1)
    /// Device frame at which the queue's frame 0 plays.
    var origin: Int64 = 0
    var pauseFrame: Int64 = 0
    var gain: Float = 1
    var target: Float = 1
    var step: Float = 0
    var head: Int32 = 0
    var count: Int32 = 0
    /// Late frames of the head buffer, found when it was first seen.
    var headLate: Int32 = 0
    /// Device frame just after the last frame played (for stop-after-drain reports).
    var lastEnd: Int64 = 0

    /// Makes the slot a stopped queue of `channels` channels. Render thread.
    @_noLocks
    mutating func activate(channels: Int32, map: ChannelMap) {
        state = .stopped
        startReported = false
        stopWhenDrained = false
        headPlayed = false
        metering = false
        originPending = false
        self.channels = channels
        self.map = map
        origin = 0
        pauseFrame = 0
        gain = 1
        target = 1
        step = 0
        head = 0
        count = 0
        headLate = 0
        lastEnd = 0
    }
}

/// The renderer: everything the render thread owns, reached through plain pointers so that
/// the render path never retains, releases, locks or allocates. The compiler checks this:
/// ``render(_:outputs:channelCount:)`` and everything it calls are `@_noLocks`.
///
/// Memory is allocated by ``allocate(sampleRate:capacities:)`` and freed by ``deallocate()``
/// on a control thread once no device calls ``render(_:outputs:channelCount:)``.
public struct RenderCore: @unchecked Sendable {
    /// The device clock this renderer publishes each cycle's anchor to.
    public let clock: DeviceClockCore
    /// Control → render. One producer at a time (the control side holds a lock while pushing).
    public let commands: SPSCRing<RenderCommand>
    /// Render → events thread.
    public let events: SPSCRing<RenderEvent>
    public let capacities: RenderCapacities
    /// Posted when events were pushed.
    public let wake: UnsafeMutablePointer<sem_t>

    let slots: UnsafeMutablePointer<QueueSlot>
    let schedule: UnsafeMutablePointer<ScheduledBuffer>
    let live: UnsafeMutablePointer<Int32>
    let liveCount: UnsafeMutablePointer<Int>
    /// Per slot, per channel: peak and mean square of the last cycle, as Float bit patterns.
    let meters: UnsafeMutablePointer<Atomic<UInt32>>
    let meterScratch: UnsafeMutablePointer<Float>
    let stats: UnsafeMutablePointer<Atomic<UInt64>>  // cycles, lateFrames, droppedEvents
    /// Per slot: state, origin, pause frame — for control-side queue time.
    let published: UnsafeMutablePointer<Atomic<Int64>>

    public static func allocate(sampleRate: Double, capacities: RenderCapacities) -> UnsafeMutablePointer<RenderCore> {
        let q = capacities.queues
        let slots = UnsafeMutablePointer<QueueSlot>.allocate(capacity: q)
        slots.initialize(repeating: QueueSlot(), count: q)
        let schedule = UnsafeMutablePointer<ScheduledBuffer>.allocate(capacity: q * capacities.buffersPerQueue)
        let live = UnsafeMutablePointer<Int32>.allocate(capacity: q)
        let liveCount = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        liveCount.initialize(to: 0)
        let meters = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: q * 16)
        for i in 0..<(q * 16) { (meters + i).initialize(to: Atomic(0)) }
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 16)
        scratch.initialize(repeating: 0, count: 16)
        let stats = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 3)
        for i in 0..<3 { (stats + i).initialize(to: Atomic(0)) }
        let published = UnsafeMutablePointer<Atomic<Int64>>.allocate(capacity: q * 3)
        for i in 0..<(q * 3) { (published + i).initialize(to: Atomic(0)) }
        let wake = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(wake, 0, 0)
        // Every buffer produces one done event; a few state events per queue on top.
        let eventCapacity = q * (capacities.buffersPerQueue + 8) + capacities.commands
        let core = RenderCore(
            clock: .allocate(sampleRate: sampleRate),
            commands: .allocate(capacity: capacities.commands),
            events: .allocate(capacity: eventCapacity),
            capacities: capacities, wake: wake, slots: slots, schedule: schedule, live: live,
            liveCount: liveCount, meters: meters, meterScratch: scratch, stats: stats, published: published)
        let p = UnsafeMutablePointer<RenderCore>.allocate(capacity: 1)
        p.initialize(to: core)
        return p
    }

    /// Frees everything `allocate` made, including `pointer` itself. Control thread, once no
    /// device renders.
    public static func deallocate(_ pointer: UnsafeMutablePointer<RenderCore>) {
        let c = pointer.pointee
        let q = c.capacities.queues
        c.clock.deallocate()
        c.commands.deallocate()
        c.events.deallocate()
        sem_destroy(c.wake)
        c.wake.deallocate()
        c.slots.deinitialize(count: q)
        c.slots.deallocate()
        c.schedule.deallocate()
        c.live.deallocate()
        c.liveCount.deallocate()
        c.meters.deinitialize(count: q * 16)
        c.meters.deallocate()
        c.meterScratch.deallocate()
        c.published.deinitialize(count: q * 3)
        c.published.deallocate()
        c.stats.deinitialize(count: 3)
        c.stats.deallocate()
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// A snapshot of the counters. Any thread.
    public var statistics: RenderStatistics {
        RenderStatistics(
            cycles: stats[0].load(ordering: .relaxed), lateFrames: stats[1].load(ordering: .relaxed),
            droppedEvents: stats[2].load(ordering: .relaxed))
    }

    /// The level meter of `slot`, channel `channel`, for the latest cycle: (peak, RMS), linear.
    /// Any thread.
    public func meter(slot: Int, channel: Int) -> (peak: Float, rms: Float) {
        let base = meters + (slot * 16 + channel * 2)
        let peak = Float(bitPattern: base[0].load(ordering: .relaxed))
        let ms = Float(bitPattern: base[1].load(ordering: .relaxed))
        return (peak, ms.squareRoot())
    }

    /// What the render thread last published about `slot`: whether it runs or is paused, the
    /// device frame of its frame 0, and the frame it paused at. Any thread; the three values
    /// are read one after the other (a read racing a pause or resume may mix old and new).
    public func position(slot: Int) -> (running: Bool, paused: Bool, origin: Int64, pauseFrame: Int64) {
        let p = published + slot * 3
        let state = p[0].load(ordering: .acquiring)
        return (
            state == Int64(SlotState.running.rawValue), state == Int64(SlotState.paused.rawValue),
            p[1].load(ordering: .relaxed), p[2].load(ordering: .relaxed)
        )
    }

    @_noLocks
    func publishPosition(slot s: Int) {
        let p = published + s * 3
        p[1].store(slots[s].origin, ordering: .relaxed)
        p[2].store(slots[s].pauseFrame, ordering: .relaxed)
        p[0].store(Int64(unsafeBitCast(slots[s].state, to: UInt8.self)), ordering: .releasing)
    }

    // MARK: - The render entry point

    /// Renders one cycle: applies pending commands, mixes every running queue into the
    /// `channelCount` non-interleaved outputs (`cycle.frames` frames each, overwritten), reports
    /// what happened, and publishes the cycle's anchor to the clock. Render thread only.
    @_noLocks
    public func render(
        _ cycle: CycleInfo, outputs: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int
    ) {
        clock.publish(cycle)
        let n = Int(cycle.frames)
        let channels = min(channelCount, capacities.outputChannels)
        for c in 0..<channelCount {
            outputs[c].update(repeating: 0, count: n)
        }
        var reported = false
        while let i = commands.index.readSlot() {
            let command = commands.storage[i]
            commands.index.commitRead()
            apply(command, at: cycle.frame, reported: &reported)
            publishPosition(slot: Int(command.slot))
        }
        var i = 0
        while i < liveCount.pointee {
            let s = Int(live[i])
            if slots[s].state == .running {
                mix(slot: s, t: cycle.frame, n: n, outputs: outputs, channels: channels, reported: &reported)
            }
            i += 1
        }
        // Only the render thread writes the counters: a load and a store, no locked add.
        stats[0].store(stats[0].load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        if reported {
            // sem_post is async-signal-safe: it neither locks nor allocates.
            _unsafePerformance { _ = sem_post(wake) }
        }
    }

    @_noLocks
    func report(_ e: RenderEvent, _ reported: inout Bool) {
        if let i = events.index.writeSlot() {
            events.storage[i] = e
            events.index.commitWrite()
            reported = true
        } else {
            stats[2].wrappingAdd(1, ordering: .relaxed)
        }
    }

    @_noLocks
    func apply(_ command: RenderCommand, at t: Int64, reported: inout Bool) {
        switch command {
        case .activate(let slot, let channels, let map):
            let s = Int(slot)
            slots[s].activate(channels: channels, map: map)
            live[liveCount.pointee] = slot
            liveCount.pointee += 1
        case .enqueue(let slot, let buffer):
            let s = Int(slot)
            let cap = Int32(capacities.buffersPerQueue)
            if slots[s].count >= cap || slots[s].state == .free {
                // The control side counts buffers, so this cannot happen; return it unplayed.
                report(.bufferDone(slot: slot, token: buffer.token, played: false, lateFrames: 0), &reported)
                return
            }
            if slots[s].originPending {
                slots[s].originPending = false
                slots[s].origin = t &- buffer.start
            }
            let index = Int((slots[s].head + slots[s].count) % cap)
            schedule[s * capacities.buffersPerQueue + index] = buffer
            slots[s].count += 1
        case .start(let slot, let frame):
            let s = Int(slot)
            let at = max(frame ?? t, Int64.min / 2)
            switch slots[s].state {
            case .stopped:
                // A stop-after-drain asked for before the start stays in force.
                slots[s].origin = at
                slots[s].state = .running
                slots[s].startReported = false
            case .paused:
                slots[s].origin &+= at &- slots[s].pauseFrame
                slots[s].state = .running
            default: break
            }
        case .pause(let slot):
            let s = Int(slot)
            if slots[s].state == .running {
                slots[s].state = .paused
                slots[s].pauseFrame = max(t, slots[s].origin)
                report(.paused(slot: slot, frame: t), &reported)
            }
        case .stop(let slot, let immediately):
            let s = Int(slot)
            if immediately || slots[s].count == 0 {
                returnAll(slot: s, reported: &reported)
                if slots[s].state != .stopped {
                    slots[s].state = .stopped
                    report(.stopped(slot: slot, frame: t), &reported)
                }
            } else {
                slots[s].stopWhenDrained = true
            }
        case .reset(let slot):
            let s = Int(slot)
            returnAll(slot: s, reported: &reported)
            slots[s].origin = t
            slots[s].pauseFrame = t
            slots[s].originPending = slots[s].state != .stopped
        case .setVolume(let slot, let volume, let rampFrames):
            let s = Int(slot)
            slots[s].target = volume
            if rampFrames <= 0 {
                slots[s].gain = volume
                slots[s].step = 0
            } else {
                slots[s].step = (volume - slots[s].gain) / Float(rampFrames)
            }
        case .setMetering(let slot, let enabled):
            slots[Int(slot)].metering = enabled
        case .setChannelMap(let slot, let map):
            slots[Int(slot)].map = map
        case .release(let slot):
            let s = Int(slot)
            returnAll(slot: s, reported: &reported)
            slots[s].state = .free
            var i = 0
            while i < liveCount.pointee {
                if live[i] == slot {
                    live[i] = live[liveCount.pointee - 1]
                    liveCount.pointee -= 1
                    break
                }
                i += 1
            }
            report(.released(slot: slot), &reported)
        }
    }

    /// Removes every scheduled buffer of slot `s`, reporting each unplayed.
    @_noLocks
    func returnAll(slot s: Int, reported: inout Bool) {
        let cap = Int32(capacities.buffersPerQueue)
        while slots[s].count > 0 {
            let b = schedule[s * capacities.buffersPerQueue + Int(slots[s].head)]
            report(.bufferDone(slot: Int32(s), token: b.token, played: false, lateFrames: 0), &reported)
            slots[s].head = (slots[s].head + 1) % cap
            slots[s].count -= 1
        }
        slots[s].headPlayed = false
        slots[s].headLate = 0
    }

    /// Gain at frame offset `k` of the cycle, given the slot's ramp state at offset 0.
    @_noLocks
    @inline(__always)
    static func gain(_ g: Float, toward target: Float, step: Float, after k: Int) -> Float {
        if step == 0 { return g }
        let v = g + step * Float(k)
        return step > 0 ? min(v, target) : max(v, target)
    }

    @_noLocks
    func mix(
        slot s: Int, t: Int64, n: Int, outputs: UnsafePointer<UnsafeMutablePointer<Float>>, channels: Int,
        reported: inout Bool
    ) {
        let slot = slots + s
        let qStart = t &- slot.pointee.origin
        let qEnd = qStart &+ Int64(n)
        if qEnd <= 0 { return }  // scheduled to start in a later cycle
        // The steady state, first: a started stereo queue on outputs 0 and 1 at a steady gain,
        // whose head buffer began in an earlier cycle and goes on past this one. Nothing to
        // report, no gain ramp, no buffer boundary: one mixStereo. (The general path below
        // computes exactly the same sums in this case; this only skips its bookkeeping.)
        if slot.pointee.headPlayed && slot.pointee.startReported && slot.pointee.count > 0
            && slot.pointee.step == 0 && !slot.pointee.metering && slot.pointee.channels == 2 && channels >= 2
        {
            let b = schedule[s * capacities.buffersPerQueue + Int(slot.pointee.head)]
            if b.start <= qStart && b.start &+ Int64(b.frames) > qEnd && !slot.pointee.map.monoToAll
                && slot.pointee.map.output(for: 0) == 0 && slot.pointee.map.output(for: 1) == 1
            {
                let src = UnsafePointer(b.data + Int(qStart &- b.start))
                mixStereo(outputs[0], outputs[1], src, src + Int(b.stride), n, slot.pointee.gain)
                return
            }
        }
        if !slot.pointee.startReported {
            // The first cycle that reaches the queue's frame 0. A start whose frame had already
            // passed is late by `qStart` frames; those frames are counted with the buffers
            // they belonged to.
            slot.pointee.startReported = true
            report(.started(slot: Int32(s), frame: slot.pointee.origin, lateFrames: max(0, qStart)), &reported)
        }
        let cap = Int32(capacities.buffersPerQueue)
        let base = schedule + s * capacities.buffersPerQueue
        let sourceChannels = Int(slot.pointee.channels)
        let metering = slot.pointee.metering
        // Channels 0 and 1 of the queue go to outputs 0 and 1, which exist.
        let stereoPair = channels >= 2 && !slot.pointee.map.monoToAll && slot.pointee.map.output(for: 0) == 0
            && slot.pointee.map.output(for: 1) == 1
        if metering { meterScratch.update(repeating: 0, count: 16) }
        // Gain state refers to cycle offset `gainOffset`.
        var gainOffset = 0
        while slot.pointee.count > 0 {
            let b = base[Int(slot.pointee.head)]
            let bEnd = b.start &+ Int64(b.frames)
            if bEnd <= qStart && !slot.pointee.headPlayed {
                // Entirely in the past when first seen: late as a whole.
                stats[1].wrappingAdd(UInt64(b.frames), ordering: .relaxed)
                slot.pointee.headLate = b.frames
                finishHead(slot: s, cap: cap, played: false, reported: &reported)
                continue
            }
            if bEnd <= qStart {
                // Played up to its last frame in an earlier cycle (cannot happen while buffers
                // are finished in the cycle they end in; kept so a count is never negative).
                finishHead(slot: s, cap: cap, played: true, reported: &reported)
                continue
            }
            if b.start >= qEnd { break }
            if !slot.pointee.headPlayed {
                slot.pointee.headPlayed = true
                if b.start < qStart {
                    let late = qStart &- b.start
                    slot.pointee.headLate = Int32(clamping: late)
                    stats[1].wrappingAdd(UInt64(late), ordering: .relaxed)
                }
                if !b.volume.isNaN {
                    // A per-buffer volume event: exact on the buffer's first frame.
                    let at = Int(max(b.start &- qStart, 0))
                    slot.pointee.gain = b.volume
                    slot.pointee.target = b.volume
                    slot.pointee.step = 0
                    gainOffset = at
                }
            }
            let from = max(b.start, qStart)
            let to = min(bEnd, qEnd)
            let outOffset = Int(from &- qStart)
            let srcOffset = Int(from &- b.start)
            let count = Int(to &- from)
            let g0 = RenderCore.gain(
                slot.pointee.gain, toward: slot.pointee.target, step: slot.pointee.step,
                after: outOffset - gainOffset)
            var sc = 0
            if sourceChannels == 2 && stereoPair && !metering
                && (slot.pointee.step == 0 || g0 == slot.pointee.target)
            {
                // The common case: a stereo queue on outputs 0 and 1 at a steady gain.
                let src0 = UnsafePointer(b.data + srcOffset)
                mixStereo(outputs[0] + outOffset, outputs[1] + outOffset, src0, src0 + Int(b.stride), count, g0)
                sc = 2
            }
            while sc < sourceChannels {
                let src = UnsafePointer(b.data + (sc * Int(b.stride) + srcOffset))
                if slot.pointee.map.monoToAll && sourceChannels == 1 {
                    var oc = 0
                    while oc < channels {
                        mixInto(outputs[oc] + outOffset, src, count, g0, slot.pointee.target, slot.pointee.step)
                        oc += 1
                    }
                } else {
                    let oc = slot.pointee.map.output(for: sc)
                    if oc >= 0 && oc < channels {
                        mixInto(outputs[oc] + outOffset, src, count, g0, slot.pointee.target, slot.pointee.step)
                    }
                }
                if metering && sc < 8 {
                    accumulateMeter(src, count, g0, slot.pointee.target, slot.pointee.step, into: meterScratch + sc * 2)
                }
                sc += 1
            }
            if bEnd <= qEnd {
                slot.pointee.lastEnd = slot.pointee.origin &+ bEnd
                finishHead(slot: s, cap: cap, played: true, reported: &reported)
            } else {
                break
            }
        }
        // Advance the gain ramp to the end of the cycle.
        slot.pointee.gain = RenderCore.gain(
            slot.pointee.gain, toward: slot.pointee.target, step: slot.pointee.step, after: n - gainOffset)
        if slot.pointee.gain == slot.pointee.target { slot.pointee.step = 0 }
        if metering {
            let m = meters + s * 16
            var c = 0
            while c < min(sourceChannels, 8) {
                m[c * 2].store(meterScratch[c * 2].bitPattern, ordering: .relaxed)
                m[c * 2 + 1].store((meterScratch[c * 2 + 1] / Float(n)).bitPattern, ordering: .relaxed)
                c += 1
            }
        }
        if slot.pointee.count == 0 && slot.pointee.stopWhenDrained {
            slot.pointee.state = .stopped
            slot.pointee.stopWhenDrained = false
            publishPosition(slot: s)
            report(.stopped(slot: Int32(s), frame: max(slot.pointee.lastEnd, t)), &reported)
        }
    }

    @_noLocks
    func finishHead(slot s: Int, cap: Int32, played: Bool, reported: inout Bool) {
        let b = schedule[s * capacities.buffersPerQueue + Int(slots[s].head)]
        let late = slots[s].headLate
        slots[s].head = (slots[s].head + 1) % cap
        slots[s].count -= 1
        slots[s].headPlayed = false
        slots[s].headLate = 0
        report(.bufferDone(slot: Int32(s), token: b.token, played: played, lateFrames: late), &reported)
    }
}

/// dst[i] += src[i] × gain(i), the gain ramping from `g0` toward `target` by `step` per frame.
@_noLocks
@inline(__always)
func mixInto(
    _ dst: UnsafeMutablePointer<Float>, _ src: UnsafePointer<Float>, _ count: Int, _ g0: Float, _ target: Float,
    _ step: Float
) {
    if step == 0 || g0 == target {
        for i in 0..<count { dst[i] += src[i] * g0 }
    } else {
        for i in 0..<count { dst[i] += src[i] * RenderCore.gain(g0, toward: target, step: step, after: i) }
    }
}

/// d0[i] += s0[i] × g and d1[i] += s1[i] × g: the stereo case of ``mixInto`` at a steady gain.
@_noLocks
@inline(__always)
func mixStereo(
    _ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>, _ s0: UnsafePointer<Float>,
    _ s1: UnsafePointer<Float>, _ count: Int, _ g: Float
) {
    // Two simple passes vectorise and unroll better than one pass over four streams.
    for i in 0..<count { d0[i] += s0[i] * g }
    for i in 0..<count { d1[i] += s1[i] * g }
}

/// Peak and sum of squares of src × gain into acc[0], acc[1].
@_noLocks
@inline(__always)
func accumulateMeter(
    _ src: UnsafePointer<Float>, _ count: Int, _ g0: Float, _ target: Float, _ step: Float,
    into acc: UnsafeMutablePointer<Float>
) {
    var peak = acc[0]
    var sum = acc[1]
    for i in 0..<count {
        let v = src[i] * RenderCore.gain(g0, toward: target, step: step, after: i)
        peak = max(peak, abs(v))
        sum += v * v
    }
    acc[0] = peak
    acc[1] = sum
}
