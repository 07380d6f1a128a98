#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFloatMode
import CMembarrier
import Synchronization

/// A queue slot's run state on the render thread.
enum SlotState: UInt8 {
    case free = 0, stopped, running, paused

    /// Equality by raw value, written out: the synthesized one reached from another file goes
    /// through the generic `Equatable` witness, which `@_noLocks` refuses.
    @_noLocks @inline(__always)
    static func == (a: SlotState, b: SlotState) -> Bool { a.rawValue == b.rawValue }
    @_noLocks @inline(__always)
    static func != (a: SlotState, b: SlotState) -> Bool { a.rawValue != b.rawValue }
}

/// The render thread's view of one queue. Only the render thread touches it.
struct QueueSlot {
    var state: SlotState = .free
    var startReported = false
    var stopWhenDrained = false
    var headPlayed = false
    var metering = false
    /// After a reset: the next enqueued buffer fixes the origin so that it plays at once.
    var originPending = false
    var channels: Int32 = 0
    var map = ChannelMap.standard(channels: 1)
    /// Device frame at which the queue's frame 0 plays.
    var origin: Int64 = 0
    var pauseFrame: Int64 = 0
    var gain: Float = 1
    var target: Float = 1
    var step: Float = 0
    /// A gain ramp (step ≠ 0): the gain where it began, frames of it already played before the
    /// current cycle, and its length; `gain` is recomputed from them at each cycle's end, so
    /// rounding never accumulates and the ramp ends on its exact frame.
    var rampFrom: Float = 1
    var rampDone: Int32 = 0
    var rampFrames: Int32 = 0
    /// Pan: what goes to output 0 and output 1 is scaled by these (1 and 1: not panned).
    var panLeft: Float = 1
    var panRight: Float = 1
    var head: Int32 = 0
    var count: Int32 = 0
    /// Late frames of the head buffer, found when it was first seen.
    var headLate: Int32 = 0
    /// Device frame just after the last frame played (for stop-after-drain reports).
    var lastEnd: Int64 = 0
    /// The queue's generation and latest start's run number, echoed in events.
    var generation: UInt32 = 0
    var run: UInt32 = 0
    /// Event credits held for a `started` report not made yet, and for a stop-after-drain.
    var startCredit = false
    var drainCredit = false
    /// The schedule ran out while running: a flexible buffer whose place has passed plays at once.
    var dry = false
    /// After a stop-after-drain: buffers of timeline `rebaseEpoch` move back by `rebaseBy`.
    var rebaseActive = false
    var rebaseEpoch: UInt32 = 0
    var rebaseBy: Int64 = 0
    /// The end of everything scheduled on the current timeline (device frames from frame 0).
    var scheduledEnd: Int64 = 0
    /// The control side's timeline number when it asked for the pending stop-after-drain.
    var drainEpoch: UInt32 = 0
    /// Volume commands applied (for the control side's current-value read).
    var volumeSets: Int64 = 0

    /// Output 0 or 1 gets a pan factor other than 1.
    var isPanned: Bool {
        @_noLocks @inline(__always) get { panLeft != 1 || panRight != 1 }
    }

    /// The pan factor for output `oc` (1 for outputs past the first two).
    @_noLocks @inline(__always)
    func panFactor(output oc: Int) -> Float {
        oc == 0 ? panLeft : (oc == 1 ? panRight : 1)
    }

    /// Frames of the current ramp left from the start of the cycle (0 when not ramping).
    var rampLeft: Int {
        @_noLocks @inline(__always) get { step == 0 ? 0 : Int(rampFrames &- rampDone) }
    }

    /// Makes the slot a stopped queue of `channels` channels. Render thread.
    @_noLocks
    mutating func activate(channels: Int32, map: ChannelMap, generation: UInt32) {
        state = .stopped
        startReported = false
        stopWhenDrained = false
        headPlayed = false
        metering = false
        originPending = false
        self.channels = channels
        self.map = map
        origin = 0
        pauseFrame = 0
        gain = 1
        target = 1
        step = 0
        rampFrom = 1
        rampDone = 0
        rampFrames = 0
        panLeft = 1
        panRight = 1
        head = 0
        count = 0
        headLate = 0
        lastEnd = 0
        self.generation = generation
        run = 0
        startCredit = false
        drainCredit = false
        dry = false
        rebaseActive = false
        rebaseEpoch = 0
        rebaseBy = 0
        scheduledEnd = 0
        drainEpoch = 0
        volumeSets = 0
    }
}

/// The steady state of one queue, kept apart from ``QueueSlot`` so that the common case reads
/// one small record per queue per cycle (issue 13): a started stereo queue on outputs 0 and 1,
/// at a steady gain, without meters, in the middle of its head buffer. The general path
/// (``RenderCore/mix(slot:t:n:outputs:channels:reported:)``) fills it in when a cycle leaves
/// the queue in that state; every command for the queue, and every cycle that does not mix the
/// queue, empties it; a cycle that does not follow the renderer's last mixed cycle (an xrun, a
/// jump, a skipped cycle: ``RenderCore/nextCycleFrame``) or that would reach past the buffer's
/// end goes through the general path. A cycle in the steady state reads the record and writes
/// nothing back: where the queue is follows from the cycle's frame. Only the render thread (or
/// a control thread holding the gate) touches it.
struct HotSlot {
    /// The device frame at which the head buffer ends: the record holds for a cycle of `n`
    /// frames from device frame `f` while `f + n <= endFrame` (`Int64.min`: it does not hold).
    var endFrame: Int64 = .min
    /// The address channel 0 of the head buffer would have at device frame 0 (wrapping
    /// arithmetic: only ``source(at:)`` of a frame the record holds for is ever used);
    /// channel 1 is `stride` floats further. 32 bytes in all: two records to a cache line.
    var origin: UInt = 0
    var stride: Int32 = 0
    var gain: Float = 1
    /// The head buffer starts exactly at the frame the record was made for and has not been
    /// seen yet: the cycle that uses the record first does what the general path does on a
    /// buffer's first frame when it is on time and carries no volume (marks it played).
    var firstFrame: Bool = false

    /// The one predicate of the steady state: whether the record holds for a cycle ending at
    /// device frame `end` (the renderer's cycles contiguous, ``RenderCore/nextCycleFrame``).
    /// Render thread.
    @_noLocks @inline(__always)
    func holds(until end: Int64) -> Bool { end <= endFrame }

    /// Whether the record holds past a cycle ending at `end` with nothing to do at either of the
    /// cycle's edges: the buffer neither ends with the cycle nor starts with it (what lets four
    /// such queues be mixed at once). Render thread.
    @_noLocks @inline(__always)
    func holdsThroughout(until end: Int64) -> Bool { end < endFrame && !firstFrame }

    /// Channel 0's sample at device frame `frame`, a frame the record holds for. Render thread.
    @_noLocks @inline(__always)
    func source(at frame: Int64) -> UnsafePointer<Float> {
        UnsafePointer(bitPattern: origin &+ UInt(bitPattern: Int(frame)) &* UInt(MemoryLayout<Float>.stride)).unsafelyUnwrapped
    }
}
