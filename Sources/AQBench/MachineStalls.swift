import Foundation

/// The machine's stalls over one capacity trial, as the stall witness saw them
/// (`CStallWitness.h`: a thread per CPU at SCHED_FIFO's highest priority, recording every
/// wake-up later than its threshold), and which of the trial's xruns they explain.
///
/// An xrun is explained when a stall window began before the reference client's xrun callback
/// ran and ended at most ``reachNs`` before it. The reach covers the time from the end of the
/// stall to jackd's detection of the xrun (the next cycle) and the notification's delivery to
/// libjack's notification thread (which the reference client raises to SCHED_FIFO at its first
/// notification, so that the players' realtime threads cannot keep it waiting): measured
/// 0.2–0.6 ms, once 5.4 ms, at P=64 with 58 MP3 tracks. Every client is told of every xrun
/// (the notification is server-wide), so the reference client's callbacks time all of the
/// trial's xruns, whichever client jackd named late. docs/benchmarking.md, "The machine's
/// stalls".
///
/// Thread safety: a plain value. Pure.
public struct MachineStalls: Sendable, Equatable, Codable {
    /// Stall windows recorded during the trial (every CPU's).
    public var windows: Int
    /// The longest window, ms.
    public var longestMs: Double
    /// Xruns with a stall before them within the reach.
    public var explainedXruns: Int
    /// Xruns with none (or whose time was not recorded).
    public var unexplainedXruns: Int
    /// When the first few unexplained xruns came, seconds after `origin` (nil: not recorded).
    public var unexplainedAt: [Double?]

    /// How long after a stall's end an xrun's notification may arrive and still be the stall's.
    public static let reachNs: UInt64 = 20_000_000

    /// `windows`: (start, end) on CLOCK_MONOTONIC, ns; `xrunTimes`: the reference client's xrun
    /// callbacks on the same clock, 0 for one not recorded; `origin`: the trial's start.
    public init(windows: [(start: UInt64, end: UInt64)], xrunTimes: [UInt64], origin: UInt64 = 0, reach: UInt64 = reachNs) {
        self.windows = windows.count
        longestMs = windows.map { Double($0.end - min($0.start, $0.end)) / 1e6 }.max() ?? 0
        var explained = 0
        var at: [Double?] = []
        for x in xrunTimes {
            if x > 0, windows.contains(where: { $0.start <= x && x <= $0.end &+ reach }) {
                explained += 1
            } else if at.count < 5 {
                at.append(x > origin ? Double(x - origin) / 1e9 : nil)
            }
        }
        explainedXruns = explained
        unexplainedAt = at
        unexplainedXruns = xrunTimes.count - explained
    }

    /// True when the trial had xruns and every one of them came after a stall of the machine.
    public var explainAllXruns: Bool { explainedXruns > 0 && unexplainedXruns == 0 }

    /// For people: "N stall(s) of the machine (longest X ms), M of K xrun(s) after one".
    public var summary: String {
        let longest = (longestMs * 10).rounded() / 10
        let when = unexplainedAt.map { $0.map { String(format: "%.3f s", $0) } ?? "unrecorded" }
        return "the stall witness saw \(windows) stall(s) of the machine (longest \(longest) ms); \(explainedXruns) of \(explainedXruns + unexplainedXruns) xrun(s) came after one"
            + (when.isEmpty ? "" : " (the others at \(when.joined(separator: ", ")) into the trial)")
    }
}
