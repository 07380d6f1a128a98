import AQJackServer
import CMixReference
import Foundation

/// What `aqsync bench --capacity` runs.
public struct CapacityOptions: Sendable {
    public var aqsync: URL
    public var formats: [CapacityFormat]
    public var periods: [Int]
    /// Seconds of each trial's session.
    public var seconds: Double
    /// The search: first count, largest count, stopping gap (relative).
    public var start: Int
    public var limit: Int
    public var resolution: Double
    /// `--lead` of `aqsync play`.
    public var lead: Double
    public var sampleRate: Int
    /// ``CapacityVerdict``'s strict rule: any xrun naming aqsync's client alone fails.
    public var strict: Bool
    /// Trials of a count that fails by xruns alone (no late frame, every track complete) before
    /// it counts as failed (the count passes when any passes). And whether a failure ends the
    /// cell (no search below it: the bounded check of `--require`).
    public var attempts = 2
    public var stopAtFailure = false

    public init(aqsync: URL, formats: [CapacityFormat], periods: [Int], seconds: Double, start: Int, limit: Int,
                resolution: Double, lead: Double, sampleRate: Int, strict: Bool) {
        self.strict = strict
        self.aqsync = aqsync
        self.formats = formats
        self.periods = periods
        self.seconds = seconds
        self.start = start
        self.limit = limit
        self.resolution = resolution
        self.lead = lead
        self.sampleRate = sampleRate
    }
}

/// One cell of the capacity table. JSON keys are the snake_case names in `CodingKeys`.
public struct CapacityCell: Sendable, Codable {
    public var format: CapacityFormat
    public var period: Int
    public var sampleRate: Int
    public var realtime: Bool
    /// The largest count that passed below every failure (0: none passed).
    public var capacity: Int
    /// True when the search stopped at its limit (the capacity is at least it).
    public var atLimit: Bool
    /// The smallest count that failed, and why (nil: none failed).
    public var failedAt: Int?
    public var failure: String?
    /// Trials run, and those of them that passed beside xruns of the machine's.
    public var trials: Int
    public var machineTrials: Int
    /// At the capacity: CPU ms per track-second (whole process, startup included), peak RSS,
    /// the control side's share of the CPU, and wall seconds of the trial.
    public var cpuMsPerTrackSecond: Double
    public var maxRSSMiB: Double
    public var controlShare: Double
    /// Peak RSS per track: the least-squares slope of peak RSS over the tracks of every trial
    /// that passed (MiB; the per-track cost without the process's fixed part), and the peak at
    /// the capacity divided by it (MiB).
    public var rssSlopeMiBPerTrack: Double
    public var rssMiBPerTrack: Double
    /// CPU ms per track-second beyond the process's fixed cost: the least-squares slope of
    /// whole-process CPU over tracks, over every trial that passed, per second of session.
    public var cpuSlopeMsPerTrackSecond: Double
    /// The trial at the capacity: xruns (as the reference client counted them), and those in
    /// which jackd named both clients late, only the reference client (the machine's, by the
    /// rule; none named aqsync's client alone, or the trial would have failed).
    public var xrunsAtCapacity: Int
    public var bothLateAtCapacity: Int
    public var referenceLateAtCapacity: Int
    public var aqsyncLateAtCapacity: Int

    enum CodingKeys: String, CodingKey {
        case format, period, realtime, capacity, trials, failure
        case sampleRate = "sample_rate"
        case atLimit = "at_limit"
        case failedAt = "failed_at"
        case machineTrials = "machine_trials"
        case cpuMsPerTrackSecond = "cpu_ms_per_track_second"
        case maxRSSMiB = "max_rss_mib"
        case controlShare = "control_share"
        case rssSlopeMiBPerTrack = "rss_slope_mib_per_track"
        case rssMiBPerTrack = "rss_mib_per_track"
        case cpuSlopeMsPerTrackSecond = "cpu_slope_ms_per_track_second"
        case xrunsAtCapacity = "xruns_at_capacity"
        case bothLateAtCapacity = "both_late_at_capacity"
        case referenceLateAtCapacity = "reference_late_at_capacity"
        case aqsyncLateAtCapacity = "aqsync_late_at_capacity"
    }
}

/// A failure by xruns alone: every track complete, no late frame, status 0 or 3 (a trial the
/// bench may repeat: a stall of the machine's can fall on aqsync's thread alone). Pure.
func byXrunsAlone(_ o: CapacityObservation) -> Bool {
    o.lateFrames == 0 && o.incompleteTracks == 0 && (o.exitStatus == 0 || o.exitStatus == 3)
}

/// Least-squares slope of y over x (0 with fewer than two distinct x). Pure.
func slope(_ points: [(x: Double, y: Double)]) -> Double {
    guard points.count >= 2 else { return 0 }
    let n = Double(points.count)
    let mx = points.map(\.x).reduce(0, +) / n, my = points.map(\.y).reduce(0, +) / n
    let sxx = points.reduce(0) { $0 + ($1.x - mx) * ($1.x - mx) }
    guard sxx > 0 else { return 0 }
    return points.reduce(0) { $0 + ($1.x - mx) * ($1.y - my) } / sxx
}

/// Runs the capacity search for every period × format: a private jackd (dummy backend,
/// realtime when allowed) per period, a plain C reference client active on it throughout, and
/// for each format a ``CapacitySearch`` over `aqsync play` trials (``runCapacityTrial``).
/// Control thread; blocks for the trials (each about `seconds + lead + 1` s).
public func runCapacityBench(_ o: CapacityOptions, log: (String) -> Void = { _ in }) throws -> [CapacityCell] {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqcap-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    var cells: [CapacityCell] = []
    for period in o.periods {
        let server: JackServer
        do {
            server = try JackServer.startPrivate(name: "aqcap-\(getpid())-\(period)", backend: .dummy, sampleRate: o.sampleRate, period: period)
        } catch {
            throw BenchError("cannot start a private jackd: \(error)")
        }
        defer { server.stop() }
        log("started a \(server.summary)")
        let referenceName = "aqcap-ref"
        guard let reference = aq_ref_jack_open(server.name, referenceName, 1, 1) else { throw BenchError("cannot open the C reference client") }
        defer { aq_ref_jack_close(reference) }
        guard aq_ref_jack_activate(reference) == 0 else { throw BenchError("cannot activate the C reference client") }
        let rig = CapacityRig(aqsync: o.aqsync, server: server, reference: reference, referenceName: referenceName, lead: o.lead, directory: dir)
        for format in o.formats {
            let file = try capacityFile(format, seconds: o.seconds, deviceRate: o.sampleRate, in: dir)
            var search = CapacitySearch(start: o.start, limit: o.limit, resolution: o.resolution)
            var passing: [CapacityTrial] = []
            var failure: String?
            var trials = 0, machine = 0
            while let n = search.next {
                let session = try writeCapacitySession(in: dir, file: file, tracks: n, clientName: "aqcap-play")
                var trial: CapacityTrial
                var attempt = 0
                repeat {
                    attempt += 1
                    trial = try runCapacityTrial(rig, session: session, tracks: n, seconds: o.seconds, clientName: "aqcap-play", strict: o.strict)
                    trials += 1
                    if capacityStopRequested.load(ordering: .relaxed) { throw BenchError("stopped by a signal") }
                    if trial.verdict != .pass {
                        for line in (trial.serverLines.prefix(6) + trial.playerLines.prefix(6)) { log("    | \(line)") }
                    }
                    if case .machine(let why) = trial.verdict {
                        machine += 1
                        log("  \(format.rawValue) P=\(period) \(n) tracks: xruns of the machine's: \(why)")
                    }
                    if !trial.verdict.passed && byXrunsAlone(trial.observation) && attempt < o.attempts {
                        log("  \(format.rawValue) P=\(period) \(n) tracks: failed by xruns alone, attempt \(attempt + 1) of \(o.attempts)")
                    }
                } while !trial.verdict.passed && byXrunsAlone(trial.observation) && attempt < o.attempts
                try? FileManager.default.removeItem(at: session)
                let ok = trial.verdict.passed
                search.record(n, passed: ok)
                if ok { passing.append(trial) } else if n == search.failed {
                    switch trial.verdict {
                    case .aqsync(let why): failure = why
                    case .pass, .machine: break
                    }
                }
                log("  \(format.rawValue) P=\(period) \(n) tracks: \(ok ? "pass" : "FAIL") (CPU \(fmt(trial.cpuSeconds)) s, RSS \(fmt(Double(trial.maxRSSBytes) / 1_048_576)) MiB, control \(fmt(trial.controlShare * 100)) %)\(ok ? "" : ": " + (failure ?? ""))")
                if !ok && o.stopAtFailure { break }
            }
            let best = passing.filter { $0.tracks == search.capacity }.last
            let mib = 1_048_576.0
            let points = passing.map { (x: Double($0.tracks), y: Double($0.maxRSSBytes) / mib) }
            cells.append(CapacityCell(
                format: format, period: period, sampleRate: o.sampleRate, realtime: server.isRealtime, capacity: search.capacity,
                atLimit: search.reachedLimit, failedAt: search.failed, failure: search.failed == nil ? nil : failure, trials: trials,
                machineTrials: machine,
                cpuMsPerTrackSecond: best.map { $0.cpuSeconds * 1000 / (Double($0.tracks) * o.seconds) } ?? 0,
                maxRSSMiB: best.map { Double($0.maxRSSBytes) / mib } ?? 0, controlShare: best?.controlShare ?? 0,
                rssSlopeMiBPerTrack: slope(points),
                rssMiBPerTrack: best.map { Double($0.maxRSSBytes) / mib / Double($0.tracks) } ?? 0,
                cpuSlopeMsPerTrackSecond: slope(passing.map { (x: Double($0.tracks), y: $0.cpuSeconds * 1000 / o.seconds) }),
                xrunsAtCapacity: best.map { max($0.observation.referenceXruns, $0.observation.aqsyncXruns) } ?? 0,
                bothLateAtCapacity: best?.observation.bothLate ?? 0, referenceLateAtCapacity: best?.observation.referenceAloneLate ?? 0,
                aqsyncLateAtCapacity: best?.observation.aqsyncAloneLate ?? 0))
        }
    }
    return cells
}

/// The cells as a Markdown table. Pure.
public func describeCapacity(_ cells: [CapacityCell], seconds: Double, strict: Bool) -> String {
    var s = "| format | period | tracks (capacity) | first failure | CPU ms per track-second (whole; marginal) | peak RSS (MiB) | RSS per track (marginal, MiB) | control side's CPU share | xruns at capacity (both late, aqsync alone, reference alone) | trials (with the machine's xruns) |\n"
    s += "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n"
    for c in cells {
        let cap = c.atLimit ? "≥ \(c.capacity)" : "\(c.capacity)"
        let fail = c.failedAt.map { "\($0): \(c.failure ?? "")" } ?? "none"
        s += "| \(c.format.rawValue) | \(c.period) | \(cap) | \(fail) | \(String(format: "%.3f; %.3f", c.cpuMsPerTrackSecond, c.cpuSlopeMsPerTrackSecond)) | \(String(format: "%.1f", c.maxRSSMiB)) | \(String(format: "%.3f", c.rssSlopeMiBPerTrack)) | \(String(format: "%.0f %%", c.controlShare * 100)) | \(c.xrunsAtCapacity) (\(c.bothLateAtCapacity), \(c.aqsyncLateAtCapacity), \(c.referenceLateAtCapacity)) | \(c.trials) (\(c.machineTrials)) |\n"
    }
    s += "\n(\(fmt(seconds)) s sessions; private jackd, dummy backend, \(cells.first.map { "\($0.sampleRate) Hz" } ?? "")\(cells.first?.realtime == true ? ", realtime" : ", not realtime"); \(strict ? "strict rule: any xrun naming aqsync's client alone fails" : "an xrun naming aqsync's client alone fails beyond as many naming the reference client alone"))\n"
    return s
}

/// The cells as JSON. Control thread.
public func encodeCapacityJSON(_ cells: [CapacityCell]) -> String { encodeJSON(cells) }
