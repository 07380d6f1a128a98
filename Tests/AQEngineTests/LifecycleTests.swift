import AQCore
import AQEngine
import AQTypes
import Foundation
import Synchronization
import Testing

@Suite struct LifecycleTests {
    /// The output callback runs off the render thread (on the events thread or the thread that
    /// delivers events), and each buffer comes back once per enqueue.
    @Test func callbackOffTheRenderThread() throws {
        let (engine, device) = try manualEngine()
        defer { engine.close() }
        let threads = Recorder<UInt>()
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in threads.append(UInt(bitPattern: Int(bitPattern: pthread_self()))) }
        for _ in 0..<3 {
            let b = try q.allocateBuffer(capacity: 1024)
            b.audioDataByteSize = 1024
            try q.enqueue(b)
        }
        try q.start()
        let renderThread = Recorder<UInt>()
        let rendered = DispatchSemaphore(value: 0)
        Thread {
            renderThread.append(UInt(bitPattern: Int(bitPattern: pthread_self())))
            _ = device.render(frames: 1024, cycle: 128)
            rendered.signal()
        }.start()
        rendered.wait()
        engine.deliverPendingEvents()
        #expect(threads.values.count == 3)
        #expect(!threads.values.contains(renderThread.values[0]), "never the render thread")
    }

    /// The three-buffer pattern: buffers re-enqueued from the callback keep playing gap-free.
    @Test func reenqueueFromCallback() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let count = Counter()
        let q = try engine.newOutput(format: int16Mono48k) { q, b in
            count.add()
            fillMono16(b, frames: 256, impulses: Array(0..<256))
            _ = try? q.enqueue(b)
        }
        for _ in 0..<3 {
            let b = try q.allocateBuffer(capacity: 512)
            fillMono16(b, frames: 256, impulses: Array(0..<256))
            try q.enqueue(b)
        }
        try q.start()
        for _ in 0..<40 {
            let out = device.render(frames: 256, cycle: 256)[0]
            #expect(out.allSatisfy { $0 == 0.5 })
            // The refills, before the next cycle (a real device's period).
            engine.deliverPendingEvents()
            #expect(count.value >= 1)
        }
    }

    /// Stop immediately: every buffer comes back unplayed through the callback; isRunning
    /// listeners hear the start and the stop.
    @Test func stopImmediatelyReturnsEveryBuffer() throws {
        let (engine, device) = try manualEngine()
        defer { engine.close() }
        let returned = Recorder<Int>()
        let q = try engine.newOutput(format: int16Stereo48k) { _, b in returned.append(b.audioDataByteSize) }
        let running = Recorder<Bool>()
        q.addPropertyListener(.isRunning) { q, id in running.append(q.isRunning) }
        for i in 1...3 {
            let b = try q.allocateBuffer(capacity: 4000)
            b.audioDataByteSize = 4000 - i * 4
            try q.enqueue(b)
        }
        try q.start()
        _ = device.render(frames: 256, cycle: 256)
        #expect(delivered(engine) { running.values == [true] })
        try q.stop(immediately: true)
        _ = device.render(frames: 256, cycle: 256)
        #expect(delivered(engine) { returned.values.count == 3 && running.values == [true, false] })
        #expect(Set(returned.values) == [3996, 3992, 3988])
        #expect(!q.isRunning)
    }

    /// Stop after the queued buffers: the queue stops exactly when the last buffer ends.
    @Test func stopAfterDrain() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let running = Recorder<Bool>()
        q.addPropertyListener(.isRunning) { q, _ in running.append(q.isRunning) }
        let b = try q.allocateBuffer(capacity: 2000)
        fillMono16(b, frames: 1000, impulses: [999])
        try q.enqueue(b)
        try q.start(at: AudioTimeStamp(sampleTime: 10))
        try q.stop(immediately: false)
        let out = device.render(frames: 2048, cycle: 256)[0]
        #expect(nonZero(out) == [1009])
        #expect(delivered(engine) { running.values == [true, false] })
    }

    /// Queue time: in queue frames, relative to the start, not advancing while paused.
    @Test func queueTimeAndPause() throws {
        let (engine, device) = try manualEngine()
        defer { engine.close() }
        let q = try engine.newOutput(format: AudioStreamBasicDescription.linearPCM(sampleRate: 24000, channels: 2, bits: 16)) { _, _ in }
        let b = try q.allocateBuffer(capacity: 400_000)
        b.audioDataByteSize = 400_000
        try q.enqueue(b)
        #expect(q.currentTime().time.sampleTime == 0)
        try q.start(at: AudioTimeStamp(sampleTime: 1000))
        _ = device.render(frames: 5000, cycle: 500)
        #expect(q.currentTime().time.sampleTime == 2000)  // 4000 device frames at half rate
        try q.pause()
        _ = device.render(frames: 5000, cycle: 500)
        #expect(q.currentTime().time.sampleTime == 2000)
        try q.start()
        _ = device.render(frames: 1000, cycle: 500)
        #expect(q.currentTime().time.sampleTime == 2500)
    }

    /// A timeline reports each discontinuity exactly once.
    @Test func timelineDiscontinuityOnce() throws {
        let (engine, device) = try manualEngine()
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        let tl = q.createTimeline()
        _ = device.render(frames: 512, cycle: 256)
        #expect(!q.currentTime(timeline: tl).discontinuity)
        device.skip(frames: 100)
        #expect(q.currentTime(timeline: tl).discontinuity)
        #expect(!q.currentTime(timeline: tl).discontinuity)
        #expect(engine.discontinuity.reason == .timeJump)
    }

    /// Metering of a full-scale-half square wave.
    @Test func levelMeters() throws {
        let (engine, device) = try manualEngine()
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        try q.setLevelMeteringEnabled(true)
        let b = try q.allocateBuffer(capacity: 20000)
        fillMono16(b, frames: 10000, impulses: Array(0..<10000))
        try q.enqueue(b)
        try q.start()
        _ = device.render(frames: 1024, cycle: 256)
        let m = try q.currentLevelMeter()
        #expect(m.count == 1 && m[0].peakPower == 0.5 && abs(m[0].averagePower - 0.5) < 1e-6)
        let db = try q.currentLevelMeterDB()
        #expect(abs(db[0].peakPower - (-6.0206)) < 0.01)
    }

    /// Reset returns buffers and the next buffer plays at once; dispose frees the slot.
    @Test func resetAndDispose() throws {
        let (engine, device) = try manualEngine(channels: 1, capacities: RenderCapacities(queues: 1, buffersPerQueue: 8, commands: 64, outputChannels: 2))
        defer { engine.close() }
        let returned = Recorder<Int>()
        let q = try engine.newOutput(format: int16Mono48k) { _, b in returned.append(1) }
        let b = try q.allocateBuffer(capacity: 20000)
        fillMono16(b, frames: 10000, impulses: [9000])
        try q.enqueue(b)
        try q.start()
        _ = device.render(frames: 512, cycle: 256)
        try q.reset()
        _ = device.render(frames: 256, cycle: 256)
        #expect(delivered(engine) { returned.values.count == 1 })
        fillMono16(b, frames: 100, impulses: [3])
        try q.enqueue(b)
        let out = device.render(frames: 256, cycle: 256)[0]
        #expect(nonZero(out) == [3])
        try q.dispose(immediately: false)
        _ = device.render(frames: 256, cycle: 256)
        // The only slot is free again once the disposal completed.
        engine.deliverPendingEvents()
        #expect((try? engine.newOutput(format: int16Mono48k) { _, _ in }) != nil)
    }
}

@Suite struct RestartTests {
    /// Stop immediately, enqueue for the next run, then the stop completes: the new buffers
    /// keep their queue times and play from the new start.
    @Test func enqueueAfterImmediateStopKeepsItsTimes() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let a = try q.allocateBuffer(capacity: 2000)
        fillMono16(a, frames: 1000, impulses: [500])
        try q.enqueue(a)
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        _ = device.render(frames: 256, cycle: 256)
        try q.stop(immediately: true)
        let b = try q.allocateBuffer(capacity: 2000)
        fillMono16(b, frames: 1000, impulses: [7])
        let c = try q.allocateBuffer(capacity: 2000)
        fillMono16(c, frames: 1000, impulses: [9])
        #expect(try q.enqueue(b).sampleTime == 0)
        _ = device.render(frames: 256, cycle: 256)  // the stop happens here
        #expect(delivered(engine) { !q.isRunning })
        #expect(try q.enqueue(c).sampleTime == 1000, "queue time must not restart twice")
        try q.start(at: AudioTimeStamp(sampleTime: 1024))
        let out = device.render(frames: 3000, cycle: 256)[0]
        #expect(nonZero(out) == [7 + 1024 - 512, 1009 + 1024 - 512])
    }
}
