import AQCore
import AQEngine
import AQTypes
import Foundation
import Synchronization
import Testing

@Suite struct StressTests {
    /// A render thread runs while four threads feed their own queues from callbacks and one
    /// thread creates and disposes queues: every buffer enqueued comes back exactly once, a
    /// steady queue keeps a constant signal, and nothing crashes.
    @Test func enqueueCreateDisposeWhileRendering() async throws {
        let (engine, device) = try manualEngine(
            channels: 2, capacities: RenderCapacities(queues: 64, buffersPerQueue: 8, commands: 4096, outputChannels: 2))
        defer { engine.close() }
        let stop = Counter()
        let enqueued = Counter()
        let returned = Counter()
        let glitches = Counter()

        // The steady queue: a constant 0.25 on output 1, six buffers cycling. `ahead` counts
        // its buffers enqueued and not yet rendered (a semaphore: the callback signals it): the
        // render thread waits for two before a cycle and gives one back, as a device would for a
        // client that keeps up, so that a starved events thread on a loaded machine is not
        // mistaken for a glitch: what is checked is the mix.
        // Made at 0 and signalled for the six first buffers: libdispatch traps when a semaphore
        // is freed below the value it was made with.
        let ahead = DispatchSemaphore(value: 0)
        for _ in 0..<6 { ahead.signal() }
        let steady = try engine.newOutput(format: int16Mono48k) { q, b in
            fillMono16(b, frames: 256, impulses: Array(0..<256), value: 8192)
            if !(stop.value != 0), (try? q.enqueue(b)) != nil { ahead.signal() }
        }
        try steady.setOutputChannels([1])
        for _ in 0..<6 {
            let b = try steady.allocateBuffer(capacity: 512)
            fillMono16(b, frames: 256, impulses: Array(0..<256), value: 8192)
            try steady.enqueue(b)
        }
        try steady.start()

        let rendererDone = DispatchSemaphore(value: 0)
        let renderer = Thread {
            var first = true
            while !(stop.value != 0) {
                // Two buffers ahead (one is given back): the one this cycle plays and the next.
                // A bounded wait, so that the end of the test (stop set, no more refills) is seen.
                guard ahead.wait(timeout: .now() + 1) == .success else { continue }
                guard ahead.wait(timeout: .now() + 1) == .success else { ahead.signal(); continue }
                ahead.signal()
                if stop.value != 0 { break }
                let out = device.render(frames: 256, cycle: 256)
                if !first && !out[1].allSatisfy({ $0 == 0.25 }) { glitches.add() }
                first = false
            }
            rendererDone.signal()
        }
        renderer.start()

        // Four producers, each on a thread of its own: it enqueues every free buffer, then
        // waits (on its callback's signal, not a clock) until one comes back, 40 buffers in all.
        let producersDone = DispatchSemaphore(value: 0)
        for _ in 0..<4 {
            let back = DispatchSemaphore(value: 0)
            let q = try engine.newOutput(format: int16Mono48k) { _, _ in
                returned.add()
                back.signal()
            }
            try q.setOutputChannels([0])
            let buffers = try (0..<6).map { _ in try q.allocateBuffer(capacity: 256) }
            try q.start()
            let producer = Thread {
                var mine = 0
                while mine < 40 {
                    for b in buffers where !b.isEnqueued && mine < 40 {
                        fillMono16(b, frames: 128, impulses: [1])
                        if (try? q.enqueue(b)) != nil {
                            enqueued.add()
                            mine += 1
                        }
                    }
                    // The render thread plays them back out; 5 s without one is a failure.
                    if mine < 40 && back.wait(timeout: .now() + 5) == .timedOut {
                        Issue.record("no buffer came back in 5 s")
                        break
                    }
                }
                try? q.stop(immediately: false)
                producersDone.signal()
            }
            producer.start()
        }
        for _ in 0..<40 {
            let q = try engine.newOutput(format: int16Stereo48k) { _, _ in }
            let b = try q.allocateBuffer(capacity: 4096)
            b.audioData.initializeMemory(as: UInt8.self, repeating: 0, count: 4096)
            b.audioDataByteSize = 4096
            try q.enqueue(b)
            try q.start()
            await Task.yield()
            try q.dispose(immediately: Bool.random())
        }
        for _ in 0..<4 { producersDone.wait() }
        // The render thread stops; the test drives the last cycles itself until every drain
        // completed (a bounded number of cycles, no waiting on the clock).
        stop.set(1)
        rendererDone.wait()
        for _ in 0..<200 where returned.value != enqueued.value {
            _ = device.render(frames: 256, cycle: 256)
            engine.deliverPendingEvents()
        }
        #expect(returned.value == enqueued.value)
        #expect(enqueued.value > 100)
        #expect(glitches.value == 0)
        #expect(engine.statistics.droppedEvents == 0)
    }
}
