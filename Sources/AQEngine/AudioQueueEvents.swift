import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// What the render thread reports, applied to the queue (events thread, or the thread in
/// `deliverPendingEvents()`), and the bookkeeping synchronous calls share: taking every
/// buffer back, restarting queue time, the handle going stale.
extension AudioQueue {
    /// Queue time restarts from zero (after a stop or reset): a new timeline epoch. Lock held.
    func resetTimeline() {
        queueTime.restart()
        endStream()
        prestart.clear()
    }

    /// Forgets the converter's and decoder's stream. Lock held.
    func endStream() {
        queueTime.streamOpen = false
        converter?.reset()
        timePitch.reset()
        codec.end()
    }

    /// Every buffer in flight is the caller's again (the renderer has let go of them: a
    /// synchronous stop, reset or dispose was applied). Returns the user's buffers in enqueue
    /// order; their done events, still on their way, are stale. Lock held.
    func takeBackAll() -> [AudioQueueBuffer] {
        var out: [AudioQueueBuffer] = []
        for token in ledger.takeBackAll() {
            if let b = returned(token) { out.append(b) }
        }
        return out
    }

    /// `token`'s enqueue is over: a tail is free again, a buffer is the caller's (returned).
    /// Lock held.
    func returned(_ token: UInt32) -> AudioQueueBuffer? {
        if token & AudioQueue.tailTokenBit != 0 {
            let i = Int(token & ~AudioQueue.tailTokenBit)
            if i < tails.count { tails[i].inFlight = false }
            return nil
        }
        guard let b = ledger.buffer(token) else { return nil }
        b.isEnqueued = false
        return b
    }

    /// The handle becomes stale and its buffers are released (disposal, or the engine
    /// closed). Lock held.
    /// Marks the queue disposed of (queue lock held); returns its ``whenDisposed`` handler,
    /// taken, for the caller to call once it holds no lock.
    @discardableResult
    func goneLocked() -> (@Sendable () -> Void)? {
        _ = takeBackAll()
        disposed = true
        disposing = true
        startRequested = false
        isRunningValue = false
        for b in ledger.removeAll() { b.isEnqueued = false }
        tails.removeAll()
        processingTap = nil  // disposed of with the queue: its callback is not called again
        defer { whenDisposed = nil }
        return whenDisposed
    }

    /// The engine closed. Any control thread.
    func markGone() {
        lock.lock()
        let completed = goneLocked()
        lock.unlock()
        completed?()
    }

    // MARK: - Events (events thread, or the thread in deliverPendingEvents)

    /// The render thread is done with a buffer: it goes back to the caller through the
    /// callback, unless a synchronous call already handed it back (a stale event) or the
    /// queue is being disposed of.
    func bufferDone(token: UInt32, serial: UInt32, played: Bool, lateFrames: Int64) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        guard ledger.done(token, serial: serial) else {
            lock.unlock()
            return
        }
        lateFramesTotal += lateFrames
        let buffer = returned(token)
        let callback = disposing ? nil : callback
        lock.unlock()
        if let buffer, let callback { callback(self, buffer) }
    }

    /// The queue's first frame played.
    func started(run: UInt32, frame: Int64, lateFrames: Int64) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        guard run == self.run, !disposing else { lock.unlock(); return }
        startFrame = frame
        lateStartFrames = lateFrames
        let changed = !isRunningValue
        isRunningValue = true
        lock.unlock()
        if changed { notify(.isRunning) }
    }

    /// The queue stopped by itself (a stop after the enqueued buffers completed).
    func stopped(run: UInt32, drainEnd: Int64) {
        // Declared first, so that it runs after both locks are given back.
        var completed: (@Sendable () -> Void)?
        defer { completed?() }
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        guard run == self.run, !disposed else { lock.unlock(); return }
        if drainEnd >= 0 && drainStopPending {
            // Queue time restarts: buffers enqueued since the drain ended were moved back by
            // the renderer (same epoch); what is enqueued from now on starts a new epoch.
            queueTime.restart(afterDrainEndingAt: drainEnd)
            endStream()
        }
        drainStopPending = false
        startRequested = false
        let changed = isRunningValue
        isRunningValue = false
        if disposeWhenStopped {
            disposeWhenStopped = false
            completed = disposeNowLocked()
            lock.unlock()
            return
        }
        let quiet = disposing
        lock.unlock()
        if changed && !quiet { notify(.isRunning) }
    }

    /// Calls the listeners of `id` on the calling thread (callback lock held by the caller, or
    /// taken here). Never with the queue lock held.
    func notify(_ id: AudioQueuePropertyID) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        if locked({ disposing }) { return }
        for l in listeners(for: id) { l(self, id) }
    }

    /// Disposes of the queue now: the renderer lets go of it (synchronously), the handle is
    /// stale. The slot is free once the render thread acknowledged the release; when it could
    /// not be sent (a full command ring), the engine sends it again before the next queue is
    /// made and the slot stays taken until then. Queue lock (and callback lock) held. Returns
    /// the ``whenDisposed`` handler, for the caller to call once it holds no lock.
    func disposeNowLocked() -> (@Sendable () -> Void)? {
        var released = false
        if !hub.closed {
            do {
                try hub.sendNow([.release(slot: slot)])
                released = true
            } catch {}
        }
        let completed = goneLocked()
        hub.freeSlot(self, released: released)
        return completed
    }
}
