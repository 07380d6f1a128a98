import AQEngine
import AQJack
import AQJackServer
import AQSession
import AQTesting
import Foundation
import Testing

/// Live playback on a private jackd (one at a time), recorded by jack-record.
@Suite("Live playback on a private JACK server", .serialized)
struct LivePlaybackOnJACKTests {
    /// The impulse session played live: every impulse at its exact frame relative to the
    /// others, and the recording equal to the offline render sample for sample (aligned on
    /// the first impulse).
    ///
    /// A witness (``FrameCountWitness``) is recorded beside the outputs. Without realtime
    /// scheduling on a shared machine the recorder can lose frames: a run whose recording
    /// differs from the render where the witness shows the recorder broke (or the witness was
    /// called twice or skipped) is repeated through ``liveRun(_:attempts:_:)`` (at most 3 runs,
    /// printed), and never when aqsync's own figures (late frames) moved.
    @Test(.timeLimit(.minutes(3)))
    func liveEqualsOfflineRender() throws {
        let fx = try ImpulseSession.make()
        let session = try SessionLoader.load(fx.url)
        let offlineURL = fx.dir.file("offline.wav")
        try OfflineRenderer.render(session: session, to: offlineURL)
        let offline = try WAVReader.read(offlineURL).channels
        try liveRun("liveEqualsOfflineRender") { _, isLast in
            try playAndCompare(fx: fx, session: session, offline: offline, isLast: isLast)
        }
    }

    /// One live run, judged unless the witness cannot tell (and this is not the last run).
    private func playAndCompare(fx: ImpulseSession, session: Session, offline: [[Float]], isLast: Bool) throws -> LiveRunVerdict {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsession-test", serverName: server.name, outputChannels: 5, outputConnections: .none))
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine)
        defer { player.close() }
        let (rec, witness) = try FrameCountWitness.recording(device.outputPortNames, server: server.name, directory: fx.dir.url, seconds: 2.5, serverCounter: true)
        defer { rec.removeFiles(); witness.stop() }
        let xruns = device.xrunCount
        let start = try player.start(at: AudioTimeStamp(sampleTime: engine.deviceCurrentTime().sampleTime + 14_400))
        #expect(player.waitUntilFinished(timeout: 10))
        try rec.wait()
        let recorded = try rec.read().channels
        let live = Array(recorded.prefix(5))
        let report = player.report()
        if !isLast, let reason = Self.unvouched(live: live, offline: offline, witness: WitnessTimeline(channel: recorded[5]), fx: fx) {
            return .witnessCouldNotTell(reason: reason, aqsyncFigures: ["late frames": report.reduce(0) { $0 + Int($1.lateFrames) }])
        }
        #expect(report.map(\.scheduledStartFrame) == [12347, 24000, 1021, 4099, 30011].map { start + $0 })
        #expect(report.allSatisfy { $0.completed && $0.lateFrames == 0 && $0.actualStartFrame == $0.scheduledStartFrame }, "\(report)")

        // Relative frames, in the witness's frames: the same impulses, the same distances. A
        // recorded frame is placed by the witness's own count recorded beside it, so frames the
        // recorder lost (it breaks on a loaded machine; the last run is judged whatever the
        // witness saw) move nothing; a track aqsync moved still shows. Frames the witness did
        // not cover are placed by their recorded index.
        let timeline = WitnessTimeline(channel: recorded[5], serverChannel: recorded.count > 6 ? recorded[6] : nil)
        let first = try #require(ImpulseFinder.find(live[0], threshold: 0.05).first, "nothing recorded")
        let origin = first - fx.exact[0][0].frame
        let keptLostFrames = Int(device.lostFrames - device.skippedFrames)
        let deviceFigures = "xruns: \(device.xrunCount - xruns); device: \(device.lostFrames) frames lost, \(device.skippedFrames) skipped, \(device.lateCycleCount) late cycles"
        // Exact in the recorded or the witness's frames (judged below, impulse by impulse and
        // sample for sample); otherwise judged stretch by stretch as the other live-versus-render
        // tests are (``LiveRenderMatch``): the server's counter as a third measure, and a stretch
        // later by exactly the frames aqsync reported lost and kept counted apart (the CI run of
        // 9fd30d6 failed here with 12 xruns: the later impulses of two outputs 256 frames late
        // in the witness's frames, the witness continuous).
        if origin >= 0, origin + fx.length <= live[0].count,
           !(0..<5).allSatisfy({ c in (0..<fx.length).allSatisfy { live[c][origin + $0] == offline[c][$0] } })
        {
            let match = LiveRenderMatch(live: live, witness: timeline, offline: offline, origin: origin, keptLostFrames: keptLostFrames)
            print("liveEqualsOfflineRender: the recording differs from the render: \(match); \(deviceFigures)")
            if match.matchedThroughServerCounter > 0 || match.shiftedByKeptTime > 0 || match.inServerXruns > 0 {
                #expect(match.mismatches == 0 && match.judgedFrames * 2 >= fx.length, "\(match); \(deviceFigures)")
                return .judged
            }
        }
        let firstWitness = timeline.frames[first]
        /// Session frame of recorded frame i.
        func sessionFrame(_ i: Int) -> Int {
            guard let w = timeline.frames[i], let f = firstWitness else { return i - origin }
            var d = (w - f) & 0xFFFFFF  // the witness counts modulo 2^24
            if d >= 1 << 23 { d -= 1 << 24 }
            return d + fx.exact[0][0].frame
        }
        for c in 0..<4 {
            #expect(ImpulseFinder.find(live[c], threshold: 0.05).map(sessionFrame) == fx.exact[c].map(\.frame), "output \(c + 1)")
        }
        #expect(peaks(live[4], threshold: 0.2).map(sessionFrame) == fx.resampled)
        // Sample for sample over the recorded span (each recorded frame against the render at
        // its session frame), silence around it.
        try #require(origin >= 0 && origin < live[0].count, "the recording holds the session's start (origin \(origin), \(live[0].count) frames)")
        var mismatches = 0, last = Int.min
        for i in live[0].indices {
            let k = sessionFrame(i)
            for c in 0..<5 {
                let want: Float = k >= 0 && k < fx.length ? offline[c][k] : 0
                if live[c][i] != want { mismatches += 1 }
            }
            last = max(last, k)
        }
        #expect(last >= fx.length, "the recording covers the session and some silence after it (it ends at session frame \(last) of \(fx.length))")
        #expect(mismatches == 0, "\(mismatches) samples differ from the offline render (\(deviceFigures))")
        return .judged
    }

    /// Why the witness cannot vouch for a recording that differs from the offline render: the
    /// recorder broke (or the witness slipped) inside the recorded session; nil when the
    /// recording equals the render, or differs where the witness vouched for it.
    private static func unvouched(live: [[Float]], offline: [[Float]], witness: WitnessTimeline, fx: ImpulseSession) -> String? {
        guard let first = ImpulseFinder.find(live[0], threshold: 0.05).first else { return "nothing recorded" }
        let origin = first - fx.exact[0][0].frame
        guard origin >= 0, origin + fx.length <= live[0].count else { return "the recording does not cover the session" }
        let equal = (0..<5).allSatisfy { c in (0..<fx.length).allSatisfy { live[c][origin + $0] == offline[c][$0] } }
        if equal { return nil }
        let span = origin...(origin + fx.length)
        let breaks = witness.breaks.filter { span.contains($0) }, slips = witness.slips.filter { span.contains($0) }
        if breaks.isEmpty && slips.isEmpty { return nil }
        return "the recording differs from the render, and inside the session the recorder broke \(breaks.count) time(s) and the witness slipped \(slips.count) time(s)"
    }

    /// `aqsync play` on a private server: a period change (jack_bufsize) during playback is
    /// reported as a discontinuity, every track stays on its frame, the command exits 0.
    @Test(.timeLimit(.minutes(2)))
    func periodChangeDuringPlayback() throws {
        let dir = try TempDir()
        let every = 4801
        let a = try makeImpulseFile(dir, "a.wav", rate: 48000, frames: 192_000, impulses: [Array(stride(from: 0, to: 192_000, by: every))], encoding: ["-e", "signed-integer", "-b", "16"])
        let b = try makeImpulseFile(dir, "b.caf", rate: 48000, frames: 192_000, impulses: [Array(stride(from: 0, to: 192_000 - 100, by: every))], encoding: ["-e", "floating-point", "-b", "32"])
        _ = (a, b)
        let url = try dir.write("s.toml", """
            [output]
            channels = 2
            [[track]]
            file = "a.wav"
            outputs = [1]
            [[track]]
            file = "b.caf"
            start = 100
            outputs = [2]
            """)
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let log = dir.file("play.log")
        let p = try startAqsync([url.path, "--server", server.name, "--client-name", "aqt", "--no-connect", "--lead", "1.0", "--no-start-server", "--allow-loss"], log: log)
        defer { p.terminateAndReap() }
        let ports = ["aqt:out_1", "aqt:out_2"]
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, !Set(try JackTools.ports(server: server.name)).isSuperset(of: ports) { usleep(20_000) }
        let rec = try JackRecorder(server: server.name, ports: ports, seconds: 6)
        defer { rec.removeFiles() }
        Thread.sleep(forTimeInterval: 2.5)
        try JackTools.setBufferSize(512, server: server.name)
        let end = Date().addingTimeInterval(15)
        while p.isRunning && Date() < end { usleep(20_000) }
        try rec.wait()
        let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(!p.isRunning && p.terminationStatus == 0, "\(out)")
        #expect(out.contains("discontinuity"), "\(out)")
        #expect(out.contains("period-size change") || out.contains("xrun"), "\(out)")
        #expect(out.contains("a.wav") && out.contains("b.caf"))
        let found = ImpulseFinder.find(channels: try rec.read().channels, threshold: 0.25)
        try #require(found[0].count > 20, "impulses: \(found[0])")
        // Within a track the spacing is exact except where the device's timeline jumped, and
        // every jump was reported as a discontinuity (the period change, and any xrun).
        let gaps = zip(found[0].dropFirst(), found[0]).map { $0 - $1 }
        let reported = out.components(separatedBy: "discontinuity (").count - 1
        // Between the tracks: every impulse of b is 100 frames after one of a's. A jump of the
        // device's frame counter skips the same frames of both tracks, and may skip an impulse
        // of one but not the other (they are 100 frames apart): at most one per discontinuity.
        let setA = Set(found[0]), setB = Set(found[1])
        let unpairedB = found[1].filter { !setA.contains($0 - 100) }
        let unpairedA = found[0].filter { !setB.contains($0 + 100) }
        #expect(unpairedB.count + unpairedA.count <= reported, "unpaired: a \(unpairedA), b \(unpairedB); \(reported) discontinuities")
        #expect(found[1].count - unpairedB.count > 20, "pairs exactly 100 frames apart")
        #expect(gaps.filter { $0 != every }.count <= reported, "gaps \(gaps), \(reported) discontinuities reported")
    }

    /// `aqsync play --capture` writes what the engine sent: the impulses at the same relative
    /// frames as the offline render, session frame 0 where the report line says (plus the
    /// server's loop back, whole periods).
    @Test(.timeLimit(.minutes(2)))
    func captureRecordsWhatWasPlayed() throws {
        let fx = try ImpulseSession.make()
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let cap = fx.dir.file("cap.wav")
        let r = try runTool(aqsyncURL().path, [fx.url.path, "--server", server.name, "--no-connect", "--capture", cap.path, "--no-start-server", "--allow-loss"])
        #expect(r.status == 0, "\(r.output)")
        let line = try #require(CaptureWithTakeOnJACKTests.captureLine(r.output), "\(r.output)")
        #expect(r.output.contains("capture: \(line.frames) frames written to \(cap.path) (in_1…in_5, raw:") && line.dropped == 0, "\(r.output)")
        let wav = try WAVReader.read(cap)
        #expect(wav.frameCount == line.frames && wav.channels.count == 5)
        let first = try #require(ImpulseFinder.find(wav.channels[0], threshold: 0.05).first)
        let origin = first - fx.exact[0][0].frame
        for c in 0..<4 {
            #expect(ImpulseFinder.find(wav.channels[c], threshold: 0.05).map { $0 - origin } == fx.exact[c].map(\.frame), "output \(c + 1)")
        }
        // Where the line says: session frame 0 is capture frame −(its session frame), and what
        // went out comes back whole periods later (the server's loop back to aqsync's inputs).
        // (Judged when aqsync reported no xrun: a cycle the server skipped may move the loop.)
        let delay = origin + line.sessionFrame
        if RecordOnJACKTests.xrunned(r.output) {
            print("captureRecordsWhatWasPlayed: aqsync reported an xrun; session frame 0 at capture frame \(origin), the line says \(-line.sessionFrame) (not judged)")
        } else {
            #expect(delay >= 0 && delay % 256 == 0 && delay <= 4 * 256, "session frame 0 at capture frame \(origin), the line says \(-line.sessionFrame)\n\(r.output)")
        }
    }
}
