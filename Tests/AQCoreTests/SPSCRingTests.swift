import Testing
@testable import AQCore

@Suite struct SPSCRingTests {
    /// Every capacity × starting offset × fill count: the ring holds exactly its capacity,
    /// refuses one more, and returns values in order across the wrap.
    @Test func everyWrapPosition() {
        for capacity in [2, 4, 8, 16] {
            for startOffset in 0..<capacity {
                for fill in 0...capacity {
                    let ring = SPSCRing<Int>.allocate(capacity: capacity)
                    defer { ring.deallocate() }
                    for i in 0..<startOffset { #expect(ring.push(i)); #expect(ring.pop() == i) }
                    for i in 0..<fill { #expect(ring.push(1000 + i)) }
                    if fill == capacity { #expect(!ring.push(-1)) }
                    #expect(ring.count == fill)
                    for i in 0..<fill { #expect(ring.pop() == 1000 + i) }
                    #expect(ring.pop() == nil)
                }
            }
        }
    }

    @Test func capacityRoundsUpToPowerOfTwo() {
        let ring = SPSCRing<Int>.allocate(capacity: 5)
        defer { ring.deallocate() }
        #expect(ring.capacity == 8)
        #expect(ring.freeCount == 8)
    }

    /// A producer thread and a consumer thread: every value arrives once, in order.
    @Test func twoThreads() async {
        let ring = SPSCRing<Int>.allocate(capacity: 64)
        defer { ring.deallocate() }
        let total = 200_000
        async let produced: Void = Task.detached {
            var i = 0
            while i < total { if ring.push(i) { i += 1 } }
        }.value
        let received = await Task.detached { () -> Bool in
            var expect = 0
            while expect < total {
                if let v = ring.pop() {
                    if v != expect { return false }
                    expect += 1
                }
            }
            return true
        }.value
        await produced
        #expect(received)
    }
}
