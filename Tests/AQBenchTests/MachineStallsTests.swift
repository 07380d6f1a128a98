@testable import AQBench
import CMixReference
import Testing

/// The stall witness (CStallWitness.c) and the rule that lets it explain a trial's xruns
/// (``MachineStalls``, ``CapacityVerdict``). The rule on made-up windows and times; the witness
/// itself on this machine, its plumbing only (what it records is the machine's).
@Suite struct MachineStallsTests {
    let ms: UInt64 = 1_000_000

    @Test func anXrunIsExplainedByAStallThatEndedJustBeforeIt() {
        let windows = [(start: 100 * ms, end: 104 * ms), (start: 500 * ms, end: 501 * ms)]
        // inside the first window, 1 ms after it, 19 ms after the second; 30 ms after: not; before both: not.
        let s = MachineStalls(windows: windows, xrunTimes: [103 * ms, 105 * ms, 520 * ms, 531 * ms, 50 * ms])
        #expect(s.windows == 2)
        #expect(s.longestMs == 4)
        #expect(s.explainedXruns == 3)
        #expect(s.unexplainedXruns == 2)
        #expect(!s.explainAllXruns)
        #expect(MachineStalls(windows: windows, xrunTimes: [103 * ms, 501 * ms]).explainAllXruns)
    }

    @Test func anUnrecordedXrunTimeIsNeverExplained() {
        let s = MachineStalls(windows: [(start: 0, end: 10 * ms)], xrunTimes: [5 * ms, 0])
        #expect(s.explainedXruns == 1)
        #expect(s.unexplainedXruns == 1)
        #expect(!s.explainAllXruns)
    }

    @Test func noXrunsExplainNothing() {
        #expect(!MachineStalls(windows: [(start: 0, end: 10 * ms)], xrunTimes: []).explainAllXruns)
    }

    /// Xruns naming aqsync's client alone beyond the reference client's are the machine's when
    /// every xrun came after a stall the witness saw; else aqsync's, as without the witness.
    /// The strict rule and aqsync's own losses are not changed by it.
    @Test func stallsBeforeEveryXrunMakeThemTheMachines() {
        let explained = MachineStalls(windows: [(start: 0, end: 10 * ms)], xrunTimes: [10 * ms, 11 * ms])
        let oneUnexplained = MachineStalls(windows: [(start: 0, end: 10 * ms)], xrunTimes: [10 * ms, 900 * ms])
        var o = CapacityObservation(exitStatus: 3, aqsyncXruns: 2, serverLostFrames: 128, referenceXruns: 2, aqsyncAloneLate: 2)
        guard case .aqsync = CapacityVerdict(o) else { Issue.record("without the witness: \(CapacityVerdict(o))"); return }
        o.stalls = explained
        guard case .machine(let why) = CapacityVerdict(o) else { Issue.record("explained: \(CapacityVerdict(o))"); return }
        #expect(why.contains("2 of 2 xrun(s) came after one"))
        guard case .aqsync = CapacityVerdict(o, strict: true) else { Issue.record("strict: \(CapacityVerdict(o, strict: true))"); return }
        o.stalls = oneUnexplained
        guard case .aqsync(let own) = CapacityVerdict(o) else { Issue.record("one unexplained: \(CapacityVerdict(o))"); return }
        #expect(own.contains("1 of 2 xrun(s) came after one"))
        var late = CapacityObservation(exitStatus: 3, lateFrames: 64, aqsyncXruns: 2, referenceXruns: 2, aqsyncAloneLate: 2)
        late.stalls = explained
        guard case .aqsync = CapacityVerdict(late) else { Issue.record("late frames: \(CapacityVerdict(late))"); return }
    }

    /// The witness's plumbing: a thread per CPU, windows copied with `since` and `max` obeyed,
    /// each window's start before its end. With a threshold of 1 µs nearly every wake-up is a
    /// window, so windows arrive without waiting on the machine's real stalls.
    @Test func theWitnessRecordsWindowsOnEveryCPU() throws {
        let w = try #require(aq_stall_witness_start(100, 1, 1000))
        defer { aq_stall_witness_stop(w) }
        #expect(aq_stall_witness_threads(w) >= 1)
        #expect(aq_stall_witness_realtime(w) <= aq_stall_witness_threads(w))
        var starts = [UInt64](repeating: 0, count: 8)
        var ends = [UInt64](repeating: 0, count: 8)
        let deadline = aq_stall_witness_now() + 10_000 * ms
        var n: Int32 = 0
        while n < 8 && aq_stall_witness_now() < deadline {
            n = aq_stall_witness_windows(w, 0, &starts, &ends, 8)
        }
        #expect(n == 8)
        for i in 0..<Int(n) { #expect(starts[i] < ends[i]) }
        let later = aq_stall_witness_now() + 3_600_000 * ms
        #expect(aq_stall_witness_windows(w, later, &starts, &ends, 8) == 0)
    }
}
