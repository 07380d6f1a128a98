import AQCore
import CMixReference

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The benchmark workload of issue 5, on the hand-driven device: `queues` stereo queues, each
/// kept fed with `buffersPerQueue` buffers of `bufferFrames` frames (planar float, each queue at
/// its own gain), every buffer re-enqueued right after it has played, rendered in cycles of
/// `frames` frames into two outputs.
///
/// It drives ``RenderCore`` through ``ManualDevice`` directly: the re-enqueueing that the
/// engine's output callback does on its events thread is done here by ``refill()`` on the
/// calling thread, from the render events, with plain command pushes (no allocation, no
/// lock). So ``renderCycle()`` measures exactly what the render thread does each cycle, and a
/// loop of ``cycle()`` allocates nothing.
///
/// Memory: everything is allocated in `init` and freed in `deinit`.
///
/// Thread safety: one thread at a time (it is the render thread while it renders).
public final class MixWorkload {
    public let queues: Int
    public let frames: Int
    public let buffersPerQueue: Int
    public let bufferFrames: Int
    public let sampleRate: Double
    /// The hand-driven device the renderer runs on.
    public let device: ManualDevice

    let core: UnsafeMutablePointer<RenderCore>
    /// Source audio: queue q, buffer b, channel c starts at `data + ((q * B + b) * 2 + c) * bufferFrames`.
    public let data: UnsafeMutablePointer<Float>
    /// Per queue: its gain.
    public let gains: UnsafeMutablePointer<Float>
    /// Per queue: the queue frame the next re-enqueued buffer starts at.
    let nextStart: UnsafeMutablePointer<Int64>
    let outputStorage: UnsafeMutablePointer<Float>
    /// The two output channels, `frames` floats each.
    public let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Buffers played and re-enqueued so far.
    public private(set) var buffersRefilled = 0

    /// Makes the queues, schedules every buffer and starts every queue at frame 0.
    /// Control thread (allocates).
    public init(
        queues: Int, frames: Int, buffersPerQueue: Int = 3, bufferFrames: Int = 4096, sampleRate: Double = 48000
    ) {
        precondition(queues > 0 && frames > 0 && buffersPerQueue > 0 && bufferFrames > 0)
        self.queues = queues
        self.frames = frames
        self.buffersPerQueue = buffersPerQueue
        self.bufferFrames = bufferFrames
        self.sampleRate = sampleRate
        let caps = RenderCapacities(
            queues: queues, buffersPerQueue: buffersPerQueue + 1, commands: max(1024, queues * (buffersPerQueue + 4)),
            outputChannels: 2)
        core = RenderCore.allocate(sampleRate: sampleRate, capacities: caps)
        device = ManualDevice(sampleRate: sampleRate, channels: 2, framesPerCycle: frames, uid: "bench")
        let total = queues * buffersPerQueue * 2 * bufferFrames
        data = .allocate(capacity: total)
        // A deterministic signal well away from denormals: a saw per queue and channel.
        for i in 0..<total { data[i] = Float((i &* 2_654_435_761) % 2001) / 1000 - 1 }
        gains = .allocate(capacity: queues)
        for q in 0..<queues { gains[q] = 0.25 + Float(q % 7) / 16 }
        nextStart = .allocate(capacity: queues)
        nextStart.initialize(repeating: Int64(buffersPerQueue * bufferFrames), count: queues)
        outputStorage = .allocate(capacity: 2 * frames)
        outputStorage.initialize(repeating: 0, count: 2 * frames)
        outputs = .allocate(capacity: 2)
        outputs[0] = outputStorage
        outputs[1] = outputStorage + frames
        let c = core.pointee
        for q in 0..<queues {
            let slot = Int32(q)
            _ = c.commands.push(.activate(slot: slot, channels: 2, map: .standard(channels: 2), generation: 1))
            _ = c.commands.push(.setVolume(slot: slot, volume: gains[q], rampFrames: 0))
            for b in 0..<buffersPerQueue {
                _ = c.commands.push(.enqueue(slot: slot, buffer: scheduled(queue: q, buffer: b, start: Int64(b * bufferFrames))))
            }
            _ = c.commands.push(.start(slot: slot, frame: 0, run: 1))
        }
        try? device.start(rendering: RenderTarget(core))
    }

    deinit {
        device.stop()
        RenderCore.deallocate(core)
        data.deallocate()
        gains.deallocate()
        nextStart.deallocate()
        outputStorage.deallocate()
        outputs.deallocate()
    }

    @inline(__always)
    func scheduled(queue q: Int, buffer b: Int, start: Int64) -> ScheduledBuffer {
        ScheduledBuffer(
            token: UInt32(q * buffersPerQueue + b), data: data + (q * buffersPerQueue + b) * 2 * bufferFrames,
            stride: Int32(bufferFrames), frames: Int32(bufferFrames), start: start)
    }

    /// Renders one cycle (what the render thread does). Allocation-free.
    @inline(__always)
    public func renderCycle() {
        device.render(frames: frames, into: outputs)
    }

    /// Re-enqueues every buffer the renderer reported done, right after its queue's last one
    /// (what the output callback does in the live workload). Allocation-free.
    @inline(__always)
    public func refill() {
        let c = core.pointee
        var any = false
        while let e = c.events.pop() {
            any = true
            if case .bufferDone(let slot, _, let token, _, _, _) = e {
                let q = Int(slot)
                let b = Int(token) - q * buffersPerQueue
                _ = c.commands.push(.enqueue(slot: slot, buffer: scheduled(queue: q, buffer: b, start: nextStart[q])))
                nextStart[q] += Int64(bufferFrames)
                buffersRefilled += 1
            }
        }
        if any { while sem_trywait(c.wake) == 0 {} }
    }

    /// One cycle and its refill. Allocation-free.
    @inline(__always)
    public func cycle() {
        renderCycle()
        refill()
    }

    /// Render-thread counters (late frames must stay 0: no queue ever ran dry).
    public var statistics: RenderStatistics { core.pointee.statistics }

    /// The latest cycle's two output channels (for tests).
    public var outputChannels: (UnsafePointer<Float>, UnsafePointer<Float>) {
        (UnsafePointer(outputStorage), UnsafePointer(outputStorage + frames))
    }

    /// Sum of every output sample of the latest cycle (keeps the work observable).
    public var outputChecksum: Float {
        var s: Float = 0
        for i in 0..<(2 * frames) { s += outputStorage[i] }
        return s
    }
}

/// The plain C mixer the renderer is compared with (`Sources/CMixReference`, issue 13): the
/// same data as ``MixWorkload`` (queues × buffers × stereo planar float, the engine's own
/// storage layout), each queue at its gain, read in order and added into two outputs of
/// `frames` frames that are cleared each cycle. No scheduling, no commands, no events: the cost
/// of the arithmetic and the memory traffic alone.
///
/// It writes into the workload's own two output channels (the two alternate, so neither reads
/// the other's result): the same addresses, so the same cache sets and the same 4 KiB
/// aliasing between the sources' and the outputs' addresses. With outputs of its own, where
/// the allocator happened to put them moved the C loop's time by up to 5 % at one queue
/// (docs/benchmarking.md, "Fixed cost per cycle").
///
/// Thread safety: one thread at a time, and not while the workload renders.
public final class ReferenceMixer {
    public let queues: Int
    public let frames: Int
    let workload: MixWorkload
    /// The frame every source is at. It starts half the buffers away from the renderer's, so
    /// that when the two alternate, each reads data the other touched equally long ago:
    /// neither finds the other's reads in the cache.
    var position: Int
    let outputStorage: UnsafeMutablePointer<Float>

    /// Mixes the data of `workload` (shared, not copied). Control thread (allocates).
    public init(sharing workload: MixWorkload) {
        self.workload = workload
        queues = workload.queues
        frames = workload.frames
        position = workload.buffersPerQueue * workload.bufferFrames / 2
        outputStorage = workload.outputStorage
    }

    /// Mixes one cycle (one C call). Allocation-free.
    @inline(__always)
    public func cycle() {
        aq_ref_mix_cycle(
            workload.data, workload.gains, Int32(queues), Int32(workload.buffersPerQueue),
            Int32(workload.bufferFrames), Int32(frames), &position, outputStorage, outputStorage + frames)
    }

    /// Sum of every output sample of the latest cycle.
    public var outputChecksum: Float {
        var s: Float = 0
        for i in 0..<(2 * frames) { s += outputStorage[i] }
        return s
    }

    /// The two output channels as its latest cycle left them (the workload's: a renderer cycle
    /// since then overwrote them). For tests.
    public var outputs: (UnsafePointer<Float>, UnsafePointer<Float>) {
        (UnsafePointer(outputStorage), UnsafePointer(outputStorage + frames))
    }
}
