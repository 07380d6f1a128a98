/// The search of `aqsync bench --capacity` (issue 25): the largest track count that passes a
/// trial, by doubling from `start` until a count fails (or `limit` passes), then bisecting
/// between the largest count that passed and the smallest that failed, until they are
/// `resolution` apart (relative to the count that passed, at least one track).
///
/// It assumes what passes at N passes below N; a noisy machine can break that, and the search
/// then reports the largest count it saw pass below the smallest it saw fail (a lower bound of
/// the capacity on that machine at that moment). Pure: no clock, no JACK.
///
/// Thread safety: a plain value.
public struct CapacitySearch: Sendable, Equatable {
    /// The largest count that passed (0: none yet).
    public private(set) var passed = 0
    /// The smallest count that failed (nil: none yet).
    public private(set) var failed: Int?
    /// Every trial, in order: (tracks, passed).
    public private(set) var trials: [(tracks: Int, passed: Bool)] = []
    public let start: Int
    public let limit: Int
    public let resolution: Double

    public init(start: Int = 8, limit: Int = 4096, resolution: Double = 1.0 / 16) {
        self.start = max(1, min(start, limit))
        self.limit = max(1, limit)
        self.resolution = max(0, resolution)
    }

    /// The gap at which the search stops: `resolution` of the count that passed, at least 1.
    var gap: Int { max(1, Int((Double(passed) * resolution).rounded(.down))) }

    /// The next count to try, or nil when the search is over.
    public var next: Int? {
        guard let failed else {
            if trials.isEmpty { return start }
            return passed >= limit ? nil : min(limit, passed * 2)
        }
        if failed - passed <= gap { return nil }
        if passed == 0 {
            // Nothing passed yet: halve until something does (1 is the last count to try).
            return failed == 1 ? nil : failed / 2
        }
        return passed + (failed - passed) / 2
    }

    /// Records the result of a trial at `tracks`.
    public mutating func record(_ tracks: Int, passed ok: Bool) {
        trials.append((tracks, ok))
        if ok {
            // A pass at or above a failure: the machine was noisier at the failure. Keep the
            // failure as the bound (the capacity stays a lower bound below it).
            if let failed, tracks >= failed { return }
            passed = max(passed, tracks)
        } else {
            failed = min(failed ?? tracks, tracks)
            if passed >= tracks { passed = 0; for t in trials where t.passed && t.tracks < tracks { passed = max(passed, t.tracks) } }
        }
    }

    /// The capacity found: the largest count that passed below every failure (0: none).
    public var capacity: Int { passed }

    /// True when the search stopped at `limit` without a failure (the capacity is at least it).
    public var reachedLimit: Bool { failed == nil && passed >= limit }

    public static func == (a: CapacitySearch, b: CapacitySearch) -> Bool {
        a.passed == b.passed && a.failed == b.failed && a.start == b.start && a.limit == b.limit
            && a.resolution == b.resolution && a.trials.map(\.tracks) == b.trials.map(\.tracks)
            && a.trials.map(\.passed) == b.trials.map(\.passed)
    }
}
