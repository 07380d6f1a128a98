@testable import AQEngine
import AQCore
import AQTypes
import Foundation
import Synchronization
import Testing

/// Issue 15's reproductions, one test each, on the hand-driven device. Each failed on the
/// code before the fixes (the commit message that added it says how).
@Suite struct ReproductionTests {
    func code(_ body: () throws -> Void) -> AudioQueueError.Code? {
        do { try body(); return nil } catch let e as AudioQueueError { return e.code } catch { return nil }
    }

    /// A mono int16 buffer of `frames` frames, every sample `value`.
    func constant(_ q: AudioQueue, frames: Int, value: Int16 = 16384) throws -> AudioQueueBuffer {
        let b = try q.allocateBuffer(capacity: frames * 2)
        fillMono16(b, frames: frames, impulses: Array(0..<frames), value: value)
        return b
    }

    /// 1. `close()` from an output callback, from a property listener, and from a callback
    /// delivered on the test's thread returns.
    @Test func closeFromCallbackOrListenerReturns() throws {
        // From an output callback on the events thread.
        let (e1, d1) = try manualEngine(channels: 1)
        let closed1 = DispatchSemaphore(value: 0)
        let q1 = try e1.newOutput(format: int16Mono48k) { q, _ in q.engine.close(); closed1.signal() }
        try q1.enqueue(try constant(q1, frames: 64))
        try q1.start()
        _ = d1.render(frames: 256, cycle: 256)
        #expect(closed1.wait(timeout: .now() + 10) == .success, "close() from the callback never returned")
        #expect(finishes { e1.close() })

        // From an IsRunning listener on the events thread.
        let (e2, d2) = try manualEngine(channels: 1)
        let closed2 = DispatchSemaphore(value: 0)
        let q2 = try e2.newOutput(format: int16Mono48k) { _, _ in }
        q2.addPropertyListener(.isRunning) { q, _ in q.engine.close(); closed2.signal() }
        try q2.enqueue(try constant(q2, frames: 64))
        try q2.start()
        _ = d2.render(frames: 256, cycle: 256)
        #expect(closed2.wait(timeout: .now() + 10) == .success, "close() from the listener never returned")

        // From a callback delivered by deliverPendingEvents() (on this thread, unless the
        // events thread was quicker: both must return).
        let (e3, d3) = try manualEngine(channels: 1)
        let q3 = try e3.newOutput(format: int16Mono48k) { q, _ in q.engine.close() }
        try q3.enqueue(try constant(q3, frames: 64))
        try q3.start()
        _ = d3.render(frames: 256, cycle: 256)
        #expect(finishes { e3.deliverPendingEvents() }, "close() from a callback on the delivering thread never returned")
        #expect(finishes { e3.close() })
    }

    /// 2. A disposed queue's handle never acts on the queue that takes its slot next.
    @Test func staleHandleNeverActsOnAnotherQueue() throws {
        let (engine, device) = try manualEngine(
            channels: 2, capacities: RenderCapacities(queues: 1, buffersPerQueue: 8, commands: 64, outputChannels: 2))
        defer { engine.close() }
        let old = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try old.setLevelMeteringEnabled(true)
        try old.dispose(immediately: true)
        _ = device.render(frames: 64, cycle: 64)
        engine.deliverPendingEvents()
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try q.setLevelMeteringEnabled(true)
        try q.setOutputChannels([0])
        #expect(code { try old.setOutputChannels([1]) } != nil, "a stale handle was obeyed")
        try q.enqueue(try constant(q, frames: 4096))
        try q.start()
        let out = device.render(frames: 512, cycle: 256)
        #expect(out[0].allSatisfy { $0 == 0.5 }, "the new queue was re-routed through the old handle")
        #expect(out[1].allSatisfy { $0 == 0 })
        #expect(code { _ = try old.currentLevelMeter() } != nil, "the old handle read the new queue's meter")
        #expect(old.currentTime().time.sampleTime == 0, "the old handle read the new queue's time")
        #expect(q.currentTime().time.sampleTime == 512)
        #expect(!old.isRunning)
        #expect(code { try old.start() } != nil)
        #expect(code { try old.setParameter(.volume, 0) } != nil)
        #expect(device.render(frames: 256, cycle: 256)[0].allSatisfy { $0 == 0.5 })
    }

    /// 3. A held-up events thread and a hammering of every command: no event is ever dropped;
    /// a full ring is `capacityExceeded` on the calling thread; afterwards every buffer came
    /// back, the queue takes buffers again and a stopped queue is not running.
    @Test func heldEventsThreadLosesNothing() throws {
        let (engine, device) = try manualEngine(
            channels: 1, capacities: RenderCapacities(queues: 2, buffersPerQueue: 4, commands: 16, outputChannels: 2))
        defer { engine.close() }
        let gate = Gate()
        let holder = try engine.newOutput(format: int16Mono48k) { _, _ in gate.arriveAndWait() }
        try holder.enqueue(try constant(holder, frames: 16))
        try holder.start()
        _ = device.render(frames: 64, cycle: 64)
        gate.waitForArrival()  // the events thread is now held in a slow callback

        let returned = Counter()
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in returned.add() }
        var buffers: [AudioQueueBuffer] = []
        for _ in 0..<3 { buffers.append(try constant(q, frames: 32)) }
        var enqueued = 0
        var refusals = 0
        for i in 0..<2000 {
            for b in buffers where !b.isEnqueued {
                fillMono16(b, frames: 32, impulses: Array(0..<32))
                do { try q.enqueue(b); enqueued += 1 } catch { refusals += 1 }
            }
            do { try q.start() } catch { refusals += 1 }
            _ = device.render(frames: 16, cycle: 16)
            do { try q.pause() } catch { refusals += 1 }
            _ = device.render(frames: 16, cycle: 16)
            do { try q.start() } catch { refusals += 1 }
            do { try q.stop(immediately: i % 2 == 0) } catch { refusals += 1 }
            _ = device.render(frames: 16, cycle: 16)
            if i % 7 == 0 { do { try q.reset() } catch { refusals += 1 } }
            do { try q.setParameter(.volume, Float(i % 3) / 2) } catch { refusals += 1 }
        }
        #expect(engine.statistics.droppedEvents == 0, "the render thread dropped events")
        gate.open()
        engine.deliverPendingEvents()
        try q.stop(immediately: true)
        _ = device.render(frames: 64, cycle: 64)
        engine.deliverPendingEvents()
        #expect(engine.statistics.droppedEvents == 0)
        #expect(returned.value == enqueued, "\(enqueued) enqueued, \(returned.value) came back")
        #expect(!q.isRunning)
        #expect(buffers.allSatisfy { !$0.isEnqueued })
        // The queue works again.
        try q.enqueue(buffers[0])
        try q.start()
        _ = device.render(frames: 64, cycle: 64)
        engine.deliverPendingEvents()
        #expect(q.isRunning)
        #expect(returned.value == enqueued + 1)
    }

    /// 4. A buffer enqueued with no start time after the queue ran dry plays as soon as
    /// possible, whole.
    @Test func bufferAfterUnderrunPlaysAsSoonAsPossible() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try q.enqueue(try constant(q, frames: 256))
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        _ = device.render(frames: 1024, cycle: 256)  // ran dry at frame 256
        let b = try q.allocateBuffer(capacity: 512)
        fillMono16(b, frames: 256, impulses: [0, 5, 255])
        try q.enqueue(b)
        let out = device.render(frames: 512, cycle: 256)[0]
        #expect(nonZero(out) == [0, 5, 255], "the buffer was skipped instead of played at once")
    }

    /// 5. `stop(immediately: true)` is synchronous: when it returns the queue is stopped and
    /// every buffer is the caller's again — also on a device that is not rendering.
    @Test func immediateStopIsSynchronous() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let returned = Counter()
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in returned.add() }
        var buffers: [AudioQueueBuffer] = []
        for _ in 0..<3 {
            let b = try constant(q, frames: 1000)
            try q.enqueue(b)
            buffers.append(b)
        }
        try q.start()
        _ = device.render(frames: 256, cycle: 256)
        engine.deliverPendingEvents()
        #expect(q.isRunning)
        try q.stop(immediately: true)
        #expect(!q.isRunning)
        #expect(returned.value == 3, "the buffers came back through the callback before stop returned")
        for b in buffers { #expect(code { try q.freeBuffer(b) } == nil) }

        // A device that never renders.
        let (e2, _) = try manualEngine(channels: 1)
        defer { e2.close() }
        let q2 = try e2.newOutput(format: int16Mono48k) { _, _ in }
        let b2 = try constant(q2, frames: 100)
        try q2.enqueue(b2)
        try q2.start()
        try q2.stop(immediately: true)
        #expect(!b2.isEnqueued)
        #expect(code { try q2.freeBuffer(b2) } == nil)
    }

    /// 6. A volume set before the start applies from the first frame (no ramp from 1).
    @Test func volumeBeforeStartIsImmediate() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try q.setParameter(.volume, 0)
        try q.enqueue(try constant(q, frames: 1024))
        try q.start()
        let out = device.render(frames: 512, cycle: 256)[0]
        #expect(nonZero(out).isEmpty, "\(nonZero(out).count) frames faded down from 1")
    }

    /// 7. `parameter(.volume)` is the volume in force, per-buffer events included.
    @Test func parameterIsTheCombinedCurrentValue() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try q.enqueue(try constant(q, frames: 1024), parameterEvents: [AudioQueueParameterEvent(.volume, 0.5)])
        try q.start()
        let out = device.render(frames: 256, cycle: 256)[0]
        #expect(out.allSatisfy { $0 == 0.25 })
        #expect(q.parameter(.volume) == 0.5)
        try q.setParameter(.volume, 0.75)
        #expect(q.parameter(.volume) == 0.75, "a value just set is the current value")
    }

    /// 8. An engine released without `close()` shuts down cleanly: at once, after playing,
    /// and with a callback still holding its queue.
    @Test func engineReleasedWithoutClose() throws {
        for i in 0..<20 {
            let device = ManualDevice(sampleRate: 48000, channels: 1)
            var engine: AudioQueueEngine? = try AudioQueueEngine(device: device)
            if i % 2 == 1 {
                var q: AudioQueue? = try engine!.newOutput(format: int16Mono48k) { _, _ in }
                try q!.enqueue(try constant(q!, frames: 64))
                try q!.start()
                _ = device.render(frames: 256, cycle: 256)
                q = nil
            }
            engine = nil
            #expect(engine == nil)
            // The engine closed itself: the device no longer renders.
            let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
            defer { planes.deallocate() }
            #expect(!device.render(frames: 256, into: planes))
        }
    }

    /// 9. Meters: a new queue in a reused slot starts at zero; a stopped queue reads zero.
    @Test func metersNeverShowAnotherQueueOrAStoppedOne() throws {
        let (engine, device) = try manualEngine(
            channels: 1, capacities: RenderCapacities(queues: 1, buffersPerQueue: 8, commands: 64, outputChannels: 2))
        defer { engine.close() }
        let a = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try a.setLevelMeteringEnabled(true)
        try a.enqueue(try constant(a, frames: 4096))
        try a.start()
        _ = device.render(frames: 256, cycle: 256)
        #expect(try a.currentLevelMeter()[0].peakPower == 0.5)
        try a.dispose(immediately: true)
        _ = device.render(frames: 64, cycle: 64)
        engine.deliverPendingEvents()
        let b = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try b.setLevelMeteringEnabled(true)
        #expect(try b.currentLevelMeter()[0].peakPower == 0, "the new queue shows the old queue's level")
        try b.enqueue(try constant(b, frames: 4096))
        try b.start()
        _ = device.render(frames: 256, cycle: 256)
        #expect(try b.currentLevelMeter()[0].peakPower == 0.5)
        try b.stop(immediately: true)
        _ = device.render(frames: 64, cycle: 64)
        engine.deliverPendingEvents()
        #expect(try b.currentLevelMeter()[0].peakPower == 0, "a stopped queue keeps its last level")
        #expect(try b.currentLevelMeter()[0].averagePower == 0)
    }

    /// 10. A buffer enqueued while a drain-stop completes belongs to the next run (queue time
    /// 0 of the restart); after `reset()` on a paused queue the next buffer plays when it resumes.
    @Test func timelineAfterDrainStopAndPausedReset() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let a = try q.allocateBuffer(capacity: 2000)
        fillMono16(a, frames: 1000, impulses: [10])
        try q.enqueue(a)
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        try q.stop(immediately: false)
        _ = device.render(frames: 1024, cycle: 256)  // the drain completes at frame 1000
        let b = try q.allocateBuffer(capacity: 2000)
        fillMono16(b, frames: 100, impulses: [3])
        try q.enqueue(b)  // before the stop was delivered
        engine.deliverPendingEvents()
        #expect(!q.isRunning)
        try q.start(at: AudioTimeStamp(sampleTime: 2048))
        let out = device.render(frames: 2048, cycle: 256)[0]  // frames 1024..<3072
        #expect(nonZero(out).map { $0 + 1024 } == [2048 + 3], "the buffer kept the old timeline")
        try q.stop(immediately: true)
        engine.deliverPendingEvents()

        // reset() on a paused queue.
        let c = try q.allocateBuffer(capacity: 20000)
        fillMono16(c, frames: 10000, impulses: [9000])
        try q.enqueue(c)
        try q.start(at: AudioTimeStamp(sampleTime: 3072))
        _ = device.render(frames: 512, cycle: 256)  // 3072..<3584
        try q.pause()
        _ = device.render(frames: 1024, cycle: 256)  // paused from 3584
        try q.reset()
        _ = device.render(frames: 1024, cycle: 256)  // still paused
        engine.deliverPendingEvents()
        fillMono16(c, frames: 100, impulses: [0])
        try q.enqueue(c)
        _ = device.render(frames: 1024, cycle: 256)  // still paused: up to 6656
        try q.start(at: AudioTimeStamp(sampleTime: 7000))
        let out2 = device.render(frames: 2048, cycle: 256)[0]  // 6656..<8704
        #expect(nonZero(out2).map { $0 + 6656 } == [7000], "late by the paused time")
    }

    /// 10, found by the model test: two stop-after-drains in a row, a buffer enqueued between
    /// the second stop and its completion: the next run plays it at queue time 0 and the
    /// following buffer right after it, never on top of it.
    @Test func backToBackDrainStopsKeepOneTimeline() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let a = try q.allocateBuffer(capacity: 256)
        let b = try q.allocateBuffer(capacity: 256)
        let c = try q.allocateBuffer(capacity: 256)
        try q.start()
        fillMono16(a, frames: 30, impulses: Array(0..<30))
        try q.enqueue(a)
        _ = device.render(frames: 50, cycle: 50)
        engine.deliverPendingEvents()
        try q.stop(immediately: false)
        try q.start()
        fillMono16(a, frames: 20, impulses: Array(0..<20))
        try q.enqueue(a)
        _ = device.render(frames: 23, cycle: 23)
        engine.deliverPendingEvents()
        try q.stop(immediately: false)
        fillMono16(b, frames: 40, impulses: Array(0..<40))
        try q.enqueue(b)
        #expect(nonZero(device.render(frames: 54, cycle: 54)[0]).isEmpty)
        engine.deliverPendingEvents()
        fillMono16(c, frames: 40, impulses: Array(0..<40))
        #expect(try q.enqueue(c).sampleTime == 40)
        try q.start()
        let out = device.render(frames: 96, cycle: 32)[0]
        #expect(out.prefix(80).allSatisfy { $0 == 0.5 }, "the two buffers overlapped or left a gap")
        #expect(out.suffix(16).allSatisfy { $0 == 0 })
    }

    /// 12. One queue's lock held (as during a long decode) does not delay another queue's
    /// buffer return.
    @Test func oneQueueBusyDoesNotDelayAnother() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let busy = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let returned = Counter()
        let other = try engine.newOutput(format: int16Mono48k) { _, _ in returned.add() }
        try other.enqueue(try constant(other, frames: 64))
        try other.start()
        let gate = Gate()
        let holder = Thread { busy.withStateLockForTesting { gate.arriveAndWait() } }
        holder.start()
        gate.waitForArrival()
        _ = device.render(frames: 256, cycle: 256)
        let delivered = finishes(within: 10) { engine.deliverPendingEvents() }
        let count = returned.value
        gate.open()
        #expect(delivered && count == 1, "the other queue's buffer return waited for the busy queue")
    }

    /// 13. `dispose(immediately: true)` is synchronous: the slot is free when it returns, and
    /// no callback or listener of a disposed queue runs afterwards (nor during an asynchronous
    /// disposal's drain).
    @Test func disposeIsFinal() throws {
        let (engine, device) = try manualEngine(
            channels: 1, capacities: RenderCapacities(queues: 1, buffersPerQueue: 8, commands: 64, outputChannels: 2))
        defer { engine.close() }
        let calls = Counter()
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in calls.add() }
        q.addPropertyListener(.isRunning) { _, _ in calls.add(100) }
        try q.enqueue(try constant(q, frames: 100))
        try q.enqueue(try constant(q, frames: 100))
        try q.start()
        _ = device.render(frames: 64, cycle: 64)
        engine.deliverPendingEvents()
        let before = calls.value
        try q.dispose(immediately: true)
        // The only slot is free at once.
        let q2 = try engine.newOutput(format: int16Mono48k) { _, _ in calls.add(10_000) }
        _ = device.render(frames: 512, cycle: 256)
        engine.deliverPendingEvents()
        #expect(calls.value == before, "a disposed queue's callback or listener ran")

        // Asynchronous disposal: the drain plays, but no callback or listener runs.
        q2.addPropertyListener(.isRunning) { _, _ in calls.add(1_000_000) }
        try q2.enqueue(try constant(q2, frames: 100))
        try q2.start()
        _ = device.render(frames: 64, cycle: 64)
        engine.deliverPendingEvents()
        let started = calls.value
        try q2.dispose(immediately: false)
        let out = device.render(frames: 256, cycle: 256)[0]
        #expect(nonZero(out).count == 36, "the drain plays")
        _ = device.render(frames: 256, cycle: 256)
        engine.deliverPendingEvents()
        #expect(calls.value == started, "an asynchronously disposed queue's callback or listener ran")
    }
}

/// A device that says it runs on a realtime thread of its own but never calls the renderer
/// (a stalled or vanished server).
final class StalledDevice: AudioDevice, @unchecked Sendable {
    let uid = "stalled"
    let sampleRate = 48000.0
    let outputChannelCount = 2
    let framesPerCycle = 256
    let schedulingLead: Int64 = 256
    var isRunning: Bool { true }
    func start(rendering target: RenderTarget) throws(DeviceError) {}
    func stop() {}
}

@Suite struct SynchronousCallTests {
    /// 5 and 13 on a device that claims to render but stalls: an immediate stop, a reset and an
    /// immediate dispose still return (the control side applies them after a bounded wait), with
    /// the buffers handed back.
    @Test func synchronousCallsReturnOnAStalledDevice() throws {
        let engine = try AudioQueueEngine(device: StalledDevice())
        defer { engine.close() }
        let returned = Counter()
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in returned.add() }
        let b = try q.allocateBuffer(capacity: 400)
        b.audioDataByteSize = 400
        try q.enqueue(b)
        try q.start()
        #expect(finishes { try? q.stop(immediately: true) })
        #expect(!b.isEnqueued && returned.value == 1)
        try q.enqueue(b)
        #expect(finishes { try? q.reset() })
        #expect(!b.isEnqueued && returned.value == 2)
        try q.enqueue(b)
        #expect(finishes { try? q.dispose(immediately: true) })
        #expect((try? q.start()) == nil)
        #expect(engine.statistics.droppedEvents == 0)
    }
}
