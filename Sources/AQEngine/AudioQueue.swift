import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// Identifiers of audio queue properties, with the reference's four-character codes.
public enum AudioQueuePropertyID: UInt32, Sendable, CaseIterable {
    /// `kAudioQueueProperty_IsRunning` ('aqrn'): Bool, read-only; listeners hear changes.
    case isRunning = 0x6171_726E
    /// `kAudioQueueDeviceProperty_SampleRate` ('aqsr'): Double, read-only.
    case deviceSampleRate = 0x6171_7372
    /// `kAudioQueueDeviceProperty_NumberChannels` ('aqdc'): Int, read-only.
    case deviceNumberChannels = 0x6171_6463
    /// `kAudioQueueProperty_CurrentDevice` ('aqcd'): String, read-only here (one device per engine).
    case currentDevice = 0x6171_6364
    /// `kAudioQueueProperty_MagicCookie` ('aqmc'): bytes (compressed formats).
    case magicCookie = 0x6171_6D63
    /// `kAudioQueueProperty_ChannelLayout` ('aqcl'): ``AudioChannelLayout``.
    case channelLayout = 0x6171_636C
    /// `kAudioQueueProperty_EnableLevelMetering` ('aqme'): Bool.
    case enableLevelMetering = 0x6171_6D65
    /// `kAudioQueueProperty_CurrentLevelMeter` ('aqmv'): [``AudioQueueLevelMeterState``], linear.
    case currentLevelMeter = 0x6171_6D76
    /// `kAudioQueueProperty_CurrentLevelMeterDB` ('aqmd'): [``AudioQueueLevelMeterState``], dB.
    case currentLevelMeterDB = 0x6171_6D64
}

/// Audio queue parameters (`AudioQueueParameterID`).
public enum AudioQueueParameterID: UInt32, Sendable {
    /// `kAudioQueueParam_Volume`: linear gain, 0 to 1 (default 1).
    case volume = 1
}

/// A parameter value that takes effect when a buffer starts (`AudioQueueParameterEvent`).
public struct AudioQueueParameterEvent: Sendable, Equatable {
    public var parameter: UInt32
    public var value: Float
    public init(_ parameter: AudioQueueParameterID, _ value: Float) {
        self.parameter = parameter.rawValue
        self.value = value
    }
    /// An event with a raw parameter ID (unknown IDs are refused at enqueue).
    public init(rawParameter: UInt32, value: Float) {
        self.parameter = rawParameter
        self.value = value
    }
}

/// One channel's level (`AudioQueueLevelMeterState`): linear 0…1, or dB.
public struct AudioQueueLevelMeterState: Sendable, Equatable {
    /// RMS over the latest render cycle.
    public var averagePower: Float
    public var peakPower: Float
}

/// A timeline object (`AudioQueueTimelineRef`): remembers the discontinuity epoch it last saw.
///
/// Thread safety: use one timeline from one thread at a time.
public final class AudioQueueTimeline: @unchecked Sendable {
    var epoch: UInt64
    init(epoch: UInt64) { self.epoch = epoch }
}

/// A playback audio queue (`AudioQueueRef` made by `AudioQueueNewOutput`).
///
/// A handle stays tied to its own queue: once the queue is disposed of, every call through
/// the handle is refused with `.invalidQueue` (reads give neutral values), never applied to a
/// queue that later reuses its internal slot.
///
/// Thread safety: every method may be called from any thread but the render thread, including
/// from the output callback and listeners. Each queue has its own lock: one queue's work (a long
/// decode at enqueue) never delays another queue. Calls that block are marked so.
public final class AudioQueue: @unchecked Sendable {
    /// Called with a buffer the queue is done with: on the events thread (or the thread in
    /// ``AudioQueueEngine/deliverPendingEvents()``); for buffers handed back by an immediate
    /// ``stop(immediately:)`` or ``reset()``, on the thread that called it, before it returns.
    public typealias OutputCallback = @Sendable (AudioQueue, AudioQueueBuffer) -> Void
    /// Called when a property changed, on the thread that changed it (a setter, an immediate
    /// stop) or the events thread (run-state changes the render thread reports).
    public typealias PropertyListener = @Sendable (AudioQueue, AudioQueuePropertyID) -> Void

    /// The format buffers are in.
    public let format: AudioStreamBasicDescription
    /// The engine the queue plays on. The queue does not keep it alive: reading this after the
    /// engine was released is a programming error and stops the program with a message.
    /// Any thread; does not block.
    public var engine: AudioQueueEngine {
        guard let e = engineRef else {
            fatalError("AudioQueue.engine: the engine was released (queues do not keep their engine alive)")
        }
        return e
    }
    weak var engineRef: AudioQueueEngine?
    /// The engine's shared state (renderer, slot table, command ring), kept alive by the queue.
    let hub: EngineShared
    let slot: Int32
    /// Tells this queue from earlier and later queues in the same slot.
    let generation: UInt32
    /// Guards the queue's state (the fields below). Order: `callbackLock` → `lock` → the
    /// engine's lock → the engine's command lock; leaf locks (`flags`) last.
    let lock = NSLock()
    /// Held while a callback or listener of this queue runs (recursive, so that callbacks may
    /// call back); a disposal takes it, so none runs after ``dispose(immediately:)`` returned.
    let callbackLock = NSRecursiveLock()
    /// Guards `errorValue` and `listenerTable` (a leaf lock: nothing is taken while held).
    let flags = NSLock()
    /// The run state the render thread last reported (atomic: read without the queue lock).
    let runningFlag = Atomic<Bool>(false)
    let callback: OutputCallback
    /// PCM queues: the converter to planar float. Nil for compressed queues.
    let deinterleaver: PCMDeinterleaver?
    /// True for MP3, AAC and ALAC queues (decoded at enqueue by ``decoder``).
    let isCompressed: Bool
    let converter: RateConverter?
    /// Device frames per queue frame.
    let ratio: Double

    // Guarded by `lock`:
    var buffers: [AudioQueueBuffer?] = []
    var freeTokens: [UInt32] = []
    /// Buffers (and converter tails) handed to the render thread, in enqueue order, with the
    /// serial of that enqueue: a done event that matches none is stale.
    var inFlight: [(token: UInt32, serial: UInt32)] = []
    var enqueuedCount: Int { inFlight.count }
    var nextSerial: UInt32 = 0
    /// Timeline number: changes whenever queue time restarts (see RenderEvent.stopped).
    var epoch: UInt32 = 0
    /// Run number sent with starts; changed by a synchronous stop so that run-state events
    /// from before it are ignored.
    var run: UInt32 = 0
    /// A start was sent and no stop since.
    var startRequested = false
    /// A pause was sent and no start since.
    var pauseRequested = false
    /// Disposed of (or its engine closed): the handle is stale.
    var disposed = false
    /// Volume commands sent (compared with those the renderer applied).
    var volumeCommandsSent: Int64 = 0
    /// Offline rendering (see OfflineRender.swift).
    var offlineFormat: AudioStreamBasicDescription?
    var offlineLayout: AudioChannelLayout?
    var nextQueueFrame: Int64 = 0
    var nextDeviceFrame: Int64 = 0
    var streamOpen = false
    var scratch: [Float] = []
    var tails: [TailChunk] = []
    var disposing = false
    var disposeWhenStopped = false
    /// A stop after the enqueued buffers is under way: queue time restarts when it completes.
    var drainStopPending = false
    var volumeValue: Float = 1
    var meteringEnabled = false
    var layout: AudioChannelLayout
    var magicCookieBytes: [UInt8] = []
    // Compressed queues (guarded by `lock`):
    /// The decoder; nil until the magic cookie is set for formats that need one.
    var decoder: PacketDecoder?
    /// Corrupt packets counted by decoders this queue replaced (a new cookie makes a new one).
    var corruptPacketsBefore = 0
    /// Decoded planar frames at the queue's rate, before trimming and rate conversion.
    var decodeScratch: TailChunk?
    /// Frames decoded since the decoder stream started (the position gapless trimming counts in).
    var decodedPosition: Int64 = 0
    /// True once a packet was decoded since the last flush/reset (the decoder holds state).
    var decoderStreamOpen = false
    /// Priming/remainder frames to trim from the current stream (``setGaplessInfo(_:)``).
    var gapless: AudioFilePacketTableInfo?
    // Guarded by `flags`:
    var listenerTable: [(id: AudioQueuePropertyID, token: Int, listener: PropertyListener)] = []
    var nextListenerToken = 0
    var errorValue: AudioQueueError?
    // Guarded by `lock`:
    var startFrame: Int64?
    var lateStartFrames: Int64 = 0
    var lateFramesTotal: Int64 = 0
    var framesPlayed: Int64 = 0
    var droppedTailFrames = 0
    /// Why the queue stopped on its own (the device went away), if it did. Any thread.
    var lastError: AudioQueueError? {
        get { flags.lock(); defer { flags.unlock() }; return errorValue }
        set { flags.lock(); errorValue = newValue; flags.unlock() }
    }
    /// The run state (lock-free). Any thread.
    var isRunningValue: Bool {
        get { runningFlag.load(ordering: .acquiring) }
        set { runningFlag.store(newValue, ordering: .releasing) }
    }

    /// Rate-conversion tails: frames the converter still held when a stream was flushed.
    final class TailChunk {
        let storage: UnsafeMutablePointer<Float>
        let channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
        let capacity: Int
        var inFlight = false
        init(channels n: Int, capacity: Int) {
            self.capacity = capacity
            storage = .allocate(capacity: n * capacity)
            storage.initialize(repeating: 0, count: n * capacity)
            channels = .allocate(capacity: n)
            for c in 0..<n { channels[c] = storage + c * capacity }
        }
        deinit {
            storage.deallocate()
            channels.deallocate()
        }
    }
    static let tailTokenBit: UInt32 = 0x8000_0000

    init(
        engine: AudioQueueEngine, slot: Int32, generation: UInt32, format: AudioStreamBasicDescription,
        deinterleaver: PCMDeinterleaver?, decoder: PacketDecoder?, converter: RateConverter?,
        callback: @escaping OutputCallback
    ) {
        self.engineRef = engine
        self.hub = engine.shared
        self.slot = slot
        self.generation = generation
        self.format = format
        self.deinterleaver = deinterleaver
        self.decoder = decoder
        self.isCompressed = deinterleaver == nil
        self.converter = converter
        self.callback = callback
        self.ratio = engine.device.sampleRate / format.sampleRate
        let n = Int(format.channelsPerFrame)
        layout = n == 1 ? .mono : n == 2 ? .stereo : .discrete(n)
        if converter != nil || deinterleaver == nil {
            let tailCapacity = RateConverter.maximumOutputFrames(inputFrames: 8192, inputRate: format.sampleRate, outputRate: hub.device.sampleRate)
            tails = [TailChunk(channels: n, capacity: tailCapacity), TailChunk(channels: n, capacity: tailCapacity)]
        }
    }

    var channels: Int { Int(format.channelsPerFrame) }

    /// Throws unless the queue can take commands. Queue lock held.
    func checkLive() throws(AudioQueueError) {
        if hub.closed { throw AudioQueueError(.invalidDevice, "the engine is closed") }
        if disposed { throw AudioQueueError(.invalidQueue, "the queue was disposed of: the handle is stale") }
        if disposing { throw AudioQueueError(.disposalPending, "the queue is being disposed of") }
    }

    /// `body`'s value, computed with the queue lock held.
    @inline(__always)
    func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
    var bytesPerFrame: Int { Int(format.bytesPerFrame) }

    // MARK: - Buffers

    /// Allocates a buffer of `capacity` bytes (`AudioQueueAllocateBuffer`), with room for
    /// `packetDescriptions` packet descriptions (`AudioQueueAllocateBufferWithPacketDescriptions`).
    /// Its render-side storage is allocated here too, so enqueueing never allocates on the
    /// render side: for PCM, `capacity` bytes of frames; for compressed queues,
    /// `packetDescriptions` × the format's most frames per packet (× the rate ratio when the
    /// queue's rate differs from the device's).
    ///
    /// Any thread but the render thread.
    /// - Throws: `.invalidParameter` for a capacity out of range, or a compressed queue's
    ///   buffer without packet descriptions (compressed buffers always carry them);
    ///   `.disposalPending`.
    public func allocateBuffer(capacity: Int, packetDescriptions: Int = 0) throws(AudioQueueError) -> AudioQueueBuffer {
        guard capacity > 0, capacity <= 1 << 30 else {
            throw AudioQueueError(.invalidParameter, "buffer capacity \(capacity) bytes is out of range (1 byte to 1 GiB)")
        }
        guard packetDescriptions >= 0, packetDescriptions <= 1 << 20 else {
            throw AudioQueueError(.invalidParameter, "\(packetDescriptions) packet descriptions is out of range (0 to 2^20)")
        }
        if isCompressed && packetDescriptions == 0 {
            throw AudioQueueError(.invalidParameter, "a \(format.formatID) queue's buffers need packet descriptions (allocateBuffer(capacity:packetDescriptions:))")
        }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        let frames: Int
        if isCompressed {
            frames = packetDescriptions * maximumFramesPerPacket
            if (decodeScratch?.capacity ?? 0) < frames { decodeScratch = TailChunk(channels: channels, capacity: frames) }
        } else {
            frames = capacity / max(bytesPerFrame, 1)
        }
        let renderFrames = converter == nil ? frames
            : RateConverter.maximumOutputFrames(inputFrames: frames, inputRate: format.sampleRate, outputRate: hub.device.sampleRate)
        let token: UInt32
        if let t = freeTokens.popLast() { token = t } else {
            token = UInt32(buffers.count)
            buffers.append(nil)
        }
        let b = AudioQueueBuffer(
            queue: self, token: token, capacity: capacity, packetDescriptions: packetDescriptions, channels: channels,
            renderCapacity: max(renderFrames, 1))
        buffers[Int(token)] = b
        return b
    }

    /// Frees a buffer (`AudioQueueFreeBuffer`). Refused while it is enqueued. Any thread but
    /// the render thread; does not block.
    public func freeBuffer(_ buffer: AudioQueueBuffer) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        if disposed { throw AudioQueueError(.invalidQueue, "the queue was disposed of (its buffers with it)") }
        guard buffer.queue === self, Int(buffer.token) < buffers.count, buffers[Int(buffer.token)] === buffer else {
            throw AudioQueueError(.invalidBuffer, "the buffer does not belong to this queue")
        }
        if buffer.isEnqueued { throw AudioQueueError(.bufferInQueue, "the buffer is enqueued; it can be freed once it comes back") }
        buffers[Int(buffer.token)] = nil
        freeTokens.append(buffer.token)
    }

    /// Enqueues a buffer to play right after the previous one (`AudioQueueEnqueueBuffer`).
    @discardableResult
    public func enqueue(_ buffer: AudioQueueBuffer) throws(AudioQueueError) -> AudioTimeStamp {
        try enqueue(buffer, trimFramesAtStart: 0, trimFramesAtEnd: 0, parameterEvents: [], startTime: nil)
    }

    /// Enqueues a buffer with parameters (`AudioQueueEnqueueBufferWithParameters`).
    ///
    /// - Parameters:
    ///   - trimFramesAtStart: frames at the buffer's start not played.
    ///   - trimFramesAtEnd: frames at its end not played.
    ///   - parameterEvents: values that take effect on the buffer's first played frame, exactly.
    ///   - startTime: when its first played frame plays, in queue frames (the sample time; a
    ///     time stamp without one is refused); nil for right after the previous buffer. Start
    ///     times must not go back: a time before the end of the previous buffer is refused
    ///     with `.invalidParameter`.
    /// - Returns: the queue time at which the buffer's first played frame will play.
    /// - Throws: `.invalidBuffer` (another queue's, or already enqueued), `.bufferEmpty`,
    ///   `.invalidParameter`, `.disposalPending`, `.capacityExceeded`.
    @discardableResult
    public func enqueue(
        _ buffer: AudioQueueBuffer, trimFramesAtStart: Int = 0, trimFramesAtEnd: Int = 0,
        parameterEvents: [AudioQueueParameterEvent] = [], startTime: AudioTimeStamp? = nil
    ) throws(AudioQueueError) -> AudioTimeStamp {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        try hub.checkUsableLocking()
        guard buffer.queue === self, Int(buffer.token) < buffers.count, buffers[Int(buffer.token)] === buffer else {
            throw AudioQueueError(.invalidBuffer, "the buffer does not belong to this queue")
        }
        if buffer.isEnqueued { throw AudioQueueError(.invalidBuffer, "the buffer is already enqueued") }
        guard buffer.audioDataByteSize > 0 else { throw AudioQueueError(.bufferEmpty, "the buffer holds no audio (audioDataByteSize is 0)") }
        guard buffer.audioDataByteSize <= buffer.audioDataBytesCapacity else {
            throw AudioQueueError(.invalidBuffer, "audioDataByteSize \(buffer.audioDataByteSize) exceeds the capacity \(buffer.audioDataBytesCapacity)")
        }
        guard trimFramesAtStart >= 0, trimFramesAtEnd >= 0 else {
            throw AudioQueueError(.invalidParameter, "trim frames must not be negative")
        }
        if isCompressed {
            return try enqueueCompressed(
                buffer, trimFramesAtStart: trimFramesAtStart, trimFramesAtEnd: trimFramesAtEnd,
                parameterEvents: parameterEvents, startTime: startTime)
        }
        guard let deinterleaver else { throw AudioQueueError(.unsupportedDataFormat, "no converter for \(format.formatID)") }
        let frames = buffer.audioDataByteSize / bytesPerFrame
        let played = frames - trimFramesAtStart - trimFramesAtEnd
        guard played > 0 else {
            throw AudioQueueError(.bufferEmpty, "trims of \(trimFramesAtStart)+\(trimFramesAtEnd) frames leave nothing of \(frames) frames")
        }
        let volume = try volumeEvent(parameterEvents)
        let q = try startQueueFrame(startTime)
        try checkRoomToEnqueue()
        let source = UnsafeRawPointer(buffer.audioData + trimFramesAtStart * bytesPerFrame)
        let start: Int64
        let deviceFrames: Int
        if let converter {
            if q != nextQueueFrame || !streamOpen {
                if streamOpen { flushTail() }
                converter.reset()
                nextDeviceFrame = Int64((Double(q) * ratio).rounded())
                streamOpen = true
            }
            if scratch.count < played * channels { scratch = [Float](repeating: 0, count: played * channels) }
            deviceFrames = scratch.withUnsafeMutableBufferPointer { s in
                let base = s.baseAddress!
                let outs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
                let ins = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
                defer { outs.deallocate(); ins.deallocate() }
                for c in 0..<channels { outs[c] = base + c * played; ins[c] = UnsafePointer(base + c * played) }
                deinterleaver.convert(source, frames: played, into: outs, offset: 0)
                return converter.process(input: ins, frames: played, output: buffer.renderChannels, capacity: buffer.renderCapacity)
            }
            start = nextDeviceFrame
            nextDeviceFrame += Int64(deviceFrames)
        } else {
            deinterleaver.convert(source, frames: played, into: buffer.renderChannels, offset: 0)
            start = q
            deviceFrames = played
        }
        return try schedule(
            buffer, queueFrame: q, played: played, start: start, deviceFrames: deviceFrames, volume: volume,
            flexible: startTime == nil)
    }

    /// Hands a converted buffer to the render thread: `deviceFrames` frames of its render
    /// storage at queue device frame `start`; queue time moves on by `played` frames from `q`.
    /// Engine lock held.
    private func schedule(
        _ buffer: AudioQueueBuffer, queueFrame q: Int64, played: Int, start: Int64, deviceFrames: Int, volume: Float,
        flexible: Bool
    ) throws(AudioQueueError) -> AudioTimeStamp {
        nextSerial &+= 1
        let scheduled = ScheduledBuffer(
            token: buffer.token, data: buffer.render, stride: Int32(buffer.renderCapacity), frames: Int32(deviceFrames),
            start: start, volume: volume, serial: nextSerial, epoch: epoch, flexible: flexible)
        try hub.send(.enqueue(slot: slot, buffer: scheduled))
        nextQueueFrame = q + Int64(played)
        buffer.isEnqueued = true
        buffer.preparedFrames = played
        inFlight.append((buffer.token, nextSerial))
        return AudioTimeStamp(sampleTime: Double(q))
    }

    /// The most frames a packet of this queue's format decodes to.
    var maximumFramesPerPacket: Int {
        max(decoder?.maximumFramesPerPacket ?? 0, PacketDecoder.maximumFramesPerPacket(format))
    }

    /// Checks parameter events; returns the volume event's value or NaN. Lock held.
    func volumeEvent(_ parameterEvents: [AudioQueueParameterEvent]) throws(AudioQueueError) -> Float {
        var volume = Float.nan
        for e in parameterEvents {
            guard e.parameter == AudioQueueParameterID.volume.rawValue else {
                throw AudioQueueError(.invalidParameter, "unknown parameter ID \(e.parameter)")
            }
            guard e.value.isFinite, e.value >= 0, e.value <= 1 else {
                throw AudioQueueError(.invalidParameter, "volume \(e.value) is outside 0…1 (kAudioQueueParam_Volume)")
            }
            volume = e.value
        }
        return volume
    }

    /// Throws `.capacityExceeded` unless one more buffer (and a converter tail after it) fits
    /// in the queue's schedule and the command ring. Lock held.
    func checkRoomToEnqueue() throws(AudioQueueError) {
        guard enqueuedCount < hub.capacities.buffersPerQueue - 1 else {
            throw AudioQueueError(.capacityExceeded, "\(enqueuedCount) buffers are enqueued, the most a queue holds is \(hub.capacities.buffersPerQueue - 1)")
        }
        guard hub.core.pointee.commands.freeCount >= 2 else {
            throw AudioQueueError(.capacityExceeded, "the command ring is full")
        }
    }

    /// The queue frame a buffer starts at: `startTime`'s sample time, or right after the
    /// previous buffer. Lock held.
    func startQueueFrame(_ startTime: AudioTimeStamp?) throws(AudioQueueError) -> Int64 {
        guard let st = startTime else { return nextQueueFrame }
        guard st.flags.contains(.sampleTimeValid), st.sampleTime.isFinite else {
            throw AudioQueueError(.invalidParameter, "a buffer's start time needs a sample time (queue frames)")
        }
        let want = Int64(st.sampleTime.rounded())
        guard want >= nextQueueFrame else {
            throw AudioQueueError(.invalidParameter, "start time \(want) is before the end of the previous buffer (\(nextQueueFrame)): start times must ascend")
        }
        return want
    }

    /// The compressed half of ``enqueue(_:trimFramesAtStart:trimFramesAtEnd:parameterEvents:startTime:)``:
    /// decodes every packet of the buffer on the calling thread, trims (gapless, then the
    /// caller's trims), converts the rate, and schedules the result. Lock held.
    func enqueueCompressed(
        _ buffer: AudioQueueBuffer, trimFramesAtStart: Int, trimFramesAtEnd: Int,
        parameterEvents: [AudioQueueParameterEvent], startTime: AudioTimeStamp?
    ) throws(AudioQueueError) -> AudioTimeStamp {
        guard let decoder else {
            throw AudioQueueError(.invalidProperty, "a \(format.formatID) queue needs its magic cookie (setMagicCookie) before the first buffer is enqueued")
        }
        let count = buffer.packetDescriptionCount
        guard let descs = buffer.packetDescriptions, count > 0 else {
            throw AudioQueueError(.bufferEmpty, "the buffer has no packet descriptions (packetDescriptionCount is 0)")
        }
        guard count <= buffer.packetDescriptionCapacity else {
            throw AudioQueueError(.invalidBuffer, "packetDescriptionCount \(count) exceeds the capacity \(buffer.packetDescriptionCapacity)")
        }
        for i in 0..<count {
            let d = descs[i]
            guard d.startOffset >= 0, d.startOffset + Int64(d.dataByteSize) <= Int64(buffer.audioDataByteSize) else {
                throw AudioQueueError(.invalidParameter, "packet \(i) (\(d.startOffset) + \(d.dataByteSize) bytes) lies outside the buffer's \(buffer.audioDataByteSize) bytes")
            }
        }
        let volume = try volumeEvent(parameterEvents)
        let q = try startQueueFrame(startTime)
        try checkRoomToEnqueue()
        let needed = count * maximumFramesPerPacket
        if (decodeScratch?.capacity ?? 0) < needed { decodeScratch = TailChunk(channels: channels, capacity: needed) }
        let scratch = decodeScratch!
        // Decode: every packet, in order; corrupt ones become silence of their length.
        var decoded = 0
        for i in 0..<count {
            let d = descs[i]
            let expected = d.variableFramesInPacket > 0 ? Int(d.variableFramesInPacket)
                : format.framesPerPacket > 0 ? Int(format.framesPerPacket) : maximumFramesPerPacket
            let bytes = UnsafeRawBufferPointer(start: buffer.audioData + Int(d.startOffset), count: Int(d.dataByteSize))
            decoded += decoder.decode(bytes, framesIfCorrupt: expected, into: scratch.channels, offset: decoded, capacity: scratch.capacity)
        }
        decoderStreamOpen = true
        let (from, to) = keptRange(decoded: decoded, trimStart: trimFramesAtStart, trimEnd: trimFramesAtEnd)
        let played = to - from
        let start: Int64
        let deviceFrames: Int
        if let converter {
            if q != nextQueueFrame || !streamOpen {
                if streamOpen { flushRateTail() }
                converter.reset()
                nextDeviceFrame = Int64((Double(q) * ratio).rounded())
                streamOpen = true
            }
            deviceFrames = played == 0 ? 0 : process(converter, scratch, from: from, frames: played, into: buffer.renderChannels, capacity: buffer.renderCapacity)
            start = nextDeviceFrame
            nextDeviceFrame += Int64(deviceFrames)
        } else {
            let n = min(played, buffer.renderCapacity)
            for c in 0..<channels where n > 0 { buffer.renderChannels[c].update(from: scratch.channels[c] + from, count: n) }
            start = q
            deviceFrames = n
        }
        return try schedule(
            buffer, queueFrame: q, played: played, start: start, deviceFrames: deviceFrames, volume: volume,
            flexible: startTime == nil)
    }

    /// Of `decoded` frames just decoded at stream position `decodedPosition`, the range to
    /// play: the caller's trims, then the gapless priming/valid window. Advances the position.
    /// Lock held.
    func keptRange(decoded: Int, trimStart: Int, trimEnd: Int) -> (Int, Int) {
        let s = decodedPosition
        decodedPosition += Int64(decoded)
        var from = Int64(min(trimStart, decoded))
        var to = Int64(max(decoded - trimEnd, 0))
        if let g = gapless {
            from = max(from, Int64(g.primingFrames) - s)
            if g.numberValidFrames > 0 { to = min(to, Int64(g.primingFrames) + g.numberValidFrames - s) }
        }
        from = min(max(from, 0), Int64(decoded))
        to = max(min(to, Int64(decoded)), from)
        return (Int(from), Int(to))
    }

    /// Runs `frames` planar frames of `src` from `from` through the rate converter.
    func process(
        _ converter: RateConverter, _ src: TailChunk, from: Int, frames: Int,
        into output: UnsafePointer<UnsafeMutablePointer<Float>>, capacity: Int
    ) -> Int {
        let ins = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
        defer { ins.deallocate() }
        for c in 0..<channels { ins[c] = UnsafePointer(src.channels[c] + from) }
        return converter.process(input: ins, frames: frames, output: output, capacity: capacity)
    }

    /// Ends the decoder's stream: drains it, schedules what it still held (after trimming)
    /// right after the last buffer, and resets it and the gapless window. Lock held.
    func flushDecoder() {
        guard let decoder, decoderStreamOpen else { return }
        decoderStreamOpen = false
        defer {
            decoder.reset()
            decodedPosition = 0
            gapless = nil
        }
        guard let scratch = decodeScratch else { return }
        let drained = decoder.drain(into: scratch.channels, offset: 0, capacity: scratch.capacity)
        let (from, to) = keptRange(decoded: drained, trimStart: 0, trimEnd: 0)
        guard to > from, let i = tails.firstIndex(where: { !$0.inFlight }) else { return }
        let tail = tails[i]
        var n = 0
        let start: Int64
        if let converter {
            if !streamOpen { converter.reset(); nextDeviceFrame = Int64((Double(nextQueueFrame) * ratio).rounded()); streamOpen = true }
            n = process(converter, scratch, from: from, frames: min(to - from, 8192), into: tail.channels, capacity: tail.capacity)
            start = nextDeviceFrame
        } else {
            n = min(to - from, tail.capacity)
            for c in 0..<channels { tail.channels[c].update(from: scratch.channels[c] + from, count: n) }
            start = nextQueueFrame
        }
        nextQueueFrame += Int64(to - from)
        guard n > 0 else { return }
        if sendTail(i, frames: n, start: start), converter != nil { nextDeviceFrame += Int64(n) }
    }

    /// Ends the stream: the decoder's remaining frames, then the rate converter's. Lock held.
    func flushTail() {
        flushDecoder()
        flushRateTail()
    }

    /// Schedules what the rate converter still holds, right after the stream so far. Lock held.
    func flushRateTail() {
        guard let converter, streamOpen else { return }
        streamOpen = false
        guard let i = tails.firstIndex(where: { !$0.inFlight }) else {
            droppedTailFrames += 1
            return
        }
        let tail = tails[i]
        let n = converter.flush(output: tail.channels, capacity: tail.capacity)
        guard n > 0 else { return }
        if sendTail(i, frames: n, start: nextDeviceFrame) { nextDeviceFrame += Int64(n) }
    }

    /// Hands tail `i` (`frames` frames at queue device frame `start`) to the render thread;
    /// false (and the tail's frames dropped, counted) when the rings are full. Lock held.
    func sendTail(_ i: Int, frames n: Int, start: Int64) -> Bool {
        let tail = tails[i]
        nextSerial &+= 1
        let scheduled = ScheduledBuffer(
            token: AudioQueue.tailTokenBit | UInt32(i), data: tail.storage, stride: Int32(tail.capacity), frames: Int32(n),
            start: start, serial: nextSerial, epoch: epoch, flexible: true)
        do {
            try hub.send(.enqueue(slot: slot, buffer: scheduled))
        } catch {
            droppedTailFrames += n
            return false
        }
        tail.inFlight = true
        inFlight.append((scheduled.token, nextSerial))
        return true
    }

    /// Queue time restarts from zero (after a stop or reset): a new timeline epoch. Lock held.
    func resetTimeline() {
        nextQueueFrame = 0
        nextDeviceFrame = 0
        epoch &+= 1
        endStream()
    }

    /// Forgets the converter's and decoder's stream. Lock held.
    func endStream() {
        streamOpen = false
        converter?.reset()
        decoder?.reset()
        decoderStreamOpen = false
        decodedPosition = 0
        gapless = nil
    }

    /// Every buffer in flight is the caller's again (the renderer has let go of them: a
    /// synchronous stop, reset or dispose was applied). Returns the user's buffers in enqueue
    /// order; their done events, still on their way, are stale. Lock held.
    func takeBackAll() -> [AudioQueueBuffer] {
        var out: [AudioQueueBuffer] = []
        for (token, _) in inFlight {
            if token & AudioQueue.tailTokenBit != 0 {
                let i = Int(token & ~AudioQueue.tailTokenBit)
                if i < tails.count { tails[i].inFlight = false }
            } else if Int(token) < buffers.count, let b = buffers[Int(token)] {
                b.isEnqueued = false
                out.append(b)
            }
        }
        inFlight.removeAll()
        return out
    }

    /// The handle becomes stale and its buffers are released (disposal, or the engine
    /// closed). Lock held.
    func goneLocked() {
        _ = takeBackAll()
        disposed = true
        disposing = true
        startRequested = false
        isRunningValue = false
        for case let b? in buffers { b.isEnqueued = false }
        buffers.removeAll()
        freeTokens.removeAll()
        tails.removeAll()
    }

    /// The engine closed. Any control thread.
    func markGone() {
        lock.lock()
        goneLocked()
        lock.unlock()
    }

    // MARK: - Events (events thread, or the thread in deliverPendingEvents)

    /// The render thread is done with a buffer: it goes back to the caller through the
    /// callback, unless a synchronous call already handed it back (a stale event) or the
    /// queue is being disposed of.
    func bufferDone(token: UInt32, serial: UInt32, played: Bool, lateFrames: Int64) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        guard let k = inFlight.firstIndex(where: { $0.token == token && $0.serial == serial }) else {
            lock.unlock()
            return
        }
        inFlight.remove(at: k)
        lateFramesTotal += lateFrames
        var buffer: AudioQueueBuffer?
        if token & AudioQueue.tailTokenBit != 0 {
            let i = Int(token & ~AudioQueue.tailTokenBit)
            if i < tails.count { tails[i].inFlight = false }
        } else if Int(token) < buffers.count, let b = buffers[Int(token)] {
            b.isEnqueued = false
            buffer = b
        }
        let callback = disposing ? nil : callback
        lock.unlock()
        if let buffer, let callback { callback(self, buffer) }
    }

    /// The queue's first frame played.
    func started(run: UInt32, frame: Int64, lateFrames: Int64) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        guard run == self.run, !disposing else { lock.unlock(); return }
        startFrame = frame
        lateStartFrames = lateFrames
        let changed = !isRunningValue
        isRunningValue = true
        lock.unlock()
        if changed { notify(.isRunning) }
    }

    /// The queue stopped by itself (a stop after the enqueued buffers completed).
    func stopped(run: UInt32, drainEnd: Int64) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        guard run == self.run, !disposed else { lock.unlock(); return }
        if drainEnd >= 0 && drainStopPending {
            // Queue time restarts: buffers enqueued since the drain ended were moved back by
            // the renderer (same epoch); what is enqueued from now on starts a new epoch.
            nextDeviceFrame = max(0, nextDeviceFrame - drainEnd)
            nextQueueFrame = max(0, nextQueueFrame - Int64((Double(drainEnd) / ratio).rounded()))
            epoch &+= 1
            endStream()
        }
        drainStopPending = false
        startRequested = false
        let changed = isRunningValue
        isRunningValue = false
        if disposeWhenStopped {
            disposeWhenStopped = false
            disposeNowLocked()
            lock.unlock()
            return
        }
        let quiet = disposing
        lock.unlock()
        if changed && !quiet { notify(.isRunning) }
    }

    /// Calls the listeners of `id` on the calling thread (callback lock held by the caller, or
    /// taken here). Never with the queue lock held.
    func notify(_ id: AudioQueuePropertyID) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        if locked({ disposing }) { return }
        for l in listeners(for: id) { l(self, id) }
    }

    /// Disposes of the queue now: the renderer lets go of it (synchronously), the slot is
    /// free, the handle stale. Queue lock (and callback lock) held.
    func disposeNowLocked() {
        if !hub.closed { try? hub.sendNow([.release(slot: slot)]) }
        goneLocked()
        hub.freeSlot(self)
    }

    // MARK: - Control

    /// Starts playing (`AudioQueueStart`) at device time `time`, or as soon as possible when nil.
    /// A paused queue resumes. Buffers enqueued before the start keep their queue times.
    /// Any thread but the render thread; does not block. `isRunning` turns true (and its
    /// listeners run, on the events thread) when the first frame plays.
    public func start(at time: AudioTimeStamp? = nil) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        try hub.checkUsableLocking()
        var frame: Int64?
        if let time {
            guard let tb = hub.timebase ?? (time.flags.contains(.sampleTimeValid) ? DeviceTimebase(anchorFrame: 0, anchorHostTime: 0, nominalRate: hub.device.sampleRate, rateScalar: 1) : nil),
                  let full = tb.complete(time)
            else { throw AudioQueueError(.invalidParameter, "a start time needs a sample time or a host time") }
            frame = Int64(full.sampleTime.rounded())
        }
        try hub.send(.start(slot: slot, frame: frame, run: run))
        startRequested = true
        pauseRequested = false
        lastError = nil
    }

    /// Prepares enqueued audio for playback (`AudioQueuePrime`). Linear PCM is converted and
    /// compressed packets are decoded when they are enqueued, on the enqueuing thread, so
    /// everything enqueued is already decoded: this only reports what is ready.
    /// Any thread but the render thread; does not block.
    /// - Returns: the queue frame up to which audio is enqueued and ready to play (after
    ///   trimming).
    @discardableResult
    public func prime() throws(AudioQueueError) -> Int {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        return Int(nextQueueFrame)
    }

    /// `AudioQueuePrime(inAQ, inNumberOfFramesToPrepare, &outNumberOfFramesPrepared)`: every
    /// enqueued buffer was decoded when it was enqueued, so at least `framesToPrepare` frames
    /// (0: all) are ready at once. Any thread but the render thread; does not block.
    /// - Returns: the frames decoded and waiting to play: the queue frames enqueued and not yet
    ///   handed back, at the queue's rate.
    /// - Throws: `.invalidParameter` for a negative count, and what ``prime()`` throws.
    public func prime(framesToPrepare: Int) throws(AudioQueueError) -> Int {
        guard framesToPrepare >= 0 else { throw AudioQueueError(.invalidParameter, "a negative frame count to prepare") }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        var frames = 0
        for (token, _) in inFlight where token & AudioQueue.tailTokenBit == 0 {
            if Int(token) < buffers.count, let b = buffers[Int(token)] { frames += b.preparedFrames }
        }
        return frames
    }

    /// Pauses (`AudioQueuePause`) at the start of the next render cycle; queue time stops with
    /// it. ``start(at:)`` resumes. Any thread but the render thread; does not block.
    public func pause() throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        try hub.send(.pause(slot: slot))
        pauseRequested = true
    }

    /// Stops (`AudioQueueStop`).
    ///
    /// Immediately (`true`): synchronous, as the reference says. When it returns the queue is
    /// stopped (`isRunning` false), every enqueued buffer has come back through the output
    /// callback — called on this thread, before it returns — and may be freed or refilled, and
    /// queue time restarts at 0. It blocks until the renderer applied the stop: on a device
    /// rendering on its own thread, its next cycle; on the hand-driven device, or a device that
    /// stopped or stalled, this thread applies it (docs/architecture.md, "Synchronous calls").
    /// It also waits for a callback of this queue running on another thread.
    ///
    /// Not immediately (`false`): returns at once; the queue stops once every enqueued buffer
    /// has played, and `isRunning` listeners hear it on the events thread.
    ///
    /// Any thread but the render thread, including callbacks.
    public func stop(immediately: Bool) throws(AudioQueueError) {
        if !immediately {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            flushTail()
            try hub.send(.stop(slot: slot, immediately: false, epoch: epoch))
            drainStopPending = true
            return
        }
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        do throws(AudioQueueError) {
            try checkLive()
            try hub.sendNow([.stop(slot: slot, immediately: true, epoch: epoch)])
        } catch {
            lock.unlock()
            throw error
        }
        let returned = takeBackAll()
        run &+= 1
        resetTimeline()
        drainStopPending = false
        startRequested = false
        let changed = isRunningValue
        isRunningValue = false
        lock.unlock()
        for b in returned { callback(self, b) }
        if changed { notify(.isRunning) }
    }

    /// Makes sure everything enqueued will play (`AudioQueueFlush`): the decoder is drained
    /// (libavcodec's end-of-stream packet) and what it still held, then the rate converter's
    /// remaining frames, are scheduled right after the last buffer. It ends the stream: the
    /// decoder is reset and the gapless window (``setGaplessInfo(_:)``) cleared, so the next
    /// buffer starts a new stream. Call it after the last buffer of a stream (a track).
    /// Any thread but the render thread; does not block.
    public func flush() throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        flushTail()
    }

    /// Resets (`AudioQueueReset`), synchronously: when it returns every enqueued buffer has
    /// come back through the output callback (called on this thread), the converter and
    /// decoder state is cleared, and queue time restarts at zero; the run state is kept, and
    /// the next buffer enqueued plays as soon as the queue runs. Blocks as an immediate
    /// ``stop(immediately:)`` does. Any thread but the render thread, including callbacks.
    public func reset() throws(AudioQueueError) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        do throws(AudioQueueError) {
            try checkLive()
            try hub.sendNow([.reset(slot: slot)])
        } catch {
            lock.unlock()
            throw error
        }
        let returned = takeBackAll()
        resetTimeline()
        lock.unlock()
        for b in returned { callback(self, b) }
    }

    /// Disposes of the queue (`AudioQueueDispose`) and its buffers.
    ///
    /// Immediately (`true`): synchronous. When it returns the renderer has let go of the queue,
    /// its slot is free for a new queue, and no callback or listener of this queue runs ever
    /// again (it waits for one running on another thread to return; called from this queue's
    /// own callback, that callback is the last). Every later call through this handle is
    /// refused with `.invalidQueue`. Blocks as an immediate ``stop(immediately:)`` does.
    ///
    /// Not immediately (`false`): the enqueued buffers play first; from this call on no callback
    /// or listener of the queue runs (the reference: "the audio queue no longer invokes any
    /// callbacks"), calls through the handle are refused with `.disposalPending`, and the
    /// disposal completes on the events thread when the last buffer has played. A queue that
    /// is not running is disposed of at once.
    ///
    /// Any thread but the render thread, including callbacks.
    public func dispose(immediately: Bool) throws(AudioQueueError) {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        lock.lock()
        defer { lock.unlock() }
        if disposed { throw AudioQueueError(.invalidQueue, "the queue was already disposed of") }
        if disposing { throw AudioQueueError(.disposalPending, "the queue is already being disposed of") }
        if hub.closed { goneLocked(); return }
        // A queue that is not playing has nothing to drain (a paused one would wait forever:
        // its handle refuses start from now on).
        if immediately || !(isRunningValue || startRequested) || pauseRequested || inFlight.isEmpty {
            try hub.sendNow([.release(slot: slot)])
            goneLocked()
            hub.freeSlot(self)
        } else {
            flushTail()
            try hub.send(.stop(slot: slot, immediately: false, epoch: epoch))
            disposeWhenStopped = true
            drainStopPending = true
            disposing = true
        }
    }

    // MARK: - Parameters

    /// A parameter's current value (`AudioQueueGetParameter`): the value in force, whether it
    /// was set with ``setParameter(_:_:)`` or by a buffer's parameter event; a value just set
    /// is returned at once. A stale handle reads 0. Any thread but the render thread; does not
    /// block.
    public func parameter(_ id: AudioQueueParameterID) -> Float {
        lock.lock()
        defer { lock.unlock() }
        if disposed { return 0 }
        let rendered = hub.core.pointee.volume(slot: Int(slot))
        return rendered.commandsApplied >= volumeCommandsSent ? rendered.value : volumeValue
    }

    /// Sets a parameter now (`AudioQueueSetParameter`). Volume is a linear gain from 0 to 1
    /// (values outside are refused with `.invalidParameter`). On a running queue it ramps
    /// linearly over the engine's ``AudioQueueEngine/volumeRampSeconds`` (never a step); on a
    /// stopped or paused queue it applies at once, so the first frame played has it.
    /// Any thread but the render thread; does not block.
    public func setParameter(_ id: AudioQueueParameterID, _ value: Float) throws(AudioQueueError) {
        guard value.isFinite, value >= 0, value <= 1 else {
            throw AudioQueueError(.invalidParameter, "volume \(value) is outside 0…1 (kAudioQueueParam_Volume)")
        }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        let ramp = Int32((hub.volumeRampSeconds * hub.device.sampleRate).rounded())
        try hub.send(.setVolume(slot: slot, volume: value, rampFrames: ramp))
        volumeValue = value
        volumeCommandsSent += 1
    }

    /// Sets a parameter by raw ID; unknown IDs are refused with `.invalidParameter`.
    /// Any thread but the render thread; does not block.
    public func setParameter(rawID: UInt32, _ value: Float) throws(AudioQueueError) {
        guard let id = AudioQueueParameterID(rawValue: rawID) else {
            throw AudioQueueError(.invalidParameter, "unknown parameter ID \(rawID)")
        }
        try setParameter(id, value)
    }

    // MARK: - Properties

    /// `kAudioQueueProperty_IsRunning`: true from the cycle its first frame plays until it
    /// stops. False for a stale handle. Any thread; does not block.
    public var isRunning: Bool { isRunningValue }

    /// Why the queue stopped by itself (its device went away), or nil. Any thread.
    public var error: AudioQueueError? { lastError }

    /// `kAudioQueueDeviceProperty_SampleRate`
    public var deviceSampleRate: Double { hub.device.sampleRate }
    /// `kAudioQueueDeviceProperty_NumberChannels`
    public var deviceChannelCount: Int { hub.device.outputChannelCount }
    /// `kAudioQueueProperty_CurrentDevice`: the device's unique identifier.
    public var currentDevice: String { hub.device.uid }

    /// `kAudioQueueProperty_ChannelLayout` (see ``setChannelLayout(_:)``).
    public var channelLayout: AudioChannelLayout { locked { layout } }

    /// Sets the channel layout (`kAudioQueueProperty_ChannelLayout`): the order of the
    /// queue's channels. It is applied: each channel plays on the device output of its
    /// speaker (see ``AudioChannelLayout/channelMap(outputs:)``; outputs in WAVE order: L, R,
    /// C, LFE, Ls, Rs, Lc, Rc), replacing an earlier ``setOutputChannels(_:)``. Its channel count
    /// must match the format's (`.invalidPropertySize` otherwise), and the queue must be
    /// stopped (`.invalidRunState` otherwise). Listeners of `.channelLayout` run on the calling
    /// thread afterwards. Any thread but the render thread; does not block.
    public func setChannelLayout(_ l: AudioChannelLayout) throws(AudioQueueError) {
        guard l.channelCount == channels else {
            throw AudioQueueError(.invalidPropertySize, "a layout of \(l.channelCount) channels for a \(channels)-channel queue")
        }
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            if isRunningValue { throw AudioQueueError(.invalidRunState, "the channel layout can only change while the queue is stopped") }
            try hub.send(.setChannelMap(slot: slot, map: l.channelMap(outputs: hub.device.outputChannelCount)))
            layout = l
        }
        notify(.channelLayout)
    }

    /// Routes queue channel `i` to device output `outputs[i]` (0-based; -1: not played).
    /// The default: a mono queue on every output, an n-channel queue on the first n.
    public func setOutputChannels(_ outputs: [Int]) throws(AudioQueueError) {
        guard outputs.count == channels else {
            throw AudioQueueError(.invalidPropertySize, "\(outputs.count) outputs for a \(channels)-channel queue")
        }
        guard outputs.allSatisfy({ $0 >= -1 && $0 < hub.device.outputChannelCount }) else {
            throw AudioQueueError(.invalidParameter, "outputs \(outputs) exceed the device's \(hub.device.outputChannelCount) channels")
        }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        try hub.send(.setChannelMap(slot: slot, map: ChannelMap(outputs)))
    }

    /// `kAudioQueueProperty_EnableLevelMetering`.
    public var isLevelMeteringEnabled: Bool { locked { meteringEnabled } }

    /// Turns level metering on or off.
    public func setLevelMeteringEnabled(_ on: Bool) throws(AudioQueueError) {
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            try hub.send(.setMetering(slot: slot, enabled: on))
            meteringEnabled = on
        }
        notify(.enableLevelMetering)
    }

    /// `kAudioQueueProperty_CurrentLevelMeter`: per channel, RMS and peak of the latest
    /// render cycle, linear; 0 for a queue that is not playing. Refused with `.invalidProperty`
    /// while metering is off, `.invalidQueue` through a stale handle. Any thread but the
    /// render thread; does not block.
    public func currentLevelMeter() throws(AudioQueueError) -> [AudioQueueLevelMeterState] {
        lock.lock()
        defer { lock.unlock() }
        if disposed { throw AudioQueueError(.invalidQueue, "the queue was disposed of: the handle is stale") }
        guard meteringEnabled else { throw AudioQueueError(.invalidProperty, "level metering is off") }
        return (0..<min(channels, 8)).map { c in
            let m = hub.core.pointee.meter(slot: Int(slot), channel: c)
            return AudioQueueLevelMeterState(averagePower: m.rms, peakPower: m.peak)
        }
    }

    /// `kAudioQueueProperty_CurrentLevelMeterDB`: the same in decibels (-inf dB as -120).
    public func currentLevelMeterDB() throws(AudioQueueError) -> [AudioQueueLevelMeterState] {
        try currentLevelMeter().map {
            AudioQueueLevelMeterState(averagePower: AudioQueue.decibels($0.averagePower), peakPower: AudioQueue.decibels($0.peakPower))
        }
    }

    static func decibels(_ v: Float) -> Float { v > 1e-6 ? 20 * log10(v) : -120 }

    /// `kAudioQueueProperty_MagicCookie`, for compressed formats: the bytes last set with
    /// ``setMagicCookie(_:)`` (empty until then). Any thread but the render thread.
    public var magicCookie: [UInt8] { locked { magicCookieBytes } }

    /// Sets `kAudioQueueProperty_MagicCookie` (`AudioQueueSetProperty`): the format's magic
    /// cookie as the file stream parser gives it (AAC: AudioSpecificConfig or `esds`; ALAC:
    /// ALACSpecificConfig, bare or in `frma`/`alac` atoms; MP3 needs none but accepts any).
    /// AAC and ALAC queues refuse to enqueue until it is set (`.invalidProperty`). Setting it
    /// opens a new decoder: set it before the first buffer of a stream (the reference: "before
    /// enqueuing any buffers"); buffers already enqueued keep their decoded audio.
    ///
    /// Any thread but the render thread.
    /// - Throws: `.invalidPropertySize` for an empty cookie, `.unsupportedDataFormat` when the
    ///   decoder cannot use it, `.invalidProperty` on a linear PCM queue, `.disposalPending`.
    public func setMagicCookie(_ cookie: [UInt8]) throws(AudioQueueError) {
        guard isCompressed else {
            throw AudioQueueError(.invalidProperty, "a linear PCM queue has no magic cookie")
        }
        guard !cookie.isEmpty else { throw AudioQueueError(.invalidPropertySize, "the magic cookie is empty") }
        let d: PacketDecoder
        do throws(PacketDecoderError) {
            d = try PacketDecoder(format: format, magicCookie: cookie)
        } catch {
            throw AudioQueueError(.unsupportedDataFormat, "the magic cookie cannot be used: \(error)")
        }
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            corruptPacketsBefore += decoder?.corruptPackets ?? 0
            decoder = d
            decoderStreamOpen = false
            magicCookieBytes = cookie
        }
        notify(.magicCookie)
    }

    /// Sets the current stream's gapless information: `primingFrames` decoded frames at its
    /// start are not played, and when `numberValidFrames` is more than 0 nothing after
    /// `primingFrames + numberValidFrames` decoded frames is played (that removes the
    /// remainder frames), so the first frame played is the source's first real frame and the
    /// length is the source's. Pass the parser's `packetTableInfo` (MP3 LAME tag, CAF `pakt`).
    /// Frames are counted from the first frame decoded after the call; call it before a
    /// stream's first buffer. ``flush()``, ``reset()`` and stopping end the stream and clear it.
    /// Trims given to ``enqueue(_:trimFramesAtStart:trimFramesAtEnd:parameterEvents:startTime:)``
    /// still apply on top. Nil clears it.
    ///
    /// Any thread but the render thread.
    /// - Throws: `.invalidParameter` for negative counts, `.invalidProperty` on a linear PCM
    ///   queue, `.disposalPending`.
    public func setGaplessInfo(_ info: AudioFilePacketTableInfo?) throws(AudioQueueError) {
        guard isCompressed else {
            throw AudioQueueError(.invalidProperty, "gapless information applies to compressed queues")
        }
        if let info {
            guard info.primingFrames >= 0, info.remainderFrames >= 0, info.numberValidFrames >= 0 else {
                throw AudioQueueError(.invalidParameter, "priming, remainder and valid frames must not be negative")
            }
        }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        gapless = info
        decodedPosition = 0
    }

    /// The gapless information in force for the current stream (``setGaplessInfo(_:)``).
    /// Any thread but the render thread.
    public var gaplessInfo: AudioFilePacketTableInfo? { locked { gapless } }

    /// Compressed packets that failed to decode since the queue was made. Each was replaced by
    /// silence of its length, so later audio kept its place; the queue went on playing.
    /// Any thread but the render thread.
    public var corruptPacketCount: Int { locked { corruptPacketsBefore + (decoder?.corruptPackets ?? 0) } }

    /// Adds a listener for a property (`AudioQueueAddPropertyListener`). `isRunning` listeners
    /// run on the events thread when the render thread reports a change (or on the thread of
    /// an immediate stop); listeners of properties set through the API (`magicCookie`,
    /// `channelLayout`, `enableLevelMetering`) run on the setting thread, after the change.
    /// Returns a token for ``removePropertyListener(_:)``.
    /// Any thread but the render thread; does not block.
    @discardableResult
    public func addPropertyListener(_ id: AudioQueuePropertyID, _ listener: @escaping PropertyListener) -> Int {
        flags.lock()
        defer { flags.unlock() }
        nextListenerToken += 1
        listenerTable.append((id, nextListenerToken, listener))
        return nextListenerToken
    }

    /// Removes a listener (`AudioQueueRemovePropertyListener`).
    public func removePropertyListener(_ token: Int) throws(AudioQueueError) {
        flags.lock()
        defer { flags.unlock() }
        guard let i = listenerTable.firstIndex(where: { $0.token == token }) else {
            throw AudioQueueError(.invalidProperty, "no listener with token \(token)")
        }
        listenerTable.remove(at: i)
    }

    /// The listeners of `id` now. Any thread (takes the leaf lock).
    func listeners(for id: AudioQueuePropertyID) -> [PropertyListener] {
        flags.lock()
        defer { flags.unlock() }
        return listenerTable.filter { $0.id == id }.map(\.listener)
    }

    // MARK: - Time

    /// Makes a timeline object (`AudioQueueCreateTimeline`) for discontinuity reports.
    public func createTimeline() -> AudioQueueTimeline {
        AudioQueueTimeline(epoch: hub.discontinuity.epoch)
    }

    /// The queue's current time (`AudioQueueGetCurrentTime`): queue frames at the queue's rate
    /// since its start, not advancing while paused; 0 while stopped. `discontinuity` is true
    /// once for each new discontinuity since `timeline` last asked.
    public func currentTime(timeline: AudioQueueTimeline? = nil) -> (time: AudioTimeStamp, discontinuity: Bool) {
        if locked({ disposed }) { return (AudioTimeStamp(sampleTime: 0), false) }
        let now = hub.deviceCurrentTime()
        let p = hub.core.pointee.position(slot: Int(slot))
        var deviceFrames = 0.0
        if p.running { deviceFrames = max(0, now.sampleTime - Double(p.origin)) }
        else if p.paused { deviceFrames = max(0, Double(p.pauseFrame - p.origin)) }
        var discontinuity = false
        if let timeline {
            let e = hub.discontinuity.epoch
            if e != timeline.epoch {
                timeline.epoch = e
                discontinuity = true
            }
        }
        let ts = AudioTimeStamp(
            sampleTime: deviceFrames / ratio, hostTime: now.hostTime, rateScalar: now.rateScalar,
            flags: now.flags.union(.sampleTimeValid))
        return (ts, discontinuity)
    }

    /// The device frame at which the queue's frame 0 played (known once it started).
    public var startDeviceFrame: Int64? { locked { startFrame } }

    /// Device frames after the queue's origin (the device frame of its queue frame 0) up to
    /// which audio has been handed to the render thread: the end of the last enqueued buffer
    /// (or rate-converter tail), at the device rate. Without rate conversion this is the queue
    /// frame up to which audio is enqueued; with it, it lags queue frames × device rate / queue
    /// rate by the frames the converter still holds, until ``flush()`` or a stop schedules them.
    /// 0 after a stop or reset. Read-only; any thread but the render thread. (Added for
    /// offline rendering, which makes sure every track has audio past each cycle's end.)
    public var enqueuedDeviceFrames: Int64 { locked { converter == nil ? nextQueueFrame : nextDeviceFrame } }

    /// Frames of this queue that were already past when the render thread first saw them
    /// (late buffers) — skipped so that the queue stays on its timeline.
    public var lateFrames: Int64 { locked { lateFramesTotal } }
}

extension AudioQueue {
    /// Runs `body` holding the lock that guards this queue's state (tests only).
    func withStateLockForTesting(_ body: () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        body()
    }
}
