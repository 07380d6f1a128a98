import Testing
@testable import AQCore

/// ``RenderHandoff``: what the control side publishes is acknowledged only by a cycle that
/// began with it, and the acknowledgement is what says the old pointer may be freed.
/// (`#expect` cannot take the noncopyable handoff itself: each value is read first.)
@Suite struct RenderHandoffTests {
    @Test func acknowledgedOnlyByACycleThatBeganWithIt() {
        let h = RenderHandoff()
        let a = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
        let b = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
        defer { a.deallocate(); b.deallocate() }
        var got = h.acquire()
        #expect(got == nil)
        let ga = h.publish(a)
        var acked = h.isAcknowledged(ga)
        #expect(!acked, "no cycle has begun with a yet")
        got = h.acquire()
        acked = h.isAcknowledged(ga)
        #expect(got == a && acked)
        let gb = h.publish(b)
        acked = h.isAcknowledged(gb)
        let current = h.current
        #expect(gb > ga && !acked && current == b, "a cycle may still be using a")
        got = h.acquire()
        acked = h.isAcknowledged(gb) && h.isAcknowledged(ga)
        #expect(got == b && acked)
        let gone = h.publish(nil)
        acked = h.isAcknowledged(gone)
        #expect(!acked)
        got = h.acquire()
        acked = h.isAcknowledged(gone)
        #expect(got == nil && acked)
    }
}
