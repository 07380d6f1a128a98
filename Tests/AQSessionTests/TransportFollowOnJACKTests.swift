import AQEngine
import AQJack
import AQJackServer
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24 live: the transport follower on a private jackd, with a plain C transport master
/// (``TransportMaster``) locating while stopped and while rolling, starting and stopping, and
/// writing the transport frame of every rolling frame into a channel recorded beside aqsync's
/// outputs (the in-run witness).
@Suite("Transport follow on a private JACK server", .serialized)
struct TransportFollowOnJACKTests {
    static let offset: Int64 = 4800

    /// Every recorded frame: where the witness says the transport rolled at transport frame F,
    /// aqsync's outputs hold the offline render's frame F − offset (silence outside the
    /// session), from the first rolling cycle after each locate; where it did not roll, they
    /// are silent. The comparison is frame by frame within the recording (a recorder that
    /// loses frames loses the witness's with them), so every run is judged.
    @Test(.timeLimit(.minutes(3)))
    func followsTheTransportExactly() throws {
        let fx = try LoopRenderTests.make(loop: "")
        let session = try SessionLoader.load(fx.url)
        let refURL = fx.dir.file("ref.wav")
        try OfflineRenderer.render(session: session, to: refURL)
        let full = try WAVReader.read(refURL).channels
        try liveRun("followsTheTransportExactly") { _, _ in
            try follow(fx: fx, session: session, full: full)
        }
    }

    private func follow(fx: LoopRenderTests.Fixture, session: Session, full: [[Float]]) throws -> LiveRunVerdict {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsession-test", serverName: server.name, outputChannels: 4, outputConnections: .none))
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let follower = try TransportFollower(session: session, deviceRate: 48000, outputs: 4, offset: Self.offset)
        defer { follower.close() }
        // Where the transport stands (0): primed before the master starts.
        try device.setTransportFollower(follower.callbacks)
        defer { device.stop() }
        #expect(follower.waitUntilPrimed(at: -Self.offset, timeout: 10), "\(follower.error ?? "")")
        // Locates: stopped inside every track (odd frame), rolling inside every track, stopped
        // before the session (transport frame 3 = session −4797), rolling near the end (the
        // session ends under it).
        let targets: [UInt32] = [UInt32(Self.offset) + 10_007, UInt32(Self.offset) + 60_001, 3, UInt32(Self.offset) + 95_000]
        let master = try TransportMaster(server: server.name, targets: targets, directory: fx.dir.url)
        defer { master.stop() }
        let rec = try JackRecorder(server: server.name, ports: device.outputPortNames + [master.port])
        defer { rec.removeFiles() }
        master.go()
        let finished = master.waitUntilDone(timeout: .seconds(60))
        rec.stop()
        #expect(finished, "the master's script did not end")
        let recorded = try rec.read().channels
        let counters = follower.counters

        let j = Self.judge(recorded: recorded, full: full)
        let (segments, rollingFrames, heard, wrongRolling, wrongStopped, firstWrong) = (j.segments, j.rollingFrames, j.heard, j.wrongRolling, j.wrongStopped, j.firstWrong)
        print("followsTheTransportExactly: rolling runs start at transport frames \(segments); \(rollingFrames) rolling frames recorded, \(heard) samples heard; \(counters)")
        // Three rolling runs began at a located frame (the first start, the locate while
        // rolling, the start after the stopped locate; the second locate while rolling makes a
        // fourth), each exactly at its target.
        #expect(segments.count >= 4, "rolling runs start at \(segments)")
        #expect(j.lateStarts(targets.map(Int64.init), test: "followsTheTransportExactly") != nil, "a rolling run does not start at every locate target \(targets): \(segments) (xrun marks \(j.xrunMarks.prefix(20)))")
        #expect(rollingFrames > 48000 && heard > 10000, "\(rollingFrames) rolling frames, \(heard) samples heard")
        #expect(wrongRolling == 0 && wrongStopped == 0,
            "\(wrongRolling) samples wrong while rolling, \(wrongStopped) not silent while stopped; first: \(firstWrong ?? "-")")
        #expect(counters.missedCycles == 0 && counters.waitAnswers > 0 && counters.primings >= 5, "\(counters)")
        #expect(follower.error == nil)
        return .judged
    }

    /// The judge's start of a rolling run, on made-up recordings (silent outputs, a session
    /// of silence): at the target; a period after it right after frames that did not roll,
    /// beside an xrun mark (the witness late for that cycle); but not without the mark, not
    /// two periods after, and not a period after within a run (frames lost mid-run).
    @Test func aRunBeginsAtItsTargetOrAPeriodLateBesideAnXrunReport() {
        func recording(_ rolling: [(at: Int, frame: Int64, count: Int)], mark: Int?) -> [[Float]] {
            var w = [Float](repeating: 0, count: 4096)
            for r in rolling { for i in 0..<r.count { w[r.at + i] = Float(r.frame + Int64(i) + 1) } }
            if let m = mark { w[m] = -abs(w[m] == 0 ? 0.5 : w[m]) }
            return Array(repeating: [Float](repeating: 0, count: 4096), count: 4) + [w]
        }
        let full = Array(repeating: [Float](repeating: 0, count: 10), count: 4)
        let t: Int64 = 20_000
        #expect(Self.judge(recorded: recording([(1024, t, 1024)], mark: nil), full: full).begins(at: t) == (true, false))
        #expect(Self.judge(recorded: recording([(1024, t + 256, 1024)], mark: 1280), full: full).begins(at: t) == (false, true))
        #expect(Self.judge(recorded: recording([(1024, t + 256, 1024)], mark: nil), full: full).begins(at: t) == (false, false))
        #expect(Self.judge(recorded: recording([(1024, t + 512, 1024)], mark: 1280), full: full).begins(at: t) == (false, false))
        // Within a run: frames t − 256 … t − 1 recorded, then t + 256 on (the recorder lost t).
        #expect(Self.judge(recorded: recording([(768, t - 256, 256), (1024, t + 256, 1024)], mark: 1280), full: full).begins(at: t) == (false, false))
    }

    /// The judgement of a recording: channels 0–3 aqsync's outputs, channel 4 the
    /// ``TransportMaster``'s witness. Per recorded frame: rolling at F → the render's frame
    /// F − offset (silence outside the session); not rolling → silence.
    ///
    /// A stretch of wrong frames no longer than the longest period (1024) that ends within
    /// ``WitnessMarks/reportDelay`` frames before the witness marked that the server reported
    /// an xrun is what a downstream client read of a late client's ports in that cycle (the
    /// server's doing, docs/timing.md): counted in `wrongInServerXruns` and printed, not in
    /// `wrongRolling`/`wrongStopped`. Anything longer, or with no report beside it, counts.
    struct Judgement {
        /// Transport frames at which a rolling run starts in the recording (a locate, a start,
        /// or a place the recorder lost frames).
        var segments: [Int64] = []
        /// The recorded frame at which each of `segments` starts, and whether the frame
        /// recorded before it was one the transport did not roll in (or there was none).
        var segmentIndices: [Int] = []
        var segmentAfterStopped: [Bool] = []
        /// The witness's xrun marks (recorded frames).
        var xrunMarks: [Int] = []
        var rollingFrames = 0, heard = 0, wrongRolling = 0, wrongStopped = 0
        var firstWrong: String?
        /// The last transport frame recorded rolling (frames the recorder lost before it are
        /// still inside `segments.first!...lastRollingFrame`).
        var lastRollingFrame: Int64?
        /// Wrong samples in cycles the server reported an xrun for, and where.
        var wrongInServerXruns = 0
        var forgiven: [String] = []
        /// With targets: the witness's breaks, and the wrong stretches set aside beside them
        /// (their wrong frames and samples, where, and the run's budget of frames).
        var breaks: TransportWitnessBreaks?
        var setAsideFrames = 0, setAsideSamples = 0, setAsideBudget = 0
        var setAside: [String] = []
    }

    ///
    /// With `targets` (the master's locate targets): the stretches that remain are then set
    /// aside or counted by the bounded rule of ``TransportWitnessBreaks`` (wholly inside a
    /// window beside a break of the witness's frames, within the budget of `skippedFrames`,
    /// the transport frames aqsync reported it skipped, plus the breaks' own sizes): set aside
    /// in `setAsideFrames`/`setAside`, not in `wrongRolling`/`wrongStopped`.
    static func judge(recorded: [[Float]], full: [[Float]], targets: [Int64]? = nil, skippedFrames: Int = 0, period: Int = 256) -> Judgement {
        var j = Judgement()
        var previous: Int64?
        let count = recorded[4].count
        let samples = recorded[4].map(TransportWitnessSample.init)
        let marks = samples.indices.filter { samples[$0].xrunReported }
        j.xrunMarks = marks
        // Per recorded frame: wrong samples while rolling and while stopped, and the first
        // description.
        var wrong = [(rolling: Int, stopped: Int, what: String?)](repeating: (0, 0, nil), count: count)
        for k in 0..<count {
            if let f = samples[k].frame {
                if previous != f - 1 { j.segments.append(f); j.segmentIndices.append(k); j.segmentAfterStopped.append(previous == nil) }
                previous = f
                j.rollingFrames += 1
                j.lastRollingFrame = f
                let s = f - offset
                for c in 0..<4 {
                    let want: Float = s >= 0 && s < Int64(full[c].count) ? full[c][Int(s)] : 0
                    if recorded[c][k] != 0 { j.heard += 1 }
                    if recorded[c][k] != want {
                        wrong[k].rolling += 1
                        if wrong[k].what == nil { wrong[k].what = "recorded frame \(k), transport frame \(f), output \(c + 1): \(recorded[c][k]) vs \(want)" }
                    }
                }
            } else {
                previous = nil
                for c in 0..<4 where recorded[c][k] != 0 {
                    wrong[k].stopped += 1
                    if wrong[k].what == nil { wrong[k].what = "recorded frame \(k) (transport not rolling), output \(c + 1): \(recorded[c][k])" }
                }
            }
        }
        // Stretches of wrong frames, each beside an xrun report (forgiven) or not (counted).
        let stretches = WitnessMarks.lateCycleStretches(wrong: wrong.indices.filter { wrong[$0].rolling + wrong[$0].stopped > 0 }, xruns: marks)
        for r in stretches.reported {
            j.wrongInServerXruns += wrong[r].reduce(0) { $0 + $1.rolling + $1.stopped }
            j.forgiven.append("frames \(r.lowerBound)...\(r.upperBound)")
        }
        var counted = stretches.unexplained
        if let targets {
            let breaks = TransportWitnessBreaks(frames: samples.map(\.frame), targets: targets, period: period)
            let split = breaks.setAside(counted, wrongFrames: { r in wrong[r].filter { $0.rolling + $0.stopped > 0 }.count }, skippedFrames: skippedFrames)
            for r in split.setAside {
                j.setAsideSamples += wrong[r].reduce(0) { $0 + $1.rolling + $1.stopped }
                j.setAside.append("frames \(r.lowerBound)...\(r.upperBound) (first: \(wrong[r.lowerBound].what ?? "-"))")
            }
            j.setAsideFrames = split.frames
            j.setAsideBudget = split.budget
            j.breaks = breaks
            counted = split.counted
        }
        for r in counted {
            j.wrongRolling += wrong[r].reduce(0) { $0 + $1.rolling }
            j.wrongStopped += wrong[r].reduce(0) { $0 + $1.stopped }
            if j.firstWrong == nil { j.firstWrong = wrong[r.lowerBound].what }
        }
        return j
    }
}

extension TransportFollowOnJACKTests.Judgement {
    /// Whether a rolling run in the recording begins at transport frame `target`: exactly, or
    /// (`late`) one `period` after it where the witness's run begins after frames in which the
    /// transport did not roll, beside the server's xrun report (a period before the run's
    /// first recorded frame to ``WitnessMarks/reportDelay`` after): the witness was late for
    /// the first rolling cycle and read the next cycle's position, as any client called after
    /// the server has begun the next cycle does (`jack_transport_query` reads the current
    /// position). aqsync's frames there are judged against what the witness wrote like every
    /// other frame. Pure function.
    func begins(at target: Int64, period: Int64 = 256) -> (exact: Bool, late: Bool) {
        if segments.contains(target) { return (true, false) }
        guard let i = segments.firstIndex(of: target + period), segmentAfterStopped[i] else { return (false, false) }
        let k = segmentIndices[i]
        return (false, xrunMarks.contains { $0 >= k - Int(period) && $0 <= k + WitnessMarks.reportDelay })
    }

    /// Whether a rolling run begins at target `target` exactly, or one or two periods after it
    /// at a break of the witness's frames (``TransportWitnessBreaks``: every rolling run not at
    /// a target is one): the witness missed the first cycle(s) after the locate, and the
    /// window beside that break (2 periods) covers them. For PipeWire, where no xrun report
    /// reaches the witness (``begins(at:period:)`` needs one). Pure function.
    func beginsBesideABreak(at target: Int64, period: Int64 = 256) -> Bool {
        segments.contains(target) || segments.contains(target + period) || segments.contains(target + 2 * period)
    }

    /// The targets ``begins(at:period:)`` finds begun a period late beside an xrun report,
    /// said on standard output; nil when one did not begin at all (exactly or so).
    func lateStarts(_ targets: [Int64], test: String) -> [Int64]? {
        var late: [Int64] = []
        for t in targets {
            let b = begins(at: t)
            if !b.exact && !b.late { return nil }
            if b.late { late.append(t) }
        }
        if !late.isEmpty { print("\(test): the witness's rolling run began one period after locate target(s) \(late), beside the server's xrun report (the witness late for that cycle)") }
        return late
    }
}


