/// What the device does with frames the server says it lost: wall-clock time that passed
/// without the graph producing audio (jackd2 moves its frame counter on by the lateness after
/// an xrun; a dead server's absence until it comes back).
///
/// Thread safety: a plain value.
public enum LostTimePolicy: UInt8, Sendable, BitwiseCopyable, CustomStringConvertible {
    /// Keep them: the device's sample time counts exactly the frames it rendered, so every
    /// queue stays in step, to the frame, with every other client of the server's graph
    /// (recorders, effects, other players), which all processed the same cycles. After lost
    /// time the session is later than the wall clock by the frames lost (they are counted).
    /// Right for jackd2, where every client still processes every cycle after an xrun
    /// (docs/timing.md has the measurement); the keeper's default.
    case keepEveryFrame = 0
    /// Skip them: the device's sample time jumps by the frames lost, so that every queue stays
    /// where the wall clock (the server's frame counter, the hardware's timeline) says it
    /// should be: what Core Audio's sample time does after an overload. Right for PipeWire,
    /// whose overrun really drops the late cycle, and for sessions that must stay with
    /// something outside the graph (video, another machine). The audio scheduled for those
    /// frames is not heard; the queues count it as late.
    case followWallClock = 1

    public var description: String {
        switch self {
        case .keepEveryFrame: "keep every frame (lost time is counted; the session falls behind the wall clock)"
        case .followWallClock: "follow the wall clock (lost frames are skipped)"
        }
    }
}

/// How one cycle's first frame relates to the previous cycle, as the ``DeviceTimekeeper`` saw it.
///
/// Thread safety: a plain value.
public enum CycleContinuity: UInt8, Sendable, BitwiseCopyable {
    /// The first cycle the keeper has seen.
    case first = 0
    /// The server's counter moved by exactly the previous cycle's frames.
    case contiguous = 1
    /// The server's counter moved by something else at a period change (jackd2 advances it by
    /// the *new* period): an artefact of the server's bookkeeping, no frame was lost.
    case periodChangeArtefact = 2
    /// The server's counter and the wall clock both moved on by more than the previous cycle:
    /// frames were really lost (see ``DeviceTimekeeper/Step/lostFrames``).
    case framesLost = 3
    /// The server's counter jumped and the wall clock did not follow (PipeWire moving the
    /// client to another driver, whose counter is elsewhere): a new counter to follow; no frame
    /// was lost.
    case counterJump = 4
    /// The first cycle after the device was restarted (a server came back): the frames lost
    /// are what the wall clock says passed while the device was away.
    case resumed = 5
    /// The server called the device again for the cycle it had just rendered: the same counter
    /// and the same cycle host time, the same size. No graph cycle stands behind it, so the
    /// sink plays at most one of the two outputs in that cycle's place (pipewire-jack does
    /// this when a late client catches up on its wake-ups, e.g. after its process was stopped,
    /// and when it moves a client to another driver: docs/pipewire.md). The device's sample
    /// time does not advance (``DeviceTimekeeper/Step/frame`` is where the next cycle starts),
    /// and the device must not render it: it outputs silence.
    case repeated = 6
    /// The server called the device again with the previous call's position, and on this
    /// server that is a real graph cycle (``DeviceTimekeeper/repeatedCallsAreCycles``): jackd2
    /// catching up on a late client gives it the cycle it missed and the current one back to
    /// back, both reading the current counter and cycle time (the first one's counter jumped by
    /// two periods, which looked like a period lost). Rendered and counted like any cycle; the
    /// period the first call seemed to lose is taken back from ``DeviceTimekeeper/lostFrames``.
    case lateCycle = 7
}

/// The device's sample time, counted from what was rendered.
///
/// The device sample time advances by exactly each cycle's frame count. The server's frame
/// counter (JACK's `jack_get_cycle_times` frame, PipeWire's driver position) and the cycle's
/// host time are only used to tell frames that were really lost from bookkeeping artefacts:
///
/// - jackd2 advances its counter by the *new* period at a period change (256 → 128 moved it by
///   128 after a 256-frame cycle): no frame is skipped or repeated;
/// - PipeWire's counter jumps by millions when the client moves to another driver: the jump is
///   followed, no frame is skipped;
/// - an xrun that the server accounts for (its counter and the wall clock both moved on by the
///   same amount): the frames lost are kept (counted) or skipped, as ``LostTimePolicy`` says;
/// - a device restarted after its server came back: the wall-clock gap is the loss;
/// - a cycle the server repeats (same counter, same cycle time: pipewire-jack catching up on a
///   late client's wake-ups): not counted; the device outputs silence for it. Counting it put
///   the device one period ahead of the server's clock for good. On jackd2 the same pattern is
///   a late client's catch-up, two cycles back to back: both counted (``CycleContinuity/lateCycle``).
///
/// The sample time never goes backwards and never repeats a frame.
///
/// Thread safety: a value owned by the render thread (the device's process callback);
/// ``resume()`` and ``policy`` are set by a control thread only while the device does not
/// render.
public struct DeviceTimekeeper: Sendable, BitwiseCopyable {
    /// One cycle's result.
    public struct Step: Sendable, BitwiseCopyable {
        /// Device sample time of the cycle's first frame.
        public var frame: Int64
        /// What the keeper concluded about the cycle's start.
        public var continuity: CycleContinuity
        /// Frames the server lost before this cycle (≥ 0); skipped when the policy is
        /// ``LostTimePolicy/followWallClock``, else only counted.
        public var lostFrames: Int64
        /// How far the server's counter moved beyond the previous cycle's frames (0 when
        /// contiguous; wrapping 32-bit difference).
        public var counterJump: Int64
    }

    /// What to do with lost frames.
    public var policy: LostTimePolicy
    /// Nominal frames per second (for reading host-time gaps as frames).
    public var sampleRate: Double
    /// A counter jump is taken as lost time only when the wall clock agrees within this many
    /// frames plus one period (a dummy or non-realtime server wakes late by up to a period).
    public var agreementSlackFrames: Int64
    /// Whether a call repeating the previous call's (counter, cycle time) is a graph cycle of
    /// its own (jackd2: true) or the previous cycle called again (pipewire-jack: false, the
    /// default). Measured with a C client writing its own frame count beside the server's
    /// counter, recorded by `jack-record` (docs/timing.md): on jackd2 the recorder took both
    /// calls' outputs in 12 of 16 double calls and the second's alone in 4 (never the first's
    /// alone); on PipeWire the sink plays one of the two. Under ``LostTimePolicy/keepEveryFrame``
    /// such a call is ``CycleContinuity/lateCycle``; under ``LostTimePolicy/followWallClock``
    /// it is ``CycleContinuity/repeated`` either way (the server's clock did not move).
    /// Control thread, while the device does not render.
    public var repeatedCallsAreCycles = false

    /// Sample time of the next cycle's first frame.
    public private(set) var nextFrame: Int64
    /// Frames skipped under ``LostTimePolicy/followWallClock`` since the keeper was made.
    public private(set) var skippedFrames: Int64 = 0
    /// Frames the server lost (skipped or kept) since the keeper was made.
    public private(set) var lostFrames: Int64 = 0
    /// Repeated cycles (``CycleContinuity/repeated``) since the keeper was made.
    public private(set) var repeatedCycles: Int64 = 0

    private var started = false
    private var resuming = false
    private var lastCounter: UInt32 = 0
    private var lastFrames: Int64 = 0
    private var lastHostNs: UInt64 = 0
    /// The previous call's cycle time as the server gave it (see `advance`'s `cycleTime`).
    private var lastIdentity: UInt64 = 0
    /// Frames the previous call found lost (taken back when a ``CycleContinuity/lateCycle``
    /// shows they were not).
    private var lastStepLost: Int64 = 0

    /// A keeper whose first cycle has sample time `firstFrame`.
    public init(sampleRate: Double, policy: LostTimePolicy = .keepEveryFrame, firstFrame: Int64 = 0) {
        self.sampleRate = sampleRate
        self.policy = policy
        self.nextFrame = firstFrame
        self.agreementSlackFrames = Int64(max(1, sampleRate * 0.004))
    }

    /// The next cycle follows a restart of the device (its server came back): its counter is
    /// unrelated to the last one, and the wall-clock gap since the last cycle is the loss.
    /// Control thread, while the device does not render.
    public mutating func resume() {
        if started { resuming = true }
    }

    /// Accounts for one cycle of `frames` frames whose first frame is at the server's
    /// `counter` (32-bit, wrapping) and host time `hostNs` (0: unknown).
    ///
    /// `cycleTime`: the cycle's start time exactly as the server gave it, in the server's own
    /// clock and units (JACK's `jack_get_cycle_times` microseconds), or nil to use `hostNs`.
    /// A call repeating the previous call's pair (counter, cycle time) is
    /// ``CycleContinuity/repeated`` (not rendered), or ``CycleContinuity/lateCycle`` where
    /// ``repeatedCallsAreCycles`` says the server means a cycle by it. The pair must be
    /// compared as the server wrote it: `hostNs` is converted to CLOCK_MONOTONIC by an offset
    /// read from the clocks in every call, so on jackd2 (whose clock is CLOCK_MONOTONIC_RAW)
    /// two such calls differ in it by a few hundred nanoseconds and went unrecognised.
    ///
    /// `periodChanged`: the server reported a period change since the previous cycle (a cycle
    /// whose size differs from the previous one's counts as one too).
    /// Render thread.
    @_noLocks
    public mutating func advance(
        counter: UInt32, cycleTime: UInt64? = nil, frames: Int32, hostNs: UInt64, periodChanged: Bool
    ) -> Step {
        let identity = cycleTime ?? hostNs
        let n = Int64(frames)
        var step = Step(frame: nextFrame, continuity: .contiguous, lostFrames: 0, counterJump: 0)
        if !started {
            started = true
            step.continuity = .first
        } else if !resuming && counter == lastCounter && identity != 0 && identity == lastIdentity && n == lastFrames && !periodChanged {
            step.counterJump = -n
            if repeatedCallsAreCycles && policy == .keepEveryFrame {
                // A late client's catch-up on jackd2: this call is the cycle after the one the
                // previous call rendered. The previous call's two-period jump was no loss.
                step.continuity = .lateCycle
                if lastStepLost == n {
                    lostFrames &-= n
                    lastStepLost = 0
                }
                nextFrame = step.frame &+ n
                return step
            }
            // The cycle just rendered, again: nothing advances; the next cycle is judged
            // against the first call.
            repeatedCycles &+= 1
            step.continuity = .repeated
            return step
        } else if resuming {
            resuming = false
            step.continuity = .resumed
            let lost = wallClockFrames(since: lastHostNs, to: hostNs) &- lastFrames
            if lost > 0 { step.lostFrames = lost }
        } else {
            let jump = Int64(Int32(bitPattern: counter &- lastCounter)) &- lastFrames
            step.counterJump = jump
            if jump == 0 {
                step.continuity = .contiguous
            } else if periodChanged || n != lastFrames {
                step.continuity = .periodChangeArtefact
            } else {
                let wall = hostNs == 0 || lastHostNs == 0 ? jump : wallClockFrames(since: lastHostNs, to: hostNs) &- lastFrames
                let slack = agreementSlackFrames &+ max(lastFrames, n)
                if jump > 0 && abs(wall &- jump) <= slack {
                    step.continuity = .framesLost
                    step.lostFrames = jump
                } else {
                    step.continuity = .counterJump
                }
            }
        }
        if step.lostFrames > 0 {
            lostFrames &+= step.lostFrames
            if policy == .followWallClock {
                skippedFrames &+= step.lostFrames
                step.frame &+= step.lostFrames
            }
        }
        nextFrame = step.frame &+ n
        lastStepLost = step.lostFrames
        lastCounter = counter
        lastFrames = n
        lastHostNs = hostNs
        lastIdentity = identity
        return step
    }

    /// Frames of the nominal rate between two host times, rounded to the nearest.
    @_noLocks
    func wallClockFrames(since a: UInt64, to b: UInt64) -> Int64 {
        guard a != 0, b != 0 else { return 0 }
        let x = Double(Int64(bitPattern: b &- a)) * sampleRate / 1e9
        return Int64(x + (x >= 0 ? 0.5 : -0.5))  // to the nearest (`rounded()` is opaque to the checker)
    }
}
