@testable import AQBench
import Testing

/// The rule that judges a capacity trial, and the readers of what it judges: `aqsync play`'s
/// final report, jackd's log, /proc's thread lines. Made-up inputs; no JACK.
@Suite struct CapacityJudgementTests {
    @Test func aCleanTrialPasses() {
        #expect(CapacityVerdict(CapacityObservation(exitStatus: 0)) == .pass)
    }

    @Test func aqsyncsOwnLossesFail() {
        let cases: [CapacityObservation] = [
            CapacityObservation(exitStatus: 3, lateFrames: 256),
            CapacityObservation(exitStatus: 1),
            CapacityObservation(exitStatus: 130),
            CapacityObservation(exitStatus: 3, incompleteTracks: 1),
            // jackd named aqsync's client late, the reference client never.
            CapacityObservation(exitStatus: 3, aqsyncXruns: 2, serverLostFrames: 512, referenceXruns: 2, aqsyncAloneLate: 2),
            // more xruns of aqsync's client alone than of the reference client alone.
            CapacityObservation(exitStatus: 3, aqsyncXruns: 9, serverLostFrames: 768, referenceXruns: 9, aqsyncAloneLate: 4, bothLate: 2, referenceAloneLate: 3),
            // an xrun aqsync saw and the reference client (active throughout) did not.
            CapacityObservation(exitStatus: 3, aqsyncXruns: 2, serverLostFrames: 256, referenceXruns: 1),
            // lost frames with no xrun.
            CapacityObservation(exitStatus: 3, serverLostFrames: 64),
            // lost frames its report does not explain.
            CapacityObservation(exitStatus: 3),
            // late frames fail even beside a machine stall.
            CapacityObservation(exitStatus: 3, lateFrames: 64, aqsyncXruns: 1, referenceXruns: 1, bothLate: 1),
        ]
        for o in cases {
            guard case .aqsync = CapacityVerdict(o) else { Issue.record("not aqsync's: \(o) → \(CapacityVerdict(o))"); continue }
            #expect(!CapacityVerdict(o).passed)
        }
    }

    /// The strict rule: any xrun naming aqsync's client alone is aqsync's.
    @Test func strictBlamesEveryXrunOfAqsyncsClientAlone() {
        let o = CapacityObservation(exitStatus: 3, aqsyncXruns: 7, serverLostFrames: 128, referenceXruns: 7, aqsyncAloneLate: 1, bothLate: 1, referenceAloneLate: 5)
        guard case .machine = CapacityVerdict(o) else { Issue.record("\(CapacityVerdict(o))"); return }
        guard case .aqsync = CapacityVerdict(o, strict: true) else { Issue.record("\(CapacityVerdict(o, strict: true))"); return }
        #expect(CapacityVerdict(CapacityObservation(exitStatus: 0), strict: true) == .pass)
    }

    @Test func stallsTheReferenceClientSharedAreTheMachines() {
        let cases: [CapacityObservation] = [
            // both clients late in the same cycles.
            CapacityObservation(exitStatus: 3, aqsyncXruns: 1, serverLostFrames: 256, referenceXruns: 1, bothLate: 1),
            // no client named: the driver itself was late.
            CapacityObservation(exitStatus: 3, aqsyncXruns: 1, serverLostFrames: 64, referenceXruns: 1),
            // only the reference client late.
            CapacityObservation(exitStatus: 3, aqsyncXruns: 1, serverLostFrames: 256, referenceXruns: 1, referenceAloneLate: 1),
            // as many xruns of either client alone: stalls of the machine hit either.
            CapacityObservation(exitStatus: 3, aqsyncXruns: 7, serverLostFrames: 128, referenceXruns: 7, aqsyncAloneLate: 3, bothLate: 1, referenceAloneLate: 3),
            // an xrun before aqsync's playback started (the reference client saw it, aqsync did not count it).
            CapacityObservation(exitStatus: 0, referenceXruns: 1),
        ]
        for o in cases {
            guard case .machine = CapacityVerdict(o) else { Issue.record("not the machine's: \(o) → \(CapacityVerdict(o))"); continue }
            // The machine's xruns are not aqsync's: the trial passes.
            #expect(CapacityVerdict(o).passed)
        }
    }

    /// jackd's log (as jackd2 1.9.21 writes it) grouped by xrun: "Process error" ends each.
    @Test func jackdsLateClientLinesAreGroupedByXrun() {
        let log = """
            JackTimedDriver::Process XRun = 13 usec
            JackEngine::XRun: client = aqcap-ref was not finished, state = Triggered
            JackAudioDriver::ProcessGraphAsyncMaster: Process error
            JackEngine::XRun: client = aqcap-play was not finished, state = Triggered
            JackEngine::XRun: client = aqcap-ref was not finished, state = Triggered
            JackAudioDriver::ProcessGraphAsyncMaster: Process error
            JackEngine::XRun: client = aqcap-play was not finished, state = Running
            JackAudioDriver::ProcessGraphAsyncMaster: Process error
            JackEngine::XRun: client = aqcap-play-2 was not finished, state = Triggered
            JackAudioDriver::ProcessGraphAsyncMaster: Process error
            JackTimedDriver::Process XRun = 6266 usec
            JackEngine::XRun: client = aqcap-play was not finished, state = Triggered
            """
        let e = LateClientEvents(log: Substring(log), aqsync: "aqcap-play", reference: "aqcap-ref")
        #expect(e == { var x = LateClientEvents(log: "", aqsync: "a", reference: "b"); x.aqsyncAlone = 2; x.both = 1; x.referenceAlone = 1; return x }())
    }

    @Test func playsFinalReportIsReadBack() {
        let text = """
            playing 'capacity': 3 track(s), 0:10.000 at 48000 Hz on jack:aqcap, session start at device frame 1024
            track 't0' finished
            track  scheduled start   actual start   frames played   late frames skipped
            t0               48000          48000          480000                     0
            t1               48000          48000          479744                   256
            t2               48000              -               0                     0   (stopped early)   error: cannot read
            server: 2 xrun(s), 0 return(s) after going away, 512 frames of wall-clock time lost (kept: every track stayed in step)
            aqsync: frames lost: 256 frames of the tracks were skipped (late) (exit status 3; --allow-loss accepts it)
            """
        let r = PlayReport(output: text)
        #expect(r.tracks == 3)
        #expect(r.lateFrames == 256)
        #expect(r.incompleteTracks == 1)
        #expect(r.xruns == 2 && r.returns == 0 && r.lostFrames == 512)
        let clean = PlayReport(output: "track  scheduled start   actual start   frames played   late frames skipped\nt0  0  0  480000  0\n")
        #expect(clean == { var p = PlayReport(output: ""); p.tracks = 1; return p }())
    }

    @Test func threadStatLinesGiveCPUAndPolicy() throws {
        // Fields 3… after the name: state, then 11 numbers to field 13, utime (14), stime (15), … policy (41).
        var fields = ["S"] + (4...52).map { _ in "0" }
        fields[14 - 3] = "120"
        fields[15 - 3] = "30"
        fields[41 - 3] = "1"
        let t = try #require(ThreadCPU(statLine: "4242 (jack (rt) x) " + fields.joined(separator: " ")))
        #expect(t.tid == 4242 && t.name == "jack (rt) x" && t.cpuNs == 1_500_000_000 && t.isRealtime)
        #expect(ThreadCPU(statLine: "garbage") == nil)

        var split = ThreadCPUSplit()
        split.add([ThreadCPU(tid: 1, name: "aqsync", cpuNs: 10, policy: 0), ThreadCPU(tid: 2, name: "aqsync", cpuNs: 5, policy: 0)])
        // Thread 2 became realtime; thread 1 grew; thread 3 came and went.
        split.add([ThreadCPU(tid: 1, name: "aqsync", cpuNs: 20, policy: 0), ThreadCPU(tid: 2, name: "aqsync", cpuNs: 30, policy: 1),
                   ThreadCPU(tid: 3, name: "decode", cpuNs: 10, policy: 0)])
        split.add([ThreadCPU(tid: 1, name: "aqsync", cpuNs: 30, policy: 0), ThreadCPU(tid: 2, name: "aqsync", cpuNs: 60, policy: 1)])
        #expect(split.renderNs == 60)
        #expect(split.controlNs == 40)
        #expect(abs(split.controlShare - 0.4) < 1e-12)
        // aqsync's feeders and events thread run realtime below the render thread (issue 25):
        // still the control side.
        split.add([ThreadCPU(tid: 4, name: "aqsync-feeder-0", cpuNs: 100, policy: 1), ThreadCPU(tid: 5, name: "aqsync-events", cpuNs: 20, policy: 1)])
        #expect(split.renderNs == 60 && split.controlNs == 160)
        // aqsync's render thread is named, and is the render side.
        split.add([ThreadCPU(tid: 6, name: "aqsync-render", cpuNs: 40, policy: 1)])
        #expect(split.renderNs == 100 && split.controlNs == 160)
    }

    /// Only failures by xruns alone are tried again; late frames and incomplete tracks are final.
    @Test func onlyXrunFailuresAreRepeated() {
        #expect(byXrunsAlone(CapacityObservation(exitStatus: 3, aqsyncXruns: 2, referenceXruns: 2, aqsyncAloneLate: 2)))
        #expect(!byXrunsAlone(CapacityObservation(exitStatus: 3, lateFrames: 64)))
        #expect(!byXrunsAlone(CapacityObservation(exitStatus: 3, incompleteTracks: 1)))
        #expect(!byXrunsAlone(CapacityObservation(exitStatus: 1)))
    }

    @Test func rssSlopeIsTheLeastSquaresSlope() {
        #expect(abs(slope([(8, 20), (16, 24), (32, 32)]) - 0.5) < 1e-12)
        #expect(slope([(8, 20)]) == 0)
        #expect(CapacityFormat.list("wav,mp3,wav44k") == [.wav, .mp3, .wav44])
        #expect(CapacityFormat.list("wav,ogg") == nil)
    }
}
