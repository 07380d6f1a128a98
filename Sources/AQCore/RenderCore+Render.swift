#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFloatMode
import CMembarrier
import Synchronization

/// The render entry point, read top to bottom as docs/architecture.md draws it.
extension RenderCore {
    // MARK: - The render entry point

    /// Renders one cycle: applies pending commands, mixes every running queue into the
    /// `channelCount` non-interleaved outputs (`cycle.frames` frames each, overwritten), reads
    /// the device's `inputCount` non-interleaved inputs (`cycle.frames` frames each, captured at
    /// the cycle's frames; only read, never kept: nil or 0 when the device has none), reports
    /// what happened, and publishes the cycle's anchor to the clock. Render thread only; never
    /// blocks (a realtime device's cycle never waits; see docs/architecture.md).
    @_noLocks
    package func render(
        _ cycle: CycleInfo, outputs: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int,
        inputs: UnsafePointer<UnsafeMutablePointer<Float>>? = nil, inputCount: Int = 0
    ) {
        renderCycle(cycle, outputs: outputs, channelCount: channelCount, inputs: inputs, inputCount: inputCount)
    }

    /// The body of ``render(_:outputs:channelCount:inputs:inputCount:)``, inlined into it and
    /// into the hand-driven device's cycle without inputs (``ManualDevice``): there the call,
    /// its arguments passed on the stack and its frame were a measurable part of a one-queue
    /// cycle, and the input metering drops out. Render thread only.
    @_noLocks @inline(__always)
    package func renderCycle(
        _ cycle: CycleInfo, outputs: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int,
        inputs: UnsafePointer<UnsafeMutablePointer<Float>>?, inputCount: Int
    ) {
        // Denormals flush to zero on the render thread (a decaying tail or a ramp toward 0
        // would otherwise cost tens of cycles per operation): set on a thread's first cycle
        // (one read of the control register, a write only when the mode is not set yet),
        // then one thread-local flag per cycle (no call). The mode stays set after the cycle
        // (the device's thread renders again).
        _unsafePerformance { aq_flush_denormals_once() }
        clock.publish(cycle)
        let n = Int(cycle.frames)
        if let inputs, inputCount > 0 {
            meterInputs(inputs, count: min(inputCount, capacities.inputChannels), frame: cycle.frame, n: n)
        }
        let channels = min(channelCount, capacities.outputChannels)
        // Outputs 0 and 1 are not cleared up front when queues may mix in their steady state:
        // the first such queue writes them (`fresh`), and they are cleared only before anything
        // else adds into them. Either way every output is overwritten.
        var fresh = channels >= 2
        for c in (fresh ? 2 : 0)..<max(channelCount, fresh ? 2 : 0) {
            outputs[c].update(repeating: 0, count: n)
        }
        let out0 = outputs[0], out1 = outputs[channels >= 2 ? 1 : 0]
        guard enterCycle() else {
            // A control thread is applying commands this instant (the cycle stays silent).
            if fresh { clearStereo(out0, out1, n) }
            control.pointee.skippedCycles.wrappingAdd(1, ordering: .relaxed)
            return
        }
        var reported = false
        applyCommands(at: cycle.frame, reported: &reported)
        let solo = control.pointee.solo.load(ordering: .acquiring)
        // The steady state needs outputs 0 and 1, every queue mixed, and this cycle right after
        // the last one that mixed the queues (their records say where they are from there on).
        let steadyAllowed = channels >= 2 && solo == 0 && cycle.frame == nextCycleFrame.pointee
        if fresh && !steadyAllowed {
            clearStereo(out0, out1, n)
            fresh = false
        }
        // Steady queues waiting for more, so that up to four mix in one pass over the outputs
        // (``PendingStereo``, ``mixStereoQuad``). The sums and their order are those of mixing
        // one queue after the other, so the result is bit for bit the same. A queue waits only
        // while nothing else mixes and its buffer goes on past this cycle (a buffer is mixed
        // before it is reported done: its memory may then be reused).
        var pending = PendingStereo()
        // The last live queue, when it is steady and nothing waits before it (a one-queue
        // renderer's every cycle): mixed after the loop, inline, without `pending`.
        var last: UnsafePointer<Float>? = nil
        var lastStride = 0
        var lastGain: Float = 0
        // With many queues the sources come from far caches or memory, one queue's loads after
        // another's: asking for a queue's lines `prefetchDistance` queues ahead overlaps them.
        // Short cycles only (the lines of a long one stream in by themselves), and many queues
        // only (a few queues' sources stay in the near caches, and the hints would only cost).
        // Nothing in the loop changes the live list (commands were applied above), so its
        // count and the arrays are read once.
        let liveN = liveCount.pointee, live = self.live, hot = self.hot
        let prefetching = steadyAllowed && n <= RenderCore.prefetchFrames && liveN >= RenderCore.prefetchQueues
        let end = cycle.frame &+ Int64(n)
        var i = 0
        while i < liveN {
            // Four queues in a row in their steady state, none at its buffer's end or first
            // frame, nothing waiting before them: mixed at once, without `pending` (the common
            // cycle of many queues). Anything else takes the queue-by-queue path below.
            if steadyAllowed && pending.count == 0 && i &+ 4 <= liveN {
                let h0 = hot + Int(live[i]), h1 = hot + Int(live[i &+ 1])
                let h2 = hot + Int(live[i &+ 2]), h3 = hot + Int(live[i &+ 3])
                if h0.pointee.holdsThroughout(until: end) && h1.pointee.holdsThroughout(until: end)
                    && h2.pointee.holdsThroughout(until: end) && h3.pointee.holdsThroughout(until: end)
                {
                    if prefetching {
                        var k = i &+ 4
                        while k < min(i &+ 8, liveN) {
                            prefetchSources(hot + Int(live[k]), frame: cycle.frame, frames: n)
                            k &+= 1
                        }
                    }
                    mixSteadyQuad(h0, h1, h2, h3, frame: cycle.frame, out0, out1, n, fresh: fresh)
                    fresh = false
                    i &+= 4
                    continue
                }
            }
            let s = Int(live[i])
            let h = hot + s
            if prefetching && i + RenderCore.prefetchDistance < liveN {
                prefetchSources(hot + Int(live[i + RenderCore.prefetchDistance]), frame: cycle.frame, frames: n)
            }
            if steadyAllowed && h.pointee.holds(until: end) {
                let src = h.pointee.source(at: cycle.frame)
                // A queue in its steady state (``HotSlot``): the same sums as the general path,
                // without its bookkeeping.
                if h.pointee.firstFrame {
                    // The general path's first-frame bookkeeping for an on-time buffer
                    // without a volume event: nothing late, no gain change.
                    slots[s].headPlayed = true
                    slots[s].dry = false
                    h.pointee.firstFrame = false
                }
                let stride = Int(h.pointee.stride)
                let ends = end == h.pointee.endFrame
                if ends || pending.count == 3 {
                    pending.flush(out0, out1, n, fresh: fresh, then: src, src + stride, h.pointee.gain)
                    fresh = false
                } else if pending.count == 0 && i + 1 == liveN {
                    last = UnsafePointer(src)
                    lastStride = stride
                    lastGain = h.pointee.gain
                } else {
                    pending.append(src, src + stride, h.pointee.gain)
                }
                if ends {
                    // The buffer ends exactly at the cycle's end: what the general path does at
                    // that boundary (the buffer done, a drain that completes), then the record
                    // for the next buffer.
                    finishBufferAtCycleEnd(slot: s, cycleFrame: cycle.frame, frames: n, reported: &reported)
                    updateHot(slot: s, next: cycle.frame &+ Int64(n))
                }
            } else if slots[s].state == .running && (solo == 0 || solo == s + 1) {
                // The general path adds into cleared outputs, after what came before it.
                if pending.count > 0 {
                    pending.flush(out0, out1, n, fresh: fresh)
                    fresh = false
                }
                if fresh {
                    clearStereo(out0, out1, n)
                    fresh = false
                }
                mix(slot: s, t: cycle.frame, n: n, outputs: outputs, channels: channels, reported: &reported)
                updateHot(slot: s, next: cycle.frame &+ Int64(n))
            } else {
                // Not mixed this cycle (not running, or another queue soloed): its record, if
                // any, no longer says where it is.
                h.pointee.endFrame = .min
            }
            i += 1
        }
        if let w = last {
            mixStereo(out0, out1, w, w + lastStride, n, lastGain, fresh: fresh)
            fresh = false
        } else if pending.count > 0 {
            pending.flush(out0, out1, n, fresh: fresh)
            fresh = false
        }
        if fresh { clearStereo(out0, out1, n) }
        nextCycleFrame.pointee = cycle.frame &+ Int64(n)
        // Only the render thread writes the counters: a load and a store, no locked add.
        let cycles = stats.pointee.cycles.load(ordering: .relaxed)
        stats.pointee.cycles.store(cycles &+ 1, ordering: .relaxed)
        gate.pointee.inCycle.store(0, ordering: .releasing)
        // The first cycle wakes the events thread too: it wakes whoever waits for that cycle
        // (`AudioQueueEngine.waitForFirstCycle(timeout:)`), without polling.
        if captureWantsWake() || reported || cycles == 0 {
            // sem_post is async-signal-safe: it neither locks nor allocates.
            _unsafePerformance { _ = sem_post(wake) }
        }
    }

    /// Queues ahead whose sources ``prefetchSources(_:frame:frames:)`` asks for.
    static var prefetchDistance: Int { 4 }
    /// The longest cycle whose sources are prefetched (frames).
    static var prefetchFrames: Int { 256 }
    /// The fewest playing queues whose sources are prefetched.
    static var prefetchQueues: Int { 32 }

    /// Asks for the cache lines of both source channels of a queue in its steady state for
    /// this cycle (`frames` frames from device frame `frame`); nothing for a queue not in it.
    /// A hint only. Render thread.
    @_noLocks @inline(__always)
    func prefetchSources(_ h: UnsafeMutablePointer<HotSlot>, frame: Int64, frames n: Int) {
        guard h.pointee.holds(until: frame &+ Int64(n)) else { return }
        let src = h.pointee.source(at: frame)
        let s1 = src + Int(h.pointee.stride)
        var k = 0
        while k < n {
            _unsafePerformance {
                aq_prefetch(src + k)
                aq_prefetch(s1 + k)
            }
            k += 16  // 64-byte lines
        }
        // The last frame's line (the sources need not start on a line).
        _unsafePerformance {
            aq_prefetch(src + (n - 1))
            aq_prefetch(s1 + (n - 1))
        }
    }

}

/// Mixes four queues in their steady state (``HotSlot``: each record holds past the cycle of
/// `n` frames from device frame `frame`, and none is at its buffer's first frame), in that
/// order, into outputs 0 and 1 in one pass (``mixStereoQuad``): the same sums in the same order
/// as one ``mixStereo`` per queue. Not inlined: one call per four queues. Render thread.
@_noLocks @inline(never)
func mixSteadyQuad(
    _ h0: UnsafeMutablePointer<HotSlot>, _ h1: UnsafeMutablePointer<HotSlot>, _ h2: UnsafeMutablePointer<HotSlot>,
    _ h3: UnsafeMutablePointer<HotSlot>, frame: Int64, _ d0: UnsafeMutablePointer<Float>,
    _ d1: UnsafeMutablePointer<Float>, _ n: Int, fresh: Bool
) {
    let a = h0.pointee.source(at: frame), b = h1.pointee.source(at: frame)
    let c = h2.pointee.source(at: frame), e = h3.pointee.source(at: frame)
    mixStereoQuad(
        d0, d1, a, a + Int(h0.pointee.stride), h0.pointee.gain, b, b + Int(h1.pointee.stride), h1.pointee.gain,
        c, c + Int(h2.pointee.stride), h2.pointee.gain, e, e + Int(h3.pointee.stride), h3.pointee.gain, n, fresh: fresh)
}
