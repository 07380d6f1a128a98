import AQCore
import AQTypes
import Synchronization

/// A buffer of audio owned by one queue (Core Audio's `AudioQueueBuffer`).
///
/// Fill ``audioData`` with up to ``audioDataBytesCapacity`` bytes in the queue's format, set
/// ``audioDataByteSize``, and enqueue it. While it is enqueued, leave it alone: the queue has
/// already converted its contents for the render thread, but it will hand the buffer back
/// through the output callback, and only then may you refill it.
///
/// Thread safety: fill it on any one thread at a time; the queue reads it during
/// ``AudioQueue/enqueue(_:)`` on the calling thread.
public final class AudioQueueBuffer: @unchecked Sendable {
    /// The bytes (`mAudioData`). Valid for the buffer's whole life; moves only when
    /// ``exchangeStorage(with:)`` gives it another buffer's.
    public private(set) var audioData: UnsafeMutableRawPointer
    /// Bytes ``audioData`` can hold (`mAudioDataBytesCapacity`).
    public let audioDataBytesCapacity: Int
    /// Bytes of audio in ``audioData`` (`mAudioDataByteSize`).
    public var audioDataByteSize: Int = 0
    /// Anything you want to carry with the buffer (`mUserData`).
    public var userData: AnyObject?
    /// Room for packet descriptions (`mPacketDescriptionCapacity`); 0 unless allocated with some.
    /// Grows only through ``AudioQueue/growPacketDescriptions(_:to:)``.
    public internal(set) var packetDescriptionCapacity: Int
    /// Packet descriptions (`mPacketDescriptions`), valid up to ``packetDescriptionCount``.
    /// Moves only when ``AudioQueue/growPacketDescriptions(_:to:)`` grows the room.
    public internal(set) var packetDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?
    /// Packet descriptions in use (`mPacketDescriptionCount`).
    public var packetDescriptionCount: Int = 0

    /// The queue that owns it (nil for a buffer of an input queue: see ``inputQueue``).
    public private(set) weak var queue: AudioQueue?
    /// The input (recording) queue that owns it, for buffers of ``AudioInputQueue``.
    public private(set) weak var inputQueue: AudioInputQueue?
    /// True from enqueue until the output callback hands it back (or a synchronous stop,
    /// reset or dispose took it back). Any thread (an atomic); written under its queue's lock.
    public internal(set) var isEnqueued: Bool {
        get { enqueuedFlag.load(ordering: .acquiring) }
        set { enqueuedFlag.store(newValue, ordering: .releasing) }
    }
    private let enqueuedFlag = Atomic<Bool>(false)
    /// For a buffer of an input queue: the capture latency, in device frames, its latest start
    /// time was moved back by (``AudioInputQueue/captureLatency`` when the callback got it), so
    /// that start time + this is the device frame its first frame reached the inputs at. 0 for
    /// other buffers. Set on the thread that runs the input callback, before it runs; read it
    /// there (until the buffer is enqueued again).
    public internal(set) var captureLatency: Int = 0
    /// Queue frames of its latest enqueue (after trimming). Guarded by its queue's lock.
    var preparedFrames = 0

    let token: UInt32
    /// Render-side storage: planar float at the device rate, `renderCapacity` frames a channel.
    /// Replaced (larger) only on the control side, under the queue's lock, while the buffer is
    /// not enqueued: the render thread never sees the old storage again (``growRender(frames:)``).
    private(set) var render: UnsafeMutablePointer<Float>
    private(set) var renderCapacity: Int
    let renderChannels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let channels: Int

    init(
        queue: AudioQueue, token: UInt32, capacity: Int, packetDescriptions: Int, channels: Int,
        renderCapacity: Int
    ) {
        self.queue = queue
        self.token = token
        audioData = .allocate(byteCount: max(capacity, 1), alignment: 16)
        audioDataBytesCapacity = capacity
        packetDescriptionCapacity = packetDescriptions
        self.packetDescriptions = packetDescriptions > 0 ? .allocate(capacity: packetDescriptions) : nil
        self.channels = channels
        self.renderCapacity = renderCapacity
        render = .allocate(capacity: max(renderCapacity * channels, 1))
        render.initialize(repeating: 0, count: max(renderCapacity * channels, 1))
        renderChannels = .allocate(capacity: channels)
        for c in 0..<channels { renderChannels[c] = render + c * renderCapacity }
    }

    /// A buffer of an input queue: the render thread never sees it (captured frames come from
    /// the renderer's capture ring), so it has no render storage.
    init(inputQueue: AudioInputQueue, token: UInt32, capacity: Int, packetDescriptions: Int, channels: Int) {
        self.inputQueue = inputQueue
        self.token = token
        audioData = .allocate(byteCount: max(capacity, 1), alignment: 16)
        audioDataBytesCapacity = capacity
        packetDescriptionCapacity = packetDescriptions
        self.packetDescriptions = packetDescriptions > 0 ? .allocate(capacity: packetDescriptions) : nil
        self.channels = channels
        renderCapacity = 0
        render = .allocate(capacity: 1)
        render.initialize(to: 0)
        renderChannels = .allocate(capacity: max(channels, 1))
        for c in 0..<channels { renderChannels[c] = render }
    }

    /// Exchanges the bytes (``audioData``), their size, and the packet descriptions (pointer and
    /// count) with `other`, a buffer of the same capacities, so that a buffer made again on
    /// another queue keeps the memory a caller holds (the C API's offline switch, issue 22).
    /// Nothing else changes (queues, render storage, ``userData``). Control thread; neither
    /// buffer may be enqueued or used on another thread meanwhile. Does not block.
    /// - Throws: `.invalidBuffer` when either is enqueued, is an input queue's, or the
    ///   capacities differ.
    public func exchangeStorage(with other: AudioQueueBuffer) throws(AudioQueueError) {
        guard !isEnqueued, !other.isEnqueued, inputQueue == nil, other.inputQueue == nil,
              audioDataBytesCapacity == other.audioDataBytesCapacity,
              packetDescriptionCapacity == other.packetDescriptionCapacity
        else {
            throw AudioQueueError(.invalidBuffer, "storage is exchanged only between output buffers of the same capacities, neither enqueued")
        }
        swap(&audioData, &other.audioData)
        swap(&audioDataByteSize, &other.audioDataByteSize)
        swap(&packetDescriptions, &other.packetDescriptions)
        swap(&packetDescriptionCount, &other.packetDescriptionCount)
    }

    /// Makes the render storage hold at least `frames` frames a channel (contents not kept).
    /// Control side, queue lock held, buffer not enqueued.
    func growRender(frames: Int) {
        guard frames > renderCapacity else { return }
        let made = UnsafeMutablePointer<Float>.allocate(capacity: frames * channels)
        made.initialize(repeating: 0, count: frames * channels)
        render.deallocate()
        render = made
        renderCapacity = frames
        for c in 0..<channels { renderChannels[c] = render + c * frames }
    }

    /// Makes room for at least `count` packet descriptions (contents not kept). Control side,
    /// queue lock held, buffer not enqueued.
    func growDescriptions(to count: Int) {
        guard count > packetDescriptionCapacity else { return }
        packetDescriptions?.deallocate()
        packetDescriptions = .allocate(capacity: count)
        packetDescriptionCapacity = count
    }

    deinit {
        audioData.deallocate()
        packetDescriptions?.deallocate()
        render.deallocate()
        renderChannels.deallocate()
    }
}
