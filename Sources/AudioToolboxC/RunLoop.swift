// CFRunLoop.h's minimal run loop (issue 12): one per thread, made by CFRunLoopGetCurrent. A
// queue made with a run loop posts its callbacks and listeners to it; they run on the thread
// that runs the loop (CFRunLoopRun, CFRunLoopRunInMode). Modes are not distinguished, and the
// loop has no timers, observers or other sources (docs/c-api.md).
import CAudioToolbox
import Foundation

/// One thread's run loop. Thread safety: `post`, `stop`, `wake` from any thread; `run` only on
/// the owning thread.
final class RunLoop: @unchecked Sendable {
    let thread: pthread_t
    private let condition = NSCondition()
    private var pending: [() -> Void] = []
    private var stopRequested = false

    init(thread: pthread_t) { self.thread = thread }

    var isCurrent: Bool { pthread_equal(thread, pthread_self()) != 0 }

    /// Queues `work` for the loop's thread. Any thread; does not block.
    func post(_ work: @escaping () -> Void) {
        condition.lock()
        pending.append(work)
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopRequested = true
        condition.signal()
        condition.unlock()
    }

    func wake() {
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    /// Runs posted work until `seconds` passed, a stop, or (with `returnAfterSourceHandled`) the
    /// first work run. The owning thread only; blocks.
    func run(seconds: Double, returnAfterSourceHandled: Bool) -> Int32 {
        // (NSCondition's wait traps on dates past what a timespec holds: wait an hour at most
        // at a time, and keep the deadline within a century.)
        let deadline = Date(timeIntervalSinceNow: min(max(0, seconds), 3e9))
        while true {
            condition.lock()
            while pending.isEmpty && !stopRequested && Date() < deadline {
                _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 3600)))
            }
            if stopRequested {
                stopRequested = false
                condition.unlock()
                return Int32(kCFRunLoopRunStopped)
            }
            let work = pending
            pending.removeAll()
            condition.unlock()
            for w in work { w() }
            if !work.isEmpty && returnAfterSourceHandled { return Int32(kCFRunLoopRunHandledSource) }
            if Date() >= deadline { return Int32(kCFRunLoopRunTimedOut) }
        }
    }

    // Every thread's loop, made on first use and kept for the life of the process.
    private static let tableLock = NSLock()
    nonisolated(unsafe) private static var loops: [RunLoop] = []
    nonisolated(unsafe) private static var mainLoop: RunLoop?

    static var current: RunLoop {
        tableLock.lock()
        defer { tableLock.unlock() }
        let me = pthread_self()
        if let l = loops.first(where: { pthread_equal($0.thread, me) != 0 }) { return l }
        let l = RunLoop(thread: me)
        loops.append(l)
        if mainLoop == nil && Thread.isMainThread { mainLoop = l }
        return l
    }

    static var main: RunLoop {
        tableLock.lock()
        let m = mainLoop
        tableLock.unlock()
        return m ?? current
    }

    /// The loop behind a `OpaquePointer` (loops are never freed, so the pointer stays valid).
    static func from(_ ref: OpaquePointer) -> RunLoop {
        Unmanaged<RunLoop>.fromOpaque(UnsafeRawPointer(ref)).takeUnretainedValue()
    }
    var ref: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }
}

/// `CFRunLoopGetCurrent`, exported to C: its contract is in `CoreFoundation/CFRunLoop.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func CFRunLoopGetCurrent() -> OpaquePointer? { RunLoop.current.ref }

/// `CFRunLoopGetMain`, exported to C: its contract is in `CoreFoundation/CFRunLoop.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func CFRunLoopGetMain() -> OpaquePointer? { RunLoop.main.ref }

/// `CFRunLoopRun`, exported to C: its contract is in `CoreFoundation/CFRunLoop.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func CFRunLoopRun() {
    let loop = RunLoop.current
    while loop.run(seconds: 3e9, returnAfterSourceHandled: false) != Int32(kCFRunLoopRunStopped) {}
}

/// `CFRunLoopRunInMode`, exported to C: its contract is in `CoreFoundation/CFRunLoop.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func CFRunLoopRunInMode(_ mode: OpaquePointer?, _ seconds: CFTimeInterval, _ returnAfterSourceHandled: Bool) -> CFRunLoopRunResult {
    RunLoop.current.run(seconds: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
}

/// `CFRunLoopStop`, exported to C: its contract is in `CoreFoundation/CFRunLoop.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func CFRunLoopStop(_ rl: OpaquePointer?) {
    guard let rl else { return }
    RunLoop.from(rl).stop()
}

/// `CFRunLoopWakeUp`, exported to C: its contract is in `CoreFoundation/CFRunLoop.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func CFRunLoopWakeUp(_ rl: OpaquePointer?) {
    guard let rl else { return }
    RunLoop.from(rl).wake()
}
