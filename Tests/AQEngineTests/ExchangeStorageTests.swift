import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// `AudioQueueBuffer.exchangeStorage(with:)` (issue 22, the C API's offline switch): two output
/// buffers of the same capacities trade bytes, size and packet descriptions; an enqueued buffer
/// or different capacities are refused and change nothing; a buffer that took over another
/// queue's storage plays its bytes.
@Suite struct ExchangeStorageTests {
    @Test func tradesStorageAndPlaysIt() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let a = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let b = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let x = try a.allocateBuffer(capacity: 256)
        let y = try b.allocateBuffer(capacity: 256)
        fillMono16(x, frames: 128, impulses: [7])
        let (dx, dy) = (x.audioData, y.audioData)
        try y.exchangeStorage(with: x)
        #expect(y.audioData == dx && x.audioData == dy)
        #expect(y.audioDataByteSize == 256 && x.audioDataByteSize == 0)
        try b.enqueue(y)
        try b.start()
        // Half the buffer's 128 frames: it is still enqueued afterwards, whenever the events
        // thread runs (a whole buffer could come back before the refusal below is tried: the
        // TSan build of 9aef33e saw it).
        let out = device.render(frames: 64, cycle: 64)
        #expect(nonZero(out[0]) == [7], "the bytes that came with the storage play: \(nonZero(out[0]))")
        #expect(y.isEnqueued)
        // Enqueued: refused, nothing moves.
        #expect(throws: AudioQueueError.self) { try x.exchangeStorage(with: y) }
        #expect(y.audioData == dx)
        let small = try a.allocateBuffer(capacity: 128)
        #expect(throws: AudioQueueError.self) { try small.exchangeStorage(with: x) }
    }
}
