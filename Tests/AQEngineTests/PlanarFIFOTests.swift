@testable import AQEngine
import Testing

/// The recording queue's FIFO of converted frames: what goes in comes out in order, whatever the
/// sizes appended and taken, across compactions.
@Suite struct PlanarFIFOTests {
    @Test func framesComeOutInOrderAcrossCompactions() {
        var fifo = PlanarFIFO(channels: 2)
        var next = 0, expected = 0
        var sizes = [7, 1, 300, 64, 5000, 3, 129]
        for round in 0..<200 {
            let n = sizes[round % sizes.count]
            let left = (next..<(next + n)).map { Float($0) }, right = left.map { -$0 }
            left.withUnsafeBufferPointer { l in right.withUnsafeBufferPointer { r in
                fifo.append(frames: n) { $0 == 0 ? l.baseAddress! : r.baseAddress! }
            } }
            next += n
            let take = min(fifo.count, sizes[(round + 3) % sizes.count])
            for i in 0..<take {
                #expect(fifo.sample(0, i) == Float(expected + i) && fifo.sample(1, i) == -Float(expected + i))
            }
            fifo.removeFirst(take)
            expected += take
            #expect(fifo.count == next - expected)
            sizes.swapAt(round % sizes.count, (round * 5 + 1) % sizes.count)
        }
        fifo.removeFirst(fifo.count + 10)
        #expect(fifo.isEmpty)
        fifo.removeAll()
        #expect(fifo.count == 0)
    }
}
