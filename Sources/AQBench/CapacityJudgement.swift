/// What one capacity trial saw: `aqsync play`'s own report, and what the plain C reference
/// client and jackd's log saw on the same server over the same time. For a trial of a peer
/// (ecasound, ``CapacityPlayer``) the `aqsync…` fields hold the peer's figures
/// (``ecasoundObservation``).
///
/// Thread safety: a plain value.
public struct CapacityObservation: Sendable, Equatable, Codable {
    /// `aqsync play`'s exit status (0, or 3 for lost frames; anything else: it did not play).
    public var exitStatus: Int32
    /// Frames of the tracks played late (skipped: the feed had no data in time), summed.
    public var lateFrames: Int64
    /// Tracks that stopped early, played nothing or reported an error.
    public var incompleteTracks: Int
    /// Xruns aqsync's client reported during playback.
    public var aqsyncXruns: Int
    /// Frames of wall-clock time the server lost during playback (aqsync's report).
    public var serverLostFrames: Int64
    /// Xruns the reference client's xrun callback counted while aqsync ran.
    public var referenceXruns: Int
    /// jackd's xrun reports while aqsync ran (``LateClientEvents``): those naming aqsync's
    /// client not finished and not the reference client, naming both, naming only the
    /// reference client.
    public var aqsyncAloneLate: Int
    public var bothLate: Int
    public var referenceAloneLate: Int
    /// What the stall witness saw over the trial; nil when it did not run (its threads could
    /// not run realtime).
    public var stalls: MachineStalls?

    public init(exitStatus: Int32, lateFrames: Int64 = 0, incompleteTracks: Int = 0, aqsyncXruns: Int = 0, serverLostFrames: Int64 = 0,
                referenceXruns: Int = 0, aqsyncAloneLate: Int = 0, bothLate: Int = 0, referenceAloneLate: Int = 0,
                stalls: MachineStalls? = nil) {
        self.exitStatus = exitStatus
        self.lateFrames = lateFrames
        self.incompleteTracks = incompleteTracks
        self.aqsyncXruns = aqsyncXruns
        self.serverLostFrames = serverLostFrames
        self.referenceXruns = referenceXruns
        self.aqsyncAloneLate = aqsyncAloneLate
        self.bothLate = bothLate
        self.referenceAloneLate = referenceAloneLate
        self.stalls = stalls
    }
}

/// The rule of `aqsync bench --capacity` (docs/benchmarking.md, "Capacity"): whether a trial
/// shows aqsync playing its tracks live without a loss of its own.
///
/// On jackd2 every client is told of every xrun (the xrun callback is a server-wide
/// notification), so the reference client "seeing" an xrun says nothing about who caused it.
/// What does: jackd's log names, for every xrun it detects, each client that was not finished
/// when the cycle's time was up, and says so when its own driver woke late
/// (`JackTimedDriver::Process XRun = N usec`). So:
///
/// - **aqsync's** (the trial fails): any late frame of a track (its feed had no data in time:
///   decoding, reading, converting did not keep up), even beside a machine stall; any track that
///   stopped early, played nothing or failed; an exit status other than 0 or 3; more xruns in
///   which jackd names aqsync's client late and not the reference client (a plain C client
///   doing a one-queue mix, which only a machine stall makes late) than xruns in which it names
///   the reference client late and not aqsync's (`strict`: any xrun naming aqsync's client
///   alone): the two run at the same realtime priority on the same cores, so a stall of the
///   machine hits either alone about as often, and only the excess is aqsync's; more xruns seen by
///   aqsync than by the reference client (active the whole time); frames the server lost with
///   no xrun to explain them; a status 3 the report does not explain.
/// - **the machine's** (the trial passes, and is counted as such): xruns, and the frames they
///   lost, in which jackd named the reference client late too (both stalled together), only
///   the reference client, or no client at all (its driver woke late), and those naming
///   aqsync's client alone up to the number naming the reference client alone, or beyond it when
///   every xrun came after a stall the witness saw (not `strict`).
/// - otherwise the trial **passes** clean.
///
/// Pure.
public enum CapacityVerdict: Sendable, Equatable {
    case pass
    case aqsync(String)
    case machine(String)

    /// `player`: the name the reasons give the player under test (`aqsync`, or a peer such as
    /// `ecasound`, whose observation is read into the same fields: ``ecasoundObservation``).
    public init(_ o: CapacityObservation, strict: Bool = false, player: String = "aqsync") {
        var own: [String] = []
        let command = player == "aqsync" ? "aqsync play" : player
        if o.exitStatus != 0 && o.exitStatus != 3 { own.append("\(command) exited with status \(o.exitStatus)") }
        if o.lateFrames > 0 { own.append("\(o.lateFrames) frames of the tracks late") }
        if o.incompleteTracks > 0 { own.append("\(o.incompleteTracks) track(s) incomplete") }
        let stallsExplain = o.stalls?.explainAllXruns ?? false
        if strict ? o.aqsyncAloneLate > 0 : o.aqsyncAloneLate > o.referenceAloneLate && !stallsExplain {
            own.append("jackd named \(player)'s client alone late in \(o.aqsyncAloneLate) xrun(s), the reference client alone in \(o.referenceAloneLate)"
                + (o.stalls.map { "; \($0.summary)" } ?? ""))
        }
        if o.aqsyncXruns > o.referenceXruns {
            own.append("\(player) saw \(o.aqsyncXruns) xrun(s), the reference client \(o.referenceXruns)")
        }
        if o.serverLostFrames > 0 && o.aqsyncXruns == 0 && o.referenceXruns == 0 {
            own.append("the server lost \(o.serverLostFrames) frames with no xrun")
        }
        if o.exitStatus == 3 && o.lateFrames == 0 && o.incompleteTracks == 0 && o.serverLostFrames == 0 && o.aqsyncXruns == 0 {
            own.append("\(command) reported lost frames (exit status 3) that its report does not explain")
        }
        if !own.isEmpty { self = .aqsync(own.joined(separator: "; ")); return }
        let xruns = max(o.aqsyncXruns, o.referenceXruns)
        if xruns > 0 || o.serverLostFrames > 0 || o.bothLate + o.referenceAloneLate + o.aqsyncAloneLate > 0 {
            self = .machine("\(xruns) xrun(s) (\(player) saw \(o.aqsyncXruns), the reference client \(o.referenceXruns); \(o.serverLostFrames) frames lost); jackd named both clients late in \(o.bothLate), only \(player)'s in \(o.aqsyncAloneLate), only the reference client in \(o.referenceAloneLate)"
                + (o.stalls.map { "; \($0.summary)" } ?? ""))
            return
        }
        self = .pass
    }

    /// Passed: clean, or only the machine's xruns.
    public var passed: Bool {
        if case .aqsync = self { return false }
        return true
    }
}

/// jackd2's reports of late clients, grouped by xrun: for each xrun it detects, jackd logs
/// `JackEngine::XRun: client = NAME was not finished, state = …` for every client not finished
/// in time, then `JackAudioDriver::ProcessGraphAsyncMaster: Process error` (a driver that woke
/// late first logs `JackTimedDriver::Process XRun = N usec`). A group is the lines up to a
/// "Process error" line. Pure.
///
/// Thread safety: a plain value.
public struct LateClientEvents: Sendable, Equatable {
    /// Xruns naming `aqsync` and not `reference`, naming both, naming `reference` only.
    public var aqsyncAlone = 0
    public var both = 0
    public var referenceAlone = 0

    public init(log: Substring, aqsync: String, reference: String) {
        var a = false, r = false
        func close() {
            if a && r { both += 1 } else if a { aqsyncAlone += 1 } else if r { referenceAlone += 1 }
            a = false
            r = false
        }
        for line in log.split(separator: "\n") {
            if line.contains("was not finished") {
                if line.contains("client = \(aqsync) ") { a = true }
                if line.contains("client = \(reference) ") { r = true }
            } else if line.contains("Process error") {
                close()
            }
        }
        close()
    }
}
