import Synchronization

/// Words the control side, the events thread and the render thread share with the renderer
/// (``RenderCore``), one atomic each. Written often by the events thread (the credits), so kept
/// off the gate's cache line (``RenderGate``).
struct RenderControl: ~Copyable {
    /// Event credits left: room in the event ring not yet promised to a command
    /// (``RenderCore/reserveEvents(_:)``). Control side takes, events and render thread give back.
    let eventCredits = Atomic<Int>(0)
    /// Cycles rendered silent because a control thread held the gate (render thread only writes).
    let skippedCycles = Atomic<Int>(0)
    /// 1 when the render thread waits for a control thread holding the gate instead of skipping
    /// the cycle (the hand-driven device; ``RenderCore/setWaitsForControl(_:)``).
    let waitsForControl = Atomic<Int>(0)
    /// The slot + 1 of the only queue mixed (offline rendering of one queue), 0 for every queue
    /// (``RenderCore/setSolo(_:)``).
    let solo = Atomic<Int>(0)
    /// Frames of capture after which the render thread wakes the events thread to hand the
    /// input queues what was recorded; 0: never (``RenderCore/setCaptureWake(frames:)``).
    let captureWakeFrames = Atomic<Int>(0)
}
