import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// An input queue's properties, level meters and property listeners.
extension AudioInputQueue {
    /// Whether the queue records (`kAudioQueueProperty_IsRunning`): true from ``start(at:)``
    /// to a stop (paused counts as running, as for output queues). Any thread; does not block.
    public var isRunning: Bool { runningFlag.load(ordering: .acquiring) }

    /// The format's magic cookie (`kAudioQueueProperty_MagicCookie`): for AAC the body of an
    /// `esds` atom (version and flags, then the ES descriptor with the AudioSpecificConfig), for
    /// Apple Lossless the 24-byte ALACSpecificConfig; what a CAF file's `kuki` chunk holds.
    /// Valid from creation and the same for the queue's life. Empty for linear PCM. Any
    /// thread; does not block.
    public var magicCookie: [UInt8] { cookie }

    /// The largest packet a compressed queue makes, in bytes (buffers must hold one); 0 for
    /// linear PCM. Any thread; does not block.
    public var maximumPacketSize: Int { maxPacket }

    /// Frames of encoder delay at the start of every stream (AAC 1024, ALAC and linear PCM 0):
    /// a stream's first packet decodes to this many frames before the first frame recorded
    /// (its start time is that many frames, in device time, before the stream's start). A CAF
    /// file's `pakt` `mPrimingFrames`. Any thread; does not block.
    public var primingFrames: Int { priming }

    /// The remainder frames of the latest stream ended (by a stop, a pause, a flush, or frames
    /// lost from the ring): AAC's padding of the last packet plus what the encoder held beyond
    /// it, ALAC's shortfall of its short last packet; a stream's packets × framesPerPacket =
    /// priming + frames recorded + remainder. A CAF file's `pakt` `mRemainderFrames`. 0 after a
    /// stop that was not immediate (the take ends with a whole packet), before any stream
    /// ended, and for linear PCM. Any thread; does not block.
    public var remainderFrames: Int { locked { lastRemainder } }

    /// Frames captured while the queue was running that it could not record (no enqueued
    /// buffer, or read too late from the capture ring). Any thread; does not block.
    public var lostFrames: Int64 { locked { lost } }

    /// How many times frames were lost (each a discontinuity on the queue's time line: the next
    /// buffer's start time jumps). Any thread; does not block.
    public var discontinuityCount: Int { locked { discontinuities } }

    /// Level metering of what is recorded (`kAudioQueueProperty_EnableLevelMetering`). Any
    /// thread; does not block. Throws `.invalidQueue` for a disposed queue.
    public func setLevelMetering(_ on: Bool) throws(AudioQueueError) {
        try locked { () throws(AudioQueueError) in
            try checkLive()
            meteringEnabled = on
            if !on { meterValues = meterValues.map { _ in AudioQueueLevelMeterState(averagePower: 0, peakPower: 0) } }
        }
    }

    /// Per channel, the RMS and peak (linear) of the frames recorded by the latest read of the
    /// capture ring (`kAudioQueueProperty_CurrentLevelMeter`). Any thread; does not block.
    /// Throws `.invalidQueue` for a disposed queue, `.invalidProperty` while metering is off.
    public func currentLevelMeter() throws(AudioQueueError) -> [AudioQueueLevelMeterState] {
        try locked { () throws(AudioQueueError) in
            try checkLive()
            guard meteringEnabled else { throw AudioQueueError(.invalidProperty, "level metering is off") }
            return meterValues
        }
    }

    /// `kAudioQueueProperty_ChannelAssignments`: the device input each channel records, on
    /// this queue's device, `channelNumber` counting from 1. Default: channel i records input
    /// i + 1. Any thread but the render thread; does not block.
    public var channelAssignments: [AudioQueueChannelAssignment] {
        let uid = hub.device.uid
        return locked { (0..<channels).map { AudioQueueChannelAssignment(deviceUID: uid, channelNumber: inputSources[$0] + 1) } }
    }

    /// The device inputs recording queues can be assigned (`kAudioQueueDeviceProperty_NumberChannels`
    /// of a recording queue): the device's inputs the renderer captures.
    var assignableInputs: Int { min(hub.device.inputChannelCount, hub.capacities.inputChannels) }

    /// Sets `kAudioQueueProperty_ChannelAssignments`: channel i of the queue records device
    /// input `assignments[i].channelNumber` (counting from 1); two channels may record the same
    /// input. It applies from the next frame the queue reads from the capture ring (the queue
    /// may be running: frames already in a buffer keep the inputs they were read from).
    /// Listeners of `.channelAssignments` run on the calling thread afterwards. Any thread but
    /// the render thread; does not block.
    /// - Throws: `.invalidPropertySize` unless there is exactly one per channel;
    ///   `.invalidDevice` for another `deviceUID` than the queue's device's; `.invalidPropertyValue`
    ///   for a channel outside 1…the device's inputs; `.invalidQueue`.
    public func setChannelAssignments(_ assignments: [AudioQueueChannelAssignment]) throws(AudioQueueError) {
        let inputs = try AudioQueueChannelAssignment.deviceChannels(
            assignments, channels: channels, uid: hub.device.uid, deviceChannels: assignableInputs)
        try locked { () throws(AudioQueueError) in
            try checkLive()
            for (c, i) in inputs.enumerated() { inputSources[c] = i }
        }
        callbackLock.lock()
        defer { callbackLock.unlock() }
        let ls = locked { disposed ? [] : listeners.listeners(for: .channelAssignments) }
        for l in ls { l(self, .channelAssignments) }
    }

    /// Adds a listener for ``AudioQueuePropertyID/isRunning`` or
    /// ``AudioQueuePropertyID/channelAssignments``; returns its token. Any thread; does not
    /// block. Throws `.invalidProperty` for another property, `.invalidQueue` when stale.
    public func addPropertyListener(_ id: AudioQueuePropertyID, _ listener: @escaping PropertyListener) throws(AudioQueueError) -> Int {
        try locked { () throws(AudioQueueError) in
            try checkLive()
            guard id == .isRunning || id == .channelAssignments else {
                throw AudioQueueError(.invalidProperty, "input queues report only IsRunning and ChannelAssignments")
            }
            return listeners.add(id, listener)
        }
    }

    /// Removes a listener by its token (`.invalidParameter` when none has it). Any thread;
    /// does not block.
    public func removePropertyListener(_ token: Int) throws(AudioQueueError) {
        try locked { () throws(AudioQueueError) in
            try checkLive()
            try listeners.remove(token)
        }
    }
}
