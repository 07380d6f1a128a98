import AQJack
import AQJackServer
import CMixReference
import Foundation

/// Time to the first frame (issue 25): from the moment `aqsync play` is started to the moment
/// the session's first frame enters the graph at a plain C client's input
/// (`CFirstFrameProbe.c`: the cycle's start time from `jack_get_cycle_times`, interpolated to
/// the first non-silent sample, on CLOCK_MONOTONIC), for sessions of N tracks of 16-bit mono
/// WAV (one file each, a constant non-zero signal from the first frame). Process start,
/// option parsing, the session's files opened and primed, the JACK client opened and
/// connected, the lead, and the first cycle are all inside the figure.
public struct FirstFrameResult: Sendable {
    /// Tracks in the session.
    public var tracks: Int
    /// Each run's time to the first frame, in milliseconds.
    public var milliseconds: [Double]
    /// The median of ``milliseconds``.
    public var median: Double { Percentiles(milliseconds).p50 }
}

/// What ``runFirstFrameBench(_:log:)`` runs.
public struct FirstFrameOptions: Sendable {
    /// The `aqsync` executable to start.
    public var aqsync: URL
    /// Session sizes (tracks).
    public var tracks: [Int]
    /// Runs per size.
    public var runs: Int
    /// `--lead` given to `aqsync play` (seconds between the command and the session start).
    public var lead: Double
    /// Server to use (nil: JACK_DEFAULT_SERVER or "default"; a private one is started when
    /// none is reachable), its rate and period when started here.
    public var server: String?
    public var sampleRate: Int
    public var frames: Int?

    public init(aqsync: URL, tracks: [Int], runs: Int, lead: Double, server: String?, sampleRate: Int, frames: Int?) {
        self.aqsync = aqsync
        self.tracks = tracks
        self.runs = runs
        self.lead = lead
        self.server = server
        self.sampleRate = sampleRate
        self.frames = frames
    }
}

/// Measures the time to the first frame for each session size of `o`. Blocks for the runs
/// (each a few seconds at most); starts and stops a private server when none is reachable.
/// Control thread.
public func runFirstFrameBench(_ o: FirstFrameOptions, log: (String) -> Void = { _ in }) throws -> [FirstFrameResult] {
    let live = LiveBenchOptions(queues: 1, frames: o.frames, seconds: 0, server: o.server, sampleRate: o.sampleRate)
    let (serverName, privateServer) = try benchServer(live, log: log)
    defer { privateServer?.stop() }
    let clientName = "aqffp-\(getpid())"
    guard let probe = aq_ffp_open(serverName, clientName) else { throw BenchError("cannot open the first-frame probe on “\(serverName)”") }
    defer { aq_ffp_close(probe) }
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqffp-\(getpid())-\(UUID().uuidString.prefix(6))")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let rate = privateServer?.sampleRate ?? o.sampleRate
    var results: [FirstFrameResult] = []
    for n in o.tracks {
        let session = try writeFirstFrameSession(in: dir, tracks: n, rate: rate)
        var r = FirstFrameResult(tracks: n, milliseconds: [])
        for run in 1...max(o.runs, 1) {
            aq_ffp_rearm(probe)
            let p = Process()
            p.executableURL = o.aqsync
            p.arguments = ["play", session.path, "--server", serverName, "--no-start-server", "--lead", "\(o.lead)",
                           "--connect", "\(clientName):in", "--client-name", "aqffp-player"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            let start = aq_ffp_now_ns()
            try p.run()
            // A benchmark's wait: the probe's callback stores the time; nothing here races it.
            let deadline = start + 30_000_000_000
            while aq_ffp_first_ns(probe) == 0 && aq_ffp_now_ns() < deadline && p.isRunning { usleep(1000) }
            let first = aq_ffp_first_ns(probe)
            if p.isRunning { kill(p.processIdentifier, SIGINT) }
            p.waitUntilExit()
            guard first != 0 else { throw BenchError("\(n) tracks, run \(run): no frame reached the probe (aqsync exit \(p.terminationStatus))") }
            let ms = Double(first - start) / 1e6
            r.milliseconds.append(ms)
            log("\(n) tracks, run \(run): \(String(format: "%.1f", ms)) ms")
        }
        results.append(r)
    }
    return results
}

/// A session of `tracks` 16-bit mono WAV tracks (2 s each, a constant quarter scale from the
/// first frame), one file per track, on one output. Returns the session file.
func writeFirstFrameSession(in dir: URL, tracks: Int, rate: Int) throws -> URL {
    let frames = 2 * rate
    var wav = Data()
    func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { wav.append(contentsOf: $0) } }
    func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { wav.append(contentsOf: $0) } }
    wav.append(contentsOf: Array("RIFF".utf8)); u32(36 + frames * 2); wav.append(contentsOf: Array("WAVEfmt ".utf8))
    u32(16); u16(1); u16(1); u32(rate); u32(rate * 2); u16(2); u16(16)
    wav.append(contentsOf: Array("data".utf8)); u32(frames * 2)
    // 0x2000 little-endian in every frame: a quarter of full scale.
    wav.append(contentsOf: [UInt8](unsafeUninitializedCapacity: frames * 2) { b, n in
        for i in 0..<frames { b[2 * i] = 0; b[2 * i + 1] = 0x20 }
        n = frames * 2
    })
    var toml = "[output]\nchannels = 1\n"
    for t in 0..<tracks {
        let name = "t\(tracks)-\(t).wav"
        try wav.write(to: dir.appendingPathComponent(name))
        toml += "[[track]]\nfile = \"\(name)\"\noutputs = [1]\n"
    }
    let url = dir.appendingPathComponent("first-frame-\(tracks).toml")
    try toml.write(to: url, atomically: true, encoding: .utf8)
    return url
}

/// The results as a Markdown table.
public func describeFirstFrame(_ results: [FirstFrameResult], lead: Double) -> String {
    var s = "| tracks | median (ms) | runs (ms) |\n|---:|---:|---|\n"
    for r in results {
        s += "| \(r.tracks) | \(String(format: "%.1f", r.median)) | \(r.milliseconds.map { String(format: "%.1f", $0) }.joined(separator: ", ")) |\n"
    }
    return s + "\n(`aqsync play --lead \(lead)`: the lead is inside every figure.)\n"
}
