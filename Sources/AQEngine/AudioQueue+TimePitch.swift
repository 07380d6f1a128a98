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
    /// Apple's systems it may only be set while the queue is stopped; here also with no buffer
    /// enqueued (set it before the first enqueue, or after a stop or a reset: buffers already
    /// allocated are fine, their render storage grows at enqueue when stretched audio needs
    /// it). Listeners of `.enableTimePitch` run on this thread afterwards. Any thread but the
    /// render thread; does not block.
    /// - Throws: `.invalidRunState` while started (running, paused, or starting) or with
    ///   buffers enqueued; `.invalidQueue`, `.disposalPending`.
    public func setTimePitchEnabled(_ on: Bool) throws(AudioQueueError) {
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            try checkStoppedAndEmpty("EnableTimePitch")
            if on { ensureTimePitchTails() }
            timePitch.reset()
            timePitch.enabled = on
            // No buffer is enqueued: the map's pieces for play rates are of audio gone.
            queueTime.map.reset(slope: ratio)
        }
        notify(.enableTimePitch)
    }

    /// Chooses the algorithm (`kAudioQueueProperty_TimePitchAlgorithm`); the SoundTouch settings
    /// of each: ``AudioQueueTimePitchAlgorithm``. May be set whether or not time/pitch is
    /// enabled (it is kept for when it is), while the queue is stopped with no buffer enqueued.
    /// Listeners of `.timePitchAlgorithm` run on this thread afterwards. Any thread but the
    /// render thread; does not block.
    /// - Throws: `.invalidRunState` while started or with buffers enqueued; `.invalidQueue`,
    ///   `.disposalPending`.
    public func setTimePitchAlgorithm(_ algorithm: AudioQueueTimePitchAlgorithm) throws(AudioQueueError) {
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            try checkStoppedAndEmpty("TimePitchAlgorithm")
            timePitch.reset()
            timePitch.algorithm = algorithm
        }
        notify(.timePitchAlgorithm)
    }

    /// Bypasses the time/pitch unit or not (`kAudioQueueProperty_TimePitchBypass`), at any
    /// time: from the next buffer enqueued, audio plays unchanged at rate 1 (bypassed) or
    /// through the unit. The change ends the stream: what SoundTouch holds is scheduled first,
    /// right after the audio before it. Listeners of `.timePitchBypass` run on this thread
    /// afterwards. Any thread but the render thread; does not block.
    /// - Throws: `.invalidQueue`, `.disposalPending`.
    public func setTimePitchBypassed(_ bypassed: Bool) throws(AudioQueueError) {
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            timePitch.bypassed = bypassed
        }
        notify(.timePitchBypass)
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

    /// Throws `.invalidRunState` while the queue is started or holds enqueued buffers. Lock held.
    private func checkStoppedAndEmpty(_ what: String) throws(AudioQueueError) {
        if startRequested || isRunningValue {
            throw AudioQueueError(.invalidRunState, "\(what) may only be set while the queue is stopped")
        }
        if enqueuedCount > 0 {
            throw AudioQueueError(.invalidRunState, "\(what) may only be set with no buffer enqueued (before the first enqueue, or after a stop or reset)")
        }
    }
}
