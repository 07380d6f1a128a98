/// A result code of Audio Queue Services, with the reference's numeric value, and what went
/// wrong in words.
///
/// Thread safety: a plain value; any thread.
public struct AudioQueueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reference's result codes, with their numeric values, plus aqsync's own (documented
    /// in docs/architecture.md) for conditions the reference has no code for.
    public enum Code: Int32, Sendable {
        /// `kAudioQueueErr_InvalidBuffer`: the buffer does not belong to this queue.
        case invalidBuffer = -66687
        /// `kAudioQueueErr_BufferEmpty`: the buffer holds no audio (or trims leave none).
        case bufferEmpty = -66686
        /// `kAudioQueueErr_DisposalPending`: the queue is being disposed of.
        case disposalPending = -66685
        /// `kAudioQueueErr_InvalidProperty`
        case invalidProperty = -66684
        /// `kAudioQueueErr_InvalidPropertySize`
        case invalidPropertySize = -66683
        /// `kAudioQueueErr_InvalidParameter`: an unknown parameter, or an enqueue parameter
        /// out of range (a start time before the end of the previous buffer).
        case invalidParameter = -66682
        /// `kAudioQueueErr_CannotStart`: the device cannot run (e.g. the JACK server went away).
        case cannotStart = -66681
        /// `kAudioQueueErr_InvalidDevice`: the device could not be reached.
        case invalidDevice = -66680
        /// `kAudioQueueErr_BufferInQueue`: a buffer cannot be freed while enqueued.
        case bufferInQueue = -66679
        /// `kAudioQueueErr_InvalidRunState`
        case invalidRunState = -66678
        /// `kAudioQueueErr_InvalidQueueType`
        case invalidQueueType = -66677
        /// `kAudioQueueErr_InvalidPropertyValue`: a property set to a value it cannot take
        /// (`kAudioQueueProperty_DecodeBufferSizeFrames` of 0 or over 2^20 frames).
        case invalidPropertyValue = -66675
        /// `kAudioQueueErr_TooManyTaps`: the queue has a processing tap already (one per queue).
        case tooManyTaps = -66670
        /// `kAudioQueueErr_InvalidTapContext`: `AudioQueueProcessingTapGetSourceAudio` or
        /// `…GetQueueTime` called outside the tap's callback (or GetSourceAudio by a siphon).
        case invalidTapContext = -66669
        /// `kAudioQueueErr_BufferEnqueuedTwice`: the buffer is already enqueued (not yet handed
        /// back through the callback). Apple's header names input queues; output queues answer
        /// it too, since `invalidBuffer` means another queue's buffer.
        case bufferEnqueuedTwice = -66666
        /// `kAudioQueueErr_EnqueueDuringReset`: an output queue's enqueue while an immediate
        /// stop or a reset hands its buffers back (from the output callback it calls).
        case enqueueDuringReset = -66632
        /// `kAudioQueueErr_InvalidOfflineMode`: offline rendering on a queue that has no offline
        /// render format (`AudioQueueSetOfflineRenderFormat` was not called, or turned it off).
        case invalidOfflineMode = -66626
        /// `kAudioFormatUnsupportedDataFormatError` ('fmt?').
        case unsupportedDataFormat = 1_718_449_215
        /// `kAudio_ParamError` (-50), what Core Audio answers for an `AudioQueueRef` that is not
        /// (or no longer) a queue: a call through the handle of a disposed queue. The
        /// reference names no code for it.
        case invalidQueue = -50
        /// aqsync: a fixed capacity (queues, buffers per queue, commands in flight) is used up.
        case capacityExceeded = -66600
    }

    public var code: Code
    /// What went wrong, for people.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The numeric result code (an `OSStatus`).
    public var status: Int32 { code.rawValue }

    public var description: String { "\(message) (\(code), \(code.rawValue))" }
}
