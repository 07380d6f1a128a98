#if canImport(Glibc)
import Glibc
#endif

/// Realtime scheduling for the threads that serve the render thread: the engine's events
/// thread (buffer completions, listeners) and a session's feeders (reading and decoding the
/// next buffers). They run SCHED_FIFO a few levels *below* the render thread, so the machine's
/// ordinary work (a build, a browser) cannot starve the feed, and the feed can never delay a
/// render cycle. This is what ecasound does for its disk thread (SCHED_FIFO 50, above JACK's
/// clients there; here below, so the render thread keeps the core). docs/architecture.md,
/// "Threads and their priorities" (issue 25).
///
/// Thread safety: pure functions and calls on the calling thread; any thread but the render
/// thread. Never blocks.
public enum ServicePriority {
    /// Levels below the render thread's priority for the engine's events thread.
    public static let eventsBelowRender: Int32 = 1
    /// Levels below the render thread's priority for threads that read and decode ahead.
    public static let feedersBelowRender: Int32 = 2

    /// The SCHED_FIFO priority `below` levels under `renderPriority` (the render thread's,
    /// ``AudioDevice/renderPriority``), never under SCHED_FIFO's lowest (1); nil when the render
    /// thread is not realtime (`renderPriority` nil or below 2: no level is left beneath it).
    public static func level(belowRender renderPriority: Int32?, by below: Int32) -> Int32? {
        guard let renderPriority, renderPriority >= 2 else { return nil }
        return max(1, renderPriority - below)
    }

    /// Puts the calling thread in SCHED_FIFO at `priority`. Returns false, the thread left as
    /// it was, when the system refuses (no `CAP_SYS_NICE` and an `RLIMIT_RTPRIO` below
    /// `priority`: add the user to the `audio` group as JACK's own set-up asks) or `priority`
    /// is out of SCHED_FIFO's range.
    @discardableResult
    public static func makeCurrentThreadRealtime(priority: Int32) -> Bool {
        guard priority >= sched_get_priority_min(SCHED_FIFO), priority <= sched_get_priority_max(SCHED_FIFO) else {
            return false
        }
        var param = sched_param()
        param.sched_priority = priority
        return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0
    }

    /// The calling thread's SCHED_FIFO or SCHED_RR priority, or nil when it is not realtime.
    public static func currentThreadRealtimePriority() -> Int32? {
        var policy: Int32 = 0
        var param = sched_param()
        guard pthread_getschedparam(pthread_self(), &policy, &param) == 0,
              policy == SCHED_FIFO || policy == SCHED_RR else { return nil }
        return param.sched_priority
    }
}
