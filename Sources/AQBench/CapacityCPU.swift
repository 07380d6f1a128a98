import AQJackServer
import CMixReference
import Foundation

/// One row of `aqsync bench --capacity --cpu`: a player's trials of `tracks` tracks of one
/// format at one period, whole-process CPU per run. JSON keys are the snake_case names in
/// `CodingKeys`.
///
/// Thread safety: a plain value.
public struct CapacityCPURow: Sendable, Codable, Equatable {
    public var player: CapacityPlayer
    public var format: CapacityFormat
    public var period: Int
    public var tracks: Int
    public var seconds: Double
    /// Whole-process CPU seconds (user + system, every thread) of each run, in order.
    public var cpuSeconds: [Double]
    /// Each run's control-side share (threads other than JACK's realtime one) and peak RSS (MiB).
    public var controlShares: [Double]
    public var maxRSSMiB: [Double]
    /// Runs the rule passed (clean or the machine's xruns only), and the reasons of the others.
    public var passed: Int
    public var failures: [String]

    enum CodingKeys: String, CodingKey {
        case player, format, period, tracks, seconds, passed, failures
        case cpuSeconds = "cpu_seconds"
        case controlShares = "control_shares"
        case maxRSSMiB = "max_rss_mib"
    }

    /// Median whole-process CPU ms per track-second.
    public var cpuMsPerTrackSecond: Double { median(cpuSeconds) * 1000 / (Double(tracks) * seconds) }
}

/// The median (the mean of the middle two for an even count; 0 when empty). Pure.
func median(_ v: [Double]) -> Double {
    guard !v.isEmpty else { return 0 }
    let s = v.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// CPU per track-second of aqsync and each peer side by side: for each period (a private jackd
/// and the reference client, as for the capacity search) and format, `rounds` rounds, each
/// playing every count of `tracks` with aqsync and then with each peer, one after the other
/// (alternating, so that the machine's load falls on all alike), every trial judged by the
/// capacity rule. A peer not installed or unable to read the format is left out (logged).
/// Control thread; blocks for the trials.
public func runCapacityCPU(_ o: CapacityOptions, tracks: [Int], rounds: Int, log: (String) -> Void = { _ in }) throws -> [CapacityCPURow] {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqcapcpu-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    var rows: [CapacityCPURow] = []
    for period in o.periods {
        try withCapacityRig(o, serverName: "aqcpu-\(getpid())-\(period)", period: period, directory: dir, log: log) { rig in
            for format in o.formats {
                let file = try capacityFile(format, seconds: o.seconds, deviceRate: o.sampleRate, in: dir)
                var players: [CapacityPlayer] = [.aqsync]
                for p in o.peers {
                    if p == .ecasound && o.ecasound == nil { log("  ecasound is not installed: skipped"); continue }
                    if p == .ecasound && ecasoundInput(format, file: file.path, deviceRate: o.sampleRate) == nil {
                        log("  ecasound has no reader for \(format.rawValue): skipped"); continue
                    }
                    players.append(p)
                }
                var cell: [String: CapacityCPURow] = [:]
                for round in 1...max(1, rounds) {
                    for n in tracks {
                        for player in players {
                            let clientName = player == .aqsync ? "aqcap-play" : "aqcap-eca"
                            let input: CapacityTrialInput
                            var session: URL?
                            switch player {
                            case .aqsync:
                                session = try writeCapacitySession(in: dir, file: file, tracks: n, clientName: clientName)
                                input = .session(session!)
                            case .ecasound:
                                input = .ecasound(arguments: ecasoundCapacityArguments(
                                    format: format, file: file.path, tracks: n, period: period, deviceRate: o.sampleRate, clientName: clientName)!, period: period)
                            }
                            let t = try runCapacityTrial(rig, input: input, tracks: n, seconds: o.seconds, clientName: clientName, strict: o.strict)
                            if let session { try? FileManager.default.removeItem(at: session) }
                            if capacityStopRequested.load(ordering: .relaxed) { throw BenchError("stopped by a signal") }
                            let key = "\(player.rawValue)-\(n)"
                            var row = cell[key] ?? CapacityCPURow(player: player, format: format, period: period, tracks: n, seconds: o.seconds,
                                                                 cpuSeconds: [], controlShares: [], maxRSSMiB: [], passed: 0, failures: [])
                            row.cpuSeconds.append(t.cpuSeconds)
                            row.controlShares.append(t.controlShare)
                            row.maxRSSMiB.append(Double(t.maxRSSBytes) / 1_048_576)
                            if t.verdict.passed { row.passed += 1 } else if case .aqsync(let why) = t.verdict { row.failures.append(why) }
                            cell[key] = row
                            log("  round \(round): \(player.rawValue) \(format.rawValue) P=\(period) \(n) tracks: CPU \(fmt(t.cpuSeconds)) s (\(fmt(t.cpuSeconds * 1000 / (Double(n) * o.seconds))) ms per track-second), control \(fmt(t.controlShare * 100)) %, RSS \(fmt(Double(t.maxRSSBytes) / 1_048_576)) MiB, wall \(fmt(t.wallSeconds)) s, \(t.verdict.passed ? "pass" : "FAIL")")
                        }
                    }
                }
                for n in tracks { for p in players { if let r = cell["\(p.rawValue)-\(n)"] { rows.append(r) } } }
            }
        }
    }
    return rows
}

/// The rows as a Markdown table: per format, period and track count, each player's median
/// CPU ms per track-second (whole process, its runs), the ratio aqsync / peer, and the marginal
/// cost between the smallest and the largest track count (the fixed cost taken out: the
/// difference of the medians' CPU over the difference of track-seconds). Pure.
public func describeCapacityCPU(_ rows: [CapacityCPURow]) -> String {
    var s = "| format | period | tracks | player | CPU ms per track-second (median; runs) | aqsync / player | control share | peak RSS (MiB) | runs passed |\n"
    s += "|---|---:|---:|---|---|---:|---:|---:|---:|\n"
    for r in rows {
        let a = rows.first { $0.player == .aqsync && $0.format == r.format && $0.period == r.period && $0.tracks == r.tracks }
        let ratio = r.player == .aqsync ? "" : a.map { String(format: "%.2f", $0.cpuMsPerTrackSecond / r.cpuMsPerTrackSecond) } ?? ""
        let runs = r.cpuSeconds.map { fmt($0 * 1000 / (Double(r.tracks) * r.seconds)) }.joined(separator: ", ")
        s += "| \(r.format.rawValue) | \(r.period) | \(r.tracks) | \(r.player.rawValue) | \(String(format: "%.3f", r.cpuMsPerTrackSecond)); \(runs) | \(ratio) | \(String(format: "%.0f %%", median(r.controlShares) * 100)) | \(String(format: "%.1f", median(r.maxRSSMiB))) | \(r.passed) of \(r.cpuSeconds.count)\(r.failures.isEmpty ? "" : ": " + r.failures[0]) |\n"
    }
    // Marginal: between the smallest and the largest count of each player's cell.
    var marginal: [String] = []
    var seen = Set<String>()
    for r in rows {
        let key = "\(r.format.rawValue)-\(r.period)"
        guard !seen.contains(key) else { continue }
        seen.insert(key)
        var parts: [String] = []
        var aq: Double?
        for p in CapacityPlayer.allCases {
            let mine = rows.filter { $0.player == p && "\($0.format.rawValue)-\($0.period)" == key }.sorted { $0.tracks < $1.tracks }
            guard let lo = mine.first, let hi = mine.last, hi.tracks > lo.tracks else { continue }
            let m = (median(hi.cpuSeconds) - median(lo.cpuSeconds)) * 1000 / (Double(hi.tracks - lo.tracks) * hi.seconds)
            if p == .aqsync { aq = m }
            parts.append("\(p.rawValue) \(String(format: "%.3f", m))" + (p != .aqsync && aq != nil && m > 0 ? String(format: " (aqsync / \(p.rawValue) %.2f)", aq! / m) : ""))
        }
        if !parts.isEmpty { marginal.append("- \(r.format.rawValue), P=\(r.period): marginal CPU ms per track-second: " + parts.joined(separator: "; ")) }
    }
    if !marginal.isEmpty { s += "\n" + marginal.joined(separator: "\n") + "\n" }
    return s
}

/// The rows as JSON. Control thread.
public func encodeCapacityCPUJSON(_ rows: [CapacityCPURow]) -> String { encodeJSON(rows) }
