import Foundation

/// One row of `aqsync bench --capacity --offline`: `aqsync render` of a session of `tracks`
/// tracks of one format (decoding, rate conversion and the mix included), as fast as it goes.
/// JSON keys are the snake_case names in `CodingKeys`.
public struct OfflineCapacityResult: Sendable, Codable {
    public var format: CapacityFormat
    public var tracks: Int
    public var seconds: Double
    /// Each run's wall seconds, and the median.
    public var wallSeconds: [Double]
    public var medianWallSeconds: Double
    /// Track-seconds of audio rendered per wall second at the median (how many such tracks one
    /// render keeps up with in real time), and whole-process CPU ms per track-second (median run).
    public var tracksPerSecond: Double
    public var cpuMsPerTrackSecond: Double
    public var maxRSSMiB: Double

    enum CodingKeys: String, CodingKey {
        case format, tracks, seconds
        case wallSeconds = "wall_seconds"
        case medianWallSeconds = "median_wall_seconds"
        case tracksPerSecond = "tracks_per_second"
        case cpuMsPerTrackSecond = "cpu_ms_per_track_second"
        case maxRSSMiB = "max_rss_mib"
    }
}

/// Renders, for each format, a session of `tracks` tracks of `seconds` to a 16-bit WAV at
/// `sampleRate` with `aqsync render`, `runs` times. Control thread; blocks for the renders.
public func runOfflineCapacity(
    aqsync: URL, formats: [CapacityFormat], tracks: Int, seconds: Double, runs: Int, sampleRate: Int, log: (String) -> Void = { _ in }
) throws -> [OfflineCapacityResult] {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqcapoff-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    var results: [OfflineCapacityResult] = []
    for format in formats {
        let file = try capacityFile(format, seconds: seconds, deviceRate: sampleRate, in: dir)
        let session = try writeCapacitySession(in: dir, file: file, tracks: tracks, clientName: "aqcap-render")
        var runsDone: [(wall: Double, cpu: Double, rss: Int)] = []
        for run in 1...max(1, runs) {
            let out = dir.appendingPathComponent("mix.wav")
            let text = dir.appendingPathComponent("render.out")
            let started = Date()
            let child = try MeasuredChild(path: aqsync.path, arguments: [
                "render", session.path, "-o", out.path, "--format", "s16", "--rate", "\(sampleRate)", "--quiet",
            ], output: text.path)
            try child.waitSamplingMemory()
            let wall = Date().timeIntervalSince(started)
            guard child.exitStatus == 0 else {
                let said = (try? String(contentsOf: text, encoding: .utf8)) ?? ""
                throw BenchError("aqsync render of \(tracks) \(format.rawValue) tracks exited with status \(child.exitStatus ?? -1): \(said)")
            }
            runsDone.append((wall, child.cpuSeconds, child.maxRSSBytes))
            log("  \(format.rawValue) \(tracks) tracks × \(fmt(seconds)) s, run \(run): \(fmt(wall)) s wall, \(fmt(child.cpuSeconds)) s CPU")
        }
        let median = runsDone.sorted { $0.wall < $1.wall }[runsDone.count / 2]
        let trackSeconds = Double(tracks) * seconds
        results.append(OfflineCapacityResult(
            format: format, tracks: tracks, seconds: seconds, wallSeconds: runsDone.map(\.wall), medianWallSeconds: median.wall,
            tracksPerSecond: trackSeconds / median.wall, cpuMsPerTrackSecond: median.cpu * 1000 / trackSeconds,
            maxRSSMiB: Double(median.rss) / 1_048_576))
    }
    return results
}

/// The rows as a Markdown table. Pure.
public func describeOfflineCapacity(_ results: [OfflineCapacityResult]) -> String {
    var s = "| format | tracks × seconds | wall (median, s) | track-seconds per wall second | CPU ms per track-second | peak RSS (MiB) |\n"
    s += "|---|---|---:|---:|---:|---:|\n"
    for r in results {
        s += "| \(r.format.rawValue) | \(r.tracks) × \(fmt(r.seconds)) | \(String(format: "%.3f", r.medianWallSeconds)) | \(String(format: "%.0f", r.tracksPerSecond)) | \(String(format: "%.3f", r.cpuMsPerTrackSecond)) | \(String(format: "%.1f", r.maxRSSMiB)) |\n"
    }
    return s
}

/// The rows as JSON. Control thread.
public func encodeOfflineCapacityJSON(_ results: [OfflineCapacityResult]) -> String { encodeJSON(results) }
