import AQTypes

/// Buffers enqueued before a queue starts, processed again when a time/pitch setting changes
/// before the start (issue 23: Apple's aqplay enqueues its first buffers, then sets
/// `kAudioQueueProperty_EnableTimePitch` and `kAudioQueueParam_PlayRate`, then starts; on
/// Apple's systems the whole file plays at the rate). Audio is processed when it is enqueued
/// here (docs/c-api.md, "Time and pitch"), so what was enqueued before such a change was
/// processed with the settings of before; nothing of it has played, so the queue takes it back
/// from the renderer (no callback: the buffers stay enqueued as far as the caller can tell)
/// and runs it through the pipeline again, in the order and with the arguments it was given.
struct PrestartLog {
    /// One enqueue, as the caller made it.
    struct Record {
        var buffer: AudioQueueBuffer
        var trimFramesAtStart: Int
        var trimFramesAtEnd: Int
        var parameterEvents: [AudioQueueParameterEvent]
        var startTime: AudioTimeStamp?
    }

    /// The enqueues since the queue last stopped or was reset, while it was not started.
    var records: [Record] = []
    /// False once something not kept here shaped the stream (`AudioQueueFlush`, a stop after
    /// the enqueued buffers): a replay would not reproduce it.
    var replayable = true

    /// Forgets everything (a start, a stop, a reset: the stream starts again).
    mutating func clear() {
        records.removeAll()
        replayable = true
    }
}

extension AudioQueue {
    /// Whether every buffer enqueued is in the log of a queue that has not started, so that a
    /// time/pitch change can process them again (no processing tap: it saw them once). Lock
    /// held.
    var canReplayPrestart: Bool {
        !startRequested && !isRunningValue && prestart.replayable && processingTap == nil
            && enqueuedCount > 0 && prestart.records.count == ledger.tokensInFlight.count
            && zip(prestart.records, ledger.tokensInFlight).allSatisfy { $0.buffer.token == $1 }
    }

    /// Notes an enqueue that succeeded. Lock held.
    func logPrestart(_ record: PrestartLog.Record) {
        guard !startRequested && !isRunningValue else { return }
        prestart.records.append(record)
    }

    /// Takes every enqueued buffer back from the renderer without a callback and enqueues it
    /// again through the pipeline as it is set now (``PrestartLog``). Returns the buffers
    /// that could not be enqueued again (none unless the engine refused: they go back to the
    /// caller through the callback, as after a reset). Lock held; only when
    /// ``canReplayPrestart``.
    func replayPrestart() throws(AudioQueueError) -> [AudioQueueBuffer] {
        let records = prestart.records
        try hub.sendNow([.reset(slot: slot)])
        _ = takeBackAll()
        resetTimeline()
        var refused: [AudioQueueBuffer] = []
        for r in records {
            do {
                _ = try enqueueLocked(
                    r.buffer, trimFramesAtStart: r.trimFramesAtStart, trimFramesAtEnd: r.trimFramesAtEnd,
                    parameterEvents: r.parameterEvents, startTime: r.startTime)
                prestart.records.append(r)
            } catch {
                refused.append(r.buffer)
            }
        }
        return refused
    }
}
