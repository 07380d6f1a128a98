// AudioQueueNewOutputWithDispatchQueue and AudioQueueNewInputWithDispatchQueue (issue 22): the
// queue's callbacks as blocks submitted to a dispatch queue. Everything else about the queue is
// AudioQueueNewOutput's and AudioQueueNewInput's (AudioQueueC.swift). Declared in
// AudioToolbox/AudioQueue.h for compilers that read blocks (clang -fblocks); docs/c-api.md.
import CAudioToolbox

/// `AudioQueueNewOutputWithDispatchQueue`, exported to C: a playback queue whose output block
/// runs on `inCallbackDispatchQueue`. The block and the queue are retained until the audio
/// queue is disposed of. Any thread; blocks as `AudioQueueNewOutput` does (the first queue opens
/// the process's JACK client). NULL arguments and non-zero flags are `kAudio_ParamError`.
@c public func AudioQueueNewOutputWithDispatchQueue(
    _ outAQ: UnsafeMutablePointer<AudioQueueRef?>?, _ inFormat: UnsafePointer<CFormat>?, _ inFlags: UInt32,
    _ inCallbackDispatchQueue: OpaquePointer?, _ inCallbackBlock: AudioQueueOutputCallbackBlock?
) -> OSStatus {
    guard let outAQ, let inFormat, let inCallbackDispatchQueue, let inCallbackBlock else { return paramError }
    guard inFlags == 0 else { return paramError }  // reserved, as AudioQueueNewOutput's
    let delivery = DispatchDelivery(queue: inCallbackDispatchQueue)
    let result = newOutputQueue(inFormat.pointee, userData: nil, runLoop: nil, dispatch: delivery, outAQ) { cq, cb in
        inCallbackBlock(cq.ref, cb)
    }
    if result != 0 { delivery.invalidate() }
    return result
}

/// `AudioQueueNewInputWithDispatchQueue`, exported to C: a recording queue whose input block
/// runs on `inCallbackDispatchQueue`, with the buffer, its start time, the packet count and the
/// packet descriptions (NULL for linear PCM), valid while the block runs. The block and the
/// queue are retained until the audio queue is disposed of. Any thread; blocks as
/// `AudioQueueNewInput` does. NULL arguments and non-zero flags are `kAudio_ParamError`.
@c public func AudioQueueNewInputWithDispatchQueue(
    _ outAQ: UnsafeMutablePointer<AudioQueueRef?>?, _ inFormat: UnsafePointer<CFormat>?, _ inFlags: UInt32,
    _ inCallbackDispatchQueue: OpaquePointer?, _ inCallbackBlock: AudioQueueInputCallbackBlock?
) -> OSStatus {
    guard let outAQ, let inFormat, let inCallbackDispatchQueue, let inCallbackBlock else { return paramError }
    guard inFlags == 0 else { return paramError }
    let delivery = DispatchDelivery(queue: inCallbackDispatchQueue)
    let result = newInputQueue(inFormat.pointee, userData: nil, runLoop: nil, dispatch: delivery, outAQ) { cq, cb, time, n, descriptions in
        inCallbackBlock(cq.ref, cb, time, n, descriptions)
    }
    if result != 0 { delivery.invalidate() }
    return result
}
