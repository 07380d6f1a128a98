@testable import AQBench
import Testing

/// The bisection of `aqsync bench --capacity`, against made-up machines (no JACK, no clock).
@Suite struct CapacitySearchTests {
    /// Runs the search against a machine that passes every count up to `capacity`.
    func search(capacity: Int, start: Int = 8, limit: Int = 4096, resolution: Double = 1.0 / 16) -> CapacitySearch {
        var s = CapacitySearch(start: start, limit: limit, resolution: resolution)
        var guardCount = 0
        while let n = s.next, guardCount < 100 {
            s.record(n, passed: n <= capacity)
            guardCount += 1
        }
        return s
    }

    @Test func doublesThenBisectsToTheResolution() {
        let s = search(capacity: 100)
        #expect(s.trials.map(\.tracks) == [8, 16, 32, 64, 128, 96, 112, 104, 100])
        #expect(s.capacity == 100)
        #expect(s.failed == 104)
        #expect(!s.reachedLimit)
    }

    @Test func exactWithResolutionZero() {
        for c in [1, 2, 3, 7, 9, 100, 333, 1000] {
            let s = search(capacity: c, resolution: 0)
            #expect(s.capacity == c, "capacity \(c)")
            #expect(s.failed == c + 1, "capacity \(c)")
        }
    }

    @Test func withinTheResolutionOfTheTruth() {
        for c in [10, 50, 200, 700, 1500] {
            let s = search(capacity: c)
            #expect(s.capacity <= c && s.capacity >= c - max(1, c / 16), "capacity \(c): found \(s.capacity)")
            // Doubling from 8 then bisection: a logarithmic number of trials.
            #expect(s.trials.count <= 16, "capacity \(c): \(s.trials.count) trials")
        }
    }

    @Test func nothingPassesGivesZeroAfterTryingOne() {
        let s = search(capacity: 0)
        #expect(s.trials.map(\.tracks) == [8, 4, 2, 1])
        #expect(s.capacity == 0)
    }

    @Test func smallCapacitiesBelowTheStart() {
        let s = search(capacity: 3)
        #expect(s.trials.map(\.tracks) == [8, 4, 2, 3])
        #expect(s.capacity == 3)
    }

    @Test func stopsAtTheLimit() {
        let s = search(capacity: 10_000, limit: 100)
        #expect(s.trials.map(\.tracks) == [8, 16, 32, 64, 100])
        #expect(s.capacity == 100)
        #expect(s.reachedLimit)
    }

    /// A noisy machine: a pass above a failure does not raise the capacity past the failure; a
    /// failure below a pass lowers it to the largest pass below the failure.
    @Test func noisyResultsKeepALowerBound() {
        var s = CapacitySearch(start: 8, limit: 4096, resolution: 0)
        s.record(8, passed: true)
        s.record(16, passed: true)
        s.record(32, passed: false)
        s.record(40, passed: true)
        #expect(s.capacity == 16 && s.failed == 32)
        s.record(12, passed: false)
        #expect(s.capacity == 8 && s.failed == 12)
        #expect(s.next == 10)
    }
}
