import Foundation

/// The clicks a program recorded from a ``ReferenceClicker`` (a C API program, `record-tone`) (which clicks every
/// `interval` frames of its own count), judged beside what the server reported.
///
/// A spacing is exact, or short or long by whole periods where the server's log says a client
/// other than the clicker and the recorder "was not finished" in a cycle: jackd2 then skips the
/// late client for the cycle it missed while the clicker goes on (docs/timing.md, "Live
/// tests"), so the clicker's output for that cycle never reaches the input queue. Such
/// spacings are counted (at most one cycle per report) and printed; any other spacing, or more
/// skipped cycles than the server reported, is wrong.
///
/// Thread safety: a plain value.
package struct ClickSpacingJudgement: Sendable, CustomStringConvertible {
    /// Spacings neither exact nor explained by a reported late cycle.
    package private(set) var wrong: [Int] = []
    /// Cycles the late client was skipped for, by the spacings (the most of any channel; a
    /// channel with more than ``lateReports`` is wrong, shown as minus its count).
    package private(set) var skippedCycles = 0
    /// The server's reports of a late client (not the clicker, not a recorder).
    package let lateReports: Int

    /// Judges `spacings` (per channel, the gaps between consecutive clicks) of a clicker every
    /// `interval` frames, on a server of `period` frames whose log is `serverLog`.
    package init(spacings: [[Int]], interval: Int, period: Int, serverLog: String) {
        lateReports = serverLog.split(separator: "\n").filter {
            $0.contains("was not finished") && !$0.contains("client = clicker") && !$0.contains("client = jack-record")
        }.count
        for channel in spacings {
            var skipped = 0
            for s in channel where s != interval {
                let d = abs(interval - s)
                if d % period == 0 && lateReports > 0 { skipped += d / period } else { wrong.append(s) }
            }
            if skipped > lateReports { wrong.append(-skipped) }  // more than the server reported
            skippedCycles = max(skippedCycles, skipped)
        }
    }

    /// No spacing wrong.
    package var exact: Bool { wrong.isEmpty }

    package var description: String {
        "\(wrong.isEmpty ? "exact" : "wrong spacings \(wrong)"); \(skippedCycles) cycle(s) skipped beside \(lateReports) late-client report(s) of the server"
    }
}
