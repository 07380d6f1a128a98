import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// `AudioQueueEngine(device:…, startsDevice: false)` then `startDevice()` (issue 25): queues made
/// and primed before the device runs play as they would have, and `waitForFirstCycle(timeout:)`
/// returns once the first cycle is rendered, woken by the events thread (no polling).
@Suite struct DeferredDeviceStartTests {
    func code(_ body: () throws -> Void) -> AudioQueueError.Code? {
        do { try body() } catch let e as AudioQueueError { return e.code } catch { return nil }
        return nil
    }

    @Test func queuesPrimedBeforeTheDeviceStartsPlayOnTheirFrames() throws {
        let device = ManualDevice(sampleRate: 48000, channels: 1)
        let engine = try AudioQueueEngine(
            device: device, capacities: RenderCapacities(queues: 8, buffersPerQueue: 8, commands: 256, outputChannels: 2),
            startsDevice: false)
        defer { engine.close() }
        #expect(!device.isRunning)
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let b = try q.allocateBuffer(capacity: 2000)
        fillMono16(b, frames: 1000, impulses: [0, 7, 999])
        #expect(try q.enqueue(b).sampleTime == 0)
        #expect(!engine.waitForFirstCycle(timeout: 0))
        #expect(engine.timebase == nil)

        try engine.startDevice()
        #expect(device.isRunning)
        try engine.startDevice()  // started already: nothing
        _ = device.render(frames: 256, cycle: 256)
        // The events thread wakes this wait at the first cycle: it returns at once when it
        // works (the timeout only detects a failure).
        #expect(engine.waitForFirstCycle(timeout: 30))
        #expect(engine.timebase != nil)

        try q.start(at: AudioTimeStamp(sampleTime: 1000))
        let out = device.render(frames: 3000, cycle: 128)[0]
        #expect(nonZero(out) == [1000 - 256, 1007 - 256, 1999 - 256])
    }

    /// A caller already waiting when the first cycle comes is woken by it.
    @Test func aWaiterIsWokenByTheFirstCycle() throws {
        let device = ManualDevice(sampleRate: 48000, channels: 2)
        let engine = try AudioQueueEngine(device: device, startsDevice: false)
        defer { engine.close() }
        let result = Counter()
        let done = DispatchSemaphore(value: 0)
        let waiter = Thread {
            result.set(engine.waitForFirstCycle(timeout: 60) ? 1 : 2)
            done.signal()
        }
        waiter.start()
        try engine.startDevice()
        _ = device.render(frames: 64, cycle: 64)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(result.value == 1)
    }

    /// Closing the engine ends a wait for a cycle that never comes.
    @Test func closeEndsTheWait() throws {
        let device = ManualDevice(sampleRate: 48000, channels: 2)
        let engine = try AudioQueueEngine(device: device, startsDevice: false)
        let result = Counter()
        let done = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let waiter = Thread {
            entered.signal()
            result.set(engine.waitForFirstCycle(timeout: 60) ? 1 : 2)
            done.signal()
        }
        waiter.start()
        entered.wait()
        engine.close()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(result.value == 2)
        #expect(code { try engine.startDevice() } == .invalidDevice)
    }

    /// With manual event delivery nothing would wake the wait: it answers at once.
    @Test func manualDeliveryDoesNotWait() throws {
        let device = ManualDevice(sampleRate: 48000, channels: 2)
        let engine = try AudioQueueEngine(device: device, eventDelivery: .manual)
        defer { engine.close() }
        let answered = Counter()
        #expect(finishes(within: 30) { answered.set(engine.waitForFirstCycle(timeout: 60) ? 1 : 2) })
        #expect(answered.value == 2)
        _ = device.render(frames: 64, cycle: 64)
        #expect(engine.waitForFirstCycle(timeout: 60))
    }
}
