/// What `aqsync play` printed at its end (its output when not on a terminal), read back: the
/// per-track table (`track  scheduled start   actual start   frames played   late frames
/// skipped`, one row per track, a row of a track that did not finish marked) and the server's
/// line (`server: X xrun(s), Y return(s) after going away, Z frames of wall-clock time lost`,
/// printed only when one of them is not zero). Pure.
///
/// Thread safety: a plain value.
public struct PlayReport: Sendable, Equatable {
    /// Rows of the track table.
    public var tracks = 0
    /// Late frames, summed over the tracks.
    public var lateFrames: Int64 = 0
    /// Tracks that stopped early, played no frame or reported an error.
    public var incompleteTracks = 0
    public var xruns = 0
    public var returns = 0
    public var lostFrames: Int64 = 0

    public init(output: String) {
        var inTable = false
        for line in output.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("track ") && line.contains("late frames skipped") { inTable = true; continue }
            if line.hasPrefix("server: ") {
                let n = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int64($0) }
                if n.count >= 3 { xruns = Int(n[0]); returns = Int(n[1]); lostFrames = n[2] }
                inTable = false
                continue
            }
            guard inTable else { continue }
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            // name, scheduled start, actual start (or "-"), frames played, late frames, notes…
            guard f.count >= 5, Int64(f[1]) != nil, let played = Int64(f[3]), let late = Int64(f[4]) else { inTable = false; continue }
            tracks += 1
            lateFrames += late
            if played == 0 || f.count > 5 && (line.contains("(stopped early)") || line.contains("error:")) { incompleteTracks += 1 }
        }
    }
}
