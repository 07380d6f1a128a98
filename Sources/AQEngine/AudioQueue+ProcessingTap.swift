import AQCore

/// A playback queue's processing tap (`AudioQueueProcessingTapNew`, `…Dispose`) and its two
/// places in the enqueue pipeline: before time/pitch (``tapBeforeEffects(_:frames:at:)``) and
/// after it (``tapAfterEffects(_:at:queueFrames:)``), both at the queue's rate, before the rate
/// converter, on the enqueuing thread under the queue's lock (docs/c-api.md, "Processing taps").
extension AudioQueue {
    /// Makes the queue's processing tap (`AudioQueueProcessingTapNew`). As on Apple's systems
    /// only while the queue is stopped (paused is not enough); it processes buffers enqueued
    /// from then on. Any thread but the render thread; does not block.
    /// - Parameters:
    ///   - flags: `.preEffects` or `.postEffects` (exactly one), maybe `.siphon`.
    ///   - callback: see ``AudioQueueProcessingTap/Callback``; it runs on the enqueuing thread
    ///     with the queue's lock held, so it must not call the queue (GetSourceAudio and
    ///     GetQueueTime excepted).
    /// - Throws: `.invalidParameter` for flags that are not one position (maybe with siphon);
    ///   `.tooManyTaps` when the queue has one; `.invalidRunState` while started (running,
    ///   paused or starting); `.invalidQueue`, `.disposalPending`.
    public func newProcessingTap(
        flags: AudioQueueProcessingTapFlags, callback: @escaping AudioQueueProcessingTap.Callback
    ) throws(AudioQueueError) -> AudioQueueProcessingTap {
        let position = flags.intersection([.preEffects, .postEffects])
        guard flags.subtracting(AudioQueueProcessingTapFlags.creationFlags).isEmpty, position == .preEffects || position == .postEffects else {
            throw AudioQueueError(.invalidParameter, "a tap's flags are PreEffects or PostEffects (not both), maybe with Siphon: 0x\(String(flags.rawValue, radix: 16))")
        }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        try checkStoppedForTap()
        if processingTap != nil { throw AudioQueueError(.tooManyTaps, "the queue has a processing tap already (one per queue)") }
        let tap = AudioQueueProcessingTap(channels: channels, sampleRate: format.sampleRate, flags: flags, callback: callback)
        tap.queue = self
        processingTap = tap
        return tap
    }

    /// Removes `tap` (`AudioQueueProcessingTapDispose`): once this returns its callback is not
    /// called again. Only while the queue is stopped. Any thread but the render thread (not the
    /// tap's callback); does not block.
    /// - Throws: `.invalidParameter` for a tap that is not this queue's (or disposed of);
    ///   `.invalidRunState` while started; `.invalidTapContext` from its own callback;
    ///   `.invalidQueue`.
    public func disposeProcessingTap(_ tap: AudioQueueProcessingTap) throws(AudioQueueError) {
        if tap.isCallingBack { throw AudioQueueError(.invalidTapContext, "a tap cannot be disposed of from its own callback") }
        lock.lock()
        defer { lock.unlock() }
        if disposed { throw AudioQueueError(.invalidQueue, "the queue was disposed of (its tap with it)") }
        guard processingTap === tap else { throw AudioQueueError(.invalidParameter, "the tap is not this queue's") }
        try checkStoppedForTap()
        processingTap = nil
        tap.queue = nil
    }

    /// Throws `.invalidRunState` while the queue is started. Lock held.
    private func checkStoppedForTap() throws(AudioQueueError) {
        if startRequested || isRunningValue {
            throw AudioQueueError(.invalidRunState, "a processing tap is made or removed only while the queue is stopped (paused is not enough)")
        }
    }

    /// The tap before effects: a PreEffects tap, or a PostEffects tap when time/pitch does not
    /// process the audio (no effect runs then, so both places are one). In place on `planes`,
    /// `frames` frames from queue frame `q`. Lock held.
    func tapBeforeEffects(_ planes: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int, at q: Int64) {
        guard let tap = processingTap, !(tap.flags.contains(.postEffects) && timePitch.routed) else { return }
        tap.process(planes, frames: frames, at: q, queueFrames: frames, epoch: queueTime.epoch)
    }

    /// The same over an array of planes (`frames` from the first of `ptrs`). Lock held.
    func tapBeforeEffects(_ bases: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int, frames: Int, at q: Int64) {
        guard processingTap != nil, frames > 0 else { return }
        let ptrs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
        defer { ptrs.deallocate() }
        for c in 0..<channels { ptrs[c] = bases[c] + offset }
        tapBeforeEffects(ptrs, frames: frames, at: q)
    }

    /// The tap after effects: a PostEffects tap over `planes`, time/pitch's output (callers
    /// call it only for audio time/pitch processed), which stand for `queueFrames` queue frames
    /// from `q`. Lock held.
    func tapAfterEffects(_ planes: inout [[Float]], at q: Int64, queueFrames: Int) {
        guard let tap = processingTap, tap.flags.contains(.postEffects) else { return }
        let n = planes.first?.count ?? 0
        let ptrs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
        defer { ptrs.deallocate() }
        guard n > 0 else { return tap.process(ptrs, frames: 0, at: q, queueFrames: queueFrames, epoch: queueTime.epoch) }
        // One contiguous copy (the callback may keep no pointer past its return), back after.
        var flat = [Float](repeating: 0, count: n * planes.count)
        flat.withUnsafeMutableBufferPointer { f in
            for c in 0..<planes.count {
                ptrs[c] = f.baseAddress! + c * n
                planes[c].withUnsafeBufferPointer { ptrs[c].update(from: $0.baseAddress!, count: n) }
            }
            tap.process(ptrs, frames: n, at: q, queueFrames: queueFrames, epoch: queueTime.epoch)
            for c in 0..<planes.count { planes[c] = Array(UnsafeBufferPointer(start: ptrs[c], count: n)) }
        }
    }
}
