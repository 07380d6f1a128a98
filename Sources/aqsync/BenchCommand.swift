import AQBench
import ArgumentParser
import Dispatch
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

    @Option(help: "With --first-frame: session sizes in tracks (default 1,64,512); with --capacity --offline: the sessions rendered (default 64).", transform: { s in
        try s.split(separator: ",").map { guard let n = Int($0), n > 0, n <= 4096 else { throw ValidationError("--tracks: 1…4096, comma-separated") }; return n }
    })
    var tracks: [Int]?

    @Option(help: "With --first-frame: runs per session size; with --capacity --offline: renders per session (the median is reported).")
    var runs = 5

    @Option(help: "With --first-frame (default 0) or --capacity (default 1): the --lead given to aqsync play (seconds).")
    var lead: Double?

    @Flag(help: "Capacity (issue 25): for each --formats × --periods, the largest number of tracks `aqsync play` plays live with no late frame and no xrun of its own (judged beside a plain C client on the same private jackd), by doubling then bisection; with --offline, `aqsync render` of --tracks tracks instead (track-seconds per wall second). docs/benchmarking.md, \"Capacity\".")
    var capacity = false

    @Option(help: "With --capacity: formats, comma-separated, of wav, flac, mp3, aac, wav44k (44.1 kHz WAV on the 48 kHz server).")
    var formats = "wav,flac,mp3,aac,wav44k"

    @Option(help: "With --capacity: server periods (frames), comma-separated.")
    var periods = "64,256"

    @Option(help: "With --capacity: the first track count tried, and the largest.")
    var capacityStart = 8
    @Option(help: "With --capacity: the largest track count tried.")
    var capacityLimit = 1024

    @Option(help: "With --capacity (live): exit with status 1 when a cell's capacity is below this many tracks (a bounded regression check: with --capacity-start N --capacity-limit N, one trial per cell, tried up to 3 times when it fails by xruns alone; no search below a failure).")
    var require: Int?

    @Flag(help: "With --capacity: a trial fails on any xrun in which jackd names aqsync's client late and not the reference client (default: only on more of them than xruns naming the reference client alone).")
    var strict = false

    @Option(help: "With --capacity: trials of a track count that fails by xruns alone (no late frame) before it counts as failed; it passes when any trial passes (3 with --require).")
    var attempts = 2

    @Option(help: "With --capacity: the tools measured beside aqsync, comma-separated. Live (the search, or --cpu): ecasound, on the same server with the same file, cell by cell. With --offline: ffmpeg, ecasound, sox rendering the same session (outputs compared with aqsync's). A tool not installed is reported as skipped.")
    var peer: String?

    @Flag(help: "With --capacity (live): CPU per track-second at the --tracks counts (default 1,64), --runs rounds, aqsync and each --peer alternating on one server; no search.")
    var cpu = false

    @Option(help: "With --capacity --offline --peer: track t of the session starts t × this many frames after the start (default 480: 10 ms).")
    var spacing = 480

    @Option(help: "With --capacity: the search stops when the count that passed and the one that failed are closer than this fraction of the former (at least one track).")
    var resolution = 1.0 / 16


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
        if let lead, !(lead >= 0 && lead <= 10) { throw ValidationError("--lead must be 0 to 10 seconds") }
        if capacity && (firstFrame || versusC || grid) { throw ValidationError("--capacity is a mode of its own (with or without --offline)") }
        if !capacity && require != nil { throw ValidationError("--require goes with --capacity") }
        if capacity {
            guard CapacityFormat.list(formats) != nil else { throw ValidationError("--formats: comma-separated, of \(CapacityFormat.allCases.map(\.rawValue).joined(separator: ", "))") }
            guard capacityPeriods != nil else { throw ValidationError("--periods: comma-separated frames, 16…4096") }
            guard capacityStart >= 1 && capacityLimit >= capacityStart && capacityLimit <= 4096 else { throw ValidationError("--capacity-start ≥ 1, --capacity-limit ≥ it and ≤ 4096") }
            if let require, require < 1 || offline { throw ValidationError("--require: a positive track count, live only (no --offline)") }
            guard attempts >= 1 && attempts <= 10 else { throw ValidationError("--attempts must be 1 to 10") }
            guard resolution >= 0 && resolution < 1 else { throw ValidationError("--resolution must be 0 to 1") }
            if let peer {
                if offline {
                    guard OfflinePeer.list(peer) != nil else { throw ValidationError("--peer with --offline: comma-separated, of \(OfflinePeer.allCases.map(\.rawValue).joined(separator: ", "))") }
                } else {
                    guard livePeers != nil else { throw ValidationError("--peer (live): ecasound") }
                }
            }
            if cpu && (offline || require != nil) { throw ValidationError("--cpu is live, without --require") }
            guard spacing >= 0 && spacing <= 480_000 else { throw ValidationError("--spacing: 0 to 480000 frames") }
        } else if peer != nil || cpu {
            throw ValidationError("--peer and --cpu go with --capacity")
        }
    }

    var capacityPeriods: [Int]? {
        let p = periods.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        return p.isEmpty || p.contains(where: { $0 == nil || !(16...4096).contains($0!) }) ? nil : p.compactMap { $0 }
    }

    /// `--peer` of a live capacity run: ecasound only. nil when it names anything else.
    var livePeers: [CapacityPlayer]? {
        guard let peer else { return [] }
        let p = peer.split(separator: ",").map { CapacityPlayer(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
        return p.isEmpty || p.contains(where: { $0 == nil || $0 == .aqsync }) ? nil : p.compactMap { $0 }
    }

    /// `--capacity` (with or without `--offline`).
    func runCapacity() throws {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let say: (String) -> Void = { if !json { FileHandle.standardError.write(Data("\($0)\n".utf8)) } }
        let fmts = CapacityFormat.list(formats)!
        // Ctrl-C or SIGTERM: the trial's `aqsync` is stopped, then the reference client and the
        // private server (a killed bench would leave both behind).
        let sources = [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { capacityStopRequested.store(true, ordering: .relaxed) }
            source.resume()
            return source
        }
        defer { for s in sources { s.cancel() } }
        do {
            if offline, let peer, let peers = OfflinePeer.list(peer) {
                var all: [OfflineComparisonRow] = []
                for n in tracks ?? [64] {
                    all += try runOfflineComparison(aqsync: me, peers: peers, formats: fmts, tracks: n, seconds: seconds ?? 10, spacing: spacing, runs: runs, sampleRate: rate, log: say)
                }
                print(json ? encodeOfflineComparisonJSON(all) : describeOfflineComparison(all))
                return
            }
            if offline {
                var all: [OfflineCapacityResult] = []
                for n in tracks ?? [64] {
                    all += try runOfflineCapacity(aqsync: me, formats: fmts, tracks: n, seconds: seconds ?? 10, runs: runs, sampleRate: rate, log: say)
                }
                print(json ? encodeOfflineCapacityJSON(all) : describeOfflineCapacity(all))
                return
            }
            var o = CapacityOptions(
                aqsync: me, formats: fmts, periods: capacityPeriods!, seconds: seconds ?? 10, start: capacityStart, limit: capacityLimit,
                resolution: resolution, lead: lead ?? 1, sampleRate: rate, strict: strict)
            o.attempts = attempts
            o.peers = livePeers ?? []
            o.ecasound = findExecutable("ecasound")
            if o.peers.contains(.ecasound) && o.ecasound == nil { say("ecasound is not installed: its cells are skipped") }
            if cpu {
                let rows = try runCapacityCPU(o, tracks: tracks ?? [1, 64], rounds: runs, log: say)
                print(json ? encodeCapacityCPUJSON(rows) : describeCapacityCPU(rows))
                return
            }
            if require != nil {
                // The bounded check: a count failing by xruns alone is tried 3 times in all (it
                // passes when any trial passes), and a failure ends the cell.
                o.attempts = max(attempts, 3)
                o.stopAtFailure = true
            }
            let cells = try runCapacityBench(o, log: say)
            print(json ? encodeCapacityJSON(cells) : describeCapacity(cells, seconds: o.seconds, strict: strict))
            if let require {
                let short = cells.filter { $0.player == .aqsync && $0.capacity < require }
                for c in short {
                    FileHandle.standardError.write(Data("aqsync bench --capacity: \(c.format.rawValue) at P=\(c.period): \(c.capacity) tracks, below the \(require) required: \(c.failure ?? "")\n".utf8))
                }
                if !short.isEmpty { throw ExitCode(1) }
            }
        } catch let e as BenchError {
            throw ValidationError(e.description)
        }
    }

    func run() async throws {
        if capacity { try runCapacity(); return }
        AllocationCounting.preload()  // runs this command again with the counter, once
        if firstFrame {
            let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            let o = FirstFrameOptions(aqsync: me, tracks: tracks ?? [1, 64, 512], runs: runs, lead: lead ?? 0, server: server, sampleRate: rate, frames: frames)
            let results: [FirstFrameResult]
            do {
                results = try runFirstFrameBench(o, log: { if !json { FileHandle.standardError.write(Data("\($0)\n".utf8)) } })
            } catch {
                throw ValidationError("\(error)")
            }
            if json {
                print("[" + results.map { "{\"tracks\":\($0.tracks),\"median_ms\":\($0.median),\"runs_ms\":\($0.milliseconds)}" }.joined(separator: ",") + "]")
            } else {
                print(describeFirstFrame(results, lead: lead ?? 0))
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
