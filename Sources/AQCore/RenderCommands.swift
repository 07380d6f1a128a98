/// A buffer as the render thread sees it: planar float frames at the device rate, placed on
/// its queue's timeline. Made on a control thread; the memory it points to stays alive and
/// unchanged until the render thread reports the buffer done.
public struct ScheduledBuffer: @unchecked Sendable, BitwiseCopyable {
    /// The control side's name for the buffer, returned in ``RenderEvent/bufferDone``.
    public var token: UInt32
    /// Channel `c`'s first frame is at `data + c * stride`.
    public var data: UnsafeMutablePointer<Float>
    public var stride: Int32
    /// Frames to play.
    public var frames: Int32
    /// First frame on the queue's timeline, in device frames from the queue's start.
    public var start: Int64
    /// Volume that takes effect on the buffer's first frame; NaN for none.
    public var volume: Float

    public init(
        token: UInt32, data: UnsafeMutablePointer<Float>, stride: Int32, frames: Int32, start: Int64,
        volume: Float = .nan
    ) {
        self.token = token
        self.data = data
        self.stride = stride
        self.frames = frames
        self.start = start
        self.volume = volume
    }
}

/// Where a queue's channels go: up to eight output channel indices, -1 for none.
public struct ChannelMap: Sendable, BitwiseCopyable, Equatable {
    public var map: (Int8, Int8, Int8, Int8, Int8, Int8, Int8, Int8)
    /// A mono source that plays on every output channel.
    public var monoToAll: Bool

    init(map: (Int8, Int8, Int8, Int8, Int8, Int8, Int8, Int8), monoToAll: Bool) {
        self.map = map
        self.monoToAll = monoToAll
    }

    /// Channel `i` of the queue plays on output `outputs[i]` (0-based; -1 for none).
    public init(_ outputs: [Int]) {
        var m: (Int8, Int8, Int8, Int8, Int8, Int8, Int8, Int8) = (-1, -1, -1, -1, -1, -1, -1, -1)
        withUnsafeMutableBytes(of: &m) { raw in
            for (i, o) in outputs.prefix(8).enumerated() { raw[i] = UInt8(bitPattern: Int8(clamping: o)) }
        }
        map = m
        monoToAll = false
    }

    /// The default: a mono queue on every output, an n-channel queue on the first n.
    public static func standard(channels: Int) -> ChannelMap {
        var m = ChannelMap(Array(0..<min(channels, 8)))
        m.monoToAll = channels == 1
        return m
    }

    @_noLocks
    func output(for channel: Int) -> Int {
        withUnsafeBytes(of: map) { Int(Int8(bitPattern: $0[channel])) }
    }

    public static func == (a: ChannelMap, b: ChannelMap) -> Bool {
        withUnsafeBytes(of: a.map) { x in withUnsafeBytes(of: b.map) { y in x.elementsEqual(y) } }
            && a.monoToAll == b.monoToAll
    }
}

/// A command from the control side to the render thread. Plain values only.
public enum RenderCommand: Sendable, BitwiseCopyable {
    /// Makes a slot live: a queue of `channels` channels, stopped, gain 1.
    case activate(slot: Int32, channels: Int32, map: ChannelMap)
    /// Appends a buffer to the slot's schedule (start times ascending).
    case enqueue(slot: Int32, buffer: ScheduledBuffer)
    /// Starts (or resumes) at device frame `frame`, or at the first frame of the cycle that sees
    /// the command when `frame` is nil.
    case start(slot: Int32, frame: Int64?)
    /// Pauses at the start of the cycle that sees it.
    case pause(slot: Int32)
    /// Stops now (every scheduled buffer is returned, unplayed) or once the schedule is empty.
    case stop(slot: Int32, immediately: Bool)
    /// Returns every scheduled buffer unplayed and rewinds the queue's time to zero, keeping the
    /// run state; the next buffer enqueued plays as soon as the render thread sees it.
    case reset(slot: Int32)
    /// Ramps the gain to `volume` over `rampFrames` frames.
    case setVolume(slot: Int32, volume: Float, rampFrames: Int32)
    case setMetering(slot: Int32, enabled: Bool)
    case setChannelMap(slot: Int32, map: ChannelMap)
    /// Returns every buffer, stops, and frees the slot (answered by ``RenderEvent/released``).
    case release(slot: Int32)
}

/// What the render thread reports to the events thread.
public enum RenderEvent: Sendable, BitwiseCopyable {
    /// The buffer has played (`played`) or was removed unplayed; its memory may be reused.
    /// `lateFrames`: frames of it that were already past when the render thread first saw it.
    case bufferDone(slot: Int32, token: UInt32, played: Bool, lateFrames: Int32)
    /// The queue's first frame plays at `frame` (device time), `lateFrames` of its start skipped.
    case started(slot: Int32, frame: Int64, lateFrames: Int64)
    /// The queue stopped at device frame `frame`.
    case stopped(slot: Int32, frame: Int64)
    case paused(slot: Int32, frame: Int64)
    /// The slot is free; the control side may free the queue's memory.
    case released(slot: Int32)
}

extension RenderCommand {
    /// The slot the command is for.
    public var slot: Int32 {
        @_noLocks get {
        switch self {
        case .activate(let s, _, _), .enqueue(let s, _), .start(let s, _), .pause(let s), .stop(let s, _),
            .reset(let s), .setVolume(let s, _, _), .setMetering(let s, _), .setChannelMap(let s, _),
            .release(let s):
            s
        }
        }
    }
}
