// The renderer's benchmarks (issue 5). docs/benchmarking.md says how to run them and what the
// figures mean.
//
// - "Render-N-queues-x-P-frames": one render cycle of the issue-5 workload (N stereo queues,
//   three 4096-frame buffers each, re-enqueued when played) on the hand-driven device, for
//   N in {1, 16, 64, 256, 1024} and P in {32, 64, 256, 1024}.
// - "Allocations-render-loop-...": the same cycle loop; its mallocCountTotal threshold is 0
//   (Thresholds/RenderBenchmarks.Allocations-render-loop-*.json), so any allocation put
//   into the render path fails `swift package benchmark thresholds check`.
// - "Allocations-control-...": a loop that allocates once per iteration; its threshold is the
//   count it makes, so a malloc counter that is broken (reads 0) fails the check too.
// - "Ratio-N-queues-x-P-frames" (issue 13): the renderer against the C reference mixer
//   (AQBench.runOfflineBench: alternating blocks, median of three rounds) at every point of
//   queues {1, 16, 256, 1024} × frames {32, 64, 256, 1024}. The metric `ratioAboveGoal` is how
//   far the ratio is above its goal (1.3×, 1.1× from 256 frames up), in hundredths, 0 when at
//   or below it: its threshold files hold 0 and the tolerance is the noise measured in five
//   runs (docs/benchmarking.md), so `thresholds check --filter 'Ratio.*'` fails when a ratio
//   rises above its goal by more than the noise, and never for being better.
import AQBench
import Benchmark

#if canImport(Glibc)
import Glibc
#endif

/// Holds a workload between a benchmark's setup and teardown (the closures are @Sendable;
/// the benchmark runner calls them one after the other on one thread).
final class WorkloadBox: @unchecked Sendable {
    var workload: MixWorkload?
}

let queueCounts = [1, 16, 64, 256, 1024]
let periods = [32, 64, 256, 1024]
let ratioQueueCounts = offlineGridQueues
let ratioPeriods = offlineGridFrames
/// The noise of each grid point's ratio, in hundredths: the spread (max − min) of the ratio
/// over five runs of `aqsync bench --offline --grid --seconds 1.5` on this machine
/// (load average 0.5–1.9; 2026-11-23 12:13–12:16 UTC), at least 2 (docs/benchmarking.md). Keyed
/// "queues-frames".
let ratioNoiseHundredths: [String: Int] = [
    "1-32": 2,
    "1-64": 7,
    "1-256": 2,
    "1-1024": 2,
    "16-32": 3,
    "16-64": 6,
    "16-256": 3,
    "16-1024": 2,
    "256-32": 26,
    "256-64": 51,
    "256-256": 10,
    "256-1024": 2,
    "1024-32": 7,
    "1024-64": 5,
    "1024-256": 4,
    "1024-1024": 3,
]

let benchmarks: @Sendable () -> Void = {
    // Timing figures are for reading, not for failing: the machines are shared and noisy.
    // Allocation counts are exact and checked against Thresholds/.
    let exactlyZero = BenchmarkThresholds(relative: [.p90: 0, .p100: 0], absolute: [.p90: 0, .p100: 0])
    let exact = BenchmarkThresholds(relative: [.p90: 0], absolute: [.p90: 0])

    for n in queueCounts {
        for p in periods {
            let box = WorkloadBox()
            // About 1 ms of work or more per measured iteration for the small cases.
            let scaling: BenchmarkScalingFactor = n * p <= 4096 ? .kilo : .one
            Benchmark(
                "Render-\(n)-queues-x-\(p)-frames",
                configuration: .init(
                    metrics: [.wallClock, .throughput, .mallocCountTotal],
                    timeUnits: .nanoseconds,
                    warmupIterations: 8,
                    scalingFactor: scaling,
                    maxDuration: .seconds(1),
                    maxIterations: 100_000,
                    setup: { box.workload = MixWorkload(queues: n, frames: p) },
                    teardown: { box.workload = nil })
            ) { benchmark in
                guard let w = box.workload else { return }
                for _ in benchmark.scaledIterations { w.cycle() }
                blackHole(w.outputChecksum)
            }
        }
    }

    let loopBox = WorkloadBox()
    Benchmark(
        "Allocations-render-loop-256-queues-x-64-frames",
        configuration: .init(
            metrics: [.mallocCountTotal],
            warmupIterations: 4,
            // 1000 cycles per iteration: every iteration finishes and re-enqueues buffers.
            scalingFactor: .kilo,
            maxDuration: .seconds(1),
            maxIterations: 200,
            thresholds: [.mallocCountTotal: exactlyZero],
            setup: { loopBox.workload = MixWorkload(queues: 256, frames: 64) },
            teardown: { loopBox.workload = nil })
    ) { benchmark in
        guard let w = loopBox.workload else { return }
        for _ in benchmark.scaledIterations { w.cycle() }
        blackHole(w.outputChecksum)
    }

    Benchmark(
        "Allocations-control-one-malloc-per-iteration",
        configuration: .init(
            metrics: [.mallocCountTotal],
            warmupIterations: 4,
            scalingFactor: .kilo,
            maxDuration: .seconds(1),
            maxIterations: 200,
            thresholds: [.mallocCountTotal: exact])
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let p = malloc(64)
            blackHole(p)
            free(p)
        }
    }

    // The grid of issue 13, against the C reference. One iteration each: the run inside it
    // alternates the two mixers and takes the median of three rounds.
    let ratioAboveGoal = BenchmarkMetric.custom("ratioAboveGoal", polarity: .prefersSmaller, useScalingFactor: false)
    for n in ratioQueueCounts {
        for p in ratioPeriods {
            // The tolerance: this point's noise (hundredths of the ratio).
            let ratioNoise = BenchmarkThresholds(absolute: [.p90: ratioNoiseHundredths["\(n)-\(p)"] ?? 20])
            Benchmark(
                "Ratio-\(n)-queues-x-\(p)-frames",
                configuration: .init(
                    metrics: [ratioAboveGoal],
                    warmupIterations: 0,
                    maxDuration: .seconds(10),
                    maxIterations: 1,
                    thresholds: [ratioAboveGoal: ratioNoise])
            ) { benchmark in
                let (r, _) = runOfflineBench(OfflineBenchOptions(queues: n, frames: p, seconds: 1.5, rounds: 3))
                let goal = p >= 256 ? 1.1 : 1.3
                benchmark.measurement(ratioAboveGoal, max(0, Int(((r.ratio - goal) * 100).rounded(.up))))
            }
        }
    }

    // Parser throughput benchmarks (AQFileStream, issue 3) belong in their own target,
    // Benchmarks/ParserBenchmarks/ (see Benchmarks/Package.swift), not here.
}
