import AQConvert
import AQCore
import AQJack
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
/// ``newOutput(format:callback:)``. Call ``close()`` when done.
///
/// Thread safety: every method may be called from any thread except the render thread,
/// including from output callbacks and listeners on the events thread.
public final class AudioQueueEngine: @unchecked Sendable {
    /// The device the engine renders on.
    public let device: any AudioDevice
    /// Capacities fixed at creation.
    public let capacities: RenderCapacities
    /// How long an immediate volume change takes (a linear ramp, never a step).
    public let volumeRampSeconds: Double

    let core: UnsafeMutablePointer<RenderCore>
    let lock = NSLock()
    // Guarded by `lock`:
    var slots: [AudioQueue?]
    var freeSlots: [Int32]
    var deviceLostReason: String?
    var closed = false
    /// The renderer's memory is freed in deinit (or by a failed init), never while a queue
    /// can still read it.
    private var coreFreed = false

    /// Held while events are handled (callbacks and listeners run under it), by the events
    /// thread or by ``deliverPendingEvents()`` on the caller's thread. Recursive.
    let consumer = NSRecursiveLock()
    private let stopEvents = Atomic<Bool>(false)
    private let eventsDone = DispatchSemaphore(value: 0)

    /// Makes an engine on `device` and starts the device.
    ///
    /// - Throws: ``AudioQueueError/Code/invalidDevice`` when the device cannot start.
    public init(
        device: any AudioDevice, capacities: RenderCapacities = RenderCapacities(), volumeRampSeconds: Double = 0.005
    ) throws(AudioQueueError) {
        self.device = device
        self.capacities = capacities
        self.volumeRampSeconds = volumeRampSeconds
        core = RenderCore.allocate(sampleRate: device.sampleRate, capacities: capacities)
        slots = Array(repeating: nil, count: capacities.queues)
        freeSlots = (0..<Int32(capacities.queues)).reversed()
        let thread = Thread { [unowned self] in self.eventsLoop() }
        thread.name = "aqsync-events"
        thread.start()
        if let jack = device as? JackDevice {
            // Called on JACK's notification path, never its process thread.
            jack.onShutdown = { [weak self] reason in self?.deviceLost(reason) }
        }
        do {
            try device.start(rendering: core)
        } catch {
            stopEventsThread()
            RenderCore.deallocate(core)
            closed = true  // deinit runs after a throwing init: close() and deinit must not free again
            coreFreed = true
            throw AudioQueueError(.invalidDevice, "cannot start device \(device.uid): \(error.message)")
        }
    }

    deinit {
        close()
        if !coreFreed { RenderCore.deallocate(core) }
    }

    /// Stops the device, the events thread, and every queue. Queues of this engine refuse
    /// every command afterwards (`.invalidDevice`); their buffers stay valid while referenced.
    /// The renderer's memory is freed when the engine itself goes. Calling it twice does
    /// nothing.
    public func close() {
        lock.lock()
        if closed { lock.unlock(); return }
        closed = true
        lock.unlock()
        device.stop()
        stopEventsThread()
        lock.lock()
        let queues = slots.compactMap { $0 }
        slots = Array(repeating: nil, count: capacities.queues)
        for q in queues { q.disposing = true }
        lock.unlock()
    }

    private func stopEventsThread() {
        stopEvents.store(true, ordering: .releasing)
        sem_post(core.pointee.wake)
        eventsDone.wait()
    }

    // MARK: - Queues

    /// Makes an output (playback) queue.
    ///
    /// - Parameters:
    ///   - format: interleaved linear PCM (see docs/conversion.md for what is accepted), or
    ///     MP3 (`.mp3`), AAC-LC (`aac `) or Apple Lossless (`alac`), decoded at enqueue
    ///     (docs/codecs.md; AAC and ALAC need ``AudioQueue/setMagicCookie(_:)`` before the
    ///     first enqueue); a rate other than the device's is converted before the render
    ///     thread sees it.
    ///   - callback: called on the engine's events thread each time a buffer has played or was
    ///     removed (stop, reset), so that it may be refilled and enqueued again.
    /// - Throws: `.unsupportedDataFormat` for a format it cannot play, `.capacityExceeded` when
    ///   every queue slot is taken.
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
        lock.lock()
        defer { lock.unlock() }
        if closed { throw AudioQueueError(.invalidDevice, "the engine is closed") }
        guard let slot = freeSlots.popLast() else {
            throw AudioQueueError(.capacityExceeded, "all \(capacities.queues) queue slots are in use")
        }
        let channels = Int(format.channelsPerFrame)
        guard core.pointee.commands.push(.activate(slot: slot, channels: Int32(channels), map: .standard(channels: channels))) else {
            freeSlots.append(slot)
            throw AudioQueueError(.capacityExceeded, "the command ring is full")
        }
        let q = AudioQueue(
            engine: self, slot: slot, format: format, deinterleaver: deinterleaver, decoder: decoder,
            converter: converter, callback: callback)
        slots[Int(slot)] = q
        return q
    }

    /// Starts every queue of `queues` on one device frame, or none of them.
    ///
    /// - Parameter time: the device time to start at; nil for as soon as possible. A time
    ///   earlier than ``nearestStartTime(_:)`` is moved to it.
    /// - Returns: the device frame at which every queue's frame 0 plays.
    public func start(_ queues: [AudioQueue], at time: AudioTimeStamp? = nil) throws(AudioQueueError) -> Int64 {
        let frame = Int64(nearestStartTime(time).sampleTime)
        lock.lock()
        defer { lock.unlock() }
        try checkUsable()
        for q in queues {
            guard q.engine === self else { throw AudioQueueError(.invalidParameter, "a queue of another engine") }
            if q.disposing { throw AudioQueueError(.disposalPending, "queue \(q.slot) is being disposed of") }
        }
        guard core.pointee.commands.freeCount >= queues.count else {
            throw AudioQueueError(.capacityExceeded, "the command ring is full")
        }
        for q in queues { core.pointee.commands.push(.start(slot: q.slot, frame: frame)) }
        return frame
    }

    /// Throws when the engine or its device can no longer play. Call with `lock` held.
    func checkUsable() throws(AudioQueueError) {
        if closed { throw AudioQueueError(.invalidDevice, "the engine is closed") }
        if let r = deviceLostReason { throw AudioQueueError(.cannotStart, r) }
    }

    /// `body`'s value, computed with the control lock held. Control threads.
    @inline(__always)
    func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// Sends one command; call with `lock` held.
    func send(_ command: RenderCommand) throws(AudioQueueError) {
        if closed { throw AudioQueueError(.invalidDevice, "the engine is closed") }
        guard core.pointee.commands.push(command) else {
            throw AudioQueueError(.capacityExceeded, "the command ring is full (\(capacities.commands) commands in flight)")
        }
    }

    // MARK: - Time

    /// The device's timebase at its latest cycle, or nil before the first cycle.
    public var timebase: DeviceTimebase? {
        guard let a = core.pointee.clock.anchor() else { return nil }
        return DeviceTimebase(cycle: a, nominalRate: core.pointee.clock.nominalSampleRate)
    }

    /// The device's current time (`AudioQueueDeviceGetCurrentTime`): the host time is always
    /// valid; the sample time once the device has rendered a cycle. For the hand-driven device,
    /// "now" is the first frame of the next cycle.
    public func deviceCurrentTime() -> AudioTimeStamp {
        if let manual = device as? ManualDevice {
            let f = Double(manual.currentFrame)
            guard let tb = timebase else {
                return AudioTimeStamp(sampleTime: f, hostTime: manual.hostTime(ofFrame: manual.currentFrame), rateScalar: 1,
                                      flags: [.sampleTimeValid, .hostTimeValid, .rateScalarValid])
            }
            return tb.timeStamp(forSampleTime: f)
        }
        let now = HostClock.now()
        guard let tb = timebase else { return AudioTimeStamp(hostTime: now) }
        var ts = tb.timeStamp(forSampleTime: tb.sampleTime(forHostTime: now))
        ts.hostTime = now
        return ts
    }

    /// The earliest device time a start or buffer scheduled now can still honour, and never
    /// earlier than `requested` (`AudioQueueDeviceGetNearestStartTime`): the first frame of
    /// the next cycle plus the device's scheduling lead. The sample time is a whole frame.
    public func nearestStartTime(_ requested: AudioTimeStamp? = nil) -> AudioTimeStamp {
        let tb = timebase
        var earliest: Int64 = 0
        if let a = core.pointee.clock.anchor() {
            earliest = a.frame + Int64(a.frames) + device.schedulingLead
        } else if let manual = device as? ManualDevice {
            earliest = manual.currentFrame
        }
        var want = earliest
        if let r = requested {
            if r.flags.contains(.sampleTimeValid) {
                want = max(earliest, Int64(r.sampleTime.rounded(.up)))
            } else if r.flags.contains(.hostTimeValid), let tb {
                want = max(earliest, Int64(tb.sampleTime(forHostTime: r.hostTime).rounded(.up)))
            }
        }
        return tb?.timeStamp(forSampleTime: Double(want)) ?? AudioTimeStamp(sampleTime: Double(want))
    }

    /// Fills in the other half of a device time stamp: host time from sample time or the
    /// reverse (`AudioQueueDeviceTranslateTime`). Returns `time` unchanged before the first
    /// cycle.
    public func translateTime(_ time: AudioTimeStamp) -> AudioTimeStamp {
        timebase?.complete(time) ?? time
    }

    /// The current discontinuity epoch and its latest cause.
    public var discontinuity: (epoch: UInt64, reason: DiscontinuityReason) {
        let e = core.pointee.clock.epoch
        return (e.count, e.lastReason)
    }

    /// Render-thread counters.
    public var statistics: RenderStatistics { core.pointee.statistics }

    // MARK: - Device loss

    /// Tells the engine its device is gone (the JACK server shut down): every running queue
    /// stops with an error saying so, and `isRunning` listeners are told. Any control thread.
    public func deviceLost(_ reason: String) {
        lock.lock()
        if deviceLostReason != nil { lock.unlock(); return }
        deviceLostReason = reason
        var notify: [(AudioQueue, [AudioQueue.PropertyListener])] = []
        for case let q? in slots where q.isRunningValue {
            q.isRunningValue = false
            q.lastError = AudioQueueError(.cannotStart, reason)
            notify.append((q, q.listeners(for: .isRunning)))
        }
        lock.unlock()
        core.pointee.clock.noteDiscontinuity(.serverShutdown)
        for (q, ls) in notify { for l in ls { l(q, .isRunning) } }
    }

    // MARK: - Events

    private func eventsLoop() {
        Thread.current.name = "aqsync-events"
        let wake = core.pointee.wake
        while !stopEvents.load(ordering: .acquiring) {
            var ts = timespec()
            clock_gettime(CLOCK_REALTIME, &ts)
            ts.tv_nsec += 20_000_000
            if ts.tv_nsec >= 1_000_000_000 { ts.tv_sec += 1; ts.tv_nsec -= 1_000_000_000 }
            _ = sem_timedwait(wake, &ts)
            consumer.lock()
            drainEvents()
            consumer.unlock()
        }
        consumer.lock()
        drainEvents()
        consumer.unlock()
        eventsDone.signal()
    }

    /// Delivers every event the render thread has reported so far on the calling thread:
    /// output callbacks and listeners run before it returns. Events the events thread is
    /// handling at the moment are finished first (it waits for them). Any control thread,
    /// including callbacks; blocks while another thread delivers events. Tests on the
    /// hand-driven device call it after ``ManualDevice/render(frames:cycle:)``.
    public func deliverPendingEvents() {
        consumer.lock()
        defer { consumer.unlock() }
        drainEvents()
    }

    /// Handles everything the render thread reported. Consumer lock held.
    func drainEvents() {
        while let e = core.pointee.events.pop() {
            handle(e)
        }
    }

    private func handle(_ e: RenderEvent) {
        switch e {
        case .bufferDone(let slot, let token, let played, let late):
            lock.lock()
            guard let q = slots[Int(slot)] else { lock.unlock(); return }
            let buffer = q.bufferReturned(token: token, played: played, lateFrames: Int64(late))
            let callback = q.disposing ? nil : q.callback
            lock.unlock()
            if let buffer, let callback { callback(q, buffer) }
        case .started(let slot, let frame, let late):
            lock.lock()
            guard let q = slots[Int(slot)] else { lock.unlock(); return }
            q.startFrame = frame
            q.lateStartFrames = late
            let changed = !q.isRunningValue
            q.isRunningValue = true
            let ls = changed ? q.listeners(for: .isRunning) : []
            lock.unlock()
            for l in ls { l(q, .isRunning) }
        case .stopped(let slot, _):
            lock.lock()
            guard let q = slots[Int(slot)] else { lock.unlock(); return }
            let changed = q.isRunningValue
            q.isRunningValue = false
            // After a stop-after-drain, queue time restarts now; an immediate stop already
            // restarted it when it was asked for (and buffers enqueued since must keep their
            // times).
            if q.drainStopPending {
                q.drainStopPending = false
                q.resetTimeline()
            }
            if q.disposeWhenStopped {
                q.disposeWhenStopped = false
                _ = try? send(.release(slot: slot))
            }
            let ls = changed ? q.listeners(for: .isRunning) : []
            lock.unlock()
            for l in ls { l(q, .isRunning) }
        case .paused:
            break
        case .released(let slot):
            lock.lock()
            let q = slots[Int(slot)]
            slots[Int(slot)] = nil
            freeSlots.append(slot)
            q?.releaseAll()
            lock.unlock()
        }
    }
}
