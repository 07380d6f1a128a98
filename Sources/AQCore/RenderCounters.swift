import Synchronization

/// The render thread's counters (``RenderStatistics``): written by the render thread only (a
/// load and a store, no locked add, except ``droppedEvents`` and ``lateFrames``), read by any
/// thread.
struct RenderCounters: ~Copyable {
    /// Cycles rendered.
    let cycles = Atomic<UInt64>(0)
    /// Frames of buffers and starts already past when the render thread saw them.
    let lateFrames = Atomic<UInt64>(0)
    /// Events the event ring had no room for (stays 0: every event is paid for).
    let droppedEvents = Atomic<UInt64>(0)
}

/// What the render thread last published about one slot, for control-side reads
/// (``RenderCore/position(slot:)``, ``RenderCore/volume(slot:)``, ``RenderCore/isSlotFree(_:)``).
/// Written by the render thread after every command and cycle that changes them; ``state`` is
/// stored last (release) and read first (acquire).
struct PublishedSlot: ~Copyable {
    /// The slot's ``SlotState`` raw value (0: free).
    let state = Atomic<Int64>(0)
    /// The device frame of the queue's frame 0.
    let origin = Atomic<Int64>(0)
    /// The device frame the queue paused at.
    let pauseFrame = Atomic<Int64>(0)
    /// The volume in force, as the Float's bit pattern.
    let volumeBits = Atomic<Int64>(0)
    /// Volume commands applied so far.
    let volumeSets = Atomic<Int64>(0)
}

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
}
