import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// A recording audio queue (`AudioQueueRef` made by `AudioQueueNewInput`), made by
/// ``AudioQueueEngine/newInput(format:callback:)``.
///
/// The render thread copies the device's inputs into the renderer's capture ring at their
/// device frames; the queue reads the ring on the control side (the engine's events thread, or
/// the thread in ``AudioQueueEngine/deliverPendingEvents()``), fills its enqueued buffers in
/// order, converting to its format (or encoding AAC LC / Apple Lossless packets with
/// ``PacketEncoder``), and hands each full buffer to the input callback with the device time
/// its first frame was captured at. A buffer's frames are always consecutive device
/// frames: a jump (frames lost for want of a buffer, a pause) hands the buffer in progress back
/// with the frames it has. See docs/recording.md.
///
/// A handle stays tied to its queue: once disposed of, every call through it is refused with
/// `.invalidQueue` (reads give neutral values).
///
/// Thread safety: every method may be called from any thread but the render thread, including
/// from the input callback and listeners. Calls that block are marked so.
public final class AudioInputQueue: @unchecked Sendable {
    /// Called with a buffer the queue filled (`AudioQueueInputCallback`): the buffer (its
    /// ``AudioQueueBuffer/audioDataByteSize`` says how much it holds), the time its first frame
    /// was captured at (device sample time and host time, both flags set; for AAC and ALAC the
    /// time of the first decoded frame of its first packet, see docs/recording.md), and the
    /// packet descriptions (none for linear PCM: the packet count is the buffer's frames; one
    /// per packet for AAC and ALAC). On the
    /// engine's events thread (or the thread in ``AudioQueueEngine/deliverPendingEvents()``);
    /// for buffers an immediate stop, a reset or a flush hands back, on the thread that called
    /// it, before it returns.
    public typealias InputCallback = @Sendable (
        AudioInputQueue, AudioQueueBuffer, AudioTimeStamp, [AudioStreamPacketDescription]
    ) -> Void
    /// Called when a property changed (only ``AudioQueuePropertyID/isRunning`` for input
    /// queues): on the thread that changed it, or the events thread.
    public typealias PropertyListener = @Sendable (AudioInputQueue, AudioQueuePropertyID) -> Void

    /// The format buffers are filled in: interleaved linear PCM, or AAC LC / Apple Lossless
    /// packets (completed as ``PacketEncoder/completed(_:)`` says: `framesPerPacket` the codec's).
    /// Any thread; does not block.
    public let format: AudioStreamBasicDescription
    let hub: EngineShared
    let callback: InputCallback
    let channels: Int
    let bytesPerFrame: Int
    let sampleBytes: Int
    let isFloat: Bool
    let bigEndian: Bool
    /// Device rate → queue rate, when they differ (control side only).
    let converter: RateConverter?
    /// Device frames per queue frame.
    let ratio: Double
    /// Compressed queues: the encoder (control side only), its frames per packet and priming.
    let encoder: PacketEncoder?
    let framesPerPacket: Int
    let priming: Int
    /// The encoder's cookie and largest packet, kept here so any thread may read them.
    let cookie: [UInt8]
    let maxPacket: Int

    /// Guards everything below. Order: `callbackLock` → `lock` → the engine's lock.
    let lock = NSLock()
    /// Held while the callback or a listener runs (recursive); a disposal takes it.
    let callbackLock = NSRecursiveLock()
    let runningFlag = Atomic<Bool>(false)

    enum RunState { case stopped, running, paused }
    var state = RunState.stopped
    var disposed = false
    var buffers: [UInt32: AudioQueueBuffer] = [:]
    var nextToken: UInt32 = 0
    /// Enqueued buffers, in order; the first is the one in progress.
    var pending: [AudioQueueBuffer] = []
    /// Frames the buffer in progress holds, and the device frame of its first.
    var filled = 0
    var headStart: Int64 = 0
    /// Converting queues: the device frame of the converter stream's input frame 0 (−1: no
    /// stream), converted frames not yet in a buffer (planar) and the stream output index of
    /// their first, and the stream output index of the buffer in progress's first frame.
    var streamStart: Int64 = -1
    var fifo = PlanarFIFO(channels: 0)
    var fifoFrame = 0
    var headQueueFrame = 0
    /// Compressed queues: encoded packets not yet in a buffer and the stream packet index of
    /// the first; the packet descriptions of the buffer in progress (``filled`` counts its
    /// bytes) and the stream packet index of its first packet; descriptions of buffers handed
    /// back, by token, until delivered; the remainder frames of the latest stream ended.
    var packetFifo: [[UInt8]] = []
    var fifoPacket: Int64 = 0
    var headDescriptions: [AudioStreamPacketDescription] = []
    var headPacket: Int64 = 0
    var handedDescriptions: [UInt32: [AudioStreamPacketDescription]] = [:]
    var lastRemainder = 0
    /// The next device frame to record.
    var readPosition: Int64 = 0
    /// Paused: frames before this device frame are still recorded.
    var pauseFrame: Int64 = 0
    /// The device frame of queue time 0 (``currentTime(timeline:)``): the start, moved on by
    /// every pause's length at its resumption.
    var timeOrigin: Int64 = 0
    /// Stop once the buffer in progress is full (`stop(immediately: false)`).
    var stopAfterBuffer = false
    var lost: Int64 = 0
    var discontinuities = 0
    var meteringEnabled = false
    var meterValues: [AudioQueueLevelMeterState]
    var listeners = PropertyListeners<PropertyListener>()
    /// The device input each channel records (0-based; `channels` entries; default: channel c
    /// records input c), read by the pump under `lock` (``setChannelAssignments(_:)``).
    let inputSources: UnsafeMutablePointer<Int>
    /// Planar scratch the ring is read into.
    let scratchFrames = 4096
    let scratch: UnsafeMutablePointer<Float>
    let scratchChannels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    init(hub: EngineShared, format: AudioStreamBasicDescription, converter: RateConverter?, callback: @escaping InputCallback) {
        self.hub = hub
        self.converter = converter
        ratio = hub.device.sampleRate / format.sampleRate
        // `validate` opened an encoder for this format already: this one opens too.
        let encoder = PacketEncoder.canEncode(format.formatID) ? try? PacketEncoder(format: format) : nil
        self.encoder = encoder
        framesPerPacket = encoder?.framesPerPacket ?? 1
        priming = encoder?.primingFrames ?? 0
        cookie = encoder?.magicCookie ?? []
        maxPacket = encoder?.maximumPacketSize ?? 0
        self.format = encoder?.format ?? format
        self.callback = callback
        channels = Int(format.channelsPerFrame)
        bytesPerFrame = Int(format.bytesPerFrame)
        sampleBytes = Int(format.bitsPerChannel) / 8
        isFloat = format.formatFlags.contains(.isFloat)
        bigEndian = format.formatFlags.contains(.isBigEndian)
        meterValues = Array(repeating: AudioQueueLevelMeterState(averagePower: 0, peakPower: 0), count: channels)
        scratch = .allocate(capacity: scratchFrames * channels)
        scratch.initialize(repeating: 0, count: scratchFrames * channels)
        scratchChannels = .allocate(capacity: channels)
        for c in 0..<channels { scratchChannels[c] = scratch + c * scratchFrames }
        fifo = PlanarFIFO(channels: channels)
        inputSources = .allocate(capacity: channels)
        for c in 0..<channels { inputSources[c] = c }
    }

    deinit {
        inputSources.deallocate()
        scratch.deallocate()
        scratchChannels.deallocate()
    }

    /// Checks `format` for an input queue on a device of `deviceRate` Hz with `inputs` channels.
    static func validate(_ format: AudioStreamBasicDescription, deviceRate: Double, inputs: Int) throws(AudioQueueError) -> RateConverter? {
        let f = format.formatFlags
        if PacketEncoder.canEncode(format.formatID) {
            do {
                _ = try PacketEncoder(format: format)
            } catch {
                throw AudioQueueError(.unsupportedDataFormat, "cannot record \(format.formatID): \(error.message)")
            }
            return try converter(for: format, deviceRate: deviceRate, inputs: inputs)
        }
        guard format.formatID == AudioFormatID.linearPCM else {
            throw AudioQueueError(.unsupportedDataFormat, "input queues record linear PCM, AAC LC and Apple Lossless only (got \(format.formatID))")
        }
        guard !f.contains(.isNonInterleaved) else {
            throw AudioQueueError(.unsupportedDataFormat, "input queues record interleaved linear PCM only")
        }
        let bits = Int(format.bitsPerChannel), n = Int(format.channelsPerFrame)
        let ok = f.contains(.isFloat) ? bits == 32 : (f.contains(.isSignedInteger) && [16, 24, 32].contains(bits))
        guard ok, format.framesPerPacket == 1, n >= 1, Int(format.bytesPerFrame) == n * bits / 8,
            format.bytesPerPacket == format.bytesPerFrame
        else {
            throw AudioQueueError(.unsupportedDataFormat, "input queues record packed int16, int24, int32 or float32 (got \(bits) bits, flags \(f.rawValue))")
        }
        return try converter(for: format, deviceRate: deviceRate, inputs: inputs)
    }

    /// The channel check and the rate converter (nil at the device's rate) for a valid format.
    static func converter(for format: AudioStreamBasicDescription, deviceRate: Double, inputs: Int) throws(AudioQueueError) -> RateConverter? {
        let n = Int(format.channelsPerFrame)
        guard n <= inputs else {
            throw AudioQueueError(.unsupportedDataFormat, "\(n) channels asked for, the device has \(inputs) inputs")
        }
        guard format.sampleRate != deviceRate else { return nil }
        do {
            return try RateConverter(inputRate: deviceRate, outputRate: format.sampleRate, channels: n)
        } catch {
            throw AudioQueueError(.unsupportedDataFormat, "cannot convert \(deviceRate) Hz to \(format.sampleRate) Hz: \(error)")
        }
    }

    func checkLive() throws(AudioQueueError) {
        if hub.closed { throw AudioQueueError(.invalidDevice, "the engine is closed") }
        if disposed { throw AudioQueueError(.invalidQueue, "the queue was disposed of: the handle is stale") }
    }
}
