import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

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
    /// True for compressed queues (MP3, AAC, ALAC, FLAC, Opus, Vorbis, IMA4…), decoded at enqueue.
    let isCompressed: Bool
    let converter: RateConverter?
    /// Device frames per queue frame.
    let ratio: Double

    // Guarded by `lock`:
    /// The buffers and which of them the render thread holds.
    var ledger = BufferLedger()
    var enqueuedCount: Int { ledger.count }
    /// Where the next buffer goes, and the timeline's epoch.
    var queueTime: QueueTimeline
    /// `kAudioQueueProperty_EnableTimePitch` and its settings, and the SoundTouch stream.
    var timePitch = TimePitchStage()
    /// The processing tap (`AudioQueueProcessingTapNew`), if any.
    var processingTap: AudioQueueProcessingTap?
    /// Enqueues before the start, replayed when a time/pitch setting changes before it.
    var prestart = PrestartLog()
    /// Whether the open stream runs through time/pitch (a change ends the stream).
    var streamRouted = false
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
    /// Whether the renderer's volume of this queue was ever changed (a set or a buffer's
    /// volume event); until then its slot's published volume may still be the previous
    /// occupant's, or unset before the first cycle, and `volumeValue` is the answer.
    var volumeChanged = false
    /// Offline rendering (see OfflineRender.swift).
    var offlineFormat: AudioStreamBasicDescription?
    var offlineLayout: AudioChannelLayout?
    var scratch: [Float] = []
    var tails: [TailChunk] = []
    var disposing = false
    var disposeWhenStopped = false
    /// Called once when the disposal completes (``dispose(immediately:whenDisposed:)``), with
    /// no lock held. Guarded by `lock`.
    var whenDisposed: (@Sendable () -> Void)?
    /// A stop after the enqueued buffers is under way: queue time restarts when it completes.
    var drainStopPending = false
    /// True while an immediate stop or a reset calls the callback for the buffers it took back:
    /// enqueueing then is `.enqueueDuringReset` (Apple's rule). Guarded by `lock`.
    var handingBack = false
    /// `kAudioQueueProperty_DecodeBufferSizeFrames`. Guarded by `lock`.
    var decodeBufferFrames = 4096
    var volumeValue: Float = 1
    /// The largest volume ``setParameter(_:_:)`` and parameter events take (``setMaximumVolume(_:)``):
    /// 1, Apple's range, unless a Swift caller raised it. Guarded by `lock`.
    var maximumVolume: Float = 1
    /// `kAudioQueueParam_VolumeRampTime` and `kAudioQueueParam_Pan` as last set. Guarded by `lock`.
    var volumeRampTime: Float = 0
    var panValue: Float = 0
    var meteringEnabled = false
    var layout: AudioChannelLayout
    /// The device output each channel plays on (0-based; -1: none), as last sent in a channel
    /// map (``setChannelAssignments(_:)``, ``setOutputChannels(_:)``, ``setChannelLayout(_:)``).
    /// A mono queue's default plays on every output; this then holds 0. Guarded by `lock`.
    var routedOutputs: [Int]
    /// True once the routing was set by ``setChannelAssignments(_:)`` or ``setOutputChannels(_:)``
    /// (the last routing call), so that a queue moved to another engine keeps it. Guarded by `lock`.
    var outputsAssigned = false
    /// Compressed queues: the decoder and its stream.
    var codec: DecoderStream
    // Guarded by `flags`:
    var listenerTable = PropertyListeners<PropertyListener>()
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
    static let tailTokenBit = BufferLedger.tailBit

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
        self.codec = DecoderStream(decoder: decoder)
        self.isCompressed = deinterleaver == nil
        self.converter = converter
        self.callback = callback
        self.ratio = engine.device.sampleRate / format.sampleRate
        self.queueTime = QueueTimeline(ratio: engine.device.sampleRate / format.sampleRate)
        let n = Int(format.channelsPerFrame)
        layout = n == 1 ? .mono : n == 2 ? .stereo : .discrete(n)
        routedOutputs = (0..<n).map { $0 < 8 ? $0 : -1 }
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
}


extension AudioQueue {
    /// Runs `body` holding the lock that guards this queue's state (tests only).
    func withStateLockForTesting(_ body: () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        body()
    }
}
