import Foundation

/// The player a capacity trial runs (issue 25): `aqsync play`, or ecasound, the tool a user
/// would pick instead, on the same private jackd with the same material and judged by the same
/// rule (``CapacityVerdict``).
///
/// Thread safety: a plain value.
public enum CapacityPlayer: String, Sendable, Codable, CaseIterable {
    case aqsync
    case ecasound
}

/// Where `name` is on `PATH` (nil: not installed). Control thread.
public func findExecutable(_ name: String, path: String? = ProcessInfo.processInfo.environment["PATH"]) -> URL? {
    for dir in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
        let url = URL(fileURLWithPath: String(dir)).appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    return nil
}

/// ecasound's input object for `file` of `format` on a device at `deviceRate`: WAV through its
/// own reader; FLAC and MP3 through libsndfile (`sndfile,FILE`: its default MP3 reader pipes
/// from an `mpg123` process, which Debian's ecasound does not depend on); 44.1 kHz WAV through
/// its `resample` object (libsamplerate) to the device's rate. nil for AAC: ecasound has no
/// reader for it. Pure.
public func ecasoundInput(_ format: CapacityFormat, file: String, deviceRate: Int) -> String? {
    switch format {
    case .wav: file
    case .flac, .mp3: "sndfile,\(file)"
    case .wav44: "resample,\(deviceRate),\(file)"
    case .aac: nil
    }
}

/// The ecasound command line (arguments, without the program) that plays `tracks` tracks of
/// `file` live on JACK as `aqsync play` plays the capacity session: one chain per track, each
/// with its own input object (its own reader and decoder, its own double buffer: ecasound's
/// default "rt" buffering), all chains into one JACK output object of two ports
/// (`clientName:out_1`, `out_2`, not connected), summed (`-z:mixmode,sum`: the default mode
/// averages), one engine cycle per JACK period (`-b:period`: ecasound's JACK object refuses a
/// buffer size other than the server's), no transport (`notransport`: it starts at once, as
/// `aqsync play` does). nil when ecasound cannot read the format. Pure.
public func ecasoundCapacityArguments(
    format: CapacityFormat, file: String, tracks: Int, period: Int, deviceRate: Int, clientName: String
) -> [String]? {
    guard tracks > 0, let input = ecasoundInput(format, file: file, deviceRate: deviceRate) else { return nil }
    // -d:23: errors, info, subsystems and user objects, so that "i/o buffers prefilled." marks
    // the end of its start-up (``EcasoundMarks``).
    var a = ["-d:23", "-b:\(period)", "-z:mixmode,sum", "-G:jack,\(clientName),notransport"]
    if format == .wav44 {
        // The resample object takes the chainsetup's rate as its source's.
        a.append("-f:s16_le,2,\(deviceRate)")
    }
    for t in 1...tracks { a += ["-a:\(t)", "-i:\(input)"] }
    a += ["-a:" + (1...tracks).map(String.init).joined(separator: ","), "-o:jack,,out"]
    return a
}

/// When ecasound started playing and stopped, seen by the bench polling its output while it
/// runs: after `Engine - Driver start` its engine fills every input's double buffer
/// (`prefilling i/o buffers.` … `i/o buffers prefilled.`, printed at `-d:23`) and only then
/// plays; `Engine - Processing finished` is printed when the last input has ended. The time
/// between the two, beyond the session's length, is cycles ecasound did not play: its JACK
/// process callback, when it cannot take the engine's lock, outputs silence without advancing
/// (and without a word), and a cycle jackd skipped it in (an xrun naming its client) does not
/// advance it either. Pure.
///
/// Thread safety: a plain value.
public struct EcasoundMarks: Sendable, Equatable {
    public var prefilled: Double?
    public var finished: Double?

    public init() {}

    /// Notes the marks found in `text` (output appended since the last call) at `time`.
    public mutating func scan(_ text: Substring, at time: Double) {
        if prefilled == nil && text.contains("i/o buffers prefilled") { prefilled = time }
        if finished == nil && text.contains("Processing finished") { finished = time }
    }

    /// Seconds from the buffers prefilled to the processing finished (nil: either mark missing).
    public var playedSeconds: Double? {
        guard let prefilled, let finished else { return nil }
        return finished - prefilled
    }
}

/// What ecasound printed, read back (its stdout and stderr together). ecasound says nothing
/// of JACK's xruns (its JACK manager has no xrun callback, and its process callback mutes a
/// cycle it cannot lock without a word); what it does report is its own feed falling behind:
/// its double-buffering client prints, on stderr, `(audioio-db-client) WARNING: Underrun in
/// reading from "FILE". Trying to recover.` for every engine cycle in which a chain's input had
/// no buffer ready (the chain then gets no samples that cycle), and `(audioio-db-client) There
/// were total N xruns.` when the input is closed. Errors are lines starting `ERROR` (for
/// example `ERROR:  Connecting chainsetup failed: …`). Pure.
///
/// Thread safety: a plain value.
public struct EcasoundReport: Sendable, Equatable {
    /// "Underrun in reading from" lines.
    public var underrunLines = 0
    /// The "There were total N xruns." counts, summed.
    public var totalXruns = 0
    /// Lines saying something failed (`ERROR…`, a JACK object's refusal).
    public var errors: [String] = []
    /// "Engine - Processing finished" seen: the engine ran to the end of its inputs.
    public var finished = false
    /// The first few underrun and total lines, for people.
    public var firstLines: [String] = []

    public init(output: String) { add(Substring(output)) }

    /// Reads more of the output (whole lines).
    public mutating func add(_ output: Substring) {
        for raw in output.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.contains("Underrun in reading from") {
                underrunLines += 1
                if firstLines.count < 3 { firstLines.append(line) }
            } else if let r = line.range(of: "There were total "), let n = Int(line[r.upperBound...].prefix { $0.isNumber }) {
                totalXruns += n
                if firstLines.count < 3 { firstLines.append(line) }
            } else if line.hasPrefix("ERROR") || line.contains("Unable to open JACK-client") || line.contains("differs from JACK server's buffersize") {
                if errors.count < 10 { errors.append(line) }
            } else if line.contains("Processing finished") {
                finished = true
            }
        }
    }

    /// Engine cycles in which a chain had no data (the larger of the two counts: the lines are
    /// per event, the totals per input at its close).
    public var underruns: Int { max(underrunLines, totalXruns) }
}

/// A trial's observation for ecasound, in the terms of ``CapacityObservation`` (those of
/// `aqsync play`):
///
/// - each underrun is one buffer (`bufferFrames`, the period) of a chain lost, so late frames
///   = underruns × buffer;
/// - playing that took longer than the session (`playedSeconds`, ``EcasoundMarks``) by more
///   than `tolerance` is frames of wall-clock time lost (as `aqsync play`'s server line counts
///   them); the part of it that the xruns in which jackd named ecasound's client
///   (`namedXruns`, each one cycle it did not run) do not explain is cycles it muted: late
///   frames of every track, its own;
/// - exit status 0 with late or lost frames becomes 3 (as `aqsync play` exits);
/// - an error line, or an exit before the session's length had passed (`wallSeconds` <
///   `seconds`), makes every track incomplete.
///
/// ecasound counts no JACK xruns of its own (0): jackd's log, read as for aqsync, says when
/// its client was late. Pure.
public func ecasoundObservation(
    _ r: EcasoundReport, exitStatus: Int32, wallSeconds: Double, seconds: Double, tracks: Int, bufferFrames: Int,
    playedSeconds: Double? = nil, namedXruns: Int = 0, sampleRate: Int = 48000, tolerance: Double = 0.3
) -> CapacityObservation {
    var late = Int64(r.underruns) * Int64(bufferFrames)
    var lost: Int64 = 0
    if let played = playedSeconds, played - seconds > tolerance {
        lost = Int64(((played - seconds) * Double(sampleRate)).rounded())
        let unexplained = played - seconds - tolerance - Double(namedXruns * bufferFrames) / Double(sampleRate)
        if unexplained > 0 { late += Int64((unexplained * Double(sampleRate)).rounded()) * Int64(tracks) }
    }
    var status = exitStatus
    if status == 0 && (late > 0 || lost > 0) { status = 3 }
    let incomplete = (!r.errors.isEmpty || (exitStatus == 0 && wallSeconds < seconds)) ? tracks : 0
    return CapacityObservation(exitStatus: status, lateFrames: late, incompleteTracks: incomplete, aqsyncXruns: 0, serverLostFrames: lost)
}
