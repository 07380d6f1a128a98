import Synchronization

/// The capture ring's positions and the input counters (``RenderCore/captureWindow``,
/// ``RenderCore/inputStatus``, ``RenderCore/readCapture(from:maxFrames:into:channels:)``).
/// Written by the render thread only, read by any thread.
struct CaptureCounters: ~Copyable {
    /// The device frame of the latest cycle that had inputs (−1: none yet).
    let latestCycleFrame = Atomic<Int64>(-1)
    /// Input frames seen in all.
    let framesSeen = Atomic<Int64>(0)
    /// The capture ring's first valid frame (−1: nothing captured).
    let first = Atomic<Int64>(-1)
    /// The ring's end: the frame after the last captured.
    let end = Atomic<Int64>(0)
    /// The end of the frames being written: a sequence lock for readers (frames below
    /// `writing − ring` may be overwritten while read).
    let writing = Atomic<Int64>(0)
    /// Device frames the device skipped (captured as silence).
    let skippedFrames = Atomic<Int64>(0)
    /// The ring's end when the render thread last woke the events thread for the capture
    /// (render thread only; ``RenderCore/captureWantsWake()``).
    let wokenEnd = Atomic<Int64>(-1)
}
