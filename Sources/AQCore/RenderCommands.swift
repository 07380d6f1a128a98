/// A buffer as the render thread sees it: planar float frames at the device rate, placed on
/// its queue's timeline. Made on a control thread; the memory it points to stays alive and
/// unchanged until the render thread reports the buffer done.
package struct ScheduledBuffer: @unchecked Sendable, BitwiseCopyable {
    /// The control side's name for the buffer, returned in ``RenderEvent/bufferDone``.
    package var token: UInt32
    /// Channel `c`'s first frame is at `data + c * stride`.
    package var data: UnsafeMutablePointer<Float>
    package var stride: Int32
    /// Frames to play.
    package var frames: Int32
    /// First frame on the queue's timeline, in device frames from the queue's start.
    package var start: Int64
    /// Volume that takes effect on the buffer's first frame; NaN for none.
    package var volume: Float
    /// The control side's enqueue number, returned in ``RenderEvent/bufferDone``: a done
    /// event whose serial is not the buffer's latest enqueue is stale (the buffer was already
    /// handed back by a synchronous stop, reset or dispose).
    package var serial: UInt32
    /// The control side's timeline number when the buffer was placed (see
    /// ``RenderEvent/stopped(slot:generation:run:frame:drainEnd:)``).
    package var epoch: UInt32
    /// Enqueued with no start time: when the queue has run dry and this buffer's place is
    /// already past, it plays as soon as possible instead (the queue's time shifts).
    package var flexible: Bool

    package init(
        token: UInt32, data: UnsafeMutablePointer<Float>, stride: Int32, frames: Int32, start: Int64,
        volume: Float = .nan, serial: UInt32 = 0, epoch: UInt32 = 0, flexible: Bool = false
    ) {
        self.token = token
        self.data = data
        self.stride = stride
        self.frames = frames
        self.start = start
        self.volume = volume
        self.serial = serial
        self.epoch = epoch
        self.flexible = flexible
    }
}

/// Where a queue's channels go: up to eight output channel indices, -1 for none.
package struct ChannelMap: Sendable, BitwiseCopyable, Equatable {
    package var map: (Int8, Int8, Int8, Int8, Int8, Int8, Int8, Int8)
    /// A mono source that plays on every output channel.
    package var monoToAll: Bool

    init(map: (Int8, Int8, Int8, Int8, Int8, Int8, Int8, Int8), monoToAll: Bool) {
        self.map = map
        self.monoToAll = monoToAll
    }

    /// Channel `i` of the queue plays on output `outputs[i]` (0-based; -1 for none).
    package init(_ outputs: [Int]) {
        var m: (Int8, Int8, Int8, Int8, Int8, Int8, Int8, Int8) = (-1, -1, -1, -1, -1, -1, -1, -1)
        withUnsafeMutableBytes(of: &m) { raw in
            for (i, o) in outputs.prefix(8).enumerated() { raw[i] = UInt8(bitPattern: Int8(clamping: o)) }
        }
        map = m
        monoToAll = false
    }

    /// The default: a mono queue on every output, an n-channel queue on the first n.
    package static func standard(channels: Int) -> ChannelMap {
        var m = ChannelMap(Array(0..<min(channels, 8)))
        m.monoToAll = channels == 1
        return m
    }

    @_noLocks
    package func output(for channel: Int) -> Int {
        withUnsafeBytes(of: map) { Int(Int8(bitPattern: $0[channel])) }
    }

    package static func == (a: ChannelMap, b: ChannelMap) -> Bool {
        withUnsafeBytes(of: a.map) { x in withUnsafeBytes(of: b.map) { y in x.elementsEqual(y) } }
            && a.monoToAll == b.monoToAll
    }
}

/// A command from the control side to the render thread. Plain values only.
package enum RenderCommand: Sendable, BitwiseCopyable {
    /// Makes a slot live: a queue of `channels` channels, stopped, gain 1, meters at zero.
    /// `generation` tells this queue's events from those of earlier queues in the slot.
    case activate(slot: Int32, channels: Int32, map: ChannelMap, generation: UInt32)
    /// Appends a buffer to the slot's schedule (start times ascending).
    case enqueue(slot: Int32, buffer: ScheduledBuffer)
    /// Starts (or resumes) at device frame `frame`, or at the first frame of the cycle that sees
    /// the command when `frame` is nil. `run` is echoed in the run-state events it causes.
    case start(slot: Int32, frame: Int64?, run: UInt32)
    /// Pauses at the start of the cycle that sees it.
    case pause(slot: Int32)
    /// Stops now (every scheduled buffer is returned, unplayed) or once the schedule is empty.
    /// `epoch` is the control side's timeline number when it asked: buffers of that epoch that
    /// arrive after a stop-after-drain completed are moved back to the next run's timeline.
    case stop(slot: Int32, immediately: Bool, epoch: UInt32)
    /// Returns every scheduled buffer unplayed and rewinds the queue's time to zero, keeping the
    /// run state; the next buffer enqueued plays as soon as the render thread sees it.
    case reset(slot: Int32)
    /// Ramps the gain to `volume` over `rampFrames` frames (at once while the queue is not
    /// running): frame k of the ramp (k = 0 on the first frame of the cycle that applies the
    /// command, which still plays the old gain g) has g + (volume − g) / rampFrames × k, and
    /// every frame from k = rampFrames on exactly `volume`.
    case setVolume(slot: Int32, volume: Float, rampFrames: Int32)
    /// Scales what the queue sends to output 0 by `left` and to output 1 by `right` (pan and
    /// balance, computed on the control side), from the first frame of the cycle that applies
    /// it. 1 and 1 (the default) leave the mix exactly as without it.
    case setPan(slot: Int32, left: Float, right: Float)
    case setMetering(slot: Int32, enabled: Bool)
    case setChannelMap(slot: Int32, map: ChannelMap)
    /// Returns every buffer, stops, and frees the slot. Sent synchronously (the control side
    /// knows when it was applied); no event answers it.
    case release(slot: Int32)
}

/// What the render thread reports to the events thread. Every event was paid for by the
/// command that caused it (``RenderCommand/eventCredits``): the event ring never overflows.
/// `generation` is the queue's (from ``RenderCommand/activate(slot:channels:map:generation:)``),
/// `run` the latest start's.
package enum RenderEvent: Sendable, BitwiseCopyable {
    /// The buffer has played (`played`) or was removed unplayed; its memory may be reused.
    /// `lateFrames`: frames of it that were already past when the render thread first saw it.
    case bufferDone(slot: Int32, generation: UInt32, token: UInt32, serial: UInt32, played: Bool, lateFrames: Int32)
    /// The queue's first frame plays at `frame` (device time), `lateFrames` of its start skipped.
    case started(slot: Int32, generation: UInt32, run: UInt32, frame: Int64, lateFrames: Int64)
    /// The queue stopped at device frame `frame`. After a stop-after-drain, `drainEnd` is the
    /// end of what played, in device frames from the queue's frame 0: buffers of the same
    /// timeline epoch that reach the render thread later are moved back by it (they belong to
    /// the next run, which starts at queue time 0); -1 for an immediate stop.
    case stopped(slot: Int32, generation: UInt32, run: UInt32, frame: Int64, drainEnd: Int64)
    case paused(slot: Int32, generation: UInt32, run: UInt32, frame: Int64)
}

extension RenderCommand {
    /// Events this command may cause, reserved on the control side before it is sent
    /// (``RenderCore/reserveEvents(_:)``); the render thread gives back what it did not use.
    package var eventCredits: Int {
        switch self {
        case .enqueue, .start, .pause, .stop: 1
        case .activate, .reset, .setVolume, .setPan, .setMetering, .setChannelMap, .release: 0
        }
    }
}

extension RenderCommand {
    /// The slot the command is for.
    package var slot: Int32 {
        @_noLocks get {
        switch self {
        case .activate(let s, _, _, _), .enqueue(let s, _), .start(let s, _, _), .pause(let s), .stop(let s, _, _),
            .reset(let s), .setVolume(let s, _, _), .setPan(let s, _, _), .setMetering(let s, _), .setChannelMap(let s, _),
            .release(let s):
            s
        }
        }
    }
}
