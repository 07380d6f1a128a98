import AQCore
import Foundation
import Testing

/// Issue 25: the priorities of the threads that serve the render thread.
@Suite struct ServicePriorityTests {
    @Test func levelsSitBelowTheRenderThread() {
        #expect(ServicePriority.level(belowRender: 5, by: 1) == 4)
        #expect(ServicePriority.level(belowRender: 5, by: 2) == 3)
        #expect(ServicePriority.level(belowRender: 88, by: ServicePriority.feedersBelowRender) == 86)
        // Never below SCHED_FIFO's lowest; nothing when no level is left under the render thread.
        #expect(ServicePriority.level(belowRender: 2, by: 2) == 1)
        #expect(ServicePriority.level(belowRender: 1, by: 1) == nil)
        #expect(ServicePriority.level(belowRender: nil, by: 1) == nil)
    }

    /// On a thread of its own: the call either takes the priority (and the thread reads it
    /// back) or is refused and leaves the thread ordinary; an out-of-range priority is refused.
    @Test func aThreadTakesThePriorityOrStaysAsItWas() {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Bool, Int32?, Bool, Int32?) = (false, nil, false, nil)
        let t = Thread {
            let before = ServicePriority.currentThreadRealtimePriority()
            let bad = ServicePriority.makeCurrentThreadRealtime(priority: 1000)
            let ok = ServicePriority.makeCurrentThreadRealtime(priority: 1)
            result = (bad, before, ok, ServicePriority.currentThreadRealtimePriority())
            done.signal()
        }
        t.start()
        done.wait()
        #expect(result.0 == false)
        #expect(result.1 == nil)
        #expect(result.3 == (result.2 ? 1 : nil))
    }
}
