import AQCore
import Foundation

/// What `aqsync bench --offline` measures: the issue-5 workload on the hand-driven device, as
/// fast as the machine goes, against a plain mixing loop over the same data.
///
/// Thread safety: plain values.
public struct OfflineBenchOptions: Sendable {
    /// Output queues (stereo float, three 4096-frame buffers each).
    public var queues: Int = 64
    /// Frames per render cycle.
    public var frames: Int = 256
    /// Wall-clock time to spend measuring (both loops together).
    public var seconds: Double = 3
    /// Nominal sample rate of the hand-driven device.
    public var sampleRate: Double = 48000
    /// Upper bound on the cycles measured per loop (bounds memory for tiny workloads).
    public var maxCycles: Int = 2_000_000

    public init(queues: Int = 64, frames: Int = 256, seconds: Double = 3, sampleRate: Double = 48000) {
        self.queues = queues
        self.frames = frames
        self.seconds = seconds
        self.sampleRate = sampleRate
    }
}

/// The figures of one offline run. JSON keys are the snake_case names in `CodingKeys`.
public struct OfflineBenchResult: Sendable, Codable {
    public var mode = "offline"
    public var queues: Int
    public var frames: Int
    public var seconds: Double
    public var sampleRate: Double
    /// Cycles measured per loop (after the warm-up).
    public var cycles: Int
    /// Wall time of one renderer cycle (render + nothing else), ns.
    public var nsPerCycle: Percentiles
    /// Median renderer cycle / (queues × frames).
    public var nsPerSourceFrame: Double
    /// Wall time of one cycle of the plain mixing loop, ns.
    public var plainNsPerCycle: Percentiles
    /// Median plain cycle / (queues × frames).
    public var plainNsPerSourceFrame: Double
    /// nsPerSourceFrame / plainNsPerSourceFrame: the renderer's overhead over bare mixing.
    public var ratio: Double
    /// The period's duration at the nominal rate, and the median cycle's share of it.
    public var periodUs: Double
    public var budgetFraction: Double
    /// Frames the renderer found late (must be 0: no queue ever ran dry).
    public var lateFrames: UInt64
    /// Buffers played and re-enqueued during the run.
    public var buffersRefilled: Int
    /// Allocations made on the measuring thread while the renderer's cycles and their
    /// re-enqueueing ran (-1: not counted in this process).
    public var renderAllocations: Int

    enum CodingKeys: String, CodingKey {
        case mode, queues, frames, seconds, cycles
        case sampleRate = "sample_rate"
        case nsPerCycle = "ns_per_cycle"
        case nsPerSourceFrame = "ns_per_source_frame"
        case plainNsPerCycle = "plain_ns_per_cycle"
        case plainNsPerSourceFrame = "plain_ns_per_source_frame"
        case ratio
        case periodUs = "period_us"
        case budgetFraction = "budget_fraction"
        case lateFrames = "late_frames"
        case buffersRefilled = "buffers_refilled"
        case renderAllocations = "render_allocations"
    }

    /// Pretty, key-sorted JSON. Control thread.
    public var json: String { encodeJSON(self) }
}

/// Runs the offline benchmark on the calling thread. The renderer and the plain loop run in
/// alternating blocks of 64 cycles, so both see the same machine (a noisy neighbour slows both
/// and the ratio holds); each cycle is timed alone on CLOCK_MONOTONIC. The first 512 cycles
/// of each are a warm-up and not counted. Control thread (allocates before and after the
/// loops, never inside them).
///
/// - Returns: the figures, and the raw renderer cycle times (ns) for a histogram.
///
/// - Parameter allocations: counts allocations made during the renderer's cycles (their
///   rendering and re-enqueueing, not the bookkeeping between blocks); nil reports -1.
public func runOfflineBench(
    _ o: OfflineBenchOptions, allocations: AllocationCounter? = nil
) -> (OfflineBenchResult, samples: [Double]) {
    let workload = MixWorkload(queues: o.queues, frames: o.frames, sampleRate: o.sampleRate)
    let plain = PlainMixLoop(sharing: workload)
    for _ in 0..<512 {
        workload.cycle()
        plain.cycle()
    }
    var render = [UInt64](), bare = [UInt64]()
    let cap = max(1, o.maxCycles)
    render.reserveCapacity(min(cap, 1 << 20))
    bare.reserveCapacity(min(cap, 1 << 20))
    let deadline = HostClock.now() &+ UInt64(max(0, o.seconds) * 1e9)
    let block = 64
    let times = UnsafeMutablePointer<UInt64>.allocate(capacity: block)
    defer { times.deallocate() }
    var renderAllocations = 0
    let me = pthread_self()
    repeat {
        allocations?.watch(me)
        for k in 0..<block {
            let t0 = HostClock.now()
            workload.renderCycle()
            let t1 = HostClock.now()
            times[k] = t1 &- t0
            workload.refill()  // the output callback's work: not timed (not the render thread's)
        }
        renderAllocations += allocations?.count() ?? 0
        allocations?.stop()
        for k in 0..<block { render.append(times[k]) }
        for _ in 0..<block {
            let t0 = HostClock.now()
            plain.cycle()
            let t1 = HostClock.now()
            bare.append(t1 &- t0)
        }
    } while HostClock.now() < deadline && render.count < cap
    let r = render.map { Double($0) }, p = bare.map { Double($0) }
    let rp = Percentiles(r), pp = Percentiles(p)
    let sourceFrames = Double(o.queues * o.frames)
    let periodUs = Double(o.frames) / o.sampleRate * 1e6
    // Keep both outputs observable so neither loop can be optimised away.
    if workload.outputChecksum.isNaN || plain.outputChecksum.isNaN { print("warning: NaN in the mix") }
    let result = OfflineBenchResult(
        queues: o.queues, frames: o.frames, seconds: o.seconds, sampleRate: o.sampleRate, cycles: render.count,
        nsPerCycle: rp, nsPerSourceFrame: rp.p50 / sourceFrames, plainNsPerCycle: pp,
        plainNsPerSourceFrame: pp.p50 / sourceFrames, ratio: pp.p50 > 0 ? rp.p50 / pp.p50 : 0,
        periodUs: periodUs, budgetFraction: rp.p50 / 1000 / periodUs,
        lateFrames: workload.statistics.lateFrames, buffersRefilled: workload.buffersRefilled,
        renderAllocations: allocations == nil ? -1 : renderAllocations)
    return (result, r)
}

/// The offline result as a terminal table and histogram. Control thread.
public func describe(_ r: OfflineBenchResult, samples: [Double]) -> String {
    var s = "aqsync bench --offline: \(r.queues) queues × \(r.frames) frames, stereo float, hand-driven device\n"
    s += "cycles measured: \(r.cycles) each (renderer and plain loop interleaved)\n\n"
    s += "                      p50        p99      p99.9        max\n"
    func row(_ name: String, _ p: Percentiles) -> String {
        name.padding(toLength: 14, withPad: " ", startingAt: 0)
            + [p.p50, p.p99, p.p999, p.max].map { fmt($0).leftPad(11) }.joined() + "  ns/cycle\n"
    }
    s += row("renderer", r.nsPerCycle)
    s += row("plain loop", r.plainNsPerCycle)
    s += "\nns per source frame: renderer \(fmt(r.nsPerSourceFrame)), plain \(fmt(r.plainNsPerSourceFrame))"
    s += ", ratio \(fmt(r.ratio))×\n"
    s += "period \(fmt(r.periodUs)) µs at \(Int(r.sampleRate)) Hz: median cycle uses \(fmt(r.budgetFraction * 100)) %\n"
    s += "late frames: \(r.lateFrames), buffers re-enqueued: \(r.buffersRefilled), allocations while rendering: "
    s += (r.renderAllocations < 0 ? "not counted" : String(r.renderAllocations)) + "\n\n"
    s += "renderer cycle time:\n" + textHistogram(samples, unit: "ns")
    return s
}

extension String {
    func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: " ", count: n - count) + self }
}

func encodeJSON<T: Encodable>(_ value: T) -> String {
    let e = JSONEncoder()
    e.outputFormatting = [.prettyPrinted, .sortedKeys]
    guard let d = try? e.encode(value) else { return "{}" }
    return String(decoding: d, as: UTF8.self)
}
