import Foundation

/// What one run of a live test concluded (see ``liveRun(_:attempts:_:)``).
package enum LiveRunVerdict: Sendable {
    /// The run was judged (its expectations recorded, passing or failing): no repeat.
    case judged
    /// The run's in-run witness cannot tell whether aqsync was right in the window judged (it
    /// marked that the recorder or the server lost frames there in a way the comparison does
    /// not survive, or there is no witness the run could judge by): `reason` says which.
    /// `aqsyncFigures` are aqsync's own counts of what it did wrong in the run (late frames
    /// skipped, frames skipped to follow the wall clock); the run is repeated only when they
    /// are all zero.
    case witnessCouldNotTell(reason: String, aqsyncFigures: [String: Int])
}

/// A live test asked for a repeat it may not have: aqsync's own figures moved, or the repeats
/// ran out. Thrown by ``liveRun(_:attempts:_:)``; fails the test.
package struct LiveRunRefused: Error, CustomStringConvertible {
    package let description: String
}

/// The only way a live test may run again (docs/timing.md, "Live tests").
///
/// Calls `run(attempt, isLast)` until it returns ``LiveRunVerdict/judged``. A run may return
/// ``LiveRunVerdict/witnessCouldNotTell(reason:aqsyncFigures:)`` only when its in-run witness
/// shows that it cannot tell; then the run is repeated, at most `attempts` runs in all (3 at
/// most), and the repeat is printed with its reason. A run whose `aqsyncFigures` are not all
/// zero is never repeated: the helper throws ``LiveRunRefused``. On the last attempt `isLast`
/// is true: the run must judge (a `witnessCouldNotTell` then throws too).
///
/// With `AQSYNC_LIVE_RUNS=1` in the environment every test judges its first run (for looking
/// into a judgement: a run that would have been repeated is judged and its figures printed).
///
/// Thread: the test's. Blocks for as long as the runs take.
package func liveRun(
    _ name: String, attempts: Int = 3, _ run: (_ attempt: Int, _ isLast: Bool) throws -> LiveRunVerdict
) throws {
    let asked = ProcessInfo.processInfo.environment["AQSYNC_LIVE_RUNS"].flatMap { Int($0) } ?? 3
    let attempts = min(max(attempts, 1), max(1, min(asked, 3)))
    for attempt in 1...attempts {
        switch try run(attempt, attempt == attempts) {
        case .judged:
            return
        case .witnessCouldNotTell(let reason, let figures):
            let moved = figures.filter { $0.value != 0 }
            if !moved.isEmpty {
                throw LiveRunRefused(description: "\(name): run \(attempt) not repeated: the witness could not tell (\(reason)), but aqsync's own figures moved: \(moved.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
            }
            if attempt == attempts {
                throw LiveRunRefused(description: "\(name): \(attempts) runs in a row in which the witness could not tell; the last: \(reason)")
            }
            print("\(name): run \(attempt) repeated because the witness could not tell: \(reason)")
        }
    }
}

/// aqsync's own figures in an `aqsync play` report, for ``LiveRunVerdict/witnessCouldNotTell(reason:aqsyncFigures:)``:
/// the late frames of every track (frames aqsync had no audio for in time: its own doing).
/// What the server lost, and what aqsync kept or skipped of it as its lost-time policy says
/// (`server: … F frames of wall-clock time lost (skipped …)`), is the server's figure, not
/// aqsync's: a run the witness cannot judge is exactly one in which the server or the recorder
/// lost frames. Skipped time is also counted late by every track playing through it, so when
/// the report says the server's time was skipped, F × the number of tracks is taken off the
/// late frames (an upper bound of the skip's share). Any thread.
package func aqsyncPlayFigures(_ output: String) -> [String: Int] {
    var late = 0, tracks = 0, skipped = 0
    var inTable = false
    for line in output.split(separator: "\n") {
        if line.hasPrefix("server: ") && line.contains("(skipped") {
            let after = line.components(separatedBy: "after going away, ").dropFirst().first ?? ""
            skipped = Int(after.prefix { $0.isNumber }) ?? 0
        }
        if line.hasPrefix("track ") && line.contains("late frames skipped") { inTable = true; continue }
        guard inTable else { continue }
        // name (may hold spaces), scheduled, actual (or "-"), played, late, then notes.
        let f = line.split(separator: " ").map(String.init)
        let row = f.indices.dropFirst().first { k in
            k + 3 < f.count && Int(f[k]) != nil && (Int(f[k + 1]) != nil || f[k + 1] == "-") && Int(f[k + 2]) != nil && Int(f[k + 3]) != nil
        }
        guard let k = row, let n = Int(f[k + 3]) else { inTable = false; continue }
        late += n
        tracks += 1
    }
    return ["late frames": max(0, late - skipped * tracks)]
}
