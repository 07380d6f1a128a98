import AQCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The engine's state that its queues and its events thread share: the renderer's memory
/// (freed when the last holder lets go, after the device stopped), the slot table, the command
/// producer side with its back-pressure, and the events thread. Queues hold it strongly and
/// their ``AudioQueueEngine`` only weakly, so that releasing the engine without
/// ``AudioQueueEngine/close()`` shuts it down instead of keeping it alive or reading a
/// destroyed object; the events thread holds only this.
///
/// Locks, in the order they may be taken: a queue's callback lock → a queue's lock → `lock`
/// (the slot table) → `commandLock` (the command ring's producer side). Callbacks and
/// listeners run with none of the last three held.
final class EngineShared: @unchecked Sendable {
    let device: any AudioDevice
    let capacities: RenderCapacities
    let volumeRampSeconds: Double
    let core: UnsafeMutablePointer<RenderCore>
    /// Guards `slots`, `freeSlots`, `deviceLostReason`, `awayReason`, `pendingNotices`,
    /// `statusHandler`, `nextGeneration`.
    let lock = NSLock()
    var slots: [AudioQueue?]
    /// Slots the render thread has free (never used, or their release applied).
    var freeSlots: [Int32]
    /// Slots of disposed queues whose ``RenderCommand/release(slot:)`` could not be sent (the
    /// command ring was full): still live on the render thread, so not free. The release is
    /// sent again before the next queue is made (``releasePendingSlots()``).
    var unreleasedSlots: [Int32] = []
    var deviceLostReason: String?
    /// Why the device is away while it reconnects (nil while it renders).
    var awayReason: String?
    /// Work for the events thread that did not come through the render ring (device status
    /// changes and the listener calls they cause), run in order after the ring's events.
    var pendingNotices: [@Sendable () -> Void] = []
    /// The user's device-status handler (``AudioQueueEngine/onDeviceStatus``).
    var statusHandler: (@Sendable (DeviceStatus) -> Void)?
    var nextGeneration: UInt32 = 0
    /// Input (recording) queues, read from the capture ring after each delivery of events.
    /// Guarded by `lock`.
    var inputs: [AudioInputQueue] = []
    /// Set once by ``close()``.
    let closedFlag = Atomic<Bool>(false)
    var closed: Bool { closedFlag.load(ordering: .acquiring) }
    /// Serialises the command ring's producer side (pushes, and applying commands on a control
    /// thread for synchronous calls).
    let commandLock = NSLock()
    /// Held while events are handled (callbacks and listeners run under it), by the events
    /// thread or by ``deliverPendingEvents()``. Recursive.
    let consumer = OwnedRecursiveLock()
    private let stop = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    /// pthread_self of the events thread.
    private let threadID = Atomic<UInt>(0)
    /// The SCHED_FIFO priority the events thread should take (0: leave it), set by
    /// ``raiseEventsThread(to:)`` and taken by the events thread itself at its next wake.
    private let wantedPriority = Atomic<Int32>(0)
    /// The events thread's realtime priority once it took one (0: ordinary, or refused).
    let eventsPriority = Atomic<Int32>(0)
    /// Held while the engine starts its device (``AudioQueueEngine/startDevice()``).
    let deviceStartLock = NSLock()
    /// Whether the engine started its device. Guarded by `deviceStartLock`.
    var deviceStarted = false
    /// Signalled by the events thread when it first sees a rendered cycle
    /// (``AudioQueueEngine/waitForFirstCycle(timeout:)``); guards `firstCycleSeen`.
    private let firstCycle = NSCondition()
    private var firstCycleSeen = false

    init(device: any AudioDevice, capacities: RenderCapacities, volumeRampSeconds: Double) {
        self.device = device
        self.capacities = capacities
        self.volumeRampSeconds = volumeRampSeconds
        core = RenderCore.allocate(sampleRate: device.sampleRate, capacities: capacities)
        // The hand-driven device is not realtime: its render waits for a control thread that
        // applies commands, rather than render a silent cycle.
        core.pointee.setWaitsForControl(!device.isRealtime)
        slots = Array(repeating: nil, count: capacities.queues)
        freeSlots = (0..<Int32(capacities.queues)).reversed()
    }

    deinit { RenderCore.deallocate(core) }

    /// See ``AudioQueueEngine/close()``.
    func close() {
        if closedFlag.exchange(true, ordering: .acquiringAndReleasing) { return }
        // A caller waiting for the first cycle waits no more.
        firstCycle.lock()
        firstCycle.broadcast()
        firstCycle.unlock()
        device.stop()
        stopEventsThread(wait: !isDeliveringOnCurrentThread)
        lock.lock()
        let queues = slots.compactMap { $0 }
        slots = Array(repeating: nil, count: capacities.queues)
        lock.unlock()
        for q in queues { q.markGone() }
        lock.lock()
        let ins = inputs
        inputs.removeAll()
        lock.unlock()
        for q in ins { q.markGone() }
    }

    /// Forgets a disposed input queue. No queue lock held.
    func removeInput(_ q: AudioInputQueue) {
        lock.lock()
        inputs.removeAll { $0 === q }
        lock.unlock()
        updateCaptureWake()
    }

    /// Frames of capture after which the render thread wakes the events thread while input
    /// queues exist on a realtime device: 10 ms (a buffer is handed to its callback at most
    /// that, plus a cycle, after it is full).
    var captureWakeFrames: Int { max(1, Int(device.sampleRate / 100)) }

    /// Turns the render thread's capture wake on while input queues exist on a realtime
    /// device, off otherwise. Any control thread; `lock` not held.
    func updateCaptureWake() {
        lock.lock()
        let any = !inputs.isEmpty
        lock.unlock()
        core.pointee.setCaptureWake(frames: any && device.isRealtime ? captureWakeFrames : 0)
    }

    // MARK: - Events thread

    func startEventsThread() {
        started.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            threadID.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
            setCurrentThreadName("aqsync-events")
            let wake = core.pointee.wake
            // On a hand-driven device the caller says when input is read (its
            // deliverPendingEvents), so that what a recording queue gets does not depend on how
            // fast the calling thread renders. On a realtime device the render thread wakes this
            // thread when the capture ring has advanced (``updateCaptureWake()``).
            let pumpInputs = device.isRealtime
            // No timer: the render thread posts for its events and the capture, control
            // threads for their notices, and stopEventsThread to end.
            var taken: Int32 = 0
            var sawCycle = false
            while !stop.load(ordering: .acquiring) {
                _ = sem_wait(wake)
                if stop.load(ordering: .acquiring) { break }
                // The render thread wakes this thread at the engine's first cycle.
                if !sawCycle, core.pointee.clock.anchor() != nil {
                    sawCycle = true
                    firstCycle.lock()
                    firstCycleSeen = true
                    firstCycle.broadcast()
                    firstCycle.unlock()
                }
                let wanted = wantedPriority.load(ordering: .acquiring)
                if wanted != taken {
                    taken = wanted
                    let ok = ServicePriority.makeCurrentThreadRealtime(priority: wanted)
                    eventsPriority.store(ok ? wanted : 0, ordering: .releasing)
                }
                deliverPendingEvents(pumpInputs: pumpInputs)
            }
            done.signal()
        }
        thread.name = "aqsync-events"
        thread.start()
    }

    /// See ``AudioQueueEngine/waitForFirstCycle(timeout:)``: waits for the events thread's
    /// signal, at most `timeout` seconds. Not on the events thread.
    func waitForFirstCycle(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: max(0, timeout))
        firstCycle.lock()
        while !firstCycleSeen && !closed {
            if !firstCycle.wait(until: deadline) { break }
        }
        firstCycle.unlock()
        return core.pointee.clock.anchor() != nil
    }

    /// True on the events thread, or in a callback that ``deliverPendingEvents()`` runs on the
    /// current thread.
    var isDeliveringOnCurrentThread: Bool {
        consumer.isHeldByCurrentThread
            || threadID.load(ordering: .acquiring) == UInt(bitPattern: Int(bitPattern: pthread_self()))
    }

    /// Asks the events thread to run SCHED_FIFO at `priority` from its next wake on (it
    /// changes its own scheduling; ``eventsPriority`` says whether the system allowed it).
    /// Any control thread; does not block.
    func raiseEventsThread(to priority: Int32) {
        wantedPriority.store(priority, ordering: .releasing)
        sem_post(core.pointee.wake)
    }

    /// Tells the events thread to finish; waits for it unless `wait` is false.
    func stopEventsThread(wait: Bool) {
        stop.store(true, ordering: .releasing)
        sem_post(core.pointee.wake)
        if wait && started.load(ordering: .acquiring) { done.wait() }
    }

    /// See ``AudioQueueEngine/deliverPendingEvents()``. `pumpInputs`: also read the capture
    /// ring for the recording queues.
    func deliverPendingEvents(pumpInputs: Bool = true) {
        consumer.lock()
        defer { consumer.unlock() }
        let c = core.pointee
        while let e = c.events.pop() {
            if !stop.load(ordering: .acquiring) || !closed { handle(e) }
            c.returnEvents(1)
        }
        lock.lock()
        let notices = pendingNotices
        pendingNotices.removeAll()
        lock.unlock()
        for n in notices { n() }
        // Input queues record what the render thread captured since the last delivery.
        lock.lock()
        let ins = inputs
        lock.unlock()
        if pumpInputs { for q in ins { q.pump() } }
    }

    /// The live queue an event is for, or nil for a stale event (its queue is gone).
    private func queue(_ slot: Int32, _ generation: UInt32) -> AudioQueue? {
        lock.lock()
        defer { lock.unlock() }
        guard let q = slots[Int(slot)], q.generation == generation else { return nil }
        return q
    }

    private func handle(_ e: RenderEvent) {
        switch e {
        case .bufferDone(let slot, let generation, let token, let serial, let played, let late):
            queue(slot, generation)?.bufferDone(token: token, serial: serial, played: played, lateFrames: Int64(late))
        case .started(let slot, let generation, let run, let frame, let late):
            queue(slot, generation)?.started(run: run, frame: frame, lateFrames: late)
        case .stopped(let slot, let generation, let run, _, let drainEnd):
            queue(slot, generation)?.stopped(run: run, drainEnd: drainEnd)
        case .paused:
            break
        }
    }

    /// Forgets a disposed queue's slot. `released`: the render thread acknowledged its
    /// ``RenderCommand/release(slot:)`` (``sendNow(_:)`` returned), so the slot is free; else
    /// the release was not sent and the slot waits in `unreleasedSlots` until it is. Queue
    /// lock held.
    func freeSlot(_ q: AudioQueue, released: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if slots[Int(q.slot)] === q {
            slots[Int(q.slot)] = nil
            if released {
                freeSlots.append(q.slot)
            } else {
                unreleasedSlots.append(q.slot)
            }
        }
    }

    /// Sends the releases that could not be sent before; each slot whose release the render
    /// thread acknowledged becomes free. `lock` held (the command lock comes after it).
    func releasePendingSlots() {
        while let slot = unreleasedSlots.last {
            do {
                try sendNow([.release(slot: slot)])
            } catch {
                return  // still no room: tried again before the next queue is made
            }
            unreleasedSlots.removeLast()
            freeSlots.append(slot)
        }
    }

    /// Throws when the engine or its device can no longer play. Call with `lock` held.
    func checkUsable() throws(AudioQueueError) {
        if closed { throw AudioQueueError(.invalidDevice, "the engine is closed") }
        if let r = deviceLostReason { throw AudioQueueError(.cannotStart, r) }
    }

    /// ``checkUsable()``, taking `lock`.
    func checkUsableLocking() throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try checkUsable()
    }

    // MARK: - Commands

    /// Sends one command, its events paid for first (back-pressure: a full ring or too many
    /// events not yet handled is `.capacityExceeded` here, never a lost event). Does not block.
    func send(_ command: RenderCommand) throws(AudioQueueError) {
        try sendAll([command])
    }

    /// Sends every command or none.
    func sendAll(_ commands: [RenderCommand]) throws(AudioQueueError) {
        commandLock.lock()
        defer { commandLock.unlock() }
        try pushLocked(commands)
    }

    private func pushLocked(_ commands: [RenderCommand]) throws(AudioQueueError) {
        if closed { throw AudioQueueError(.invalidDevice, "the engine is closed") }
        let ring = core.pointee.commands
        guard ring.freeCount >= commands.count else {
            throw AudioQueueError(.capacityExceeded, "the command ring is full (\(capacities.commands) commands in flight)")
        }
        let credits = commands.reduce(0) { $0 + $1.eventCredits }
        guard core.pointee.reserveEvents(credits) else {
            throw AudioQueueError(.capacityExceeded, "the events thread is \(core.pointee.events.capacity) events behind; try again once it caught up")
        }
        for c in commands { ring.push(c) }
    }

    /// Sends `commands` and returns once the renderer applied them (synchronous calls: an
    /// immediate stop, a reset, an immediate dispose). While the device renders on its own
    /// thread, that thread applies them at its next cycle; when it does not (the hand-driven
    /// device, a stopped or stalled device: no cycle for ten periods or 50 ms), this thread
    /// applies them itself under the renderer's gate. Never waits for a device that is gone.
    func sendNow(_ commands: [RenderCommand]) throws(AudioQueueError) {
        commandLock.lock()
        defer { commandLock.unlock() }
        try pushLocked(commands)
        let target = core.pointee.commands.produced
        let realtime = device.isRealtime
        let period = Double(max(device.framesPerCycle, 64)) / device.sampleRate
        let deadline = HostClock.now() &+ UInt64(max(0.05, 10 * period) * 1e9)
        while core.pointee.commandsApplied &- target < 0 {
            if !realtime || !device.isRunning || HostClock.now() > deadline {
                if core.pointee.applyPendingIfIdle(at: nextCycleFrame()) { continue }
                sched_yield()
            } else {
                usleep(100)
            }
        }
    }

    /// The first frame of the next render cycle (where commands applied now take effect).
    func nextCycleFrame() -> Int64 {
        if let manual = device.handDriven { return manual.currentFrame }
        if let a = core.pointee.clock.anchor() { return a.frame + Int64(a.frames) }
        return 0
    }

    // MARK: - Time

    var timebase: DeviceTimebase? {
        guard let a = core.pointee.clock.anchor() else { return nil }
        return DeviceTimebase(cycle: a, nominalRate: core.pointee.clock.nominalSampleRate)
    }

    func deviceCurrentTime() -> AudioTimeStamp {
        if let manual = device.handDriven {
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

    var discontinuity: (epoch: UInt64, reason: DiscontinuityReason) {
        let e = core.pointee.clock.epoch
        return (e.count, e.lastReason)
    }
}

/// A recursive lock that knows its owner (a pthread mutex underneath: TSan understands it).
final class OwnedRecursiveLock: @unchecked Sendable {
    private let mutex = NSRecursiveLock()
    private let owner = Atomic<UInt>(0)
    private var depth = 0

    func lock() {
        mutex.lock()
        depth += 1
        owner.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .relaxed)
    }

    func unlock() {
        depth -= 1
        if depth == 0 { owner.store(0, ordering: .relaxed) }
        mutex.unlock()
    }

    var isHeldByCurrentThread: Bool {
        owner.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self()))
    }
}
