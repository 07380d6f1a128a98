import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// An input queue's buffers and parameters.
extension AudioInputQueue {
    /// Allocates a buffer of `capacity` bytes (`AudioQueueAllocateBuffer`, and
    /// `AudioQueueAllocateBufferWithPacketDescriptions` with `packetDescriptions`). Any control
    /// thread; does not block.
    ///
    /// For a compressed queue (AAC, ALAC) the buffer must hold the largest packet
    /// (``maximumPacketSize``). With `packetDescriptions` > 0 the queue puts at most that many
    /// packets in it and writes their descriptions into the buffer as well
    /// (``AudioQueueBuffer/packetDescriptions``, ``AudioQueueBuffer/packetDescriptionCount``); with 0, as
    /// many packets as fit, the descriptions given only to the callback. Linear PCM buffers
    /// need no descriptions (any number given is allocated and left unused).
    /// - Throws: `.invalidQueue` for a disposed queue; `.invalidParameter` for a capacity below
    ///   one frame (PCM) or one largest packet (compressed), or negative `packetDescriptions`.
    public func allocateBuffer(capacity: Int, packetDescriptions: Int = 0) throws(AudioQueueError) -> AudioQueueBuffer {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        guard packetDescriptions >= 0 else { throw AudioQueueError(.invalidParameter, "a negative number of packet descriptions") }
        if let encoder {
            guard capacity >= encoder.maximumPacketSize else {
                throw AudioQueueError(.invalidParameter, "a \(format.formatID) buffer must hold the largest packet (\(encoder.maximumPacketSize) bytes; maximumPacketSize)")
            }
        } else {
            // A compressed format whose encoder did not open a second time (validate opened one):
            // nothing can be recorded.
            guard bytesPerFrame > 0 else {
                throw AudioQueueError(.unsupportedDataFormat, "libavcodec could not open the \(format.formatID) encoder")
            }
            guard capacity >= bytesPerFrame else {
                throw AudioQueueError(.invalidParameter, "a buffer must hold at least one frame (\(bytesPerFrame) bytes)")
            }
        }
        nextToken &+= 1
        let b = AudioQueueBuffer(inputQueue: self, token: nextToken, capacity: capacity, packetDescriptions: packetDescriptions, channels: channels)
        buffers[nextToken] = b
        return b
    }

    /// Frees a buffer (`AudioQueueFreeBuffer`). Any control thread; does not block.
    /// Throws `.bufferInQueue` while it is enqueued, `.invalidBuffer` for another queue's buffer.
    public func freeBuffer(_ buffer: AudioQueueBuffer) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        guard buffers[buffer.token] === buffer else { throw AudioQueueError(.invalidBuffer, "not a buffer of this queue") }
        if buffer.isEnqueued { throw AudioQueueError(.bufferInQueue, "the buffer is enqueued") }
        buffers[buffer.token] = nil
    }

    /// Enqueues an empty buffer to be filled (`AudioQueueEnqueueBuffer` on a recording queue:
    /// no packet descriptions). Any control thread, including the input callback; does not block.
    /// Throws `.invalidBuffer` (another queue's buffer, or already enqueued).
    public func enqueue(_ buffer: AudioQueueBuffer) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        guard buffers[buffer.token] === buffer else {
            throw AudioQueueError(.invalidBuffer, "not a buffer of this queue")
        }
        guard !buffer.isEnqueued else {
            throw AudioQueueError(.bufferEnqueuedTwice, "the buffer is already enqueued (it has not come back filled or from a reset)")
        }
        buffer.audioDataByteSize = 0
        buffer.packetDescriptionCount = 0
        buffer.isEnqueued = true
        pending.append(buffer)
    }

    /// Output queues' enqueue with parameters, trims or a start time: refused on a recording
    /// queue with `.invalidQueueType` (the reference: those belong to playback). Any thread.
    public func enqueue(
        _ buffer: AudioQueueBuffer, trimFramesAtStart: Int, trimFramesAtEnd: Int,
        parameterEvents: [AudioQueueParameterEvent], startTime: AudioTimeStamp?
    ) throws(AudioQueueError) -> AudioTimeStamp {
        try locked { () throws(AudioQueueError) in try checkLive() }
        throw AudioQueueError(.invalidQueueType, "enqueueing with parameters, trims or a start time is for playback queues")
    }

    /// `AudioQueuePrime` belongs to playback queues: `.invalidQueueType`. Any thread.
    public func prime() throws(AudioQueueError) -> Int {
        try locked { () throws(AudioQueueError) in try checkLive() }
        throw AudioQueueError(.invalidQueueType, "priming is for playback queues")
    }

    /// Parameters (volume, rate…) belong to playback queues: `.invalidQueueType`. Any thread.
    public func setParameter(_ id: AudioQueueParameterID, _ value: Float) throws(AudioQueueError) {
        try locked { () throws(AudioQueueError) in try checkLive() }
        throw AudioQueueError(.invalidQueueType, "recording queues take no parameters")
    }

    func locked<T>(_ body: () throws(AudioQueueError) -> T) throws(AudioQueueError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

}
