import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// Run state: start, prime, pause, stop, flush, reset, dispose.
extension AudioQueue {
    // MARK: - Control

    /// Starts playing (`AudioQueueStart`) at device time `time`, or as soon as possible when nil.
    /// A paused queue resumes. Buffers enqueued before the start keep their queue times.
    /// Any thread but the render thread; does not block. `isRunning` turns true (and its
    /// listeners run, on the events thread) when the first frame plays.
    public func start(at time: AudioTimeStamp? = nil) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        try hub.checkUsableLocking()
        var frame: Int64?
        if let time {
            guard let tb = hub.timebase ?? (time.flags.contains(.sampleTimeValid) ? DeviceTimebase(anchorFrame: 0, anchorHostTime: 0, nominalRate: hub.device.sampleRate, rateScalar: 1) : nil),
                  let full = tb.complete(time)
            else { throw AudioQueueError(.invalidParameter, "a start time needs a sample time or a host time") }
            frame = Int64(full.sampleTime.rounded())
        }
        try hub.send(.start(slot: slot, frame: frame, run: run))
        prestart.clear()
        startRequested = true
        pauseRequested = false
        lastError = nil
    }

    /// Prepares enqueued audio for playback (`AudioQueuePrime`). Linear PCM is converted and
    /// compressed packets are decoded when they are enqueued, on the enqueuing thread, so
    /// everything enqueued is already decoded: this only reports what is ready.
    /// Any thread but the render thread; does not block.
    /// - Returns: the queue frame up to which audio is enqueued and ready to play (after
    ///   trimming).
    @discardableResult
    public func prime() throws(AudioQueueError) -> Int {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        return Int(queueTime.nextQueueFrame)
    }

    /// `AudioQueuePrime(inAQ, inNumberOfFramesToPrepare, &outNumberOfFramesPrepared)`: every
    /// enqueued buffer was decoded when it was enqueued, so at least `framesToPrepare` frames
    /// (0: all) are ready at once. Any thread but the render thread; does not block.
    /// - Returns: the frames decoded and waiting to play: the queue frames enqueued and not yet
    ///   handed back, at the queue's rate.
    /// - Throws: `.invalidParameter` for a negative count, and what ``prime()`` throws.
    public func prime(framesToPrepare: Int) throws(AudioQueueError) -> Int {
        guard framesToPrepare >= 0 else { throw AudioQueueError(.invalidParameter, "a negative frame count to prepare") }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        var frames = 0
        for token in ledger.tokensInFlight {
            if let b = ledger.buffer(token) { frames += b.preparedFrames }
        }
        return frames
    }

    /// Pauses (`AudioQueuePause`) at the start of the next render cycle; queue time stops with
    /// it. ``start(at:)`` resumes. Any thread but the render thread; does not block.
    public func pause() throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        try hub.send(.pause(slot: slot))
        pauseRequested = true
    }

    /// Stops (`AudioQueueStop`).
    ///
    /// Immediately (`true`): synchronous, as the reference says. When it returns the queue is
    /// stopped (`isRunning` false), every enqueued buffer has come back through the output
    /// callback — called on this thread, before it returns — and may be freed or refilled, and
    /// queue time restarts at 0. It blocks until the renderer applied the stop: on a device
    /// rendering on its own thread, its next cycle; on the hand-driven device, or a device that
    /// stopped or stalled, this thread applies it (docs/architecture.md, "Synchronous calls").
    /// It also waits for a callback of this queue running on another thread.
    ///
    /// Not immediately (`false`): returns at once; the queue stops once every enqueued buffer
    /// has played, and `isRunning` listeners hear it on the events thread.
    ///
    /// Any thread but the render thread, including callbacks.
    public func stop(immediately: Bool) throws(AudioQueueError) {
        if !immediately {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            flushTail()
            try hub.send(.stop(slot: slot, immediately: false, epoch: queueTime.epoch))
            drainStopPending = true
            prestart.replayable = false
            return
        }
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        do throws(AudioQueueError) {
            try checkLive()
            try hub.sendNow([.stop(slot: slot, immediately: true, epoch: queueTime.epoch)])
        } catch {
            lock.unlock()
            throw error
        }
        let returned = takeBackAll()
        run &+= 1
        resetTimeline()
        drainStopPending = false
        startRequested = false
        let changed = isRunningValue
        isRunningValue = false
        lock.unlock()
        handBack(returned)
        if changed { notify(.isRunning) }
    }

    /// Makes sure everything enqueued will play (`AudioQueueFlush`): the decoder is drained
    /// (libavcodec's end-of-stream packet) and what it still held, then the rate converter's
    /// remaining frames, are scheduled right after the last buffer. It ends the stream: the
    /// decoder is reset and the gapless window (``setGaplessInfo(_:)``) cleared, so the next
    /// buffer starts a new stream. Call it after the last buffer of a stream (a track).
    /// Any thread but the render thread; does not block.
    public func flush() throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        flushTail()
        prestart.replayable = false
    }

    /// Resets (`AudioQueueReset`), synchronously: when it returns every enqueued buffer has
    /// come back through the output callback (called on this thread), the converter and
    /// decoder state is cleared, and queue time restarts at zero; the run state is kept, and
    /// the next buffer enqueued plays as soon as the queue runs. Blocks as an immediate
    /// ``stop(immediately:)`` does. Any thread but the render thread, including callbacks.
    public func reset() throws(AudioQueueError) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        do throws(AudioQueueError) {
            try checkLive()
            try hub.sendNow([.reset(slot: slot)])
        } catch {
            lock.unlock()
            throw error
        }
        let returned = takeBackAll()
        resetTimeline()
        lock.unlock()
        handBack(returned)
    }

    /// Calls the callback for each buffer an immediate stop or a reset took back, on this
    /// thread; meanwhile enqueueing is `.enqueueDuringReset`. Callback lock held, queue lock not.
    func handBack(_ returned: [AudioQueueBuffer]) {
        guard !returned.isEmpty else { return }
        lock.withLock { handingBack = true }
        defer { lock.withLock { handingBack = false } }
        for b in returned { callback(self, b) }
    }

    /// Disposes of the queue (`AudioQueueDispose`) and its buffers.
    ///
    /// Immediately (`true`): synchronous. When it returns the renderer has let go of the queue,
    /// its slot is free for a new queue, and no callback or listener of this queue runs ever
    /// again (it waits for one running on another thread to return; called from this queue's
    /// own callback, that callback is the last). Every later call through this handle is
    /// refused with `.invalidQueue`. Blocks as an immediate ``stop(immediately:)`` does.
    ///
    /// Not immediately (`false`): the enqueued buffers play first; from this call on no callback
    /// or listener of the queue runs (the reference: "the audio queue no longer invokes any
    /// callbacks"), calls through the handle are refused with `.disposalPending`, and the
    /// disposal completes on the events thread when the last buffer has played. A queue that
    /// is not running is disposed of at once.
    ///
    /// `whenDisposed` is called once when the disposal has completed (the handle is stale, the
    /// queue will call nothing more), with no lock of the queue held: on this thread before
    /// this returns when the disposal completes at once, else on the events thread (or the
    /// thread in ``AudioQueueEngine/deliverPendingEvents()``) when the last buffer has played,
    /// or on the thread that closes the engine. Not called when this throws.
    ///
    /// Any thread but the render thread, including callbacks.
    public func dispose(immediately: Bool, whenDisposed: (@Sendable () -> Void)? = nil) throws(AudioQueueError) {
        // Declared first, so that it runs after both locks are given back.
        var completed: (@Sendable () -> Void)?
        defer { completed?() }
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        defer { lock.unlock() }
        if disposed { throw AudioQueueError(.invalidQueue, "the queue was already disposed of") }
        if disposing { throw AudioQueueError(.disposalPending, "the queue is already being disposed of") }
        self.whenDisposed = whenDisposed
        if hub.closed { completed = goneLocked(); return }
        // A queue that is not playing has nothing to drain (a paused one would wait forever:
        // its handle refuses start from now on).
        if immediately || !(isRunningValue || startRequested) || pauseRequested || ledger.count == 0 {
            do {
                try hub.sendNow([.release(slot: slot)])
            } catch {
                self.whenDisposed = nil
                throw error
            }
            completed = goneLocked()
            hub.freeSlot(self, released: true)
        } else {
            flushTail()
            do {
                try hub.send(.stop(slot: slot, immediately: false, epoch: queueTime.epoch))
            } catch {
                self.whenDisposed = nil
                throw error
            }
            disposeWhenStopped = true
            drainStopPending = true
            disposing = true
        }
    }
}
