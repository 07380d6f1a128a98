import AQCore

/// The scheduling of the threads that serve the render thread (issue 25; docs/architecture.md,
/// "Threads and their priorities").
extension AudioQueueEngine {
    /// The SCHED_FIFO priority the events thread runs at, or nil when it runs as an ordinary
    /// thread (the render thread is not realtime, the engine was made with
    /// `realtimeServiceThreads: false`, the system refused, or it has not woken since the
    /// engine started). Any thread; does not block.
    public var eventsThreadPriority: Int32? {
        let p = shared.eventsPriority.load(ordering: .acquiring)
        return p > 0 ? p : nil
    }

    /// The SCHED_FIFO priority for threads that read and decode ahead for this engine's queues
    /// (a session's feeders): ``ServicePriority/feedersBelowRender`` levels below the render
    /// thread's, under the events thread's, so neither can delay a render cycle. Nil when
    /// feeders should stay ordinary threads (the render thread is not realtime, or
    /// `realtimeServiceThreads` is false). Such a thread applies it to itself with
    /// ``ServicePriority/makeCurrentThreadRealtime(priority:)``. Any control thread; does not
    /// block.
    public var feederPriority: Int32? {
        guard realtimeServiceThreads else { return nil }
        return ServicePriority.level(belowRender: device.renderPriority, by: ServicePriority.feedersBelowRender)
    }
}
