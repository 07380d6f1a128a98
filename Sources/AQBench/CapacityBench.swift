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
    /// Peers searched beside aqsync, cell by cell on the same server with the same file
    /// (`--peer ecasound`), and where their executables are (nil: not installed; skipped).
    public var peers: [CapacityPlayer] = []
    public var ecasound: URL?

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
    /// The player searched: aqsync, or a peer.
    public var player: CapacityPlayer = .aqsync
    /// Why the cell was not measured (the peer is not installed or cannot read the format).
    public var skipped: String?
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
        case player, skipped, format, period, realtime, capacity, trials, failure
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
/// for each format a ``CapacitySearch`` over `aqsync play` trials (``runCapacityTrial``), and
/// one over each peer's trials beside it, alternating count by count (``CapacityCellSearch``).
/// Control thread; blocks for the trials (each about `seconds + lead + 1` s).
public func runCapacityBench(_ o: CapacityOptions, log: (String) -> Void = { _ in }) throws -> [CapacityCell] {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqcap-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    var cells: [CapacityCell] = []
    for period in o.periods {
        try withCapacityRig(o, serverName: "aqcap-\(getpid())-\(period)", period: period, directory: dir, log: log) { rig in
            for format in o.formats {
                let file = try capacityFile(format, seconds: o.seconds, deviceRate: o.sampleRate, in: dir)
                // aqsync's search and each peer's, one track count each in turn.
                var searches = ([.aqsync] + o.peers).map { CapacityCellSearch(o, rig: rig, player: $0, format: format, file: file, period: period) }
                while searches.contains(where: { $0.next != nil }) {
                    for i in searches.indices { try searches[i].step(log: log) }
                }
                cells += searches.map { $0.cell(log: log) }
            }
        }
    }
    return cells
}

/// Runs `body` with a private jackd named `serverName` (dummy backend at `o.sampleRate`,
/// `period` frames, realtime when allowed) and the plain C reference client active on it: the
/// rig every capacity trial runs on (the search and `--cpu`). Both are stopped when `body`
/// returns or throws. Control thread; blocks while the server starts and while `body` runs.
func withCapacityRig(
    _ o: CapacityOptions, serverName: String, period: Int, directory: URL, log: (String) -> Void,
    _ body: (CapacityRig) throws -> Void
) throws {
    let server: JackServer
    do {
        server = try JackServer.startPrivate(name: serverName, backend: .dummy, sampleRate: o.sampleRate, period: period)
    } catch {
        throw BenchError("cannot start a private jackd: \(error)")
    }
    defer { server.stop() }
    log("started a \(server.summary)")
    let referenceName = "aqcap-ref"
    guard let reference = aq_ref_jack_open(server.name, referenceName, 1, 1) else { throw BenchError("cannot open the C reference client") }
    defer { aq_ref_jack_close(reference) }
    guard aq_ref_jack_activate(reference) == 0 else { throw BenchError("cannot activate the C reference client") }
    let witness = startStallWitness(log: log)
    defer { aq_stall_witness_stop(witness) }
    try body(CapacityRig(
        aqsync: o.aqsync, ecasound: o.ecasound, server: server, reference: reference, referenceName: referenceName,
        stallWitness: witness, lead: o.lead, directory: directory, sampleRate: o.sampleRate))
}

/// Starts the machine's stall witness (a thread per CPU waking every 250 µs, a stall being a
/// wake-up more than 400 µs late: every stall of 650 µs or more is seen), or nil, said through
/// `log`, when it cannot start or its threads cannot run realtime. Control thread.
func startStallWitness(log: (String) -> Void) -> OpaquePointer? {
    guard let w = aq_stall_witness_start(250, 400, 100_000) else {
        log("the stall witness could not start: xruns are judged without it")
        return nil
    }
    guard aq_stall_witness_realtime(w) == aq_stall_witness_threads(w) else {
        log("the stall witness's threads could not run realtime: xruns are judged without it")
        aq_stall_witness_stop(w)
        return nil
    }
    log("the stall witness runs on \(aq_stall_witness_threads(w)) CPU(s)")
    return w
}

/// One cell's search in progress: `player` (aqsync, or a peer) over `format` at `period` on the
/// rig's server, one track count per ``step()``, so that the searches of aqsync and its peers
/// can alternate count by count (the machine's load then falls on all of them alike).
/// A peer that is not installed, or cannot read the format, gives a skipped cell at once.
///
/// Thread safety: one control thread.
struct CapacityCellSearch {
    let o: CapacityOptions
    let rig: CapacityRig
    let player: CapacityPlayer
    let format: CapacityFormat
    let file: URL
    let period: Int
    var search: CapacitySearch
    var passing: [CapacityTrial] = []
    var failure: String?
    var trials = 0, machine = 0
    var skipped: String?
    var stopped = false

    init(_ o: CapacityOptions, rig: CapacityRig, player: CapacityPlayer, format: CapacityFormat, file: URL, period: Int) {
        self.o = o
        self.rig = rig
        self.player = player
        self.format = format
        self.file = file
        self.period = period
        search = CapacitySearch(start: o.start, limit: o.limit, resolution: o.resolution)
        if player == .ecasound {
            if rig.ecasound == nil { skipped = "ecasound is not installed" } else if ecasoundInput(format, file: file.path, deviceRate: o.sampleRate) == nil {
                skipped = "ecasound has no reader for \(format.rawValue)"
            }
        }
    }

    var clientName: String { player == .aqsync ? "aqcap-play" : "aqcap-eca" }
    var label: String { "\(player.rawValue) \(format.rawValue) P=\(period)" }
    /// The next count to try (nil: done).
    var next: Int? { skipped != nil || stopped ? nil : search.next }

    /// Runs the trials of the next count (up to `attempts` when it fails by xruns alone).
    mutating func step(log: (String) -> Void) throws {
        guard let n = next else { return }
        let input: CapacityTrialInput
        var session: URL?
        switch player {
        case .aqsync:
            session = try writeCapacitySession(in: rig.directory, file: file, tracks: n, clientName: clientName)
            input = .session(session!)
        case .ecasound:
            input = .ecasound(arguments: ecasoundCapacityArguments(
                format: format, file: file.path, tracks: n, period: period, deviceRate: o.sampleRate, clientName: clientName)!, period: period)
        }
        var trial: CapacityTrial
        var attempt = 0
        repeat {
            attempt += 1
            trial = try runCapacityTrial(rig, input: input, tracks: n, seconds: o.seconds, clientName: clientName, strict: o.strict)
            trials += 1
            if capacityStopRequested.load(ordering: .relaxed) { throw BenchError("stopped by a signal") }
            if trial.verdict != .pass {
                for line in (trial.serverLines.prefix(6) + trial.playerLines.prefix(6)) { log("    | \(line)") }
            }
            if case .machine(let why) = trial.verdict {
                machine += 1
                log("  \(label) \(n) tracks: xruns of the machine's: \(why)")
            }
            if !trial.verdict.passed && byXrunsAlone(trial.observation) && attempt < o.attempts {
                log("  \(label) \(n) tracks: failed by xruns alone, attempt \(attempt + 1) of \(o.attempts)")
            }
        } while !trial.verdict.passed && byXrunsAlone(trial.observation) && attempt < o.attempts
        if let session { try? FileManager.default.removeItem(at: session) }
        let ok = trial.verdict.passed
        search.record(n, passed: ok)
        if ok { passing.append(trial) } else if n == search.failed {
            switch trial.verdict {
            case .aqsync(let why): failure = why
            case .pass, .machine: break
            }
        }
        log("  \(label) \(n) tracks: \(ok ? "pass" : "FAIL") (CPU \(fmt(trial.cpuSeconds)) s, RSS \(fmt(Double(trial.maxRSSBytes) / 1_048_576)) MiB, control \(fmt(trial.controlShare * 100)) %, wall \(fmt(trial.wallSeconds)) s)\(ok ? "" : ": " + (failure ?? ""))")
        if !ok && o.stopAtFailure { stopped = true }
    }

    /// The cell, when the search is over.
    func cell(log: (String) -> Void) -> CapacityCell {
        let best = passing.filter { $0.tracks == search.capacity }.last
        let mib = 1_048_576.0
        let points = passing.map { (x: Double($0.tracks), y: Double($0.maxRSSBytes) / mib) }
        var cell = CapacityCell(
            format: format, period: period, sampleRate: o.sampleRate, realtime: rig.server.isRealtime, capacity: skipped == nil ? search.capacity : 0,
            atLimit: skipped == nil && search.reachedLimit, failedAt: search.failed, failure: search.failed == nil ? nil : failure, trials: trials,
            machineTrials: machine,
            cpuMsPerTrackSecond: best.map { $0.cpuSeconds * 1000 / (Double($0.tracks) * o.seconds) } ?? 0,
            maxRSSMiB: best.map { Double($0.maxRSSBytes) / mib } ?? 0, controlShare: best?.controlShare ?? 0,
            rssSlopeMiBPerTrack: slope(points),
            rssMiBPerTrack: best.map { Double($0.maxRSSBytes) / mib / Double($0.tracks) } ?? 0,
            cpuSlopeMsPerTrackSecond: slope(passing.map { (x: Double($0.tracks), y: $0.cpuSeconds * 1000 / o.seconds) }),
            xrunsAtCapacity: best.map { max($0.observation.referenceXruns, $0.observation.aqsyncXruns) } ?? 0,
            bothLateAtCapacity: best?.observation.bothLate ?? 0, referenceLateAtCapacity: best?.observation.referenceAloneLate ?? 0,
            aqsyncLateAtCapacity: best?.observation.aqsyncAloneLate ?? 0)
        cell.player = player
        cell.skipped = skipped
        if let skipped { log("  \(label): skipped: \(skipped)") }
        return cell
    }
}

/// The cells as a Markdown table (a player column when a peer was searched; a peer's
/// comparison table after it: ``describeCapacityComparison``). Pure.
public func describeCapacity(_ cells: [CapacityCell], seconds: Double, strict: Bool) -> String {
    let peers = cells.contains { $0.player != .aqsync }
    var s = "| \(peers ? "player | " : "")format | period | tracks (capacity) | first failure | CPU ms per track-second (whole; marginal) | peak RSS (MiB) | RSS per track (marginal, MiB) | control side's CPU share | xruns at capacity (both late, player alone, reference alone) | trials (with the machine's xruns) |\n"
    s += "|\(peers ? "---|" : "")---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n"
    for c in cells {
        let who = peers ? "\(c.player.rawValue) | " : ""
        if let why = c.skipped {
            s += "| \(who)\(c.format.rawValue) | \(c.period) | — | skipped: \(why) | | | | | | |\n"
            continue
        }
        let cap = c.atLimit ? "≥ \(c.capacity)" : "\(c.capacity)"
        let fail = c.failedAt.map { "\($0): \(c.failure ?? "")" } ?? "none"
        s += "| \(who)\(c.format.rawValue) | \(c.period) | \(cap) | \(fail) | \(String(format: "%.3f; %.3f", c.cpuMsPerTrackSecond, c.cpuSlopeMsPerTrackSecond)) | \(String(format: "%.1f", c.maxRSSMiB)) | \(String(format: "%.3f", c.rssSlopeMiBPerTrack)) | \(String(format: "%.0f %%", c.controlShare * 100)) | \(c.xrunsAtCapacity) (\(c.bothLateAtCapacity), \(c.aqsyncLateAtCapacity), \(c.referenceLateAtCapacity)) | \(c.trials) (\(c.machineTrials)) |\n"
    }
    s += "\n(\(fmt(seconds)) s sessions; private jackd, dummy backend, \(cells.first.map { "\($0.sampleRate) Hz" } ?? "")\(cells.first?.realtime == true ? ", realtime" : ", not realtime"); \(strict ? "strict rule: any xrun naming the player's client alone fails" : "an xrun naming the player's client alone fails beyond as many naming the reference client alone"))\n"
    if peers { s += "\n" + describeCapacityComparison(cells) }
    return s
}

/// aqsync's capacity against each peer's, cell by cell: the ratio (a capacity at the search's
/// limit is a lower bound, marked ≥; a peer's 0 gives no ratio), and CPU and RSS per track at
/// each one's capacity (marginal). Pure.
public func describeCapacityComparison(_ cells: [CapacityCell]) -> String {
    var s = "| format | period | aqsync tracks | peer | peer tracks | aqsync / peer | marginal CPU ms per track-second (aqsync; peer) | RSS per track, MiB (aqsync; peer) |\n"
    s += "|---|---:|---:|---|---:|---:|---:|---:|\n"
    for a in cells where a.player == .aqsync {
        for p in cells where p.player != .aqsync && p.format == a.format && p.period == a.period {
            let at = a.atLimit ? "≥ \(a.capacity)" : "\(a.capacity)"
            if let why = p.skipped {
                s += "| \(a.format.rawValue) | \(a.period) | \(at) | \(p.player.rawValue) | — (\(why)) | — | | |\n"
                continue
            }
            let pt = p.atLimit ? "≥ \(p.capacity)" : "\(p.capacity)"
            let ratio: String
            if p.capacity == 0 { ratio = "—" } else {
                let r = Double(a.capacity) / Double(p.capacity)
                ratio = (a.atLimit && !p.atLimit ? "≥ " : p.atLimit && !a.atLimit ? "≤ " : a.atLimit ? "~ " : "") + String(format: "%.2f", r)
            }
            s += "| \(a.format.rawValue) | \(a.period) | \(at) | \(p.player.rawValue) | \(pt) | \(ratio) | \(String(format: "%.3f; %.3f", a.cpuSlopeMsPerTrackSecond, p.cpuSlopeMsPerTrackSecond)) | \(String(format: "%.3f; %.3f", a.rssSlopeMiBPerTrack, p.rssSlopeMiBPerTrack)) |\n"
        }
    }
    return s
}

/// The cells as JSON. Control thread.
public func encodeCapacityJSON(_ cells: [CapacityCell]) -> String { encodeJSON(cells) }
