/// What playback (``AudioQueue``) and recording (``AudioInputQueue``) queues both answer, under
/// the same names and with the same result codes: the run-state verbs, buffers, properties by
/// ID, listeners' removal and time. A caller that does not care which kind it holds (the C
/// API's `AudioQueueStop`, `AudioQueueGetProperty`…) calls through this. Starting is kind-specific (a recording queue
/// returns the device frame it starts on), as are enqueueing and parameters.
///
/// Thread safety: as each member's own documentation says; every member may be called from any
/// thread but the render thread, and none blocks longer than its queue's own lock (a recording
/// queue's verbs may wait for a callback of that queue running on another thread).
public protocol AudioQueueCommon: AnyObject, Sendable {
    /// True from the first frame played or recorded until the queue stopped.
    var isRunning: Bool { get }
    /// `AudioQueuePause`.
    func pause() throws(AudioQueueError)
    /// `AudioQueueStop`: at once, or once what is enqueued has played / been recorded.
    func stop(immediately: Bool) throws(AudioQueueError)
    /// `AudioQueueFlush`.
    func flush() throws(AudioQueueError)
    /// `AudioQueueReset`.
    func reset() throws(AudioQueueError)
    /// `AudioQueueAllocateBufferWithPacketDescriptions`.
    func allocateBuffer(capacity: Int, packetDescriptions: Int) throws(AudioQueueError) -> AudioQueueBuffer
    /// `AudioQueueFreeBuffer`.
    func freeBuffer(_ buffer: AudioQueueBuffer) throws(AudioQueueError)
    /// `AudioQueueGetPropertySize`: the size of a property's value in bytes.
    func propertySize(_ rawID: UInt32) throws(AudioQueueError) -> Int
    /// `AudioQueueGetProperty`: a property's value as bytes.
    func property(_ rawID: UInt32) throws(AudioQueueError) -> [UInt8]
    /// `AudioQueueSetProperty`: a property's value from bytes.
    func setProperty(_ rawID: UInt32, _ value: [UInt8]) throws(AudioQueueError)
    /// `kAudioQueueProperty_CurrentDevice`: only the engine's own device (`.invalidDevice`
    /// otherwise).
    func setCurrentDevice(_ uid: String) throws(AudioQueueError)
    /// `kAudioQueueProperty_ChannelAssignments`: the device channel of each of the queue's
    /// channels (playback: outputs; recording: inputs).
    var channelAssignments: [AudioQueueChannelAssignment] { get }
    /// Sets `kAudioQueueProperty_ChannelAssignments` (one per channel, on the queue's device).
    func setChannelAssignments(_ assignments: [AudioQueueChannelAssignment]) throws(AudioQueueError)
    /// `AudioQueueRemovePropertyListener`: the listener `token` names (what adding it returned).
    func removePropertyListener(_ token: Int) throws(AudioQueueError)
    /// `AudioQueueCreateTimeline`.
    func createTimeline() -> AudioQueueTimeline
    /// `AudioQueueGetCurrentTime`: the queue's time now, and whether `timeline` saw a
    /// discontinuity since it was last asked.
    func currentTime(timeline: AudioQueueTimeline?) -> (time: AudioTimeStamp, discontinuity: Bool)
}

extension AudioQueue: AudioQueueCommon {}

extension AudioInputQueue: AudioQueueCommon {
    /// Sets `kAudioQueueProperty_CurrentDevice`: a recording queue stays on its engine's device,
    /// so only that device's identifier is taken (`.invalidDevice` otherwise). Any thread but
    /// the render thread; does not block.
    public func setCurrentDevice(_ uid: String) throws(AudioQueueError) {
        try setProperty(AudioQueuePropertyID.currentDevice.rawValue, Array(uid.utf8))
    }
}
