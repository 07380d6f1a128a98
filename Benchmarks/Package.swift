// swift-tools-version:6.1
// aqsync benchmarks: a package of its own (so that the main package does not depend on
// package-benchmark), depending on the project through `../`. See docs/benchmarking.md.
//
//   cd Benchmarks && swift package benchmark                 # run every benchmark
//   swift package benchmark --target RenderBenchmarks        # only the renderer's
//   swift package benchmark thresholds check                 # fail on a regression
//
// package-benchmark (ordo-one/benchmark) is used with its `MallocInterposer` trait only: its other default trait,
// `RuntimeInterposer`, pulls in swift-runtime-interposer (ARC counters), which is not needed
// for malloc counts and is not available offline here.
import PackageDescription

let package = Package(
    name: "aqsync-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "aqsync", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The renderer: render cost over the queues × period grid, and the allocation-free
        // render loop (mallocCountTotal threshold 0) with an allocating control.
        .executableTarget(
            name: "RenderBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AQBench", package: "aqsync"),
            ],
            path: "Benchmarks/RenderBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Parser throughput (AQFileStream, issue 3): PCM WAV and MP3 framing, and memory that
        // does not grow with the stream.
        .executableTarget(
            name: "ParserBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AQFileStream", package: "aqsync"),
            ],
            path: "Benchmarks/ParserBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Decoding throughput of PacketDecoder (issue 6): MP3, ADTS AAC, CAF ALAC, 10 s each.
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AQConvert", package: "aqsync"),
                .product(name: "AQFileStream", package: "aqsync"),
            ],
            path: "Benchmarks/CodecBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
