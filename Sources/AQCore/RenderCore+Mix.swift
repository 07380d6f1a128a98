#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFloatMode
import CMembarrier
import Synchronization

/// Mixing a queue into the outputs, and what ends its buffers.
extension RenderCore {
    /// Gain `k` frames after a point where it was `g`, ramping by `step` per frame toward
    /// `target`, which it reaches exactly `left` frames after that point (and never passes).
    @_noLocks
    @inline(__always)
    static func gain(_ g: Float, toward target: Float, step: Float, after k: Int, left: Int) -> Float {
        if step == 0 { return g }
        if k >= left { return target }
        let v = g + step * Float(k)
        return step > 0 ? min(v, target) : max(v, target)
    }

    @_noLocks
    func mix(
        slot s: Int, t: Int64, n: Int, outputs: UnsafePointer<UnsafeMutablePointer<Float>>, channels: Int,
        reported: inout Bool
    ) {
        let slot = slots + s
        var qStart = t &- slot.pointee.origin
        var qEnd = qStart &+ Int64(n)
        if qEnd <= 0 { return }  // scheduled to start in a later cycle
        // The steady state, first: a started stereo queue on outputs 0 and 1 at a steady gain,
        // whose head buffer began in an earlier cycle and goes on past this one. Nothing to
        // report, no gain ramp, no buffer boundary: one mixStereo. (The general path below
        // computes exactly the same sums in this case; this only skips its bookkeeping.)
        if slot.pointee.headPlayed && slot.pointee.startReported && slot.pointee.count > 0
            && slot.pointee.step == 0 && !slot.pointee.metering && slot.pointee.channels == 2 && channels >= 2
            && !slot.pointee.isPanned
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
            if slot.pointee.startCredit { slot.pointee.startCredit = false }
            report(.started(slot: Int32(s), generation: slot.pointee.generation, run: slot.pointee.run, frame: slot.pointee.origin, lateFrames: max(0, qStart)), &reported)
        }
        let cap = Int32(capacities.buffersPerQueue)
        let base = schedule + s * capacities.buffersPerQueue
        let sourceChannels = Int(slot.pointee.channels)
        let metering = slot.pointee.metering
        // Channels 0 and 1 of the queue go to outputs 0 and 1, which exist.
        let stereoPair = channels >= 2 && !slot.pointee.map.monoToAll && slot.pointee.map.output(for: 0) == 0
            && slot.pointee.map.output(for: 1) == 1
        let panned = slot.pointee.isPanned
        if metering { meterScratch.update(repeating: 0, count: 16) }
        // Gain state refers to cycle offset `gainOffset`.
        var gainOffset = 0
        while slot.pointee.count > 0 {
            let b = base[Int(slot.pointee.head)]
            if slot.pointee.dry && !slot.pointee.headPlayed && b.flexible && b.start < qStart {
                // Enqueued with no start time after the queue ran dry: as soon as possible,
                // whole. The queue's time shifts by the gap, as a pause would.
                slot.pointee.origin &+= qStart &- b.start
                qStart = b.start
                qEnd = qStart &+ Int64(n)
                publishPosition(slot: s)
            }
            let bEnd = b.start &+ Int64(b.frames)
            if bEnd <= qStart && !slot.pointee.headPlayed {
                // Entirely in the past when first seen: late as a whole.
                stats.pointee.lateFrames.wrappingAdd(UInt64(b.frames), ordering: .relaxed)
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
                slot.pointee.dry = false
                if b.start < qStart {
                    let late = qStart &- b.start
                    slot.pointee.headLate = Int32(clamping: late)
                    stats.pointee.lateFrames.wrappingAdd(UInt64(late), ordering: .relaxed)
                }
                if !b.volume.isNaN {
                    // A per-buffer volume event: exact on the buffer's first frame.
                    let at = Int(max(b.start &- qStart, 0))
                    slot.pointee.gain = b.volume
                    slot.pointee.target = b.volume
                    slot.pointee.step = 0
                    gainOffset = at
                    publishPosition(slot: s)
                }
            }
            let from = max(b.start, qStart)
            let to = min(bEnd, qEnd)
            let outOffset = Int(from &- qStart)
            let srcOffset = Int(from &- b.start)
            let count = Int(to &- from)
            // The ramp's frames left from `gainOffset`, then from this stretch's first frame.
            let rampLeft = slot.pointee.rampLeft
            let g0 = RenderCore.gain(
                slot.pointee.gain, toward: slot.pointee.target, step: slot.pointee.step,
                after: outOffset - gainOffset, left: rampLeft)
            let left = rampLeft - (outOffset - gainOffset)
            let target = slot.pointee.target, step = slot.pointee.step
            var sc = 0
            if sourceChannels == 2 && stereoPair && !metering && !panned
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
                        mixPanned(outputs[oc] + outOffset, src, count, g0, target, step, left: left, slot: slot, output: oc, panned: panned)
                        oc += 1
                    }
                } else {
                    let oc = slot.pointee.map.output(for: sc)
                    if oc >= 0 && oc < channels {
                        mixPanned(outputs[oc] + outOffset, src, count, g0, target, step, left: left, slot: slot, output: oc, panned: panned)
                    }
                }
                if metering && sc < 8 {
                    accumulateMeter(src, count, g0, target, step, left: left, into: meterScratch + sc * 2)
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
        // Advance the gain ramp to the end of the cycle, from where it began (a ramp runs from
        // offset 0: a buffer's volume event, which moves `gainOffset`, ends it).
        if slot.pointee.step != 0 {
            let done = Int(slot.pointee.rampDone) + (n - gainOffset)
            if done >= Int(slot.pointee.rampFrames) {
                slot.pointee.gain = slot.pointee.target
                slot.pointee.step = 0
            } else {
                slot.pointee.rampDone = Int32(done)
                slot.pointee.gain = RenderCore.gain(
                    slot.pointee.rampFrom, toward: slot.pointee.target, step: slot.pointee.step, after: done,
                    left: Int(slot.pointee.rampFrames))
            }
        }
        if metering {
            let m = meters + s * 16
            var c = 0
            while c < min(sourceChannels, 8) {
                m[c * 2].store(meterScratch[c * 2].bitPattern, ordering: .relaxed)
                m[c * 2 + 1].store((meterScratch[c * 2 + 1] / Float(n)).bitPattern, ordering: .relaxed)
                raisePeak(meterPeaks + (s * 8 + c), to: meterScratch[c * 2])
                c += 1
            }
        }
        completeDrainIfDone(slot: s, at: t, reported: &reported)
    }

    /// A stop-after-drain whose queue has no buffer left stops now. Render thread.
    @_noLocks @inline(__always)
    func completeDrainIfDone(slot s: Int, at t: Int64, reported: inout Bool) {
        if slots[s].count == 0 && slots[s].stopWhenDrained {
            let end = drainEnd(slot: s)
            // The stop command's credit, held as `drainCredit` (set with `stopWhenDrained`),
            // pays for this report.
            slots[s].drainCredit = false
            stopNow(slot: s, at: max(slots[s].lastEnd, t), drainEnd: end, reported: &reported)
            publishPosition(slot: s)
        }
    }

    /// The head buffer of a queue in its steady state played its last frame at the end of the
    /// cycle of `frames` frames starting at device frame `cycleFrame`: as at the general path's
    /// boundary, the buffer is done and a drain that empties the queue completes. Render thread.
    @_noLocks
    func finishBufferAtCycleEnd(slot s: Int, cycleFrame: Int64, frames: Int, reported: inout Bool) {
        slots[s].lastEnd = cycleFrame &+ Int64(frames)
        finishHead(slot: s, cap: Int32(capacities.buffersPerQueue), played: true, reported: &reported)
        completeDrainIfDone(slot: s, at: cycleFrame, reported: &reported)
    }

    /// Fills in slot `s`'s ``HotSlot`` after a cycle of the general path when the queue is in
    /// its steady state for a cycle starting at device frame `next`, empties it otherwise.
    /// The conditions are those under which the general path mixes a stereo queue with one
    /// `mixStereo` and nothing else. Render thread.
    @_noLocks
    func updateHot(slot s: Int, next: Int64) {
        let slot = slots + s
        let h = hot + s
        h.pointee.endFrame = .min
        guard slot.pointee.state == .running && slot.pointee.startReported
            && slot.pointee.count > 0 && slot.pointee.step == 0 && !slot.pointee.metering && !slot.pointee.isPanned
            && slot.pointee.channels == 2 && !slot.pointee.map.monoToAll
            && slot.pointee.map.output(for: 0) == 0 && slot.pointee.map.output(for: 1) == 1
        else { return }
        let b = schedule[s * capacities.buffersPerQueue + Int(slot.pointee.head)]
        let qNext = next &- slot.pointee.origin
        let bEnd = b.start &+ Int64(b.frames)
        if slot.pointee.headPlayed {
            guard b.start <= qNext && bEnd > qNext else { return }
            h.pointee.firstFrame = false
        } else {
            // The next buffer follows the one that just ended without a gap and without a
            // volume event: its first cycle can use the record too (a cycle that starts
            // elsewhere takes the general path, which counts what is late).
            guard b.start == qNext && bEnd > qNext && b.volume.isNaN else { return }
            h.pointee.firstFrame = true
        }
        // Channel 0 of the buffer at device frame `next`, carried back to device frame 0.
        let atNext = UInt(bitPattern: b.data + Int(qNext &- b.start))
        h.pointee.origin = atNext &- UInt(bitPattern: Int(next)) &* UInt(MemoryLayout<Float>.stride)
        h.pointee.stride = b.stride
        h.pointee.gain = slot.pointee.gain
        h.pointee.endFrame = next &+ (bEnd &- qNext)
    }

    /// One source channel into output `oc` with the queue's gain, scaled by the pan factor of
    /// that output when the queue is panned (the gain and the factor multiplied first, so a
    /// factor of 1 gives exactly the unpanned sums). Render thread.
    @_noLocks @inline(__always)
    func mixPanned(
        _ dst: UnsafeMutablePointer<Float>, _ src: UnsafePointer<Float>, _ count: Int, _ g0: Float, _ target: Float,
        _ step: Float, left: Int, slot: UnsafeMutablePointer<QueueSlot>, output oc: Int, panned: Bool
    ) {
        if !panned { return mixInto(dst, src, count, g0, target, step, left: left) }
        let f = slot.pointee.panFactor(output: oc)
        if f == 0 { return }
        mixInto(dst, src, count, g0 * f, target * f, step * f, left: left)
    }

    @_noLocks
    func finishHead(slot s: Int, cap: Int32, played: Bool, reported: inout Bool) {
        let b = schedule[s * capacities.buffersPerQueue + Int(slots[s].head)]
        let late = slots[s].headLate
        slots[s].head = slots[s].head + 1 == cap ? 0 : slots[s].head + 1  // no division
        slots[s].count -= 1
        slots[s].headPlayed = false
        slots[s].headLate = 0
        if slots[s].count == 0 { slots[s].dry = true }
        report(.bufferDone(slot: Int32(s), generation: slots[s].generation, token: b.token, serial: b.serial, played: played, lateFrames: late), &reported)
    }
}
