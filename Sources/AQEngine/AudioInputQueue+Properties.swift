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

    /// Adds a listener for ``AudioQueuePropertyID/isRunning``; returns its token. Any thread;
    /// does not block. Throws `.invalidProperty` for another property, `.invalidQueue` when stale.
    public func addPropertyListener(_ id: AudioQueuePropertyID, _ listener: @escaping PropertyListener) throws(AudioQueueError) -> Int {
        try locked { () throws(AudioQueueError) in
            try checkLive()
            guard id == .isRunning else { throw AudioQueueError(.invalidProperty, "input queues report only IsRunning") }
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
