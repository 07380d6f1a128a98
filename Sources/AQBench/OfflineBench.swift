import AQCore
import Foundation

/// What `aqsync bench --offline` measures: the issue-5 workload on the hand-driven device, as
/// fast as the machine goes, against the plain C mixer (`CMixReference`) over the same data.
///
/// Thread safety: plain values.
public struct OfflineBenchOptions: Sendable {
    /// Output queues (stereo float, three 4096-frame buffers each).
    public var queues: Int = 64
    /// Frames per render cycle.
    public var frames: Int = 256
    /// Wall-clock time to spend measuring (both mixers together, every round).
    public var seconds: Double = 3
    /// Nominal sample rate of the hand-driven device.
    public var sampleRate: Double = 48000
    /// Rounds of alternation; the ratio reported is the median of the rounds' ratios.
    public var rounds: Int = 3
    /// Upper bound on the cycles measured per mixer and round (bounds memory for tiny workloads).
    public var maxCycles: Int = 1_000_000

    public init(queues: Int = 64, frames: Int = 256, seconds: Double = 3, sampleRate: Double = 48000, rounds: Int = 3) {
        self.queues = queues
        self.frames = frames
        self.seconds = seconds
        self.sampleRate = sampleRate
        self.rounds = rounds
    }
}

/// The figures of one offline run. JSON keys are the snake_case names in `CodingKeys`.
public struct OfflineBenchResult: Sendable, Codable {
    public var mode = "offline"
    public var queues: Int
    public var frames: Int
    public var seconds: Double
    public var sampleRate: Double
    /// Samples per mixer, all rounds together (after the warm-up); each is the mean cycle of a
    /// block of `min(64, 4096 / frames)` cycles timed together.
    public var cycles: Int
    /// Wall time of one renderer cycle (render only; a block's mean), ns, the timer's own cost
    /// taken off.
    public var nsPerCycle: Percentiles
    /// Median renderer cycle / (queues × frames) (median over the rounds).
    public var nsPerSourceFrame: Double
    /// Wall time of one cycle of the C reference mixer, ns, the timer's own cost taken off.
    public var cNsPerCycle: Percentiles
    /// Median C cycle / (queues × frames) (median over the rounds).
    public var cNsPerSourceFrame: Double
    /// Renderer / C reference: the median over the rounds of each round's median ratio.
    public var ratio: Double
    /// Each round's ratio (their spread shows the noise of this run).
    public var ratioRounds: [Double]
    /// The median cost of reading the clock twice with nothing between, ns (taken off every
    /// sample above).
    public var timerOverheadNs: Double
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
        case cNsPerCycle = "c_ns_per_cycle"
        case cNsPerSourceFrame = "c_ns_per_source_frame"
        case ratio
        case ratioRounds = "ratio_rounds"
        case timerOverheadNs = "timer_overhead_ns"
        case periodUs = "period_us"
        case budgetFraction = "budget_fraction"
        case lateFrames = "late_frames"
        case buffersRefilled = "buffers_refilled"
        case renderAllocations = "render_allocations"
    }

    /// Pretty, key-sorted JSON. Control thread.
    public var json: String { encodeJSON(self) }
}

/// The median cost of two back-to-back clock reads, ns. Control thread.
func timerOverhead() -> Double {
    var d = [Double]()
    d.reserveCapacity(20_000)
    for _ in 0..<20_000 {
        let t0 = HostClock.now()
        let t1 = HostClock.now()
        d.append(Double(t1 &- t0))
    }
    return Percentiles(d).p50
}

/// Runs the offline benchmark on the calling thread. The renderer and the C reference run in
/// alternation, 16 timed blocks of one then 16 of the other, so both see the same machine (a
/// noisy neighbour slows both and the ratio holds). A block is `min(64, 4096 / frames)` cycles
/// timed together on CLOCK_MONOTONIC (the clock's own cost taken off), and each sample is a
/// block's mean cycle; the renderer's queues are refilled between blocks, untimed. The time
/// is split into `rounds` rounds; each gives a ratio of medians, and the median of those is
/// reported. The first 512 cycles of each are a warm-up. Control
/// thread (allocates before and after the loops, never inside them).
///
/// - Returns: the figures, and the raw renderer cycle times (ns) for a histogram.
///
/// - Parameter allocations: counts allocations made during the renderer's cycles (their
///   rendering and re-enqueueing, not the bookkeeping between blocks); nil reports -1.
public func runOfflineBench(
    _ o: OfflineBenchOptions, allocations: AllocationCounter? = nil
) -> (OfflineBenchResult, samples: [Double]) {
    let workload = MixWorkload(queues: o.queues, frames: o.frames, sampleRate: o.sampleRate)
    let reference = ReferenceMixer(sharing: workload)
    for _ in 0..<512 {
        workload.cycle()
        reference.cycle()
    }
    let overhead = timerOverhead()
    let rounds = max(1, o.rounds)
    let cap = max(1, o.maxCycles)
    // Cycles timed together: as many as keep the clock's cost and granularity (tens of ns)
    // small next to the work, and few enough frames (≤ 4096) that the queues, refilled after
    // each block, never run dry inside one (three 4096-frame buffers are scheduled ahead).
    let block = max(1, min(64, 4096 / max(1, o.frames)))
    let blocks = 16
    let times = UnsafeMutablePointer<UInt64>.allocate(capacity: 2 * blocks)
    defer { times.deallocate() }
    var renderAllocations = 0
    let me = pthread_self()
    var allRender = [Double](), allC = [Double]()
    var roundRatios = [Double](), roundRender = [Double](), roundC = [Double]()
    for _ in 0..<rounds {
        var render = [Double](), bare = [Double]()
        render.reserveCapacity(min(cap, 1 << 18))
        bare.reserveCapacity(min(cap, 1 << 18))
        let deadline = HostClock.now() &+ UInt64(max(0, o.seconds) / Double(rounds) * 1e9)
        repeat {
            allocations?.watch(me)
            for k in 0..<blocks {
                let t0 = HostClock.now()
                for _ in 0..<block { workload.renderCycle() }
                let t1 = HostClock.now()
                times[k] = t1 &- t0
                workload.refill()  // the output callback's work: not timed (not the render thread's)
            }
            renderAllocations += allocations?.count() ?? 0
            allocations?.stop()
            for k in 0..<blocks {
                let t0 = HostClock.now()
                for _ in 0..<block { reference.cycle() }
                let t1 = HostClock.now()
                times[blocks + k] = t1 &- t0
            }
            for k in 0..<blocks {
                render.append(max(0, Double(times[k]) - overhead) / Double(block))
                bare.append(max(0, Double(times[blocks + k]) - overhead) / Double(block))
            }
        } while HostClock.now() < deadline && render.count < cap
        let r = Percentiles(render).p50, c = Percentiles(bare).p50
        roundRender.append(r)
        roundC.append(c)
        roundRatios.append(c > 0 ? r / c : 0)
        allRender += render
        allC += bare
    }
    func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
    let rp = Percentiles(allRender), cp = Percentiles(allC)
    let sourceFrames = Double(o.queues * o.frames)
    let periodUs = Double(o.frames) / o.sampleRate * 1e6
    // Keep both outputs observable so neither loop can be optimised away.
    if workload.outputChecksum.isNaN || reference.outputChecksum.isNaN { print("warning: NaN in the mix") }
    let result = OfflineBenchResult(
        queues: o.queues, frames: o.frames, seconds: o.seconds, sampleRate: o.sampleRate, cycles: allRender.count,
        nsPerCycle: rp, nsPerSourceFrame: median(roundRender) / sourceFrames, cNsPerCycle: cp,
        cNsPerSourceFrame: median(roundC) / sourceFrames, ratio: median(roundRatios), ratioRounds: roundRatios,
        timerOverheadNs: overhead, periodUs: periodUs, budgetFraction: median(roundRender) / 1000 / periodUs,
        lateFrames: workload.statistics.lateFrames, buffersRefilled: workload.buffersRefilled,
        renderAllocations: allocations == nil ? -1 : renderAllocations)
    return (result, allRender)
}

/// The offline result as a terminal table and histogram. Control thread.
public func describe(_ r: OfflineBenchResult, samples: [Double]) -> String {
    var s = "aqsync bench --offline: \(r.queues) queues × \(r.frames) frames, stereo float, hand-driven device\n"
    s += "cycles measured: \(r.cycles) each (renderer and C reference alternating, \(r.ratioRounds.count) rounds)\n\n"
    s += "                      p50        p99      p99.9        max\n"
    func row(_ name: String, _ p: Percentiles) -> String {
        name.padding(toLength: 14, withPad: " ", startingAt: 0)
            + [p.p50, p.p99, p.p999, p.max].map { fmt($0).leftPad(11) }.joined() + "  ns/cycle\n"
    }
    s += row("renderer", r.nsPerCycle)
    s += row("C reference", r.cNsPerCycle)
    s += "\nns per source frame: renderer \(fmt(r.nsPerSourceFrame)), C \(fmt(r.cNsPerSourceFrame))"
    s += ", ratio \(fmt(r.ratio))× (rounds: \(r.ratioRounds.map { fmt($0) }.joined(separator: ", ")))\n"
    s += "timer overhead taken off each sample: \(fmt(r.timerOverheadNs)) ns\n"
    s += "period \(fmt(r.periodUs)) µs at \(Int(r.sampleRate)) Hz: median cycle uses \(fmt(r.budgetFraction * 100)) %\n"
    s += "late frames: \(r.lateFrames), buffers re-enqueued: \(r.buffersRefilled), allocations while rendering: "
    s += (r.renderAllocations < 0 ? "not counted" : String(r.renderAllocations)) + "\n\n"
    s += "renderer cycle time:\n" + textHistogram(samples, unit: "ns")
    return s
}

/// The grid of issue 13: queues {1, 16, 256, 1024} × frames {32, 64, 256, 1024}.
public let offlineGridQueues = [1, 16, 256, 1024]
public let offlineGridFrames = [32, 64, 256, 1024]

/// Runs ``runOfflineBench(_:allocations:)`` at every point of `queues` × `frames`, `seconds`
/// each (split into `rounds` rounds of alternation). `progress` hears each point as it is
/// done. Control thread; blocks for about `queues.count × frames.count × seconds` s.
public func runOfflineGrid(
    queues: [Int] = offlineGridQueues, frames: [Int] = offlineGridFrames, seconds: Double = 1.5,
    sampleRate: Double = 48000, rounds: Int = 3, allocations: AllocationCounter? = nil,
    progress: (OfflineBenchResult) -> Void = { _ in }
) -> [OfflineBenchResult] {
    var out = [OfflineBenchResult]()
    for q in queues {
        for p in frames {
            let (r, _) = runOfflineBench(
                OfflineBenchOptions(queues: q, frames: p, seconds: seconds, sampleRate: sampleRate, rounds: rounds),
                allocations: allocations)
            progress(r)
            out.append(r)
        }
    }
    return out
}

/// The grid as a Markdown table (engine, C reference, ratio, the rounds' ratios). Control thread.
public func describeGrid(_ results: [OfflineBenchResult]) -> String {
    var s = "| queues | frames | engine ns/cycle | C ns/cycle | engine ns/source frame | C ns/source frame | ratio | rounds | allocations |\n"
    s += "|---:|---:|---:|---:|---:|---:|---:|---|---:|\n"
    for r in results {
        let sf = Double(r.queues * r.frames)
        s += "| \(r.queues) | \(r.frames) | \(fmt(r.nsPerSourceFrame * sf)) | \(fmt(r.cNsPerSourceFrame * sf)) | "
        s += "\(fmt(r.nsPerSourceFrame)) | \(fmt(r.cNsPerSourceFrame)) | **\(fmt(r.ratio))** | "
        s += r.ratioRounds.map { fmt($0) }.joined(separator: " / ")
        s += " | \(r.renderAllocations < 0 ? "–" : String(r.renderAllocations)) |\n"
    }
    return s
}

/// The grid's results as one JSON array. Control thread.
public func encodeGridJSON(_ results: [OfflineBenchResult]) -> String { encodeJSON(results) }

extension String {
    func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: " ", count: n - count) + self }
}

func encodeJSON<T: Encodable>(_ value: T) -> String {
    let e = JSONEncoder()
    e.outputFormatting = [.prettyPrinted, .sortedKeys]
    guard let d = try? e.encode(value) else { return "{}" }
    return String(decoding: d, as: UTF8.self)
}
