import AQBench
import ArgumentParser
import Foundation

/// Render-thread allocation counting through the preloaded counter (``AllocationCounting``);
/// nil when it is not in the process.
var allocationCounter: AllocationCounter? { AllocationCounting.counter() }

/// `aqsync bench`: the render benchmark of issue 5 (docs/benchmarking.md says what each
/// figure means). Live: N output queues on a JACK server, measured from inside the process
/// callback. `--offline`: the same workload on the hand-driven device, as fast as possible,
/// against the plain C mixer (`--grid`: over the queues × period grid of issue 13).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the renderer: live on a JACK server, or offline on the hand-driven device.")

    @Flag(help: "Run the workload on the hand-driven device as fast as possible (no JACK).")
    var offline = false

    @Flag(help: "With --offline: every point of queues {1, 16, 256, 1024} × frames {32, 64, 256, 1024}, --seconds each (default 1.5); prints a Markdown table, and --plot draws ns per source frame against queues.")
    var grid = false

    @Flag(help: "Live: alternate the engine with a plain C JACK client doing the same mix on the same server, and report both callback distributions and their ratio.")
    var versusC = false

    @Flag(help: "Time to the first frame: start `aqsync play` of sessions of --tracks 16-bit WAV tracks, --runs times each, and time the first session frame at a plain C client's input.")
    var firstFrame = false

    @Option(help: "With --first-frame: session sizes in tracks.", transform: { s in
        try s.split(separator: ",").map { guard let n = Int($0), n > 0, n <= 4096 else { throw ValidationError("--tracks: 1…4096, comma-separated") }; return n }
    })
    var tracks: [Int] = [1, 64, 512]

    @Option(help: "With --first-frame: runs per session size.")
    var runs = 5

    @Option(help: "With --first-frame: the --lead given to aqsync play (seconds).")
    var lead = 0.0

    @Option(help: "Output queues, stereo float, three 4096-frame buffers each.")
    var queues = 64

    @Option(help: "Frames per cycle. Live: asked of the server when aqsync starts it, otherwise the server's period is used and reported.")
    var frames: Int?

    @Option(help: "Seconds to measure (default: 10 live, 3 offline).")
    var seconds: Double?

    @Option(help: "JACK server name (default: JACK_DEFAULT_SERVER or \"default\"; a private server is started when none is reachable).")
    var server: String?

    @Option(help: "Sample rate of a server aqsync starts (and of the hand-driven device).")
    var rate = 48000

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Option(help: "Write an SVG of the callback-duration histogram and the period budget.")
    var plot: String?

    func validate() throws {
        guard queues > 0 && queues <= 4096 else { throw ValidationError("--queues must be 1…4096") }
        if let frames, frames < 1 || frames > 8192 { throw ValidationError("--frames must be 1…8192") }
        if let seconds, !(seconds >= 0) { throw ValidationError("--seconds must not be negative") }
        if versusC && offline { throw ValidationError("--versus-c is a live mode (no --offline)") }
        if firstFrame && (offline || versusC || grid) { throw ValidationError("--first-frame is a mode of its own (no --offline, --versus-c or --grid)") }
        guard runs > 0 && runs <= 100 else { throw ValidationError("--runs must be 1…100") }
        guard lead >= 0 && lead <= 10 else { throw ValidationError("--lead must be 0 to 10 seconds") }
    }

    func run() async throws {
        AllocationCounting.preload()  // runs this command again with the counter, once
        if firstFrame {
            let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            let o = FirstFrameOptions(aqsync: me, tracks: tracks, runs: runs, lead: lead, server: server, sampleRate: rate, frames: frames)
            let results: [FirstFrameResult]
            do {
                results = try runFirstFrameBench(o, log: { if !json { FileHandle.standardError.write(Data("\($0)\n".utf8)) } })
            } catch {
                throw ValidationError("\(error)")
            }
            if json {
                print("[" + results.map { "{\"tracks\":\($0.tracks),\"median_ms\":\($0.median),\"runs_ms\":\($0.milliseconds)}" }.joined(separator: ",") + "]")
            } else {
                print(describeFirstFrame(results, lead: lead))
            }
            return
        }
        if grid {
            guard offline else { throw ValidationError("--grid goes with --offline") }
            let results = runOfflineGrid(seconds: seconds ?? 1.5, sampleRate: Double(rate), allocations: allocationCounter) { r in
                if !json { FileHandle.standardError.write(Data("\(r.queues) × \(r.frames): ratio \(r.ratio)\n".utf8)) }
            }
            print(json ? encodeGridJSON(results) : describeGrid(results))
            if let plot {
                try scalingSVG(results, title: "ns per source frame: engine (solid) and C reference (dashed), per period")
                    .write(toFile: plot, atomically: true, encoding: .utf8)
            }
            return
        }
        if offline {
            let o = OfflineBenchOptions(queues: queues, frames: frames ?? 256, seconds: seconds ?? 3, sampleRate: Double(rate))
            let (r, samples) = runOfflineBench(o, allocations: allocationCounter)
            print(json ? r.json : describe(r, samples: samples))
            if let plot {
                try histogramSVG(samples.map { $0 / 1000 }, unit: "µs", title: "renderer cycle, \(queues) queues × \(o.frames) frames (offline)", budget: r.periodUs)
                    .write(toFile: plot, atomically: true, encoding: .utf8)
            }
            return
        }
        let o = LiveBenchOptions(queues: queues, frames: frames, seconds: seconds ?? 10, server: server, sampleRate: rate)
        if versusC {
            let r: LiveComparisonResult
            do {
                r = try runLiveComparison(o, allocations: allocationCounter, log: { if !json { print($0) } })
            } catch {
                throw ValidationError("\(error)")
            }
            print(json ? r.json : describe(r))
            return
        }
        let r: LiveBenchResult
        do {
            r = try runLiveBench(o, allocations: allocationCounter, log: { if !json { print($0) } })
        } catch {
            throw ValidationError("\(error)")
        }
        print(json ? r.result.json : describe(r.result, samples: r.callbackUs))
        if let plot {
            try histogramSVG(r.callbackUs, unit: "µs", title: "JACK process callback, \(queues) queues × \(r.result.frames) frames", budget: r.result.periodUs)
                .write(toFile: plot, atomically: true, encoding: .utf8)
        }
    }
}
