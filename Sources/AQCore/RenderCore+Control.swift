#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFloatMode
import CMembarrier
import Synchronization

/// The control side of the renderer: event credits, settings, and what control threads read.
extension RenderCore {
    // MARK: - Event credits (back-pressure)

    /// Reserves room for `n` events in the event ring; false when the events thread is that
    /// far behind. Control side, before sending a command (``RenderCommand/eventCredits``).
    package func reserveEvents(_ n: Int) -> Bool {
        if n == 0 { return true }
        var current = control.pointee.eventCredits.load(ordering: .acquiring)
        while true {
            if current < n { return false }
            let (done, original) = control.pointee.eventCredits.compareExchange(
                expected: current, desired: current - n, ordering: .acquiringAndReleasing)
            if done { return true }
            current = original
        }
    }

    /// Gives back `n` event credits: the events thread after handling events, the control
    /// side when a command it reserved for was not sent.
    package func returnEvents(_ n: Int) {
        control.pointee.eventCredits.wrappingAdd(n, ordering: .releasing)
    }

    /// Event credits left (a snapshot). Any thread.
    package var eventCreditsLeft: Int { control.pointee.eventCredits.load(ordering: .acquiring) }

    /// A credit the render thread will not use (a command that changed nothing).
    @_noLocks
    func refund() {
        control.pointee.eventCredits.wrappingAdd(1, ordering: .releasing)
    }

    /// Makes the render thread wait for a control thread that holds the gate instead of
    /// skipping the cycle. For devices that are not realtime (the hand-driven device). Control
    /// thread, before the device starts.
    package func setWaitsForControl(_ on: Bool) {
        control.pointee.waitsForControl.store(on ? 1 : 0, ordering: .releasing)
    }

    /// Mixes only `slot` (nil: every queue) from the next cycle on: the others are not mixed
    /// and their frames in those cycles pass unheard. For offline rendering of one queue.
    /// Control thread.
    package func setSolo(_ slot: Int32?) {
        control.pointee.solo.store(slot.map { Int($0) + 1 } ?? 0, ordering: .releasing)
    }

    /// Applies every pending command on the calling thread, as the render thread would at the
    /// start of a cycle beginning at device frame `frame`, unless a cycle is under way (then it
    /// returns false and changes nothing). Used by synchronous calls when the render thread is
    /// not running. Control side, one thread at a time (the command producer's lock held).
    package func applyPendingIfIdle(at frame: Int64) -> Bool {
        if gate.pointee.asymmetric.load(ordering: .relaxed) == 1 {
            // The asymmetric gate: claim, then make the render thread's side a full barrier.
            // Either its claim of the cycle is visible now, or its next look at ours sees it.
            gate.pointee.claimed.store(1, ordering: .relaxed)
            // Registration succeeded when the renderer was made (or the gate would be the
            // compare-and-swap), so a failure here is a bug: without the barrier the render
            // thread's claim may be unseen and both sides apply commands at once. A fence on
            // this side alone does not replace it, so the program stops (control thread).
            let result = aq_membarrier()
            if result != 0 {
                fatalError("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed (\(result), errno \(errno)) after the process registered for it: the renderer's gate cannot exclude the render thread")
            }
            if gate.pointee.inCycle.load(ordering: .acquiring) != 0 {
                gate.pointee.claimed.store(0, ordering: .releasing)
                return false
            }
        } else {
            guard gate.pointee.inCycle.compareExchange(expected: 0, desired: 2, ordering: .acquiring).exchanged else { return false }
        }
        var reported = false
        applyCommands(at: frame, reported: &reported)
        if gate.pointee.asymmetric.load(ordering: .relaxed) == 1 {
            gate.pointee.claimed.store(0, ordering: .releasing)
        } else {
            gate.pointee.inCycle.store(0, ordering: .releasing)
        }
        if reported { _ = sem_post(wake) }
        return true
    }

    /// Wakes the events thread whenever the capture ring has advanced `frames` frames (0:
    /// never), so that input queues are handed what was recorded when it is there rather than
    /// by a timer. Control side; does not block.
    package func setCaptureWake(frames: Int) {
        control.pointee.captureWakeFrames.store(max(frames, 0), ordering: .relaxed)
    }

    /// Commands applied so far (the command ring's read position). Any thread.
    package var commandsApplied: Int { commands.index.consumed }

    /// The volume in force for `slot` (the latest of a ``RenderCommand/setVolume(slot:volume:rampFrames:)``
    /// target or a buffer's volume event) and how many volume commands were applied. Any thread.
    package func volume(slot: Int) -> (value: Float, commandsApplied: Int64) {
        let p = published + slot
        let sets = p.pointee.volumeSets.load(ordering: .acquiring)
        return (Float(bitPattern: UInt32(truncatingIfNeeded: p.pointee.volumeBits.load(ordering: .relaxed))), sets)
    }

    /// The device frame at which everything scheduled on a running queue's timeline ends, or
    /// nil when the queue does not run (stopped, paused) or holds no buffer. Reads the render
    /// thread's own state: only for the caller of a hand-driven device between its renders
    /// (offline rendering), whose thread then plays the render thread's part.
    package func scheduledEndFrame(slot s: Int) -> Int64? {
        guard slots[s].state == .running, slots[s].count > 0 else { return nil }
        return slots[s].origin &+ slots[s].scheduledEnd
    }

    /// The level meter of `slot`, channel `channel`, for the latest cycle: (peak, RMS), linear.
    /// Any thread.
    package func meter(slot: Int, channel: Int) -> (peak: Float, rms: Float) {
        let base = meters + (slot * 16 + channel * 2)
        let peak = Float(bitPattern: base[0].load(ordering: .relaxed))
        let ms = Float(bitPattern: base[1].load(ordering: .relaxed))
        return (peak, ms.squareRoot())
    }

    /// The highest peak of `slot`, channel `channel`, over the cycles metered since the last
    /// call (linear), and starts the next span at 0. Any thread; one reader per slot (each
    /// read takes what it returns).
    package func takePeak(slot: Int, channel: Int) -> Float {
        Float(bitPattern: meterPeaks[slot * 8 + channel].exchange(0, ordering: .relaxed))
    }

    /// What the render thread last published about `slot`: whether it runs or is paused, the
    /// device frame of its frame 0, and the frame it paused at. Any thread; the three values
    /// are read one after the other (a read racing a pause or resume may mix old and new).
    package func position(slot: Int) -> (running: Bool, paused: Bool, origin: Int64, pauseFrame: Int64) {
        let p = published + slot
        let state = p.pointee.state.load(ordering: .acquiring)
        return (
            state == Int64(SlotState.running.rawValue), state == Int64(SlotState.paused.rawValue),
            p.pointee.origin.load(ordering: .relaxed), p.pointee.pauseFrame.load(ordering: .relaxed)
        )
    }

    /// Whether the render thread has `slot` free: never activated, or its
    /// ``RenderCommand/release(slot:)`` applied (published after every command, so a release
    /// acknowledged through ``commandsApplied`` shows here). The control side sends
    /// ``RenderCommand/activate(slot:channels:map:generation:)`` only for a free slot. Any
    /// thread.
    package func isSlotFree(_ slot: Int) -> Bool {
        published[slot].state.load(ordering: .acquiring) == Int64(SlotState.free.rawValue)
    }

    @_noLocks
    func publishPosition(slot s: Int) {
        let p = published + s
        p.pointee.volumeBits.store(Int64(slots[s].target.bitPattern), ordering: .relaxed)
        p.pointee.volumeSets.store(slots[s].volumeSets, ordering: .relaxed)
        p.pointee.origin.store(slots[s].origin, ordering: .relaxed)
        p.pointee.pauseFrame.store(slots[s].pauseFrame, ordering: .relaxed)
        p.pointee.state.store(Int64(unsafeBitCast(slots[s].state, to: UInt8.self)), ordering: .releasing)
    }

}
