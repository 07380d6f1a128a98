#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFloatMode
import CMembarrier
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
    /// Device input channels the renderer reads each cycle (more are ignored).
    public var inputChannels: Int
    /// Frames of the capture ring (rounded up to a power of two): how far behind the device the
    /// control side may read captured input before frames are lost. 0: no capture ring.
    public var captureFrames: Int

    public init(
        queues: Int = 256, buffersPerQueue: Int = 64, commands: Int = 8192, outputChannels: Int = 32,
        inputChannels: Int = 8, captureFrames: Int = 16384
    ) {
        self.queues = queues
        self.buffersPerQueue = buffersPerQueue
        self.commands = commands
        self.outputChannels = outputChannels
        self.inputChannels = inputChannels
        self.captureFrames = captureFrames
    }
}

/// Render-thread statistics, readable from any thread.
public struct RenderStatistics: Sendable, Equatable {
    public var cycles: UInt64
    /// Frames of buffers and starts that had already passed when the render thread saw them.
    public var lateFrames: UInt64
    /// Events the render thread could not report because the event ring was full. Every
    /// event is paid for before its command is sent, so this stays 0; it is kept as a check.
    public var droppedEvents: UInt64
    /// Cycles rendered silent because a control thread was applying commands at that moment
    /// (a synchronous stop, reset or dispose while the device was stalled; see
    /// docs/architecture.md, "Synchronous calls").
    public var skippedCycles: UInt64
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
    /// The queue's generation and latest start's run number, echoed in events.
    var generation: UInt32 = 0
    var run: UInt32 = 0
    /// Event credits held for a `started` report not made yet, and for a stop-after-drain.
    var startCredit = false
    var drainCredit = false
    /// The schedule ran out while running: a flexible buffer whose place has passed plays at once.
    var dry = false
    /// After a stop-after-drain: buffers of timeline `rebaseEpoch` move back by `rebaseBy`.
    var rebaseActive = false
    var rebaseEpoch: UInt32 = 0
    var rebaseBy: Int64 = 0
    /// The end of everything scheduled on the current timeline (device frames from frame 0).
    var scheduledEnd: Int64 = 0
    /// The control side's timeline number when it asked for the pending stop-after-drain.
    var drainEpoch: UInt32 = 0
    /// Volume commands applied (for the control side's current-value read).
    var volumeSets: Int64 = 0

    /// Makes the slot a stopped queue of `channels` channels. Render thread.
    @_noLocks
    mutating func activate(channels: Int32, map: ChannelMap, generation: UInt32) {
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
        self.generation = generation
        run = 0
        startCredit = false
        drainCredit = false
        dry = false
        rebaseActive = false
        rebaseEpoch = 0
        rebaseBy = 0
        scheduledEnd = 0
        drainEpoch = 0
        volumeSets = 0
    }
}

/// The steady state of one queue, kept apart from ``QueueSlot`` so that the common case reads
/// one small record per queue per cycle (issue 13): a started stereo queue on outputs 0 and 1,
/// at a steady gain, without meters, in the middle of its head buffer. The general path
/// (``RenderCore/mix(slot:t:n:outputs:channels:reported:)``) fills it in when a cycle leaves
/// the queue in that state; every command for the queue empties it; a cycle that does not
/// start at `nextFrame` (an xrun, a jump) or that would reach the buffer's end goes through the
/// general path. Only the render thread (or a control thread holding the gate) touches it.
struct HotSlot {
    /// The device frame the next cycle must start at for this record to hold; `Int64.min`
    /// when it does not hold.
    var nextFrame: Int64 = .min
    /// Channel 0's next frame; channel 1 is `stride` floats further.
    var source: UnsafeMutablePointer<Float>? = nil
    var stride: Int32 = 0
    /// Frames of the head buffer from `nextFrame` on (a cycle of fewer frames stays inside it).
    var remaining: Int32 = 0
    var gain: Float = 1
    /// The head buffer starts exactly at `nextFrame` and has not been seen yet: the cycle
    /// that uses the record first does what the general path does on a buffer's first frame
    /// when it is on time and carries no volume (marks it played).
    var firstFrame: Bool = false
}

/// The renderer: everything the render thread owns, reached through plain pointers so that
/// the render path never retains, releases, locks or allocates. The compiler checks this:
/// ``render(_:outputs:channelCount:inputs:inputCount:)`` and everything it calls are `@_noLocks`.
///
/// Memory is allocated by ``allocate(sampleRate:capacities:)`` and freed by ``deallocate()``
/// on a control thread once no device calls ``render(_:outputs:channelCount:inputs:inputCount:)``.
public struct RenderCore: @unchecked Sendable {
    /// Every field, behind one pointer: a call through `core.pointee` then passes one word.
    /// With the fields stored inline (256 bytes), each `core.pointee.render(…)` copied them
    /// all to the stack first, every cycle (docs/benchmarking.md, "Fixed cost per cycle").
    let fields: UnsafeMutablePointer<Fields>

    struct Fields {
        /// The device clock this renderer publishes each cycle's anchor to.
        let clock: DeviceClockCore
        /// Control → render. One producer at a time (the control side holds a lock while pushing).
        let commands: SPSCRing<RenderCommand>
        /// Render → events thread.
        let events: SPSCRing<RenderEvent>
        let capacities: RenderCapacities
        /// Posted when events were pushed.
        let wake: UnsafeMutablePointer<sem_t>

        let slots: UnsafeMutablePointer<QueueSlot>
        /// Per slot: its steady state, when it is in one (``HotSlot``).
        let hot: UnsafeMutablePointer<HotSlot>
        let schedule: UnsafeMutablePointer<ScheduledBuffer>
        let live: UnsafeMutablePointer<Int32>
        let liveCount: UnsafeMutablePointer<Int>
        /// Per slot, per channel: peak and mean square of the last cycle, as Float bit patterns.
        let meters: UnsafeMutablePointer<Atomic<UInt32>>
        /// Per slot, per channel (8): the highest cycle peak since the last ``takePeak(slot:channel:)``,
        /// as Float bit patterns (non-negative floats order as their bits): raised by the render
        /// thread, exchanged with 0 by the reader.
        let meterPeaks: UnsafeMutablePointer<Atomic<UInt32>>
        let meterScratch: UnsafeMutablePointer<Float>
        /// The render thread's counters (``RenderCounters``).
        let stats: UnsafeMutablePointer<RenderCounters>
        /// Per slot: what the render thread last published about it (``PublishedSlot``).
        let published: UnsafeMutablePointer<PublishedSlot>
        /// Event credits, skipped cycles, waiting for control, solo (``RenderControl``).
        let control: UnsafeMutablePointer<RenderControl>
        /// The gate (``RenderGate``), on cache lines of its own. See docs/architecture.md,
        /// "The gate".
        let gate: UnsafeMutablePointer<RenderGate>
        /// The device's inputs as the render thread last saw them: per input channel (up to
        /// `capacities.inputChannels`), [2c] the latest cycle's peak and [2c+1] the highest peak
        /// since the last ``takeInputPeak(channel:)`` (Float bit patterns, non-negative); after
        /// them, [2·inputChannels] the input channels the latest cycle had and
        /// [2·inputChannels+1] the input frames seen so far (cycles with inputs), as UInt32 halves
        /// of nothing: plain counts.
        let inputMeters: UnsafeMutablePointer<Atomic<UInt32>>
        /// The capture ring's positions and the input counters (``CaptureCounters``).
        let inputCounters: UnsafeMutablePointer<CaptureCounters>
        /// The capture ring: `inputChannels` planes of `captureMask + 1` floats; device frame `f`
        /// of channel `c` is at `c · (captureMask + 1) + (f & captureMask)`. Written by the render
        /// thread only, read by control threads (``readCapture(from:maxFrames:into:channels:)``).
        let capture: UnsafeMutablePointer<Float>
        let captureMask: Int
    }

    // Each field of ``Fields``, read through the pointer (documented there).
    package var clock: DeviceClockCore { @_noLocks @inline(__always) get { fields.pointee.clock } }
    package var commands: SPSCRing<RenderCommand> { @_noLocks @inline(__always) get { fields.pointee.commands } }
    package var events: SPSCRing<RenderEvent> { @_noLocks @inline(__always) get { fields.pointee.events } }
    package var capacities: RenderCapacities { @_noLocks @inline(__always) get { fields.pointee.capacities } }
    package var wake: UnsafeMutablePointer<sem_t> { @_noLocks @inline(__always) get { fields.pointee.wake } }
    var slots: UnsafeMutablePointer<QueueSlot> { @_noLocks @inline(__always) get { fields.pointee.slots } }
    var hot: UnsafeMutablePointer<HotSlot> { @_noLocks @inline(__always) get { fields.pointee.hot } }
    var schedule: UnsafeMutablePointer<ScheduledBuffer> { @_noLocks @inline(__always) get { fields.pointee.schedule } }
    var live: UnsafeMutablePointer<Int32> { @_noLocks @inline(__always) get { fields.pointee.live } }
    var liveCount: UnsafeMutablePointer<Int> { @_noLocks @inline(__always) get { fields.pointee.liveCount } }
    var meters: UnsafeMutablePointer<Atomic<UInt32>> { @_noLocks @inline(__always) get { fields.pointee.meters } }
    var meterPeaks: UnsafeMutablePointer<Atomic<UInt32>> { @_noLocks @inline(__always) get { fields.pointee.meterPeaks } }
    var meterScratch: UnsafeMutablePointer<Float> { @_noLocks @inline(__always) get { fields.pointee.meterScratch } }
    var stats: UnsafeMutablePointer<RenderCounters> { @_noLocks @inline(__always) get { fields.pointee.stats } }
    var published: UnsafeMutablePointer<PublishedSlot> { @_noLocks @inline(__always) get { fields.pointee.published } }
    var control: UnsafeMutablePointer<RenderControl> { @_noLocks @inline(__always) get { fields.pointee.control } }
    var gate: UnsafeMutablePointer<RenderGate> { @_noLocks @inline(__always) get { fields.pointee.gate } }
    var inputMeters: UnsafeMutablePointer<Atomic<UInt32>> { @_noLocks @inline(__always) get { fields.pointee.inputMeters } }
    var inputCounters: UnsafeMutablePointer<CaptureCounters> { @_noLocks @inline(__always) get { fields.pointee.inputCounters } }
    var capture: UnsafeMutablePointer<Float> { @_noLocks @inline(__always) get { fields.pointee.capture } }
    var captureMask: Int { @_noLocks @inline(__always) get { fields.pointee.captureMask } }

    package static func allocate(sampleRate: Double, capacities: RenderCapacities) -> UnsafeMutablePointer<RenderCore> {
        let q = capacities.queues
        let slots = UnsafeMutablePointer<QueueSlot>.allocate(capacity: q)
        slots.initialize(repeating: QueueSlot(), count: q)
        let hot = UnsafeMutablePointer<HotSlot>.allocate(capacity: q)
        hot.initialize(repeating: HotSlot(), count: q)
        // Everything the render thread touches is written here, on the control side, so that
        // its pages are mapped before the first cycle (prefaulted: no page fault in a cycle).
        let scheduleCount = q * capacities.buffersPerQueue
        let scheduleRaw = UnsafeMutableRawPointer.allocate(
            byteCount: scheduleCount * MemoryLayout<ScheduledBuffer>.stride, alignment: MemoryLayout<ScheduledBuffer>.alignment)
        scheduleRaw.initializeMemory(as: UInt8.self, repeating: 0, count: scheduleCount * MemoryLayout<ScheduledBuffer>.stride)
        let schedule = scheduleRaw.bindMemory(to: ScheduledBuffer.self, capacity: scheduleCount)
        let live = UnsafeMutablePointer<Int32>.allocate(capacity: q)
        live.initialize(repeating: -1, count: q)
        let liveCount = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        liveCount.initialize(to: 0)
        let meters = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: q * 16)
        for i in 0..<(q * 16) { (meters + i).initialize(to: Atomic(0)) }
        let meterPeaks = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: q * 8)
        for i in 0..<(q * 8) { (meterPeaks + i).initialize(to: Atomic(0)) }
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 16)
        scratch.initialize(repeating: 0, count: 16)
        let stats = UnsafeMutablePointer<RenderCounters>.allocate(capacity: 1)
        stats.initialize(to: RenderCounters())
        let published = UnsafeMutablePointer<PublishedSlot>.allocate(capacity: q)
        for i in 0..<q { (published + i).initialize(to: PublishedSlot()) }
        let control = UnsafeMutablePointer<RenderControl>.allocate(capacity: 1)
        control.initialize(to: RenderControl())
        let gate = RenderGate.allocate()
        gate.pointee.asymmetric.store(aq_membarrier_register() == 0 ? 1 : 0, ordering: .releasing)
        let inputMeterCount = 2 * capacities.inputChannels + 2
        let inputMeters = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: inputMeterCount)
        for i in 0..<inputMeterCount { (inputMeters + i).initialize(to: Atomic(0)) }
        let inputCounters = UnsafeMutablePointer<CaptureCounters>.allocate(capacity: 1)
        inputCounters.initialize(to: CaptureCounters())
        var ringFrames = 1
        while ringFrames < max(capacities.captureFrames, 1) { ringFrames <<= 1 }
        if capacities.inputChannels == 0 || capacities.captureFrames == 0 { ringFrames = 1 }
        let captureCount = max(capacities.inputChannels, 1) * ringFrames
        let capture = UnsafeMutablePointer<Float>.allocate(capacity: captureCount)
        capture.initialize(repeating: 0, count: captureCount)
        let wake = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(wake, 0, 0)
        // Every buffer produces one done event; a few state events per queue on top.
        let eventCapacity = q * (capacities.buffersPerQueue + 8) + capacities.commands
        let events = SPSCRing<RenderEvent>.allocate(capacity: eventCapacity)
        control.pointee.eventCredits.store(events.capacity, ordering: .releasing)
        let fields = UnsafeMutablePointer<Fields>.allocate(capacity: 1)
        fields.initialize(to: Fields(
            clock: .allocate(sampleRate: sampleRate),
            commands: .allocate(capacity: capacities.commands),
            events: events,
            capacities: capacities, wake: wake, slots: slots, hot: hot, schedule: schedule, live: live,
            liveCount: liveCount, meters: meters, meterPeaks: meterPeaks, meterScratch: scratch, stats: stats, published: published,
            control: control, gate: gate, inputMeters: inputMeters, inputCounters: inputCounters,
            capture: capture, captureMask: ringFrames - 1))
        let p = UnsafeMutablePointer<RenderCore>.allocate(capacity: 1)
        p.initialize(to: RenderCore(fields: fields))
        return p
    }

    /// Frees everything `allocate` made, including `pointer` itself. Control thread, once no
    /// device renders.
    package static func deallocate(_ pointer: UnsafeMutablePointer<RenderCore>) {
        let c = pointer.pointee
        let q = c.capacities.queues
        c.clock.deallocate()
        c.commands.deallocate()
        c.events.deallocate()
        sem_destroy(c.wake)
        c.wake.deallocate()
        c.slots.deinitialize(count: q)
        c.slots.deallocate()
        c.hot.deinitialize(count: q)
        c.hot.deallocate()
        c.schedule.deallocate()
        c.live.deallocate()
        c.liveCount.deallocate()
        c.meters.deinitialize(count: q * 16)
        c.meters.deallocate()
        c.meterPeaks.deinitialize(count: q * 8)
        c.meterPeaks.deallocate()
        c.meterScratch.deallocate()
        c.published.deinitialize(count: q)
        c.published.deallocate()
        c.control.deinitialize(count: 1)
        c.control.deallocate()
        RenderGate.deallocate(c.gate)
        c.stats.deinitialize(count: 1)
        c.stats.deallocate()
        c.inputMeters.deinitialize(count: 2 * c.capacities.inputChannels + 2)
        c.inputMeters.deallocate()
        c.inputCounters.deinitialize(count: 1)
        c.inputCounters.deallocate()
        c.capture.deallocate()
        c.fields.deinitialize(count: 1)
        c.fields.deallocate()
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// A snapshot of the counters. Any thread.
    package var statistics: RenderStatistics {
        RenderStatistics(
            cycles: stats.pointee.cycles.load(ordering: .relaxed), lateFrames: stats.pointee.lateFrames.load(ordering: .relaxed),
            droppedEvents: stats.pointee.droppedEvents.load(ordering: .relaxed),
            skippedCycles: UInt64(control.pointee.skippedCycles.load(ordering: .relaxed)))
    }

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

    /// Commands applied so far (the command ring's read position). Any thread.
    package var commandsApplied: Int { commands.index.consumed }

    /// The volume in force for `slot` (the latest of a ``RenderCommand/setVolume(slot:volume:rampFrames:)``
    /// target or a buffer's volume event) and how many volume commands were applied. Any thread.
    package func volume(slot: Int) -> (value: Float, commandsApplied: Int64) {
        let p = published + slot
        let sets = p.pointee.volumeSets.load(ordering: .acquiring)
        return (Float(bitPattern: UInt32(truncatingIfNeeded: p.pointee.volumeBits.load(ordering: .relaxed))), sets)
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

    // MARK: - The render entry point

    /// Renders one cycle: applies pending commands, mixes every running queue into the
    /// `channelCount` non-interleaved outputs (`cycle.frames` frames each, overwritten), reads
    /// the device's `inputCount` non-interleaved inputs (`cycle.frames` frames each, captured at
    /// the cycle's frames; only read, never kept: nil or 0 when the device has none), reports
    /// what happened, and publishes the cycle's anchor to the clock. Render thread only; never
    /// blocks (a realtime device's cycle never waits; see docs/architecture.md).
    @_noLocks
    public func render(
        _ cycle: CycleInfo, outputs: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int,
        inputs: UnsafePointer<UnsafeMutablePointer<Float>>? = nil, inputCount: Int = 0
    ) {
        // Denormals flush to zero on the render thread (a decaying tail or a ramp toward 0
        // would otherwise cost tens of cycles per operation): one read of the control
        // register, a write only when the mode is not set yet (inline asm: no call). The
        // mode stays set after the cycle (the device's thread renders again).
        _unsafePerformance { _ = aq_flush_denormals() }
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
        // The steady state needs outputs 0 and 1 and every queue mixed.
        let steadyAllowed = channels >= 2 && solo == 0
        if fresh && !steadyAllowed {
            clearStereo(out0, out1, n)
            fresh = false
        }
        // A steady queue waiting for a second one, so that the two mix in one pass over the
        // outputs (``mixStereoPair``): its two source channels and gain. The sums and their order
        // are those of mixing one queue after the other, so the result is bit for bit the same.
        // It waits only while nothing else mixes and its buffer goes on past this cycle (a
        // buffer is mixed before it is reported done: its memory may then be reused).
        var waiting: UnsafePointer<Float>? = nil
        var waitingStride = 0
        var waitingGain: Float = 0
        // With many queues the sources come from far caches or memory, one queue's loads after
        // another's: asking for a queue's lines `prefetchDistance` queues ahead overlaps them.
        // Short cycles only (the lines of a long one stream in by themselves), and many queues
        // only (a few queues' sources stay in the near caches, and the hints would only cost).
        let prefetching = steadyAllowed && n <= RenderCore.prefetchFrames && liveCount.pointee >= RenderCore.prefetchQueues
        var i = 0
        while i < liveCount.pointee {
            let s = Int(live[i])
            let h = hot + s
            if prefetching && i + RenderCore.prefetchDistance < liveCount.pointee {
                prefetchSources(hot + Int(live[i + RenderCore.prefetchDistance]), frame: cycle.frame, frames: n)
            }
            if steadyAllowed && h.pointee.nextFrame == cycle.frame && Int(h.pointee.remaining) >= n,
                let src = h.pointee.source
            {
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
                let ends = Int(h.pointee.remaining) == n
                if let w = waiting {
                    mixStereoPair(
                        out0, out1, w, w + waitingStride, waitingGain, src, src + stride, h.pointee.gain, n, fresh: fresh)
                    fresh = false
                    waiting = nil
                } else if ends {
                    mixStereo(out0, out1, src, src + stride, n, h.pointee.gain, fresh: fresh)
                    fresh = false
                } else {
                    waiting = UnsafePointer(src)
                    waitingStride = stride
                    waitingGain = h.pointee.gain
                }
                if ends {
                    // The buffer ends exactly at the cycle's end: what the general path does at
                    // that boundary (the buffer done, a drain that completes), then the record
                    // for the next buffer.
                    finishBufferAtCycleEnd(slot: s, cycleFrame: cycle.frame, frames: n, reported: &reported)
                    updateHot(slot: s, next: cycle.frame &+ Int64(n))
                } else {
                    h.pointee.source = src + n
                    h.pointee.remaining -= Int32(n)
                    h.pointee.nextFrame = cycle.frame &+ Int64(n)
                }
            } else if slots[s].state == .running && (solo == 0 || solo == s + 1) {
                // The general path adds into cleared outputs, after what came before it.
                if let w = waiting {
                    mixStereo(out0, out1, w, w + waitingStride, n, waitingGain, fresh: fresh)
                    fresh = false
                    waiting = nil
                }
                if fresh {
                    clearStereo(out0, out1, n)
                    fresh = false
                }
                mix(slot: s, t: cycle.frame, n: n, outputs: outputs, channels: channels, reported: &reported)
                updateHot(slot: s, next: cycle.frame &+ Int64(n))
            }
            i += 1
        }
        if let w = waiting {
            mixStereo(out0, out1, w, w + waitingStride, n, waitingGain, fresh: fresh)
            fresh = false
        }
        if fresh { clearStereo(out0, out1, n) }
        // Only the render thread writes the counters: a load and a store, no locked add.
        stats.pointee.cycles.store(stats.pointee.cycles.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        gate.pointee.inCycle.store(0, ordering: .releasing)
        if reported {
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
        guard h.pointee.nextFrame == frame, let src = h.pointee.source else { return }
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

    /// Meters the device's inputs for one cycle: each channel's peak, the held peak, the
    /// channel count, the cycle's frame and the frames seen. Render thread.
    @_noLocks
    func meterInputs(_ inputs: UnsafePointer<UnsafeMutablePointer<Float>>, count: Int, frame: Int64, n: Int) {
        let k = capacities.inputChannels
        var c = 0
        while c < count {
            let p = inputs[c]
            var peak: Float = 0
            var i = 0
            while i < n {
                let v = abs(p[i])
                if v > peak { peak = v }
                i += 1
            }
            inputMeters[2 * c].store(peak.bitPattern, ordering: .relaxed)
            raisePeak(inputMeters + (2 * c + 1), to: peak)
            c += 1
        }
        if captureMask > 0 { captureInputs(inputs, count: count, frame: frame, n: n) }
        inputMeters[2 * k].store(UInt32(truncatingIfNeeded: count), ordering: .relaxed)
        inputCounters.pointee.framesSeen.store(inputCounters.pointee.framesSeen.load(ordering: .relaxed) &+ Int64(n), ordering: .relaxed)
        inputCounters.pointee.latestCycleFrame.store(frame, ordering: .releasing)
    }

    /// Copies one cycle's inputs into the capture ring at their device frames; channels the
    /// cycle lacks are silence, and so are device frames skipped since the previous cycle (at
    /// most the ring's length of them is written). Render thread.
    @_noLocks
    func captureInputs(_ inputs: UnsafePointer<UnsafeMutablePointer<Float>>, count: Int, frame: Int64, n: Int) {
        let ring = captureMask + 1
        let planes = capacities.inputChannels
        var start = inputCounters.pointee.first.load(ordering: .relaxed)
        let end = inputCounters.pointee.end.load(ordering: .relaxed)
        var from = frame
        if start < 0 || frame < end {
            // The first cycle, or time went back (a new time line): the ring starts over.
            start = frame
        } else if frame > end {
            // Skipped frames: silence, as far back as the ring reaches.
            inputCounters.pointee.skippedFrames.store(inputCounters.pointee.skippedFrames.load(ordering: .relaxed) &+ (frame - end), ordering: .relaxed)
            from = max(end, frame &- Int64(ring))
        }
        let writeEnd = frame &+ Int64(n)
        inputCounters.pointee.writing.store(writeEnd, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        var c = 0
        while c < planes {
            let plane = capture + c * ring
            var f = from
            while f < frame {
                plane[Int(f) & captureMask] = 0
                f += 1
            }
            let src: UnsafeMutablePointer<Float>? = c < count ? inputs[c] : nil
            var i = 0
            while i < n {
                plane[(Int(frame) &+ i) & captureMask] = src == nil ? 0 : src.unsafelyUnwrapped[i]
                i += 1
            }
            c += 1
        }
        if start != inputCounters.pointee.first.load(ordering: .relaxed) {
            inputCounters.pointee.first.store(start, ordering: .relaxed)
        }
        inputCounters.pointee.end.store(writeEnd, ordering: .releasing)
    }

    /// The captured input frames a reader can have now: from the first valid frame (−1: none
    /// captured yet) to `end` (exclusive), with `ring` frames at most kept. Any thread; never
    /// blocks.
    package var captureWindow: (first: Int64, end: Int64, ring: Int) {
        let end = inputCounters.pointee.end.load(ordering: .acquiring)
        return (inputCounters.pointee.first.load(ordering: .relaxed), end, captureMask + 1)
    }

    /// Device frames the device skipped (captured as silence). Any thread; never blocks.
    package var skippedCaptureFrames: Int64 { inputCounters.pointee.skippedFrames.load(ordering: .relaxed) }

    /// Copies captured input from device frame `frame` on, at most `maxFrames` frames, into
    /// `dest` (`channels` pointers, device input channel `c` into `dest[c]`; channels beyond
    /// the ring's are silence). Returns the device frame of `dest`'s first frame and how many
    /// were copied: the first is later than `frame` when frames from `frame` on were already
    /// overwritten (or never captured) — those are lost; 0 frames when none is there yet.
    /// A control thread (one reader per destination); never blocks, never waits for the render
    /// thread: a copy the render thread overwrote meanwhile is retried from later frames.
    package func readCapture(
        from frame: Int64, maxFrames: Int, into dest: UnsafePointer<UnsafeMutablePointer<Float>>, channels: Int
    ) -> (first: Int64, frames: Int) {
        let ring = Int64(captureMask + 1)
        var lo = frame
        for _ in 0..<8 {
            let end = inputCounters.pointee.end.load(ordering: .acquiring)
            let start = inputCounters.pointee.first.load(ordering: .relaxed)
            if start < 0 || captureMask == 0 { return (frame, 0) }
            // Keep clear of the cycle being written: it may overwrite up to a cycle past `end − ring`.
            lo = max(lo, start, end - ring)
            if lo >= end { return (max(lo, frame), 0) }
            let k = Int(min(Int64(maxFrames), end - lo))
            for c in 0..<channels {
                let d = dest[c]
                if c < capacities.inputChannels {
                    let plane = capture + c * (captureMask + 1)
                    for i in 0..<k { d[i] = plane[(Int(lo) &+ i) & captureMask] }
                } else {
                    d.update(repeating: 0, count: k)
                }
            }
            atomicMemoryFence(ordering: .acquiring)
            let writing = inputCounters.pointee.writing.load(ordering: .relaxed)
            let firstIntact = writing - ring
            if lo >= firstIntact { return (lo, k) }
            lo = firstIntact  // overwritten while copied: those frames are lost
        }
        return (lo, 0)
    }

    /// What the render thread last saw of the device's inputs: the device frame of the latest
    /// cycle that had inputs (−1: none yet), the input channels it had, and the input frames
    /// seen in all. Any thread; never blocks.
    package var inputStatus: (latestCycleFrame: Int64, channels: Int, framesSeen: Int64) {
        let frame = inputCounters.pointee.latestCycleFrame.load(ordering: .acquiring)
        return (frame, Int(inputMeters[2 * capacities.inputChannels].load(ordering: .relaxed)),
                inputCounters.pointee.framesSeen.load(ordering: .relaxed))
    }

    /// The peak (linear, absolute) of device input `channel` in the latest cycle that had
    /// inputs. Any thread; never blocks.
    package func inputPeak(channel: Int) -> Float {
        guard channel >= 0, channel < capacities.inputChannels else { return 0 }
        return Float(bitPattern: inputMeters[2 * channel].load(ordering: .relaxed))
    }

    /// The highest peak of device input `channel` since the last call, and starts the next
    /// span at 0. Any thread, one reader at a time; never blocks.
    package func takeInputPeak(channel: Int) -> Float {
        guard channel >= 0, channel < capacities.inputChannels else { return 0 }
        return Float(bitPattern: inputMeters[2 * channel + 1].exchange(0, ordering: .relaxed))
    }

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
                hot[Int(command.slot)].nextFrame = .min
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
            if rampFrames <= 0 || slots[s].state != .running {
                slots[s].gain = volume
                slots[s].step = 0
            } else {
                slots[s].step = (volume - slots[s].gain) / Float(rampFrames)
            }
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
        var qStart = t &- slot.pointee.origin
        var qEnd = qStart &+ Int64(n)
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
        h.pointee.nextFrame = .min
        guard slot.pointee.state == .running && slot.pointee.startReported
            && slot.pointee.count > 0 && slot.pointee.step == 0 && !slot.pointee.metering
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
        h.pointee.source = b.data + Int(qNext &- b.start)
        h.pointee.stride = b.stride
        h.pointee.remaining = Int32(bEnd &- qNext)
        h.pointee.gain = slot.pointee.gain
        h.pointee.nextFrame = next
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
/// `fresh`: the outputs hold nothing yet (not even zeros); they get 0 + s × g, exactly what
/// clearing them and adding would give, without the clearing pass or reading them.
@_noLocks
@inline(__always)
func mixStereo(
    _ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>, _ s0: UnsafePointer<Float>,
    _ s1: UnsafePointer<Float>, _ count: Int, _ g: Float, fresh: Bool = false
) {
    // Two simple passes vectorise and unroll better than one pass over four streams.
    if fresh {
        for i in 0..<count { d0[i] = 0 + s0[i] * g }
        for i in 0..<count { d1[i] = 0 + s1[i] * g }
    } else {
        for i in 0..<count { d0[i] += s0[i] * g }
        for i in 0..<count { d1[i] += s1[i] * g }
    }
}

/// Two stereo queues in one pass over the outputs: d0[i] = (d0[i] + a0[i] × ga) + b0[i] × gb,
/// and the same for channel 1. The same operations in the same order as ``mixStereo`` for
/// queue a and then for queue b (bit for bit the same result), with one read and one write
/// of the outputs instead of two. `fresh` as in ``mixStereo``.
@_noLocks
@inline(__always)
func mixStereoPair(
    _ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>, _ a0: UnsafePointer<Float>,
    _ a1: UnsafePointer<Float>, _ ga: Float, _ b0: UnsafePointer<Float>, _ b1: UnsafePointer<Float>, _ gb: Float,
    _ count: Int, fresh: Bool
) {
    if fresh {
        for i in 0..<count { d0[i] = (0 + a0[i] * ga) + b0[i] * gb }
        for i in 0..<count { d1[i] = (0 + a1[i] * ga) + b1[i] * gb }
    } else {
        for i in 0..<count { d0[i] = (d0[i] + a0[i] * ga) + b0[i] * gb }
        for i in 0..<count { d1[i] = (d1[i] + a1[i] * ga) + b1[i] * gb }
    }
}

/// Clears `count` frames of outputs 0 and 1.
@_noLocks
@inline(__always)
func clearStereo(_ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>, _ count: Int) {
    d0.update(repeating: 0, count: count)
    d1.update(repeating: 0, count: count)
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
