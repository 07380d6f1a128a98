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
