import Foundation

/// Raises every thread of a running process to SCHED_FIFO: a witness or a recorder on a
/// non-realtime jackd (whose libjack creates every client thread SCHED_OTHER, whatever the
/// process was started with) that must not be left unscheduled for a cycle while aqsync, the
/// client judged, is called (issue 21's battery, docs/timing.md).
///
/// Thread safety: any thread; does not block beyond reading `/proc`.
package enum RealtimeThreads {
    /// Sets SCHED_FIFO at `priority` on every thread of process `pid` that exists now (threads
    /// it makes later keep what their creator asks for). Returns how many threads were raised.
    /// - Throws: ``TestingError`` when the process has no threads to read or a thread refused
    ///   (no permission: not root and no rtprio limit).
    @discardableResult
    package static func raise(pid: Int32, priority: Int32) throws(TestingError) -> Int {
        let tasks: [String]
        do {
            tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        } catch {
            throw TestingError("cannot list the threads of process \(pid): \(error)")
        }
        var raised = 0
        for tid in tasks.compactMap({ Int32($0) }) {
            var param = sched_param()
            param.sched_priority = priority
            if sched_setscheduler(tid, SCHED_FIFO, &param) == 0 {
                raised += 1
            } else if errno != ESRCH {  // a thread that ended meanwhile is no failure
                throw TestingError("SCHED_FIFO \(priority) refused for thread \(tid) of process \(pid): errno \(errno)")
            }
        }
        return raised
    }
}
