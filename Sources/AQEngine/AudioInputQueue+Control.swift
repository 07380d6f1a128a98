import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// Starting, pausing, stopping, flushing, resetting and disposing of an input queue.
extension AudioInputQueue {
    /// Starts (or resumes) recording (`AudioQueueStart`): from device time `time`
    /// (`sampleTime` or `hostTime`), or from the next cycle's first frame when nil or earlier.
    /// The first frame recorded is exactly that device frame. Any control thread; waits only for
    /// a callback of this queue running on another thread (buffers come back in order).
    /// Returns the device frame recording starts at.
    @discardableResult
    public func start(at time: AudioTimeStamp? = nil) throws(AudioQueueError) -> Int64 {
        // Buffers are handed back in the order they were filled, whichever thread hands them.
        callbackLock.lock()
        defer { callbackLock.unlock() }
        var changed = false
        var handed: [(AudioQueueBuffer, Double)] = []
        let frame: Int64
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            try hub.checkUsableLocking()
            var f = hub.nextCycleFrame()
            if let time {
                var requested: Int64?
                if time.flags.contains(.sampleTimeValid) {
                    requested = Int64(time.sampleTime.rounded())
                } else if time.flags.contains(.hostTimeValid), let tb = hub.timebase {
                    requested = Int64(tb.sampleTime(forHostTime: time.hostTime).rounded())
                }
                if let r = requested, r > f { f = r }
            }
            switch state {
            case .running:
                break
            case .paused:
                // Record what was captured before the pause, then jump to the resumption.
                handed += pumpLocked(until: pauseFrame)
                endStreamLocked(&handed)
                if filled > 0 { handed.append(completeHead()) }
                if readPosition < pauseFrame {
                    lost += pauseFrame - readPosition
                    discontinuities += 1
                }
                readPosition = f
                timeOrigin &+= f - pauseFrame
                state = .running
                changed = true
            case .stopped:
                readPosition = f
                timeOrigin = f
                state = .running
                changed = true
            }
            stopAfterBuffer = false
            frame = readPosition
        }
        deliver(handed)
        if changed { setRunning(true) }
        return frame
    }

    /// Pauses recording (`AudioQueuePause`): frames from the next cycle's first frame on are not
    /// recorded until ``start(at:)``; buffers stay enqueued. Any control thread; does not block.
    public func pause() throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        guard state == .running else { return }
        pauseFrame = hub.nextCycleFrame()
        state = .paused
    }

    /// Stops recording (`AudioQueueStop`). `immediately`: synchronous — the frames captured up to
    /// now are recorded, the buffer in progress is handed back with the frames it holds and the
    /// other enqueued buffers empty, through the callback on this thread, and the queue is
    /// stopped when it returns (it blocks only for the callbacks it runs, and for one of this
    /// queue running on another thread). Otherwise the queue
    /// stops once the buffer in progress is full (the others are then handed back empty); the
    /// call does not wait for that. Any control thread, including the callback.
    public func stop(immediately: Bool) throws(AudioQueueError) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        var handed: [(AudioQueueBuffer, Double)] = []
        var changed = false
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            guard state != .stopped else { return }
            if !immediately {
                stopAfterBuffer = true
                return
            }
            handed = stopLocked(recordingUpTo: hub.nextCycleFrame())
            changed = true
        }
        deliver(handed)
        if changed { setRunning(false) }
    }

    /// Records up to `end` (exclusive), hands every buffer back (the one in progress with its
    /// frames) and stops. Queue lock held.
    func stopLocked(recordingUpTo end: Int64) -> [(AudioQueueBuffer, Double)] {
        let last = state == .paused ? min(end, pauseFrame) : end
        var handed = pumpLocked(until: last)
        endStreamLocked(&handed)
        handed += takeAllLocked()
        if readPosition < last {
            // No buffer left for these (those handed back cannot return before the stop).
            lost += last - readPosition
            discontinuities += 1
            readPosition = last
        }
        state = .stopped
        stopAfterBuffer = false
        return handed
    }

    /// Every enqueued buffer, the one in progress with its frames, the others empty. Queue lock held.
    func takeAllLocked() -> [(AudioQueueBuffer, Double)] {
        var handed: [(AudioQueueBuffer, Double)] = []
        if filled > 0 { handed.append(completeHead()) }
        for b in pending {
            b.audioDataByteSize = 0
            b.isEnqueued = false
            handed.append((b, Double(readPosition)))
        }
        pending.removeAll()
        return handed
    }

    /// Hands the buffer in progress back now with the frames it holds (`AudioQueueFlush`: what
    /// was captured so far is delivered), through the callback on this thread. Any control
    /// thread; blocks only for the callback.
    public func flush() throws(AudioQueueError) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        var handed: [(AudioQueueBuffer, Double)] = []
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            if state != .stopped {
                handed = pumpLocked(until: state == .paused ? pauseFrame : hub.nextCycleFrame())
            }
            endStreamLocked(&handed)
            if filled > 0 { handed.append(completeHead()) }
        }
        deliver(handed)
    }

    /// Hands every enqueued buffer back empty (`AudioQueueReset`), the frames of the buffer in
    /// progress discarded, through the callback on this thread; the run state does not change
    /// and recording goes on into buffers enqueued afterwards. Any control thread; blocks only for
    /// the callbacks.
    public func reset() throws(AudioQueueError) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        var handed: [(AudioQueueBuffer, Double)] = []
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            if state == .running { readPosition = max(readPosition, hub.nextCycleFrame()) }
            filled = 0
            discardStreamLocked()
            handed = takeAllLocked()
        }
        deliver(handed)
    }

    /// Disposes of the queue (`AudioQueueDispose`): no callback or listener runs once it
    /// returned (it waits for one running on another thread); buffers are not handed back.
    /// `immediately` false is treated as true (recording has nothing left to play). Afterwards
    /// every call through the handle is `.invalidQueue`. Any control thread, including the
    /// callback (then that callback is the last).
    public func dispose(immediately: Bool) throws(AudioQueueError) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        do {
            defer { lock.unlock() }
            try checkLive()
            disposed = true
            state = .stopped
            runningFlag.store(false, ordering: .releasing)
            for b in pending { b.isEnqueued = false }
            pending.removeAll()
            listeners.removeAll()
        }
        hub.removeInput(self)
    }

    /// Marks the handle stale (its engine closed). Any thread.
    func markGone() {
        lock.lock()
        disposed = true
        state = .stopped
        runningFlag.store(false, ordering: .releasing)
        lock.unlock()
    }

}
