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
    var fifo: [[Float]] = []
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
    var listeners: [(token: Int, listener: PropertyListener)] = []
    var nextListenerToken = 0
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
        fifo = Array(repeating: [], count: channels)
    }

    deinit {
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

    // MARK: - Buffers

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

    // MARK: - Control

    /// Starts (or resumes) recording (`AudioQueueStart`): from device time `time`
    /// (`sampleTime` or `hostTime`), or from the next cycle's first frame when nil or earlier.
    /// The first frame recorded is exactly that device frame. Any control thread; waits only for
    /// a callback of this queue running on another thread (buffers come back in order).
    /// Returns the device frame recording starts at.
    @discardableResult
    public func start(at time: AudioTimeStamp? = nil) throws(AudioQueueError) -> Int64 {
        // Buffers are handed back in the order they were filled, whichever thread hands them.
        callbackLock.lock()
        defer { callbackLock.unlock() }
        var changed = false
        var handed: [(AudioQueueBuffer, Double)] = []
        let frame: Int64
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            try hub.checkUsableLocking()
            var f = hub.nextCycleFrame()
            if let time {
                var requested: Int64?
                if time.flags.contains(.sampleTimeValid) {
                    requested = Int64(time.sampleTime.rounded())
                } else if time.flags.contains(.hostTimeValid), let tb = hub.timebase {
                    requested = Int64(tb.sampleTime(forHostTime: time.hostTime).rounded())
                }
                if let r = requested, r > f { f = r }
            }
            switch state {
            case .running:
                break
            case .paused:
                // Record what was captured before the pause, then jump to the resumption.
                handed += pumpLocked(until: pauseFrame)
                endStreamLocked(&handed)
                if filled > 0 { handed.append(completeHead()) }
                if readPosition < pauseFrame {
                    lost += pauseFrame - readPosition
                    discontinuities += 1
                }
                readPosition = f
                timeOrigin &+= f - pauseFrame
                state = .running
                changed = true
            case .stopped:
                readPosition = f
                timeOrigin = f
                state = .running
                changed = true
            }
            stopAfterBuffer = false
            frame = readPosition
        }
        deliver(handed)
        if changed { setRunning(true) }
        return frame
    }

    /// Pauses recording (`AudioQueuePause`): frames from the next cycle's first frame on are not
    /// recorded until ``start(at:)``; buffers stay enqueued. Any control thread; does not block.
    public func pause() throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        guard state == .running else { return }
        pauseFrame = hub.nextCycleFrame()
        state = .paused
    }

    /// Stops recording (`AudioQueueStop`). `immediately`: synchronous — the frames captured up to
    /// now are recorded, the buffer in progress is handed back with the frames it holds and the
    /// other enqueued buffers empty, through the callback on this thread, and the queue is
    /// stopped when it returns (it blocks only for the callbacks it runs, and for one of this
    /// queue running on another thread). Otherwise the queue
    /// stops once the buffer in progress is full (the others are then handed back empty); the
    /// call does not wait for that. Any control thread, including the callback.
    public func stop(immediately: Bool) throws(AudioQueueError) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        var handed: [(AudioQueueBuffer, Double)] = []
        var changed = false
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            guard state != .stopped else { return }
            if !immediately {
                stopAfterBuffer = true
                return
            }
            handed = stopLocked(recordingUpTo: hub.nextCycleFrame())
            changed = true
        }
        deliver(handed)
        if changed { setRunning(false) }
    }

    /// Records up to `end` (exclusive), hands every buffer back (the one in progress with its
    /// frames) and stops. Queue lock held.
    func stopLocked(recordingUpTo end: Int64) -> [(AudioQueueBuffer, Double)] {
        let last = state == .paused ? min(end, pauseFrame) : end
        var handed = pumpLocked(until: last)
        endStreamLocked(&handed)
        handed += takeAllLocked()
        if readPosition < last {
            // No buffer left for these (those handed back cannot return before the stop).
            lost += last - readPosition
            discontinuities += 1
            readPosition = last
        }
        state = .stopped
        stopAfterBuffer = false
        return handed
    }

    /// Every enqueued buffer, the one in progress with its frames, the others empty. Queue lock held.
    func takeAllLocked() -> [(AudioQueueBuffer, Double)] {
        var handed: [(AudioQueueBuffer, Double)] = []
        if filled > 0 { handed.append(completeHead()) }
        for b in pending {
            b.audioDataByteSize = 0
            b.isEnqueued = false
            handed.append((b, Double(readPosition)))
        }
        pending.removeAll()
        return handed
    }

    /// Hands the buffer in progress back now with the frames it holds (`AudioQueueFlush`: what
    /// was captured so far is delivered), through the callback on this thread. Any control
    /// thread; blocks only for the callback.
    public func flush() throws(AudioQueueError) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        var handed: [(AudioQueueBuffer, Double)] = []
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            if state != .stopped {
                handed = pumpLocked(until: state == .paused ? pauseFrame : hub.nextCycleFrame())
            }
            endStreamLocked(&handed)
            if filled > 0 { handed.append(completeHead()) }
        }
        deliver(handed)
    }

    /// Hands every enqueued buffer back empty (`AudioQueueReset`), the frames of the buffer in
    /// progress discarded, through the callback on this thread; the run state does not change
    /// and recording goes on into buffers enqueued afterwards. Any control thread; blocks only for
    /// the callbacks.
    public func reset() throws(AudioQueueError) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        var handed: [(AudioQueueBuffer, Double)] = []
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            if state == .running { readPosition = max(readPosition, hub.nextCycleFrame()) }
            filled = 0
            discardStreamLocked()
            handed = takeAllLocked()
        }
        deliver(handed)
    }

    /// Disposes of the queue (`AudioQueueDispose`): no callback or listener runs once it
    /// returned (it waits for one running on another thread); buffers are not handed back.
    /// `immediately` false is treated as true (recording has nothing left to play). Afterwards
    /// every call through the handle is `.invalidQueue`. Any control thread, including the
    /// callback (then that callback is the last).
    public func dispose(immediately: Bool) throws(AudioQueueError) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        do {
            defer { lock.unlock() }
            try checkLive()
            disposed = true
            state = .stopped
            runningFlag.store(false, ordering: .releasing)
            for b in pending { b.isEnqueued = false }
            pending.removeAll()
            listeners.removeAll()
        }
        hub.removeInput(self)
    }

    /// Marks the handle stale (its engine closed). Any thread.
    func markGone() {
        lock.lock()
        disposed = true
        state = .stopped
        runningFlag.store(false, ordering: .releasing)
        lock.unlock()
    }

    // MARK: - Reading the capture ring

    /// Records what the ring holds now. Called by the engine on the events thread (or the
    /// thread in `deliverPendingEvents`), with its consumer lock held.
    /// Reads again after delivering while buffers came back (the callback re-enqueues them), so
    /// that frames are lost only when no buffer is left.
    func pump() {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        while true {
            var handed: [(AudioQueueBuffer, Double)] = []
            var stopped = false
            do {
                lock.lock()
                defer { lock.unlock() }
                guard !disposed, state != .stopped else { return }
                let end = hub.core.pointee.captureWindow.end
                handed = pumpLocked(until: state == .paused ? min(end, pauseFrame) : end)
                if stopAfterBuffer && !handed.isEmpty {
                    handed += takeAllLocked()
                    discardStreamLocked()
                    // The take ends with the last whole packet handed back: nothing padded.
                    lastRemainder = 0
                    state = .stopped
                    stopAfterBuffer = false
                    stopped = true
                }
            }
            deliver(handed)
            if stopped { setRunning(false) }
            if handed.isEmpty || stopped { return }
        }
    }

    /// Copies captured frames from ``readPosition`` up to `end` into the enqueued buffers; returns
    /// the buffers filled (each with the device frame of its first frame). Frames with no buffer
    /// to go to, or gone from the ring, are lost and counted. Queue lock held.
    func pumpLocked(until end: Int64) -> [(AudioQueueBuffer, Double)] {
        var handed: [(AudioQueueBuffer, Double)] = []
        if encoder != nil {
            pumpEncodedLocked(until: end, handed: &handed)
            return handed
        }
        if converter != nil {
            pumpConvertedLocked(until: end, handed: &handed)
            return handed
        }
        let core = hub.core.pointee
        while readPosition < end {
            guard let head = pending.first else {
                // Buffers handed back in this pass may come back from the callback: the caller
                // delivers them and reads again.
                if !handed.isEmpty { break }
                // Nowhere to record: the frames are lost (a discontinuity on the queue's time line).
                lost += end - readPosition
                discontinuities += 1
                readPosition = end
                break
            }
            let room = head.audioDataBytesCapacity / bytesPerFrame - filled
            let want = Int(min(Int64(min(room, scratchFrames)), end - readPosition))
            let r = core.readCapture(from: readPosition, maxFrames: want, into: scratchChannels, channels: channels)
            if r.first > readPosition {
                // Gone from the ring (or never captured): lost; the buffer in progress ends here.
                lost += r.first - readPosition
                discontinuities += 1
                readPosition = r.first
                if filled > 0 { handed.append(completeHead()); continue }
            }
            if r.frames == 0 { break }
            if filled == 0 { headStart = r.first }
            encode(r.frames, into: head.audioData + filled * bytesPerFrame)
            if meteringEnabled { meter(r.frames) }
            filled += r.frames
            readPosition += Int64(r.frames)
            if filled * bytesPerFrame + bytesPerFrame > head.audioDataBytesCapacity {
                handed.append(completeHead())
                if stopAfterBuffer { break }
            }
        }
        return handed
    }

    /// ``pumpLocked(until:)`` for a queue at another rate than the device's: the frames read
    /// from the ring go through the converter (a stream that starts at the device frame
    /// ``streamStart``: its output frame k is at device time `streamStart + k × ratio`), then
    /// into the buffers. Queue lock held.
    /// A converting or encoding queue's read of the capture ring into the scratch planes: up to
    /// a scratch's worth of frames from ``readPosition`` (not past `end`). Frames the ring no
    /// longer has are lost and end the stream (the next frames start a new one). Returns what
    /// ``RenderCore/readCapture(from:maxFrames:into:channels:)`` returned. Queue lock held.
    func readStreamLocked(_ core: RenderCore, until end: Int64, handed: inout [(AudioQueueBuffer, Double)]) -> (first: Int64, frames: Int) {
        let want = Int(min(Int64(scratchFrames), end - readPosition))
        let r = core.readCapture(from: readPosition, maxFrames: want, into: scratchChannels, channels: channels)
        if r.first > readPosition {
            lost += r.first - readPosition
            discontinuities += 1
            endStreamLocked(&handed)
            readPosition = r.first
        }
        return r
    }

    /// Converts `frames` frames of the scratch planes to the queue's rate and gives `body` the
    /// result: one plane per channel and the frames in each. Queue lock held (the converter's
    /// stream is the queue's).
    func convertScratch(_ converter: RateConverter, frames: Int, _ body: (UnsafePointer<UnsafeMutablePointer<Float>>, Int) -> Void) {
        let capacity = RateConverter.maximumOutputFrames(inputFrames: frames, inputRate: converter.inputRate, outputRate: converter.outputRate) + 64
        let out = UnsafeMutablePointer<Float>.allocate(capacity: capacity * channels)
        defer { out.deallocate() }
        let outs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
        defer { outs.deallocate() }
        for c in 0..<channels { outs[c] = out + c * capacity }
        let ins = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
        defer { ins.deallocate() }
        for c in 0..<channels { ins[c] = UnsafePointer(scratchChannels[c]) }
        let k = converter.process(input: ins, frames: frames, output: outs, capacity: capacity)
        body(UnsafePointer(outs), k)
    }

    func pumpConvertedLocked(until end: Int64, handed: inout [(AudioQueueBuffer, Double)]) {
        guard let converter else { return }
        let core = hub.core.pointee
        // At the start of a pass nothing was handed back yet: with no buffer, frames are lost.
        drainFifoLocked(&handed, allowLoss: true)
        while readPosition < end && (fifo[0].isEmpty || !pending.isEmpty) {
            let r = readStreamLocked(core, until: end, handed: &handed)
            if r.frames == 0 { break }
            if streamStart < 0 {
                streamStart = r.first
                fifoFrame = 0
            }
            if meteringEnabled { meter(r.frames) }
            convertScratch(converter, frames: r.frames) { outs, k in
                for c in 0..<channels { fifo[c].append(contentsOf: UnsafeBufferPointer(start: outs[c], count: k)) }
            }
            readPosition += Int64(r.frames)
            drainFifoLocked(&handed, allowLoss: handed.isEmpty)
            if stopAfterBuffer && !handed.isEmpty { break }
        }
    }

    /// Moves converted frames into the enqueued buffers; with no buffer left, loses them
    /// (counted in device frames) when `allowLoss`, keeps them otherwise. Queue lock held.
    func drainFifoLocked(_ handed: inout [(AudioQueueBuffer, Double)], allowLoss: Bool) {
        while !fifo[0].isEmpty {
            guard let head = pending.first else {
                if allowLoss {
                    lost += Int64((Double(fifo[0].count) * ratio).rounded())
                    discontinuities += 1
                    fifoFrame += fifo[0].count
                    fifo = Array(repeating: [], count: channels)
                }
                return
            }
            let room = head.audioDataBytesCapacity / bytesPerFrame - filled
            let k = min(room, fifo[0].count)
            if filled == 0 { headQueueFrame = fifoFrame }
            let planes = fifo
            encode(k, into: head.audioData + filled * bytesPerFrame) { c, i in planes[c][i] }
            for c in 0..<channels { fifo[c].removeFirst(k) }
            fifoFrame += k
            filled += k
            if filled * bytesPerFrame + bytesPerFrame > head.audioDataBytesCapacity {
                handed.append(completeHead())
            }
        }
    }

    /// Ends the stream (converting and compressed queues): the converter's last frames (the
    /// filter's tail) and the encoder's last packets (the last one padded with silence) go into
    /// the buffers, the buffer in progress is handed back, and the next frames read start a new
    /// stream. Queue lock held.
    func endStreamLocked(_ handed: inout [(AudioQueueBuffer, Double)]) {
        guard converter != nil || encoder != nil, streamStart >= 0 else { return }
        if let converter {
            let pendingOut = converter.pendingOutputFrames
            if pendingOut > 0 {
                let out = UnsafeMutablePointer<Float>.allocate(capacity: pendingOut * channels)
                defer { out.deallocate() }
                let outs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
                defer { outs.deallocate() }
                var got = 0
                while got < pendingOut {
                    for c in 0..<channels { outs[c] = out + c * pendingOut + got }
                    let k = converter.flush(output: outs, capacity: pendingOut - got)
                    if k == 0 { break }
                    got += k
                }
                if let encoder {
                    var packets: [[UInt8]] = []
                    encoder.encode(frames: got, into: &packets) { c, i in out[c * pendingOut + i] }
                    packetFifo += packets
                } else {
                    for c in 0..<channels { fifo[c].append(contentsOf: UnsafeBufferPointer(start: out + c * pendingOut, count: got)) }
                }
            }
        }
        if let encoder {
            var packets: [[UInt8]] = []
            lastRemainder = encoder.finish(into: &packets)
            packetFifo += packets
            drainPacketsLocked(&handed, allowLoss: true)
        } else {
            drainFifoLocked(&handed, allowLoss: true)
        }
        if filled > 0 { handed.append(completeHead()) }
        discardStreamLocked()
    }

    /// Forgets the stream (converter and encoder state, frames and packets not yet in a buffer):
    /// the next frames read start a new one. Queue lock held.
    func discardStreamLocked() {
        converter?.reset()
        encoder?.reset()
        if converter != nil { fifo = Array(repeating: [], count: channels) }
        packetFifo.removeAll()
        if encoder != nil { headDescriptions.removeAll() }
        streamStart = -1
    }

    /// ``pumpLocked(until:)`` for a compressed queue: the frames read from the ring (through the
    /// converter at another rate) go into the encoder; its packets into the buffers. The stream
    /// starts at device frame ``streamStart``; its packet p decodes to stream frames from
    /// p × framesPerPacket − priming on, at device time `streamStart + that × ratio`. Queue lock
    /// held.
    func pumpEncodedLocked(until end: Int64, handed: inout [(AudioQueueBuffer, Double)]) {
        guard let encoder else { return }
        let core = hub.core.pointee
        drainPacketsLocked(&handed, allowLoss: true)
        while readPosition < end && (packetFifo.isEmpty || !pending.isEmpty) {
            let r = readStreamLocked(core, until: end, handed: &handed)
            if r.frames == 0 { break }
            if streamStart < 0 {
                streamStart = r.first
                fifoPacket = 0
            }
            if meteringEnabled { meter(r.frames) }
            var packets: [[UInt8]] = []
            if let converter {
                convertScratch(converter, frames: r.frames) { outs, k in
                    encoder.encode(frames: k, into: &packets) { c, i in outs[c][i] }
                }
            } else {
                encoder.encode(frames: r.frames, into: &packets) { c, i in scratchChannels[c][i] }
            }
            packetFifo += packets
            readPosition += Int64(r.frames)
            drainPacketsLocked(&handed, allowLoss: handed.isEmpty)
            if stopAfterBuffer && !handed.isEmpty { break }
        }
    }

    /// Moves encoded packets into the enqueued buffers, whole packets only: a buffer is handed
    /// back when the next packet does not fit in it (or its packet descriptions are used up).
    /// With no buffer left, loses the packets (counted in device frames) when `allowLoss`, keeps
    /// them otherwise. Queue lock held.
    func drainPacketsLocked(_ handed: inout [(AudioQueueBuffer, Double)], allowLoss: Bool) {
        var taken = 0
        defer { packetFifo.removeFirst(taken) }
        while taken < packetFifo.count {
            guard let head = pending.first else {
                if allowLoss {
                    let n = packetFifo.count - taken
                    lost += Int64((Double(n * framesPerPacket) * ratio).rounded())
                    discontinuities += 1
                    fifoPacket += Int64(n)
                    taken = packetFifo.count
                }
                return
            }
            let p = packetFifo[taken]
            let descriptionRoom = head.packetDescriptionCapacity == 0 || headDescriptions.count < head.packetDescriptionCapacity
            if filled + p.count > head.audioDataBytesCapacity || !descriptionRoom {
                if headDescriptions.isEmpty {
                    // Larger than a whole buffer (allocateBuffer refuses such buffers): lost.
                    lost += Int64((Double(framesPerPacket) * ratio).rounded())
                    discontinuities += 1
                    fifoPacket += 1
                    taken += 1
                } else {
                    handed.append(completeHead())
                }
                continue
            }
            if headDescriptions.isEmpty { headPacket = fifoPacket }
            p.withUnsafeBytes { (head.audioData + filled).copyMemory(from: $0.baseAddress!, byteCount: p.count) }
            headDescriptions.append(AudioStreamPacketDescription(startOffset: Int64(filled), variableFramesInPacket: 0, dataByteSize: UInt32(p.count)))
            filled += p.count
            fifoPacket += 1
            taken += 1
            if head.packetDescriptionCapacity > 0 && headDescriptions.count == head.packetDescriptionCapacity {
                handed.append(completeHead())
            }
        }
    }

    /// The buffer in progress, done: its size set, taken off the queue. Queue lock held.
    func completeHead() -> (AudioQueueBuffer, Double) {
        let b = pending.removeFirst()
        b.isEnqueued = false
        if encoder != nil {
            b.audioDataByteSize = filled
            let d = headDescriptions
            if let out = b.packetDescriptions {
                let n = min(d.count, b.packetDescriptionCapacity)
                d.withUnsafeBufferPointer { out.update(from: $0.baseAddress!, count: n) }
                b.packetDescriptionCount = n
            }
            handedDescriptions[b.token] = d
            headDescriptions.removeAll()
            filled = 0
            let first = headPacket * Int64(framesPerPacket) - Int64(priming)
            return (b, Double(streamStart) + Double(first) * ratio)
        }
        b.audioDataByteSize = filled * bytesPerFrame
        let start = converter == nil ? Double(headStart) : Double(streamStart) + Double(headQueueFrame) * ratio
        filled = 0
        return (b, start)
    }

    /// Converts `n` planar scratch frames to the queue's interleaved format at `dst`.
    func encode(_ n: Int, into dst: UnsafeMutableRawPointer) {
        encode(n, into: dst) { c, i in scratchChannels[c][i] }
    }

    /// Converts `n` frames of `sample(channel, frame)` to the queue's interleaved format at `dst`
    /// (integers by the project's one rule, ``PCMInterleaver``).
    func encode(_ n: Int, into dst: UnsafeMutableRawPointer, _ sample: (Int, Int) -> Float) {
        if !isFloat {
            PCMInterleaver(bits: sampleBytes * 8, bigEndian: bigEndian).interleave(frames: n, channels: channels, into: dst, sample)
            return
        }
        var p = dst
        for i in 0..<n {
            for c in 0..<channels {
                let bits = sample(c, i).bitPattern
                p.storeBytes(of: bigEndian ? bits.bigEndian : bits.littleEndian, as: UInt32.self)
                p += sampleBytes
            }
        }
    }

    func meter(_ n: Int) {
        for c in 0..<channels {
            var peak: Float = 0
            var sum: Double = 0
            for i in 0..<n {
                let v = scratchChannels[c][i]
                peak = max(peak, abs(v))
                sum += Double(v) * Double(v)
            }
            meterValues[c] = AudioQueueLevelMeterState(averagePower: Float((sum / Double(max(n, 1))).squareRoot()), peakPower: peak)
        }
    }

    /// The capture latency this queue's time stamps subtract now, in device frames: the
    /// largest capture latency of the device inputs it records, `0 ..< channels`
    /// (``AudioQueueEngine/captureLatency(ofInputs:)``). One time axis for all the queue's
    /// channels: a channel whose port has a smaller latency is stamped that much too early
    /// (docs/recording.md, "Latency"). Read once per buffer, when the callback gets it
    /// (``AudioQueueBuffer/captureLatency`` says which value that buffer got). Any thread but
    /// the render thread; does not block.
    public var captureLatency: Int { hub.device.captureLatency(ofInputs: 0..<channels) }

    /// The time stamp of the frame that reached the device's inputs at device sample time
    /// `arrival` (fractional for converting queues): the time it was captured, `arrival` minus
    /// `latency`, the queue's capture latency (``captureLatency``, read once per buffer, when
    /// the buffer is handed to the callback; docs/recording.md, "Latency"). Sample time and host
    /// time, both flags set.
    func timeStamp(ofSampleTime arrival: Double, latency: Int) -> AudioTimeStamp {
        let sample = arrival - Double(latency)
        if let manual = hub.device as? any HandDrivenDevice {
            let whole = sample.rounded(.down)
            let host = manual.hostTime(ofFrame: Int64(whole)) &+ UInt64(((sample - whole) * 1e9 / hub.device.sampleRate).rounded())
            return AudioTimeStamp(
                sampleTime: sample, hostTime: host, rateScalar: 1,
                flags: [.sampleTimeValid, .hostTimeValid, .rateScalarValid])
        }
        if let tb = hub.timebase { return tb.timeStamp(forSampleTime: sample) }
        return AudioTimeStamp(sampleTime: sample)
    }

    /// ``timeStamp(ofSampleTime:latency:)``, also for a time before device frame 0 (a compressed
    /// stream's first packet starts its priming before the stream): the time stamp of frame 0
    /// moved back by `-sample` frames, the host time at the nominal rate (saturating at 0).
    func startTimeStamp(_ sample: Double, latency: Int) -> AudioTimeStamp {
        guard sample < 0 else { return timeStamp(ofSampleTime: sample, latency: latency) }
        var t = timeStamp(ofSampleTime: 0, latency: latency)
        let back = UInt64((-sample * 1e9 / hub.device.sampleRate).rounded())
        t.sampleTime += sample
        t.hostTime = t.hostTime >= back ? t.hostTime - back : 0
        return t
    }

    /// Runs the callback for each buffer handed back, in order, under the callback lock.
    /// No queue lock held.
    func deliver(_ handed: [(AudioQueueBuffer, Double)]) {
        guard !handed.isEmpty else { return }
        callbackLock.lock()
        defer { callbackLock.unlock() }
        for (b, frame) in handed {
            let (gone, descriptions) = locked { (disposed, handedDescriptions.removeValue(forKey: b.token) ?? []) }
            if gone { return }
            let latency = captureLatency
            b.captureLatency = latency
            callback(self, b, startTimeStamp(frame, latency: latency), descriptions)
        }
    }

    func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    func setRunning(_ on: Bool) {
        runningFlag.store(on, ordering: .releasing)
        callbackLock.lock()
        defer { callbackLock.unlock() }
        let ls = locked { disposed ? [] : listeners.map(\.listener) }
        for l in ls { l(self, .isRunning) }
    }

    // MARK: - Properties

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
            nextListenerToken += 1
            listeners.append((nextListenerToken, listener))
            return nextListenerToken
        }
    }

    /// Removes a listener by its token. Any thread; does not block.
    public func removePropertyListener(_ token: Int) throws(AudioQueueError) {
        try locked { () throws(AudioQueueError) in
            try checkLive()
            guard let i = listeners.firstIndex(where: { $0.token == token }) else {
                throw AudioQueueError(.invalidParameter, "no listener with that token")
            }
            listeners.remove(at: i)
        }
    }
}
