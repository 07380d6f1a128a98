// Any playback queue can switch to offline rendering (issue 22): AudioQueueSetOfflineRenderFormat
// moves the queue off the process's live (JACK) engine onto a private engine of its own, on a
// hand-driven ManualDevice that AudioQueueOfflineRender drives on the caller's thread; NULL
// moves it back. The engine renders one device's timeline for all its queues, so a queue
// cannot leave the live timeline inside one engine: it is made again on the other engine, and
// the C handle is rebound to it, with its buffers, callback, listeners, properties and
// parameters carried over. docs/c-api.md ("Offline rendering") says what the program sees.
import AQCore
import AQEngine
import CAudioToolbox
import Foundation

/// Makes a private engine on a hand-driven device at `sampleRate` with at least two and at
/// least `channels` outputs and no inputs, for one queue. Any control thread; starts the
/// engine's events thread.
func makeOfflineEngine(sampleRate: Double, channels: Int) throws(AudioQueueError) -> AudioQueueEngine {
    guard channels <= 32 else { throw AudioQueueError(.unsupportedDataFormat, "\(channels) channels: offline rendering takes at most 32") }
    let device = ManualDevice(sampleRate: sampleRate, channels: max(2, channels), inputChannels: 0, framesPerCycle: 1024, uid: "offline")
    return try AudioQueueEngine(device: device, capacities: RenderCapacities(
        queues: 2, buffersPerQueue: 1025, outputChannels: max(2, channels), inputChannels: 0, captureFrames: 0))
}

/// Writes `message` to standard error under `AQSYNC_DEBUG`. Any thread.
func debugNote(_ message: String) {
    if ProcessInfo.processInfo.environment["AQSYNC_DEBUG"] != nil {
        FileHandle.standardError.write(Data("AudioToolbox: \(message)\n".utf8))
    }
}

/// `AudioQueueStart` on a queue that is on its private engine without an offline render format
/// (no live device could be made for it): `.invalidDevice`, since nothing would drive it.
func refuseLiveStartWithoutDevice(_ q: CQueue, _ queue: AQEngine.AudioQueue) throws(AudioQueueError) {
    let onPrivate = q.lock.withLock { q.privateEngine != nil }
    if onPrivate && queue.offlineRenderFormat == nil {
        throw AudioQueueError(.invalidDevice, "no live device (no JACK server reachable): this queue renders only offline (AudioQueueSetOfflineRenderFormat)")
    }
}

/// `AudioQueueSetOfflineRenderFormat` (docs/c-api.md, "Offline rendering"):
/// - a format on a queue of the live engine: the queue moves to a private engine at the
///   format's rate and is stopped there (see ``move(_:to:)``), with the format set;
/// - a format on a queue already on a hand-driven engine whose rate and outputs fit: set;
///   one that does not fit: the queue moves to a new private engine;
/// - NULL on a queue on its private engine: it moves back to the process's live engine
///   (stopped); when no live device can be made it stays, stopped, with offline mode off;
/// - NULL on any other queue (the process's engine, `AQSYNC_DEVICE=offline` or live): offline
///   mode off; nothing else changes.
/// Refused with `.invalidRunState` from the queue's own callback or listener, or while an
/// `AudioQueueOfflineRender` of the queue runs; a format offline rendering cannot write is
/// `.unsupportedDataFormat` and leaves the queue where it was. Any control thread but the
/// queue's callbacks; blocks while the queue moves (an immediate stop: see ``move(_:to:)``).
func switchOfflineRendering(_ q: CQueue, _ format: SFormat?, layout: AQTypes.AudioChannelLayout?) throws(AudioQueueError) {
    let queue = try q.queue
    if q.onCallbackThread {
        throw AudioQueueError(.invalidRunState, "AudioQueueSetOfflineRenderFormat from the queue's own callback or listener")
    }
    if q.lock.withLock({ q.offlineRenders > 0 }) {
        throw AudioQueueError(.invalidRunState, "AudioQueueSetOfflineRenderFormat while AudioQueueOfflineRender of the queue runs")
    }
    let engine = q.engine
    let privateEngine = q.lock.withLock { q.privateEngine }
    guard let format else {
        guard let privateEngine else { return try queue.setOfflineRenderFormat(nil) }
        let live: AudioQueueEngine
        do throws(AudioQueueError) {
            live = try ProcessEngine.shared.get(channels: Int(queue.format.channelsPerFrame))
        } catch {
            // No live device: the queue stays on its private engine, stopped, offline mode off.
            debugNote("no live device to return to (\(error.message)): the queue stays offline-only")
            try queue.stop(immediately: true)
            return try queue.setOfflineRenderFormat(nil)
        }
        try move(q, to: live, format: nil, layout: nil)
        q.lock.withLock { q.privateEngine = nil }
        privateEngine.close()
        return
    }
    let device = engine.device
    if !device.isRealtime && device.sampleRate == format.sampleRate
        && Int(format.channelsPerFrame) <= device.outputChannelCount {
        return try queue.setOfflineRenderFormat(format, layout: layout)
    }
    let target = try makeOfflineEngine(
        sampleRate: format.sampleRate, channels: max(Int(format.channelsPerFrame), Int(queue.format.channelsPerFrame)))
    do throws(AudioQueueError) {
        try move(q, to: target, format: format, layout: layout)
    } catch {
        target.close()
        throw error
    }
    q.lock.withLock { q.privateEngine = target }
    privateEngine?.close()
}

/// Makes the playback queue `q` again on `target` and rebinds its handle there:
/// 1. a new queue in the same format with the same callback; the offline render `format`
///    (nil: none) is set first, so a format it refuses leaves `q` untouched;
/// 2. `q`'s queue is stopped immediately (as `AudioQueueStop(q, true)`: its enqueued buffers
///    come back through the callback before this returns) — the queue arrives stopped, at
///    queue time 0;
/// 3. properties (magic cookie, channel layout, channel assignments, decode buffer size, metering, time/pitch) and
///    parameters (volume, rate, pitch, ramp time, pan) are copied;
/// 4. every C buffer gets an engine buffer of the new queue of the same capacity and room for
///    descriptions, which takes over the old one's storage (``AQEngine/AudioQueueBuffer/exchangeStorage(with:)``):
///    the C buffer is untouched (`mAudioData`, `mPacketDescriptions`, sizes, `mUserData`);
/// 5. the listeners are added to the new queue; the old queue is disposed of at once.
/// Control thread, not a callback of `q`; blocks for the immediate stop.
func move(_ q: CQueue, to target: AudioQueueEngine, format: SFormat?, layout: AQTypes.AudioChannelLayout?) throws(AudioQueueError) {
    let old = try q.queue
    guard let callback = q.outputCallback else { throw AudioQueueError(.invalidQueue, "the queue has no callback to carry over") }
    let made = try target.newOutput(format: old.format, callback: callback)
    do throws(AudioQueueError) {
        if let format { try made.setOfflineRenderFormat(format, layout: layout) }
        try old.stop(immediately: true)
        if q.lock.withLock({ q.buffers.values.contains { $0.isEnqueued } }) { try old.reset() }
        try carryState(from: old, to: made)
        try carryBuffers(q, to: made)
    } catch {
        try? made.dispose(immediately: true)
        throw error
    }
    // Listeners: the same C procs, now heard from the new queue.
    let box = WeakBox()
    box.value = q
    q.lock.withLock {
        for i in q.listeners.indices {
            let l = q.listeners[i]
            guard let id = AQEngine.AudioQueuePropertyID(rawValue: l.id) else { continue }
            q.listeners[i].token = made.addPropertyListener(id, outputListener(box, l.id, l.proc, UInt(bitPattern: l.userData)))
        }
    }
    q.rebind(.output(made), on: target)
    try? old.dispose(immediately: true)
}

/// Copies the properties and parameters a program can set from `old` to `made` (a stopped
/// queue in the same format). Values the new queue refuses are left at its defaults.
private func carryState(from old: AQEngine.AudioQueue, to made: AQEngine.AudioQueue) throws(AudioQueueError) {
    let properties: [AQEngine.AudioQueuePropertyID] = [
        .magicCookie, .channelLayout, .decodeBufferSizeFrames, .enableLevelMetering,
        .enableTimePitch, .timePitchAlgorithm, .timePitchBypass,
    ]
    for id in properties {
        guard let bytes = try? old.property(id.rawValue) else { continue }
        if id == .magicCookie && bytes.isEmpty { continue }
        try? made.setProperty(id.rawValue, bytes)
    }
    // Channel assignments (or setOutputChannels) made after the layout: the same device
    // channels on the new device when it has them, else the new queue's default.
    if let outputs = old.assignedOutputChannels {
        try? made.setOutputChannels(outputs)
    }
    let parameters: [AQEngine.AudioQueueParameterID] = [.volume, .playRate, .pitch, .volumeRampTime, .pan]
    for id in parameters { try? made.setParameter(id, old.parameter(id)) }
}

/// Gives every C buffer of `q` an engine buffer of `made` holding the same storage (see
/// ``move(_:to:format:layout:)``, step 4). The buffers are not enqueued.
private func carryBuffers(_ q: CQueue, to made: AQEngine.AudioQueue) throws(AudioQueueError) {
    let buffers = q.lock.withLock { q.buffers }
    var moved: [UnsafeMutablePointer<CBuffer>: SBuffer] = [:]
    for (p, b) in buffers {
        moved[p] = try made.allocateBuffer(capacity: b.audioDataBytesCapacity, packetDescriptions: b.packetDescriptionCapacity)
    }
    // Nothing can fail from here: the C buffers keep their addresses, bytes and descriptions.
    for (p, nb) in moved {
        guard let b = buffers[p] else { continue }
        try nb.exchangeStorage(with: b)
        nb.userData = CBufferBox(p)
        b.userData = nil
    }
    q.lock.withLock { q.buffers = moved }
}
