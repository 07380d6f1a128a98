import AQConvert
import AQCore
import CFloatMode
import AQTypes
import Foundation

/// Offline rendering (`AudioQueueSetOfflineRenderFormat`, `AudioQueueOfflineRender`): audio
/// rendered into memory you supply instead of played, on an engine driven by a
/// ``ManualDevice`` (the calling thread is the render thread while it renders). Output
/// callbacks for the buffers that finished are delivered before the call returns, so a loop
/// of "render, refill in the callback" runs on one thread.
///
/// Formats: interleaved, packed linear PCM at the device's rate: 32-bit float, or 16- or
/// 32-bit signed integer (little-endian), with up to the device's channel count (the first
/// outputs). Integer samples are clipped to full scale.
extension AudioQueueEngine {
    /// Renders the engine's mix of `frames` frames from device frame `time.sampleTime` (nil:
    /// the device's next frame) into `data` (room for `capacity` bytes) in `format`.
    /// Frames between the device's next frame and `time` are rendered and dropped.
    /// Any control thread; blocks while it renders and delivers the callbacks.
    /// - Returns: the bytes written (`frames × format.bytesPerFrame`).
    /// - Throws: `.invalidDevice` unless the device is a ``ManualDevice``;
    ///   `.unsupportedDataFormat` for a format it cannot write; `.invalidParameter` for a time
    ///   already rendered or a negative frame count; `.invalidPropertySize` when `capacity` is
    ///   too small.
    @discardableResult
    public func offlineRender(
        at time: AudioTimeStamp? = nil, frames: Int, format: AudioStreamBasicDescription,
        into data: UnsafeMutableRawPointer, capacity: Int
    ) throws(AudioQueueError) -> Int {
        try shared.offlineRender(
            fromDeviceFrame: time.map { Int64($0.sampleTime.rounded()) }, frames: frames, solo: nil, format: format,
            into: data, capacity: capacity)
    }
}

extension AudioQueue {
    /// Sets the format ``offlineRender(at:into:frames:)`` writes (`AudioQueueSetOfflineRenderFormat`),
    /// and the channel layout of what it writes (kept for the caller; the first outputs are
    /// written); nil turns offline rendering off. Any thread but the render thread.
    /// - Throws: `.invalidDevice` unless the engine's device is a ``ManualDevice``,
    ///   `.unsupportedDataFormat` for a format ``AudioQueueEngine/offlineRender(at:frames:format:into:capacity:)``
    ///   cannot write, `.invalidQueue`.
    public func setOfflineRenderFormat(_ format: AudioStreamBasicDescription?, layout: AudioChannelLayout? = nil) throws(AudioQueueError) {
        if let format { try hub.checkOfflineFormat(format) }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        offlineFormat = format
        offlineLayout = layout
    }

    /// The offline render format (nil: offline rendering is off). Any thread.
    public var offlineRenderFormat: AudioStreamBasicDescription? { locked { offlineFormat } }

    /// Renders this queue alone (`AudioQueueOfflineRender`): `frames` frames starting at queue
    /// time `time.sampleTime` (the queue's frame 0 is where it started; a queue not started
    /// yet is started now, at the device's next frame) into `buffer` in the offline render
    /// format, setting its `audioDataByteSize`. Other queues of the engine are not mixed in
    /// and their audio in those frames passes unheard. Callbacks of buffers that finished run
    /// before it returns. Any control thread; blocks while it renders.
    /// - Throws: `.invalidOfflineMode` without an offline render format, `.invalidParameter` for
    ///   a time already rendered, `.invalidPropertySize` when the buffer is too small, and what
    ///   the engine's offline render throws.
    public func offlineRender(at time: AudioTimeStamp, into buffer: AudioQueueBuffer, frames: Int) throws(AudioQueueError) {
        try offlineRender(at: time, into: buffer, frames: frames, betweenCycles: nil)
    }

    /// ``offlineRender(at:into:frames:)``, running `betweenCycles` on the calling thread after
    /// each render cycle's callbacks (the C API runs there the callbacks a queue on this
    /// thread's run loop was posted, so that a refill made in them is heard in the same call).
    package func offlineRender(
        at time: AudioTimeStamp, into buffer: AudioQueueBuffer, frames: Int, betweenCycles: (() -> Void)?
    ) throws(AudioQueueError) {
        lock.lock()
        let format = offlineFormat
        let started = startRequested
        lock.unlock()
        guard let format else { throw AudioQueueError(.invalidOfflineMode, "no offline render format (setOfflineRenderFormat)") }
        guard buffer.queue === self else { throw AudioQueueError(.invalidBuffer, "the buffer does not belong to this queue") }
        if !started { try start() }
        // The start reaches the renderer before the origin is read.
        try hub.sendNow([])
        let origin = hub.core.pointee.position(slot: Int(slot)).origin
        let written = try hub.offlineRender(
            fromDeviceFrame: origin + Int64(time.sampleTime.rounded()), frames: frames, solo: slot, format: format,
            into: buffer.audioData, capacity: buffer.audioDataBytesCapacity, betweenCycles: betweenCycles)
        buffer.audioDataByteSize = written
    }
}

extension EngineShared {
    /// Throws unless offline rendering can write `format` on this engine.
    func checkOfflineFormat(_ format: AudioStreamBasicDescription) throws(AudioQueueError) {
        guard !device.isRealtime else {
            throw AudioQueueError(.invalidDevice, "offline rendering needs an engine on a hand-driven device such as ManualDevice (\(device.uid) renders live)")
        }
        let bits = format.bitsPerChannel
        let isFloat = format.formatFlags.contains(.isFloat)
        guard format.isLinearPCM, format.sampleRate == device.sampleRate, !format.formatFlags.contains(.isNonInterleaved),
              !format.formatFlags.contains(.isBigEndian), format.channelsPerFrame >= 1,
              Int(format.channelsPerFrame) <= device.outputChannelCount,
              isFloat ? bits == 32 : (bits == 16 || bits == 32) && format.formatFlags.contains(.isSignedInteger),
              format.bytesPerFrame == bits / 8 * format.channelsPerFrame
        else {
            throw AudioQueueError(.unsupportedDataFormat, "offline rendering writes interleaved 32-bit float or 16/32-bit signed integer PCM at \(device.sampleRate) Hz with at most \(device.outputChannelCount) channels")
        }
    }

    /// Renders on the calling thread (the hand-driven device's render thread for the call).
    func offlineRender(
        fromDeviceFrame start: Int64?, frames: Int, solo: Int32?, format: AudioStreamBasicDescription,
        into data: UnsafeMutableRawPointer, capacity: Int, betweenCycles: (() -> Void)? = nil
    ) throws(AudioQueueError) -> Int {
        try checkOfflineFormat(format)
        guard let manual = device.handDriven else { throw AudioQueueError(.invalidDevice, "not a hand-driven device") }
        guard frames >= 0 else { throw AudioQueueError(.invalidParameter, "a negative frame count") }
        let bytes = frames * Int(format.bytesPerFrame)
        guard bytes <= capacity else {
            throw AudioQueueError(.invalidPropertySize, "\(frames) frames need \(bytes) bytes; the buffer holds \(capacity)")
        }
        if closed { throw AudioQueueError(.invalidDevice, "the engine is closed") }
        var next = manual.currentFrame
        let from = start ?? next
        guard from >= next else {
            throw AudioQueueError(.invalidParameter, "device frame \(from) was already rendered (the next is \(next))")
        }
        let outputs = device.outputChannelCount
        let cycle = 1024
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: outputs)
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: outputs * cycle)
        defer { planes.deallocate(); storage.deallocate() }
        for c in 0..<outputs { planes[c] = storage + c * cycle }
        core.pointee.setSolo(solo)
        defer { core.pointee.setSolo(nil) }
        // The renders flush denormals to zero on this thread; the caller gets its mode back.
        let floatMode = aq_float_mode()
        defer { aq_restore_float_mode(floatMode) }
        // The gap before `from`: rendered, not kept.
        while next < from {
            let n = Int(min(Int64(cycle), from - next))
            manual.render(frames: n, into: planes)
            next += Int64(n)
            deliverPendingEvents()
        }
        let channels = Int(format.channelsPerFrame)
        var done = 0
        while done < frames {
            var n = min(cycle, frames - done)
            if let solo {
                // One queue rendered alone: a cycle ends where the queue's buffers end, so the
                // callback of the last one runs there and its refill plays from the very next
                // frame. Apple's queue hands a buffer back once it has taken its data, so a
                // program that refills one buffer from its callback (aqrender) renders without
                // a gap; here a buffer comes back when its last frame has played, and without
                // the cut the rest of the cycle would be silence. A refill made in the callbacks
                // is applied first, so its end is known.
                try sendNow([])
                if let end = core.pointee.scheduledEndFrame(slot: Int(solo)), end > next, end - next < Int64(n) {
                    n = Int(end - next)
                }
            }
            guard manual.render(frames: n, into: planes) else { throw AudioQueueError(.invalidDevice, "the device is stopped") }
            let at = data + done * Int(format.bytesPerFrame)
            if format.formatFlags.contains(.isFloat) {
                for i in 0..<n {
                    for c in 0..<channels {
                        at.storeBytes(of: planes[c][i].bitPattern.littleEndian, toByteOffset: (i * channels + c) * 4, as: UInt32.self)
                    }
                }
            } else {
                // Integers by the project's one rule (``PCMInterleaver``).
                PCMInterleaver(bits: Int(format.bitsPerChannel)).interleave(
                    planar: UnsafePointer(planes), frames: n, channels: channels, into: at)
            }
            done += n
            next += Int64(n)
            // Callbacks of the buffers that finished, before the next cycle (so that a
            // callback's refill is heard in the same call).
            deliverPendingEvents()
            betweenCycles?()
        }
        deliverPendingEvents()
        return bytes
    }
}
