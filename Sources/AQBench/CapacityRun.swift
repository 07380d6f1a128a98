import AQJackServer
import CMixReference
import Foundation
import Synchronization

/// Set (by a signal handler of the command) to stop the capacity runs: the `aqsync` child is
/// sent SIGINT and the run throws once it has exited, so that the reference client and the
/// private server are closed in order. Any thread.
public let capacityStopRequested = Atomic<Bool>(false)

/// One live trial of `aqsync bench --capacity`: what was seen and what it cost.
///
/// Thread safety: a plain value.
public struct CapacityTrial: Sendable {
    public var player: CapacityPlayer
    public var tracks: Int
    public var observation: CapacityObservation
    public var verdict: CapacityVerdict
    /// Whole-process CPU seconds of `aqsync play` (rusage: user + system, every thread).
    public var cpuSeconds: Double
    /// Peak resident set of `aqsync play`, bytes.
    public var maxRSSBytes: Int
    /// The control side's share of the CPU time (threads other than JACK's realtime process
    /// thread), from samples of /proc/PID/task/*/stat every 100 ms (the last ≤ 100 ms missing).
    public var controlShare: Double
    /// Wall seconds from the start of `aqsync play` to its exit.
    public var wallSeconds: Double
    /// jackd's log lines written during the trial, and `aqsync play`'s lines that say what
    /// went wrong (its "aqsync:" lines, discontinuities, the server's line): for people.
    public var serverLines: [String]
    public var playerLines: [String]
}

/// What a trial runs on: `aqsync`, the server (its log read for jackd's "not finished" lines)
/// and the reference client active on it.
struct CapacityRig {
    var aqsync: URL
    /// ecasound (nil: not installed, its trials are skipped).
    var ecasound: URL?
    var server: JackServer
    var reference: OpaquePointer
    var referenceName: String
    /// The machine's stall witness (`CStallWitness.h`), nil when its threads could not run
    /// realtime (its windows would then be the load's, not the machine's).
    var stallWitness: OpaquePointer?
    var lead: Double
    var directory: URL
    var sampleRate: Int
}

/// What a trial plays: `aqsync play` of the session file, or ecasound of the same tracks of the
/// same file (``ecasoundCapacityArguments``).
enum CapacityTrialInput {
    case session(URL)
    case ecasound(arguments: [String], period: Int)

    var player: CapacityPlayer {
        if case .session = self { return .aqsync }
        return .ecasound
    }
}

/// Plays `input` (`tracks` tracks of `seconds`) with `aqsync play` or ecasound on the rig's
/// server, outputs unconnected, and judges it (``CapacityVerdict``). Control thread; blocks for
/// the session (a hung player is stopped after `seconds + lead + 60` s).
func runCapacityTrial(_ rig: CapacityRig, input: CapacityTrialInput, tracks: Int, seconds: Double, clientName: String, strict: Bool) throws -> CapacityTrial {
    let logBefore = rig.server.log.utf8.count
    let x0 = aq_ref_jack_xruns(rig.reference)
    let since = aq_stall_witness_now()
    let output = rig.directory.appendingPathComponent("\(clientName)-\(tracks).out")
    let started = Date()
    let child: MeasuredChild
    switch input {
    case .session(let session):
        child = try MeasuredChild(path: rig.aqsync.path, arguments: [
            "play", session.path, "--server", rig.server.name, "--no-start-server", "--no-connect",
            "--lead", "\(rig.lead)", "--client-name", clientName,
        ], output: output.path)
    case .ecasound(let arguments, _):
        guard let ecasound = rig.ecasound else { throw BenchError("ecasound is not installed") }
        child = try MeasuredChild(path: ecasound.path, arguments: arguments, output: output.path,
                                  environment: ["JACK_DEFAULT_SERVER": rig.server.name, "JACK_NO_START_SERVER": "1"])
    }
    var split = ThreadCPUSplit()
    var marks = EcasoundMarks()
    var ecasoundReport = EcasoundReport(output: "")
    var seen: UInt64 = 0
    let watched = input.player == .ecasound ? FileHandle(forReadingAtPath: output.path) : nil
    defer { try? watched?.close() }
    let deadline = started.addingTimeInterval(seconds + rig.lead + 60)
    var interrupted = false
    while child.isRunning {
        split.add(ThreadCPU.threads(of: child.pid))
        child.sampleMemory()
        if let watched {
            // ecasound's output as it is written, whole lines only (the last partial line is
            // read again at the next poll): its start and end marks, and its report, kept
            // incrementally (a failing ecasound writes hundreds of MB of underrun lines).
            try? watched.seek(toOffset: seen)
            while let more = try? watched.read(upToCount: 1 << 20), !more.isEmpty, let end = more.lastIndex(of: 0x0A) {
                let text = Substring(String(decoding: more[...end], as: UTF8.self))
                marks.scan(text, at: Date().timeIntervalSince(started))
                ecasoundReport.add(text)
                seen += UInt64(end - more.startIndex + 1)
                try? watched.seek(toOffset: seen)
            }
        }
        if (Date() > deadline || capacityStopRequested.load(ordering: .relaxed)) && !interrupted { kill(child.pid, SIGINT); interrupted = true }
        usleep(100_000)
    }
    let wall = Date().timeIntervalSince(started)
    // A benchmark's wait for jackd to write the xrun lines of the last cycles into its log.
    usleep(100_000)
    if let watched {
        try? watched.seek(toOffset: seen)
        while let more = try? watched.read(upToCount: 1 << 20), !more.isEmpty {
            // The rest, to the end (a last line without a newline included).
            let end = more.lastIndex(of: 0x0A) ?? more.index(before: more.endIndex)
            let text = Substring(String(decoding: more[...end], as: UTF8.self))
            marks.scan(text, at: wall)
            ecasoundReport.add(text)
            seen += UInt64(end - more.startIndex + 1)
            try? watched.seek(toOffset: seen)
        }
    }
    let x1 = aq_ref_jack_xruns(rig.reference)
    let log = rig.server.log
    let logDuring = Substring(String(decoding: Array(log.utf8.dropFirst(logBefore)), as: UTF8.self))
    // aqsync play's report is small; ecasound's was read above.
    let text = input.player == .aqsync ? (try? String(contentsOf: output, encoding: .utf8)) ?? "" : ""
    try? FileManager.default.removeItem(at: output)
    let late = LateClientEvents(log: logDuring, aqsync: clientName, reference: rig.referenceName)
    var o: CapacityObservation
    let said: [Substring]
    switch input {
    case .session:
        let report = PlayReport(output: text)
        o = CapacityObservation(
            exitStatus: child.exitStatus ?? -1, lateFrames: report.lateFrames,
            incompleteTracks: report.incompleteTracks + max(0, tracks - report.tracks), aqsyncXruns: report.xruns,
            serverLostFrames: report.lostFrames)
        said = text.split(separator: "\n").filter { $0.hasPrefix("aqsync:") || $0.hasPrefix("discontinuity") || $0.hasPrefix("server:") }
    case .ecasound(_, let period):
        o = ecasoundObservation(
            ecasoundReport, exitStatus: child.exitStatus ?? -1, wallSeconds: wall, seconds: seconds, tracks: tracks, bufferFrames: period,
            playedSeconds: marks.playedSeconds, namedXruns: late.aqsyncAlone + late.both, sampleRate: rig.sampleRate)
        said = ecasoundReport.errors.prefix(3).map { Substring($0) } + ecasoundReport.firstLines.map { Substring($0) }
    }
    o.referenceXruns = Int(x1 - x0)
    o.aqsyncAloneLate = late.aqsyncAlone
    o.bothLate = late.both
    o.referenceAloneLate = late.referenceAlone
    o.stalls = rig.stallWitness.map { machineStalls($0, since: since, reference: rig.reference, xruns: x0..<x1) }
    if interrupted { o.exitStatus = 130 }
    return CapacityTrial(
        player: input.player, tracks: tracks, observation: o,
        verdict: CapacityVerdict(o, strict: strict, player: input.player.rawValue), cpuSeconds: child.cpuSeconds,
        maxRSSBytes: child.maxRSSBytes, controlShare: split.controlShare, wallSeconds: wall,
        serverLines: logDuring.split(separator: "\n").map(String.init), playerLines: said.map(String.init))
}

/// What `witness` saw from `since` on, against the reference client's xruns `xruns`. Control
/// thread.
func machineStalls(_ witness: OpaquePointer, since: UInt64, reference: OpaquePointer, xruns: Range<UInt64>) -> MachineStalls {
    let max = 65536
    var starts = [UInt64](repeating: 0, count: max)
    var ends = [UInt64](repeating: 0, count: max)
    let n = Int(aq_stall_witness_windows(witness, since, &starts, &ends, Int32(max)))
    let windows = (0..<n).map { (start: starts[$0], end: ends[$0]) }
    return MachineStalls(windows: windows, xrunTimes: xruns.map { aq_ref_jack_xrun_time(reference, $0) }, origin: since)
}
