// Processing taps (issue 22): AudioQueueProcessingTapNew, …Dispose, …GetSourceAudio and
// …GetQueueTime on the engine's AudioQueueProcessingTap. Contracts in AudioToolbox/AudioQueue.h;
// where the tap runs and what differs from Apple's systems in docs/c-api.md, "Processing taps".
import AQEngine
import CAudioToolbox
import Foundation

/// The C flags (`UInt32`, Apple's typedef).
public typealias CTapFlags = CAudioToolbox.AudioQueueProcessingTapFlags

/// What an `AudioQueueProcessingTapRef` points to: the engine's tap, the C callback and its
/// client data, and the `AudioBufferList` (one buffer per channel) handed to the callback.
/// Thread safety: set once, then used by the callback's thread only (the queue's lock held).
final class CTap: @unchecked Sendable {
    let cq: CQueue
    let queue: AQEngine.AudioQueue
    let callback: AudioQueueProcessingTapCallback
    let clientData: UnsafeMutableRawPointer?
    let channels: Int
    let list: UnsafeMutablePointer<AudioBufferList>
    var tap: AudioQueueProcessingTap?

    init(cq: CQueue, queue: AQEngine.AudioQueue, callback: @escaping AudioQueueProcessingTapCallback, clientData: UnsafeMutableRawPointer?) {
        self.cq = cq
        self.queue = queue
        self.callback = callback
        self.clientData = clientData
        channels = Int(queue.format.channelsPerFrame)
        let bytes = bufferListBytes(channels)
        list = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16).bindMemory(to: AudioBufferList.self, capacity: 1)
        UnsafeMutableRawPointer(list).initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
    }

    deinit { list.deallocate() }

    var ref: AudioQueueProcessingTapRef { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }

    /// The engine's call of the tap: fills the buffer list (the siphon's audio, or NULL
    /// pointers), calls the C callback, and reads its output back.
    func call(
        _ frames: Int, _ ts: inout STimeStamp, _ flags: inout AQEngine.AudioQueueProcessingTapFlags,
        _ data: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>?>
    ) -> Int {
        list.pointee.mNumberBuffers = UInt32(channels)
        let bufs = buffers(of: list)
        for c in 0..<channels {
            bufs[c] = AudioBuffer(mNumberChannels: 1, mDataByteSize: data[c] == nil ? 0 : UInt32(frames * 4), mData: data[c].map { UnsafeMutableRawPointer($0) })
        }
        var cts = ts.c
        var cflags: CTapFlags = flags.rawValue
        var made: UInt32 = 0
        callback(clientData, ref, UInt32(frames), &cts, &cflags, &made, list)
        flags = AQEngine.AudioQueueProcessingTapFlags(rawValue: cflags)
        // Never read past what the callback says its buffers hold.
        var frames = min(Int(made), frames)
        for c in 0..<channels {
            guard c < Int(list.pointee.mNumberBuffers), let p = bufs[c].mData else {
                data[c] = nil
                continue
            }
            data[c] = p.assumingMemoryBound(to: Float.self)
            frames = min(frames, Int(bufs[c].mDataByteSize) / 4)
        }
        return frames
    }
}

/// Bytes of an `AudioBufferList` with `n` buffers.
func bufferListBytes(_ n: Int) -> Int {
    bufferListOffset + max(n, 1) * MemoryLayout<AudioBuffer>.stride
}

/// Where `mBuffers` starts in an `AudioBufferList`.
let bufferListOffset = MemoryLayout<AudioBufferList>.offset(of: \AudioBufferList.mBuffers) ?? 8

/// The list's buffers (`mBuffers[0]`, `mBuffers[1]`, …).
func buffers(of list: UnsafeMutablePointer<AudioBufferList>) -> UnsafeMutablePointer<AudioBuffer> {
    (UnsafeMutableRawPointer(list) + bufferListOffset).assumingMemoryBound(to: AudioBuffer.self)
}

/// Live tap handles: a handle not in it (never made, or disposed of) is kAudio_ParamError.
enum TapHandles {
    static let lock = NSLock()
    nonisolated(unsafe) static var live: [UnsafeMutableRawPointer: CTap] = [:]

    static func tap(_ ref: AudioQueueProcessingTapRef?) -> CTap? {
        guard let ref else { return nil }
        return lock.withLock { live[UnsafeMutableRawPointer(ref)] }
    }
    static func add(_ t: CTap) { lock.withLock { live[UnsafeMutableRawPointer(t.ref)] = t } }
    static func remove(_ t: CTap) { _ = lock.withLock { live.removeValue(forKey: UnsafeMutableRawPointer(t.ref)) } }
    /// Forgets the taps of a disposed queue (disposed with it).
    static func removeAll(of cq: CQueue) { lock.withLock { live = live.filter { $0.value.cq !== cq } } }
}

/// `AudioQueueProcessingTapNew`, exported to C: a playback queue's tap. Any thread but the
/// render thread (not from a tap's callback); does not block. NULL arguments and bad flags are
/// `kAudio_ParamError`; a recording queue `kAudioQueueErr_InvalidQueueType`.
@c public func AudioQueueProcessingTapNew(
    _ inAQ: AudioQueueRef?, _ inCallback: AudioQueueProcessingTapCallback?, _ inClientData: UnsafeMutableRawPointer?,
    _ inFlags: CTapFlags, _ outMaxFrames: UnsafeMutablePointer<UInt32>?, _ outProcessingFormat: UnsafeMutablePointer<CFormat>?,
    _ outAQTap: UnsafeMutablePointer<AudioQueueProcessingTapRef?>?
) -> OSStatus {
    guard let inCallback, let outMaxFrames, let outProcessingFormat, let outAQTap else { return paramError }
    let flags = AQEngine.AudioQueueProcessingTapFlags(rawValue: inFlags)
    let position = flags.intersection(AQEngine.AudioQueueProcessingTapFlags([.preEffects, .postEffects]))
    guard flags.subtracting(AQEngine.AudioQueueProcessingTapFlags.creationFlags).isEmpty, position == .preEffects || position == .postEffects else {
        return paramError
    }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        let queue = try q.queue
        let ct = CTap(cq: q, queue: queue, callback: inCallback, clientData: inClientData)
        let tap = try queue.newProcessingTap(flags: flags) { [unowned ct] _, frames, ts, fl, data in ct.call(frames, &ts, &fl, data) }
        ct.tap = tap
        TapHandles.add(ct)
        outMaxFrames.pointee = UInt32(tap.maxFrames)
        outProcessingFormat.pointee = tap.processingFormat.c
        outAQTap.pointee = ct.ref
    }
}

/// `AudioQueueProcessingTapDispose`, exported to C: only while the queue is stopped; the
/// callback is not called once it returns. Any thread but the render thread; not from the
/// tap's callback (`kAudioQueueErr_InvalidTapContext`). Does not block.
@c public func AudioQueueProcessingTapDispose(_ inAQTap: AudioQueueProcessingTapRef?) -> OSStatus {
    guard let ct = TapHandles.tap(inAQTap), let tap = ct.tap else { return paramError }
    return status { () throws(AudioQueueError) in
        if tap.isCallingBack { throw AudioQueueError(.invalidTapContext, "a tap cannot be disposed of from its own callback") }
        try ct.queue.disposeProcessingTap(tap)
        TapHandles.remove(ct)
    }
}

/// `AudioQueueProcessingTapGetSourceAudio`, exported to C: only from the callback of a tap that
/// is not a siphon; does not block. `ioTimeStamp` is left as the caller gave it (the callback's
/// continuous time stamp, as Apple's header asks of output queues).
@c public func AudioQueueProcessingTapGetSourceAudio(
    _ inAQTap: AudioQueueProcessingTapRef?, _ inNumberFrames: UInt32, _ ioTimeStamp: UnsafeMutablePointer<CTimeStamp>?,
    _ outFlags: UnsafeMutablePointer<CTapFlags>?, _ outNumberFrames: UnsafeMutablePointer<UInt32>?,
    _ ioData: UnsafeMutablePointer<AudioBufferList>?
) -> OSStatus {
    guard let ct = TapHandles.tap(inAQTap), let tap = ct.tap else { return paramError }
    return status { () throws(AudioQueueError) in
        try tap.checkCallbackContext()
        guard let outNumberFrames, let ioData, Int(ioData.pointee.mNumberBuffers) == ct.channels else {
            throw AudioQueueError(.invalidQueue, "GetSourceAudio needs outNumberFrames and ioData with one buffer per channel (\(ct.channels))")
        }
        let bufs = buffers(of: ioData)
        let n = Int(inNumberFrames)
        for c in 0..<ct.channels where bufs[c].mData != nil && Int(bufs[c].mDataByteSize) < n * 4 {
            throw AudioQueueError(.invalidQueue, "ioData's buffer \(c) has \(bufs[c].mDataByteSize) bytes, \(n) frames need \(n * 4)")
        }
        let ptrs = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: ct.channels)
        defer { ptrs.deallocate() }
        for c in 0..<ct.channels { ptrs[c] = bufs[c].mData?.assumingMemoryBound(to: Float.self) }
        let got = try tap.getSourceAudio(frames: n, into: UnsafeMutableBufferPointer(start: ptrs, count: ct.channels))
        for c in 0..<ct.channels {
            bufs[c].mNumberChannels = 1
            bufs[c].mData = ptrs[c].map { UnsafeMutableRawPointer($0) }
            bufs[c].mDataByteSize = UInt32(got.frames * 4)
        }
        outNumberFrames.pointee = UInt32(got.frames)
        outFlags?.pointee = got.flags.rawValue
    }
}

/// `AudioQueueProcessingTapGetQueueTime`, exported to C: only from the tap's callback; does not
/// block. The queue time of the chunk being processed (where it will play) and the queue
/// frames it stands for.
@c public func AudioQueueProcessingTapGetQueueTime(
    _ inAQTap: AudioQueueProcessingTapRef?, _ outQueueSampleTime: UnsafeMutablePointer<Float64>?,
    _ outQueueFrameCount: UnsafeMutablePointer<UInt32>?
) -> OSStatus {
    guard let ct = TapHandles.tap(inAQTap), let tap = ct.tap else { return paramError }
    return status { () throws(AudioQueueError) in
        let t = try tap.queueTime()
        guard let outQueueSampleTime, let outQueueFrameCount else {
            throw AudioQueueError(.invalidQueue, "GetQueueTime needs both out pointers")
        }
        outQueueSampleTime.pointee = t.sampleTime
        outQueueFrameCount.pointee = UInt32(clamping: t.frameCount)
    }
}
