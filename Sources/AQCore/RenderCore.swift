#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFloatMode
import CMembarrier
import Synchronization

/// The renderer: everything the render thread owns, reached through plain pointers so that
/// the render path never retains, releases, locks or allocates. The compiler checks this:
/// ``render(_:outputs:channelCount:inputs:inputCount:)`` and everything it calls are `@_noLocks`.
///
/// Memory is allocated by ``allocate(sampleRate:capacities:)`` and freed by ``deallocate()``
/// on a control thread once no device calls ``render(_:outputs:channelCount:inputs:inputCount:)``.
package struct RenderCore: @unchecked Sendable {
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
        /// The device frame the next cycle must start at for the queues' steady records
        /// (``HotSlot``) to hold: the end of the last cycle that mixed the queues (`Int64.min`
        /// before the first). Render thread only.
        let nextCycleFrame: UnsafeMutablePointer<Int64>
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
    var nextCycleFrame: UnsafeMutablePointer<Int64> { @_noLocks @inline(__always) get { fields.pointee.nextCycleFrame } }
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
        let nextCycleFrame = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        nextCycleFrame.initialize(to: .min)
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
            liveCount: liveCount, nextCycleFrame: nextCycleFrame, meters: meters, meterPeaks: meterPeaks, meterScratch: scratch, stats: stats, published: published,
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
        c.nextCycleFrame.deallocate()
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

}
