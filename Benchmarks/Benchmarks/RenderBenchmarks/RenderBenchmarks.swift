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

    // Parser throughput benchmarks (AQFileStream, issue 3) belong in their own target,
    // Benchmarks/ParserBenchmarks/ (see Benchmarks/Package.swift), not here.
}
