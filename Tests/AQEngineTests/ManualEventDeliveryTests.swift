import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// `EventDelivery.manual`: no events thread; callbacks and listeners run only inside
/// `deliverPendingEvents()`, on the thread that calls it; refused on a realtime device.
@Suite struct ManualEventDeliveryTests {
    @Test func callbacksRunOnlyInsideDeliverOnTheCallersThread() throws {
        let device = ManualDevice(sampleRate: 48000, channels: 2)
        let engine = try AudioQueueEngine(device: device, eventDelivery: .manual)
        defer { engine.close() }
        #expect(engine.eventDelivery == .manual)
        let threads = Recorder<UInt>()
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in threads.append(UInt(bitPattern: Int(bitPattern: pthread_self()))) }
        let running = Recorder<UInt>()
        _ = q.addPropertyListener(.isRunning) { _, _ in running.append(UInt(bitPattern: Int(bitPattern: pthread_self()))) }
        let b = try q.allocateBuffer(capacity: 512)
        fillMono16(b, frames: 256, impulses: [0])
        try q.enqueue(b)
        try q.start()
        for _ in 0..<4 { _ = device.render(frames: 256, cycle: 256) }
        // The buffer has played and the queue is running: with no events thread, nothing was
        // called (the events wait in their ring), however long one waits.
        #expect(threads.values.isEmpty && running.values.isEmpty)
        engine.deliverPendingEvents()
        let me = UInt(bitPattern: Int(bitPattern: pthread_self()))
        #expect(threads.values == [me], "the buffer came back once, on the delivering thread")
        #expect(running.values == [me], "isRunning's listener ran on the delivering thread")
        #expect(q.isRunning)
    }

    @Test func refusedOnARealtimeDevice() {
        do {
            let engine = try AudioQueueEngine(device: StalledDevice(), eventDelivery: .manual)
            engine.close()
            Issue.record("a realtime device took manual event delivery")
        } catch {
            #expect(error.code == .invalidParameter, "\(error)")
        }
    }
}
