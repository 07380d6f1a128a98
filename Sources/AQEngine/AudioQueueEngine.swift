import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Many audio queues on one device, mixed sample-exactly on the device's render thread.
///
/// The engine owns the renderer and one events thread, on which output callbacks and property
/// listeners run. Create it with a device (``JackDevice`` for playback through a JACK server,
/// ``ManualDevice`` for tests and offline rendering), then make queues with
/// ``newOutput(format:callback:)``. Call ``close()`` when done; an engine released without it
/// closes itself (its queues do not keep it alive: keep a reference while you use them).
///
/// Thread safety: every method may be called from any thread except the render thread,
/// including from output callbacks and listeners. Which calls block is documented per call
/// (docs/architecture.md has the table).
public final class AudioQueueEngine: @unchecked Sendable {
    /// The device the engine renders on.
    public let device: any AudioDevice
    /// Capacities fixed at creation.
    public let capacities: RenderCapacities
    /// How long an immediate volume change takes on a running queue (a linear ramp, never a step).
    public let volumeRampSeconds: Double

    /// Everything the engine's queues and its events thread share (see ``EngineShared``).
    let shared: EngineShared
    var core: UnsafeMutablePointer<RenderCore> { shared.core }
    var lock: NSLock { shared.lock }
    var slots: [AudioQueue?] {
        get { shared.slots }
        set { shared.slots = newValue }
    }
    var deviceLostReason: String? {
        get { shared.deviceLostReason }
        set { shared.deviceLostReason = newValue }
    }
    var awayReason: String? {
        get { shared.awayReason }
        set { shared.awayReason = newValue }
    }

    /// Who runs the engine's callbacks and listeners.
    ///
    /// Thread safety: a plain value; any thread.
    public enum EventDelivery: Sendable, Equatable {
        /// The engine's own events thread ("aqsync-events"), woken by the render thread: the
        /// default, and the only choice on a realtime device.
        case thread
        /// Nobody but the caller: no events thread is started, and callbacks and listeners run
        /// only inside ``AudioQueueEngine/deliverPendingEvents()``, on the thread that calls it
        /// (as SwiftNIO's `EmbeddedEventLoop`). For a hand-driven device, whose caller drives
        /// time too: a test then controls both. The render thread's events wait in their ring
        /// meanwhile; when it is full, commands are refused (`.capacityExceeded`) until the
        /// caller delivers.
        case manual
    }

    /// How callbacks and listeners are delivered (``EventDelivery``). Any thread.
    public let eventDelivery: EventDelivery
    /// Whether the threads that serve the render thread run SCHED_FIFO below it when it is
    /// realtime (``eventsThreadPriority``, ``feederPriority``). Any thread.
    public let realtimeServiceThreads: Bool

    /// Makes an engine on `device` and starts the device (unless `startsDevice` is false). Any
    /// control thread; starts the events thread unless `eventDelivery` is `.manual`. With
    /// `realtimeServiceThreads` (the default) and a device whose render thread is realtime, the
    /// events thread runs SCHED_FIFO one level below it (``eventsThreadPriority``; where the
    /// system refuses, it stays ordinary).
    ///
    /// With `startsDevice: false` the device is left as it is (a ``JackDevice``: its client
    /// open, its rate known, not activated) until ``startDevice()``: queues can be made, their
    /// buffers allocated and enqueued (primed) meanwhile, so that a program's first frame is not
    /// held up by them after the device starts (issue 25, `aqsync play`). Nothing renders
    /// before; commands sent meanwhile are applied at the device's first cycle.
    ///
    /// - Throws: ``AudioQueueError/Code/invalidDevice`` when the device cannot start;
    ///   ``AudioQueueError/Code/invalidParameter`` for `.manual` delivery on a realtime device
    ///   (nothing would deliver its events while its own thread renders).
    public init(
        device: any AudioDevice, capacities: RenderCapacities = RenderCapacities(), volumeRampSeconds: Double = 0.005,
        eventDelivery: EventDelivery = .thread, realtimeServiceThreads: Bool = true, startsDevice: Bool = true
    ) throws(AudioQueueError) {
        if eventDelivery == .manual && device.isRealtime {
            throw AudioQueueError(.invalidParameter, "manual event delivery needs a hand-driven device (\(device.uid) renders on its own thread)")
        }
        self.device = device
        self.capacities = capacities
        self.volumeRampSeconds = volumeRampSeconds
        self.eventDelivery = eventDelivery
        self.realtimeServiceThreads = realtimeServiceThreads
        shared = EngineShared(device: device, capacities: capacities, volumeRampSeconds: volumeRampSeconds)
        if eventDelivery == .thread { shared.startEventsThread() }
        // Called on a thread of the device's; the engine moves everything to its events thread.
        device.setStatusHandler { [weak self] status in self?.deviceStatusChanged(status) }
        guard startsDevice else { return }
        do {
            try startDeviceOnce()
        } catch {
            shared.closedFlag.store(true, ordering: .releasing)
            shared.stopEventsThread(wait: true)
            throw error
        }
    }

    /// Starts the device of an engine made with `startsDevice: false` (what the init does
    /// otherwise): from its first cycle on, the engine renders; the events thread is raised as
    /// the init says. Does nothing when the engine started its device already. Any control
    /// thread; blocks while the device starts (a ``JackDevice``: `jack_activate` and its port
    /// connections, tens of milliseconds) and while another thread starts it. To wait for the
    /// first cycle after it, ``waitForFirstCycle(timeout:)``.
    ///
    /// - Throws: ``AudioQueueError/Code/invalidDevice`` when the engine is closed, or when the
    ///   device cannot start (the message is the init's; the engine stays open, its queues as
    ///   they were: close it, or call again).
    public func startDevice() throws(AudioQueueError) {
        if shared.closed { throw AudioQueueError(.invalidDevice, "the engine is closed") }
        try startDeviceOnce()
    }

    /// Starts the device unless the engine did already; raises the events thread after it.
    private func startDeviceOnce() throws(AudioQueueError) {
        shared.deviceStartLock.lock()
        defer { shared.deviceStartLock.unlock() }
        if shared.deviceStarted { return }
        do {
            try device.start(rendering: RenderTarget(core))
        } catch {
            throw AudioQueueError(.invalidDevice, "cannot start device \(device.uid): \(error.message)")
        }
        shared.deviceStarted = true
        if eventDelivery == .thread, realtimeServiceThreads,
           let p = ServicePriority.level(belowRender: device.renderPriority, by: ServicePriority.eventsBelowRender) {
            shared.raiseEventsThread(to: p)
        }
    }

    /// Waits until the device has rendered its first cycle (``timebase`` is no longer nil), at
    /// most `timeout` seconds; true once it has. Without polling: the render thread wakes the
    /// events thread at the engine's first cycle, which wakes the callers waiting here. Any
    /// control thread; blocks until then. Does not wait (answers at once whether a cycle was
    /// rendered) with `.manual` event delivery, whose caller drives the cycles, nor on the
    /// events thread or in a callback (the events thread is the one that would wake it).
    public func waitForFirstCycle(timeout: Double) -> Bool {
        if timebase != nil { return true }
        if eventDelivery == .manual || shared.isDeliveringOnCurrentThread { return false }
        return shared.waitForFirstCycle(timeout: timeout)
    }

    deinit {
        close()
    }

    /// Stops the device, the events thread, and every queue. Queues of this engine refuse
    /// every command afterwards (`.invalidDevice`); their buffers stay valid while referenced.
    /// The renderer's memory is freed once nothing uses it. Calling it twice does nothing.
    ///
    /// Any thread but the render thread, including output callbacks and listeners. Blocks until
    /// the device stopped and the events thread finished — except when called from the events
    /// thread or from a callback that ``deliverPendingEvents()`` runs: then the events thread
    /// finishes by itself after the current callback returns (no callback runs after that).
    public func close() {
        shared.close()
    }

    // MARK: - Queues

    /// Makes an output (playback) queue. Any control thread; does not block (beyond short locks).
    ///
    /// - Parameters:
    ///   - format: interleaved linear PCM (see docs/conversion.md for what is accepted), or
    ///     a compressed format ``PacketDecoder`` decodes (MP3 `.mp3`, AAC-LC `aac `, Apple
    ///     Lossless `alac`, FLAC, Opus, Vorbis, Apple IMA4 `ima4`…), decoded at enqueue
    ///     (docs/codecs.md; AAC, ALAC, Opus and Vorbis need ``AudioQueue/setMagicCookie(_:)``
    ///     before the first enqueue; IMA4's buffers need no packet descriptions); a rate other
    ///     than the device's is converted before the render thread sees it.
    ///   - callback: called each time a buffer has played or was removed (stop, reset), so that
    ///     it may be refilled and enqueued again: on the engine's events thread (or the thread
    ///     in ``deliverPendingEvents()``), and for buffers an immediate stop or a reset hands
    ///     back, on the thread that called it, before it returns.
    /// - Throws: `.unsupportedDataFormat` for a format it cannot play, `.capacityExceeded` when
    ///   every queue slot is taken, `.invalidDevice` once closed.
    public func newOutput(
        format: AudioStreamBasicDescription, callback: @escaping AudioQueue.OutputCallback
    ) throws(AudioQueueError) -> AudioQueue {
        var deinterleaver: PCMDeinterleaver?
        var decoder: PacketDecoder?
        if PacketDecoder.canDecode(format) {
            // Compressed: decoded at enqueue (docs/codecs.md). Formats that need a magic
            // cookie get their decoder when the cookie is set.
            do throws(PacketDecoderError) {
                try PacketDecoder.validate(format)
                if !PacketDecoder.needsMagicCookie(format) { decoder = try PacketDecoder(format: format) }
            } catch {
                throw AudioQueueError(.unsupportedDataFormat, "unsupported format: \(error)")
            }
        } else {
            do {
                deinterleaver = try PCMDeinterleaver(format: format)
            } catch {
                throw AudioQueueError(.unsupportedDataFormat, "unsupported format: \(error)")
            }
        }
        var converter: RateConverter?
        if format.sampleRate != device.sampleRate {
            do {
                converter = try RateConverter(
                    inputRate: format.sampleRate, outputRate: device.sampleRate, channels: Int(format.channelsPerFrame))
            } catch {
                throw AudioQueueError(.unsupportedDataFormat, "cannot convert \(format.sampleRate) Hz to \(device.sampleRate) Hz: \(error)")
            }
        }
        let hub = shared
        hub.lock.lock()
        defer { hub.lock.unlock() }
        if hub.closed { throw AudioQueueError(.invalidDevice, "the engine is closed") }
        hub.releasePendingSlots()
        guard let slot = hub.freeSlots.popLast() else {
            throw AudioQueueError(.capacityExceeded, "all \(capacities.queues) queue slots are in use")
        }
        // Only a slot the render thread has free is activated (a live slot activated twice
        // would be mixed twice and overrun the renderer's list of live slots).
        guard hub.core.pointee.isSlotFree(Int(slot)) else {
            hub.unreleasedSlots.append(slot)
            throw AudioQueueError(.capacityExceeded, "queue slot \(slot) is still live on the render thread (its release was not acknowledged); try again")
        }
        hub.nextGeneration &+= 1
        let generation = hub.nextGeneration
        let channels = Int(format.channelsPerFrame)
        do {
            try hub.send(.activate(slot: slot, channels: Int32(channels), map: .standard(channels: channels), generation: generation))
        } catch {
            hub.freeSlots.append(slot)
            throw error
        }
        let q = AudioQueue(
            engine: self, slot: slot, generation: generation, format: format, deinterleaver: deinterleaver,
            decoder: decoder, converter: converter, callback: callback)
        hub.slots[Int(slot)] = q
        return q
    }

    /// Makes an input (recording) queue (`AudioQueueNewInput`). Any control thread; does not
    /// block (beyond short locks).
    ///
    /// - Parameters:
    ///   - format: interleaved linear PCM: signed int16, int24, int32 or float32, either
    ///     endianness, at most as many channels as the device has inputs (channel `c` records
    ///     device input `c`, until ``AudioInputQueue/setChannelAssignments(_:)`` says
    ///     otherwise); a rate other than the device's is converted (libsoxr) on the
    ///     control side, the start times staying exact (docs/recording.md); or AAC LC (`aac `)
    ///     or Apple Lossless (`alac`), encoded on the control side into whole packets with one
    ///     description each (docs/recording.md, "Compressed formats").
    ///   - callback: called with each buffer the queue filled, on the engine's events thread
    ///     (or the thread in ``deliverPendingEvents()``); for buffers handed back by an immediate
    ///     stop, a reset or a flush, on the thread that called it.
    /// - Throws: `.unsupportedDataFormat` for another format, `.invalidDevice` once closed.
    public func newInput(
        format: AudioStreamBasicDescription, callback: @escaping AudioInputQueue.InputCallback
    ) throws(AudioQueueError) -> AudioInputQueue {
        // A sample rate of 0 records at the device's rate, as Apple's input queues do
        // (`kAudioQueueProperty_StreamDescription` then tells the rate).
        var format = format
        if format.sampleRate == 0 { format.sampleRate = device.sampleRate }
        let converter = try AudioInputQueue.validate(
            format, deviceRate: device.sampleRate, inputs: min(device.inputChannelCount, capacities.inputChannels))
        let hub = shared
        hub.lock.lock()
        if hub.closed {
            hub.lock.unlock()
            throw AudioQueueError(.invalidDevice, "the engine is closed")
        }
        let q = AudioInputQueue(hub: hub, format: format, converter: converter, callback: callback)
        hub.inputs.append(q)
        hub.lock.unlock()
        hub.updateCaptureWake()
        return q
    }

    /// Starts every queue of `queues` on one device frame, or none of them. Any control
    /// thread; does not block.
    ///
    /// - Parameter time: the device time to start at; nil for as soon as possible. A time
    ///   earlier than ``nearestStartTime(_:)`` is moved to it.
    /// - Returns: the device frame at which every queue's frame 0 plays.
    /// - Throws: `.invalidParameter` (a queue of another engine), `.invalidQueue`,
    ///   `.disposalPending`, `.capacityExceeded`, `.invalidDevice`, `.cannotStart`.
    public func start(_ queues: [AudioQueue], at time: AudioTimeStamp? = nil) throws(AudioQueueError) -> Int64 {
        let frame = Int64(nearestStartTime(time).sampleTime)
        for q in queues {
            guard q.hub === shared else { throw AudioQueueError(.invalidParameter, "a queue of another engine") }
        }
        // Every queue's lock, in slot order (one order for every caller), then the ring.
        var ordered: [AudioQueue] = []
        for q in queues.sorted(by: { $0.slot < $1.slot }) where !ordered.contains(where: { $0 === q }) { ordered.append(q) }
        var locked: [AudioQueue] = []
        defer { for q in locked.reversed() { q.lock.unlock() } }
        for q in ordered {
            q.lock.lock()
            locked.append(q)
            try q.checkLive()
        }
        try shared.checkUsableLocking()
        try shared.sendAll(ordered.map { .start(slot: $0.slot, frame: frame, run: $0.run) })
        for q in ordered { q.startRequested = true; q.pauseRequested = false }
        for q in ordered { q.lastError = nil }
        return frame
    }

    // MARK: - Device loss and return

    /// `body`'s value, computed with the slot-table lock held. Control threads.
    @inline(__always)
    func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// Called with every change of the device's availability, on the engine's events thread
    /// (the thread of output callbacks and property listeners). Set from any control thread.
    ///
    /// `.lost(_, reconnecting: true)`: the server went away and the device is trying to reach
    /// it again; queues keep their state and their timeline and resume by themselves when it
    /// comes back (`.restored`), where the wall clock says they should be (docs/timing.md).
    /// `.lost(_, reconnecting: false)` and `.failed`: every running queue has stopped with an
    /// error; its `isRunning` listeners were called just before this handler.
    public var onDeviceStatus: (@Sendable (DeviceStatus) -> Void)? {
        get { locked { shared.statusHandler } }
        set { locked { shared.statusHandler = newValue } }
    }

    /// Why the device is away while it tries to reconnect; nil while it renders (or after it
    /// was lost for good: see ``AudioQueue/lastError``). Any control thread.
    public var deviceAwayReason: String? { locked { awayReason } }

    /// A change of the device's availability, from the device's thread.
    private func deviceStatusChanged(_ status: DeviceStatus) {
        switch status {
        case .lost(let reason, true):
            lock.lock()
            awayReason = reason
            lock.unlock()
            postNotice(status)
        case .restored:
            lock.lock()
            awayReason = nil
            lock.unlock()
            postNotice(status)
        case .lost(let reason, false), .failed(let reason):
            deviceLost(reason, status: status)
        }
    }

    /// Runs the user's status handler on the events thread.
    private func postNotice(_ status: DeviceStatus) {
        enqueueNotice { [weak self] in
            guard let self, let h = self.locked({ self.shared.statusHandler }) else { return }
            h(status)
        }
    }

    /// Queues `work` for the events thread and wakes it. Any control thread.
    func enqueueNotice(_ work: @escaping @Sendable () -> Void) {
        lock.lock()
        shared.pendingNotices.append(work)
        lock.unlock()
        sem_post(core.pointee.wake)
    }

    /// Tells the engine its device is gone for good (the JACK server shut down and the device
    /// does not reconnect, or it came back unusable): every running queue stops with an error
    /// saying so; its `isRunning` listeners are called on the events thread. Any control thread.
    public func deviceLost(_ reason: String) {
        deviceLost(reason, status: .failed(reason: reason))
    }

    private func deviceLost(_ reason: String, status: DeviceStatus) {
        lock.lock()
        if deviceLostReason != nil { lock.unlock(); return }
        deviceLostReason = reason
        awayReason = nil
        var notify: [(AudioQueue, [AudioQueue.PropertyListener])] = []
        for case let q? in slots where q.isRunningValue {
            q.isRunningValue = false
            q.lastError = AudioQueueError(.cannotStart, reason)
            notify.append((q, q.listeners(for: .isRunning)))
        }
        lock.unlock()
        core.pointee.clock.noteDiscontinuity(.serverShutdown)
        let calls = notify
        enqueueNotice { for (q, ls) in calls { for l in ls { l(q, .isRunning) } } }
        postNotice(status)
    }

    // MARK: - Events

    /// Delivers every event the render thread has reported so far on the calling thread:
    /// output callbacks and listeners run before it returns. Events the events thread is
    /// handling at that moment are finished first (it waits for them), so after it returns
    /// every event reported before the call was handled. Any control thread, including
    /// callbacks (re-entrant); blocks while another thread delivers events. Tests on the
    /// hand-driven device call it after ``ManualDevice/render(frames:cycle:)``.
    public func deliverPendingEvents() { shared.deliverPendingEvents() }
}
