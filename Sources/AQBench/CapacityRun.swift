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
    var server: JackServer
    var reference: OpaquePointer
    var referenceName: String
    var lead: Double
    var directory: URL
}

/// Plays `session` (`tracks` tracks of `seconds`) with `aqsync play` on the rig's server,
/// outputs unconnected, and judges it (``CapacityVerdict``). Control thread; blocks for the
/// session (a hung player is stopped after `seconds + lead + 60` s).
func runCapacityTrial(_ rig: CapacityRig, session: URL, tracks: Int, seconds: Double, clientName: String, strict: Bool) throws -> CapacityTrial {
    let logBefore = rig.server.log.utf8.count
    let x0 = aq_ref_jack_xruns(rig.reference)
    let output = rig.directory.appendingPathComponent("\(clientName)-\(tracks).out")
    let started = Date()
    let child = try MeasuredChild(path: rig.aqsync.path, arguments: [
        "play", session.path, "--server", rig.server.name, "--no-start-server", "--no-connect",
        "--lead", "\(rig.lead)", "--client-name", clientName,
    ], output: output.path)
    var split = ThreadCPUSplit()
    let deadline = started.addingTimeInterval(seconds + rig.lead + 60)
    var interrupted = false
    while child.isRunning {
        split.add(ThreadCPU.threads(of: child.pid))
        if (Date() > deadline || capacityStopRequested.load(ordering: .relaxed)) && !interrupted { kill(child.pid, SIGINT); interrupted = true }
        usleep(100_000)
    }
    let wall = Date().timeIntervalSince(started)
    // A benchmark's wait for jackd to write the xrun lines of the last cycles into its log.
    usleep(100_000)
    let x1 = aq_ref_jack_xruns(rig.reference)
    let log = rig.server.log
    let logDuring = Substring(String(decoding: Array(log.utf8.dropFirst(logBefore)), as: UTF8.self))
    let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    try? FileManager.default.removeItem(at: output)
    let report = PlayReport(output: text)
    var o = CapacityObservation(
        exitStatus: child.exitStatus ?? -1, lateFrames: report.lateFrames,
        incompleteTracks: report.incompleteTracks + max(0, tracks - report.tracks), aqsyncXruns: report.xruns,
        serverLostFrames: report.lostFrames, referenceXruns: Int(x1 - x0))
    let late = LateClientEvents(log: logDuring, aqsync: clientName, reference: rig.referenceName)
    o.aqsyncAloneLate = late.aqsyncAlone
    o.bothLate = late.both
    o.referenceAloneLate = late.referenceAlone
    if interrupted { o.exitStatus = 130 }
    let said = text.split(separator: "\n").filter { $0.hasPrefix("aqsync:") || $0.hasPrefix("discontinuity") || $0.hasPrefix("server:") }
    return CapacityTrial(
        tracks: tracks, observation: o, verdict: CapacityVerdict(o, strict: strict), cpuSeconds: child.cpuSeconds,
        maxRSSBytes: child.maxRSSBytes, controlShare: split.controlShare, wallSeconds: wall,
        serverLines: logDuring.split(separator: "\n").map(String.init), playerLines: said.map(String.init))
}
