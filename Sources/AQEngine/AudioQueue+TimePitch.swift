import AQConvert
import AQTypes

/// `kAudioQueueProperty_EnableTimePitch`, `…TimePitchAlgorithm`, `…TimePitchBypass` and the
/// checks of `kAudioQueueParam_PlayRate` and `kAudioQueueParam_Pitch` (docs/c-api.md, "Time
/// and pitch"). The processing itself: AudioQueue+TimePitchPipeline.swift.
extension AudioQueue {
    /// `kAudioQueueProperty_EnableTimePitch`: whether enqueued audio runs through the
    /// time/pitch unit. Any thread but the render thread; does not block.
    public var isTimePitchEnabled: Bool { locked { timePitch.enabled } }

    /// `kAudioQueueProperty_TimePitchAlgorithm` (default `.spectral`). Any thread but the render
    /// thread; does not block.
    public var timePitchAlgorithm: AudioQueueTimePitchAlgorithm { locked { timePitch.algorithm } }

    /// `kAudioQueueProperty_TimePitchBypass`. Any thread but the render thread; does not block.
    public var isTimePitchBypassed: Bool { locked { timePitch.bypassed } }

    /// Inserts (or removes) the time/pitch unit (`kAudioQueueProperty_EnableTimePitch`). As on
    /// Apple's systems it may only be set while the queue is stopped. Buffers enqueued before
    /// the start are processed again with the unit (``PrestartLog``: taken back from the
    /// renderer without a callback and enqueued again in order, on this thread), so a program
    /// that enqueues its first buffers and then enables time/pitch before starting, as Apple's
    /// aqplay does, hears all of it through the unit; that is refused only when the queue has a
    /// processing tap, or was flushed or asked to stop after its buffers before the start.
    /// Buffers already allocated are fine: their render storage grows at enqueue when stretched
    /// audio needs it. Listeners of `.enableTimePitch` run on this thread afterwards. Any thread
    /// but the render thread; blocks while the enqueued audio is processed again.
    /// - Throws: `.invalidRunState` while started (running, paused, or starting), or with
    ///   buffers enqueued that cannot be processed again (above); `.invalidQueue`,
    ///   `.disposalPending`.
    public func setTimePitchEnabled(_ on: Bool) throws(AudioQueueError) {
        var refused: [AudioQueueBuffer] = []
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            let replay = try checkStoppedForTimePitch("EnableTimePitch")
            if on { ensureTimePitchTails() }
            timePitch.reset()
            timePitch.enabled = on
            // The map's pieces for play rates are of audio gone (or about to be replayed).
            queueTime.map.reset(slope: ratio)
            if replay { refused = try replayPrestart() }
        }
        handBackRefused(refused)
        notify(.enableTimePitch)
    }

    /// Chooses the algorithm (`kAudioQueueProperty_TimePitchAlgorithm`); the SoundTouch settings
    /// of each: ``AudioQueueTimePitchAlgorithm``. May be set whether or not time/pitch is
    /// enabled (it is kept for when it is), while the queue is stopped; buffers enqueued before
    /// the start are processed again with it, as for ``setTimePitchEnabled(_:)``.
    /// Listeners of `.timePitchAlgorithm` run on this thread afterwards. Any thread but the
    /// render thread; blocks while enqueued audio is processed again.
    /// - Throws: `.invalidRunState` while started or with buffers enqueued that cannot be
    ///   processed again; `.invalidQueue`, `.disposalPending`.
    public func setTimePitchAlgorithm(_ algorithm: AudioQueueTimePitchAlgorithm) throws(AudioQueueError) {
        var refused: [AudioQueueBuffer] = []
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            let replay = try checkStoppedForTimePitch("TimePitchAlgorithm")
            let changed = timePitch.algorithm != algorithm
            timePitch.reset()
            timePitch.algorithm = algorithm
            if replay && changed && timePitch.enabled { refused = try replayPrestart() }
        }
        handBackRefused(refused)
        notify(.timePitchAlgorithm)
    }

    /// Bypasses the time/pitch unit or not (`kAudioQueueProperty_TimePitchBypass`), at any
    /// time: from the next buffer enqueued, audio plays unchanged at rate 1 (bypassed) or
    /// through the unit. The change ends the stream: what SoundTouch holds is scheduled first,
    /// right after the audio before it. Before the start, buffers already enqueued are
    /// processed again with the change (``PrestartLog``). Listeners of `.timePitchBypass` run
    /// on this thread afterwards. Any thread but the render thread; blocks only while enqueued
    /// audio is processed again.
    /// - Throws: `.invalidQueue`, `.disposalPending`.
    public func setTimePitchBypassed(_ bypassed: Bool) throws(AudioQueueError) {
        var refused: [AudioQueueBuffer] = []
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            let changed = timePitch.bypassed != bypassed
            timePitch.bypassed = bypassed
            if changed && timePitch.enabled && canReplayPrestart { refused = try replayPrestart() }
        }
        handBackRefused(refused)
        notify(.timePitchBypass)
    }

    /// Buffers a replay could not enqueue again go back through the callback, as after a
    /// reset. No lock held.
    func handBackRefused(_ refused: [AudioQueueBuffer]) {
        guard !refused.isEmpty else { return }
        callbackLock.lock()
        defer { callbackLock.unlock() }
        handBack(refused)
    }

    /// Throws `.invalidParameter` unless `value` is within `id`'s range: PlayRate 0.5…2, Pitch
    /// −2400…2400 cents (NaN and infinities refused). Any thread.
    func checkTimePitchValue(_ id: AudioQueueParameterID, _ value: Float) throws(AudioQueueError) {
        if id == .playRate {
            guard value.isFinite, value >= 0.5, value <= 2 else {
                throw AudioQueueError(.invalidParameter, "play rate \(value) is outside 0.5…2 (kAudioQueueParam_PlayRate)")
            }
        } else {
            guard value.isFinite, value >= -2400, value <= 2400 else {
                throw AudioQueueError(.invalidParameter, "pitch \(value) cents is outside −2400…2400 (kAudioQueueParam_Pitch)")
            }
        }
    }

    /// Throws `.invalidRunState` while the queue is started, or holds enqueued buffers that
    /// cannot be processed again (``canReplayPrestart``). Returns whether buffers are enqueued
    /// (to be processed again). Lock held.
    private func checkStoppedForTimePitch(_ what: String) throws(AudioQueueError) -> Bool {
        if startRequested || isRunningValue {
            throw AudioQueueError(.invalidRunState, "\(what) may only be set while the queue is stopped")
        }
        guard enqueuedCount > 0 else { return false }
        guard canReplayPrestart else {
            throw AudioQueueError(.invalidRunState, processingTap != nil
                ? "\(what) may only be set with no buffer enqueued on a queue with a processing tap (before the first enqueue, or after a stop or reset)"
                : "\(what) may only be set with no buffer enqueued after AudioQueueFlush or a stop after the enqueued buffers (before the first enqueue, or after a stop or reset)")
        }
        return true
    }
}
