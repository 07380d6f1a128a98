#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFloatMode
import CMembarrier
import Synchronization

/// Entering a cycle and applying the control side's commands.
extension RenderCore {
    /// Takes the gate for a cycle: false when a control thread holds it and this device does
    /// not wait (a realtime device skips the cycle rather than wait).
    ///
    /// Asymmetric gate (``RenderGate/asymmetric`` == 1): a plain store of the claim, a compiler barrier and a
    /// load of the control side's claim; no locked instruction (which would also wait for every
    /// store of the cycle so far to drain). The control side's membarrier(2) makes this
    /// sequence a full barrier whenever it matters (``applyPendingIfIdle(at:)``).
    @_noLocks @inline(__always)
    func enterCycle() -> Bool {
        if gate.pointee.asymmetric.load(ordering: .relaxed) == 1 {
            while true {
                gate.pointee.inCycle.store(1, ordering: .relaxed)
                // An inline asm memory clobber: no instruction, no lock, no call.
                _unsafePerformance { aq_compiler_barrier() }
                if gate.pointee.claimed.load(ordering: .acquiring) == 0 { return true }
                gate.pointee.inCycle.store(0, ordering: .releasing)
                if control.pointee.waitsForControl.load(ordering: .relaxed) == 0 { return false }
                // A device that waits (hand-driven): until the control thread is done.
                while gate.pointee.claimed.load(ordering: .acquiring) != 0 {}
            }
        }
        while true {
            if gate.pointee.inCycle.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { return true }
            if control.pointee.waitsForControl.load(ordering: .relaxed) == 0 { return false }
        }
    }

    /// Applies every pending command. A command's ring slot is released only after it was
    /// applied, so ``commandsApplied`` passing a position means the command there took effect.
    @_noLocks @inline(__always)
    func applyCommands(at t: Int64, reported: inout Bool) {
        while let i = commands.index.readSlot() {
            let command = commands.storage[i]
            // A command may change what the queue's steady state assumed; an enqueue only
            // appends behind the head buffer (it moves the queue's origin only after a reset,
            // and a reset leaves no steady state), so it keeps the record.
            if case .enqueue = command, !slots[Int(command.slot)].originPending {
            } else {
                hot[Int(command.slot)].endFrame = .min
            }
            apply(command, at: t, reported: &reported)
            publishPosition(slot: Int(command.slot))
            commands.index.commitRead()
        }
    }

    /// No held peak: for a new queue in the slot, a released slot, metering turned on or off.
    @_noLocks
    func clearPeaks(slot s: Int) {
        var k = 0
        while k < 8 {
            meterPeaks[s * 8 + k].store(0, ordering: .relaxed)
            k += 1
        }
    }

    /// Raises `held` to `peak` (non-negative: its bits order as the values do).
    @_noLocks
    func raisePeak(_ held: UnsafeMutablePointer<Atomic<UInt32>>, to peak: Float) {
        let bits = peak.bitPattern
        var current = held.pointee.load(ordering: .relaxed)
        while bits > current {
            let (done, seen) = held.pointee.compareExchange(expected: current, desired: bits, ordering: .relaxed)
            if done { return }
            current = seen
        }
    }

    @_noLocks
    func clearMeters(slot s: Int) {
        let m = meters + s * 16
        var k = 0
        while k < 16 {
            m[k].store(0, ordering: .relaxed)
            k += 1
        }
    }

    /// The slot stops now: reported when it was not stopped already (paid by the stop command's
    /// credit, given back otherwise); credits held for a start or drain report are given back.
    @_noLocks
    func stopNow(slot s: Int, at t: Int64, drainEnd: Int64, reported: inout Bool) {
        if slots[s].state != .stopped {
            slots[s].state = .stopped
            report(.stopped(slot: Int32(s), generation: slots[s].generation, run: slots[s].run, frame: t, drainEnd: drainEnd), &reported)
        } else {
            refund()
        }
        if slots[s].startCredit { slots[s].startCredit = false; refund() }
        if slots[s].drainCredit { slots[s].drainCredit = false; refund() }
        slots[s].stopWhenDrained = false
        slots[s].dry = false
        clearMeters(slot: s)
    }

    /// A stop-after-drain completes: the end of the timeline (everything scheduled on it), by
    /// which later buffers of the drain's epoch move back: they belong to the next run.
    @_noLocks
    func drainEnd(slot s: Int) -> Int64 {
        let end = max(0, slots[s].scheduledEnd)
        slots[s].rebaseActive = true
        slots[s].rebaseEpoch = slots[s].drainEpoch
        slots[s].rebaseBy = end
        slots[s].scheduledEnd = 0
        return end
    }

    @_noLocks
    func report(_ e: RenderEvent, _ reported: inout Bool) {
        if let i = events.index.writeSlot() {
            events.storage[i] = e
            events.index.commitWrite()
            reported = true
        } else {
            stats.pointee.droppedEvents.wrappingAdd(1, ordering: .relaxed)
        }
    }

    @_noLocks
    func apply(_ command: RenderCommand, at t: Int64, reported: inout Bool) {
        switch command {
        case .activate(let slot, let channels, let map, let generation):
            let s = Int(slot)
            // A live slot is never activated again: it would stand twice in `live` (one
            // queue mixed twice, and `live` written past its capacity). The control side
            // sends an activation only for a slot whose release was applied (``isSlotFree``);
            // this keeps the render thread safe whatever it is sent.
            guard slots[s].state == .free, liveCount.pointee < capacities.queues else { return }
            slots[s].activate(channels: channels, map: map, generation: generation)
            clearMeters(slot: s)
            clearPeaks(slot: s)
            live[liveCount.pointee] = slot
            liveCount.pointee += 1
        case .enqueue(let slot, var buffer):
            let s = Int(slot)
            let cap = Int32(capacities.buffersPerQueue)
            if slots[s].count >= cap || slots[s].state == .free {
                // The control side counts buffers, so this cannot happen; return it unplayed.
                report(.bufferDone(slot: slot, generation: slots[s].generation, token: buffer.token, serial: buffer.serial, played: false, lateFrames: 0), &reported)
                return
            }
            if slots[s].rebaseActive {
                if buffer.epoch == slots[s].rebaseEpoch {
                    buffer.start &-= slots[s].rebaseBy
                } else {
                    slots[s].rebaseActive = false
                }
            }
            slots[s].scheduledEnd = max(slots[s].scheduledEnd, buffer.start &+ Int64(buffer.frames))
            if slots[s].originPending {
                slots[s].originPending = false
                // Paused: queue time stays at the buffer's start until the queue resumes.
                slots[s].origin = (slots[s].state == .paused ? slots[s].pauseFrame : t) &- buffer.start
            }
            // head + count < 2 × cap: a subtraction instead of a division.
            var index = Int(slots[s].head + slots[s].count)
            if index >= Int(cap) { index -= Int(cap) }
            schedule[s * capacities.buffersPerQueue + index] = buffer
            slots[s].count += 1
        case .start(let slot, let frame, let run):
            let s = Int(slot)
            let at = max(frame ?? t, Int64.min / 2)
            switch slots[s].state {
            case .stopped:
                // A stop-after-drain asked for before the start stays in force.
                slots[s].origin = at
                slots[s].state = .running
                slots[s].startReported = false
                slots[s].run = run
                slots[s].dry = slots[s].count == 0
                if slots[s].startCredit { refund() }
                slots[s].startCredit = true
            case .paused:
                slots[s].origin &+= at &- slots[s].pauseFrame
                slots[s].state = .running
                slots[s].run = run
                refund()
            default:
                refund()
            }
        case .pause(let slot):
            let s = Int(slot)
            if slots[s].state == .running {
                slots[s].state = .paused
                slots[s].pauseFrame = max(t, slots[s].origin)
                report(.paused(slot: slot, generation: slots[s].generation, run: slots[s].run, frame: t), &reported)
            } else {
                refund()
            }
        case .stop(let slot, let immediately, let epoch):
            let s = Int(slot)
            slots[s].drainEpoch = epoch
            if immediately {
                returnAll(slot: s, reported: &reported)
                slots[s].rebaseActive = false
                slots[s].scheduledEnd = 0
                stopNow(slot: s, at: t, drainEnd: -1, reported: &reported)
            } else if slots[s].count == 0 {
                // Nothing left to play: stops now. Queue time restarts only when a run ends
                // (a stopped queue keeps its timeline and reports nothing).
                let end = slots[s].state == .stopped ? -1 : drainEnd(slot: s)
                stopNow(slot: s, at: t, drainEnd: end, reported: &reported)
            } else {
                if slots[s].drainCredit { refund() }
                slots[s].drainCredit = true
                slots[s].stopWhenDrained = true
            }
        case .reset(let slot):
            let s = Int(slot)
            returnAll(slot: s, reported: &reported)
            slots[s].origin = t
            slots[s].pauseFrame = t
            slots[s].originPending = slots[s].state != .stopped
            slots[s].rebaseActive = false
            slots[s].scheduledEnd = 0
            slots[s].dry = false
        case .setVolume(let slot, let volume, let rampFrames):
            let s = Int(slot)
            slots[s].target = volume
            slots[s].volumeSets &+= 1
            if rampFrames <= 0 || slots[s].state != .running || volume == slots[s].gain {
                slots[s].gain = volume
                slots[s].step = 0
            } else {
                slots[s].step = (volume - slots[s].gain) / Float(rampFrames)
                slots[s].rampFrom = slots[s].gain
                slots[s].rampDone = 0
                slots[s].rampFrames = rampFrames
            }
        case .setPan(let slot, let left, let right):
            slots[Int(slot)].panLeft = left
            slots[Int(slot)].panRight = right
        case .setMetering(let slot, let enabled):
            slots[Int(slot)].metering = enabled
            clearPeaks(slot: Int(slot))
        case .setChannelMap(let slot, let map):
            slots[Int(slot)].map = map
        case .release(let slot):
            let s = Int(slot)
            returnAll(slot: s, reported: &reported)
            if slots[s].startCredit { slots[s].startCredit = false; refund() }
            if slots[s].drainCredit { slots[s].drainCredit = false; refund() }
            slots[s].stopWhenDrained = false
            clearMeters(slot: s)
            clearPeaks(slot: s)
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
        }
    }

    /// Removes every scheduled buffer of slot `s`, reporting each unplayed.
    @_noLocks
    func returnAll(slot s: Int, reported: inout Bool) {
        let cap = Int32(capacities.buffersPerQueue)
        while slots[s].count > 0 {
            let b = schedule[s * capacities.buffersPerQueue + Int(slots[s].head)]
            report(.bufferDone(slot: Int32(s), generation: slots[s].generation, token: b.token, serial: b.serial, played: false, lateFrames: 0), &reported)
            slots[s].head = slots[s].head + 1 == cap ? 0 : slots[s].head + 1  // no division
            slots[s].count -= 1
        }
        slots[s].headPlayed = false
        slots[s].headLate = 0
    }

}
