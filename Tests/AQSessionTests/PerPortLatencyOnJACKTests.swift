import AQSession
import AQTesting
import Foundation
import Testing

/// Latency per port (issue 21) live, on a private jackd: a plain C client plays the same clicks
/// on two ports, one declaring capture latency 0 and one 300 frames; `aqsync play` records
/// three takes (the 0 port; the 300 port compensated; the 300 port raw). The compensated take
/// of the 300 port has the clicks exactly 300 frames before the take of the 0 port, the raw
/// take exactly on them (aqsync's outputs are connected to nothing: playback latency 0).
///
/// Part of the serialized suite "Recording sessions on JACK" rather than a suite of its own:
/// JACK suites run in parallel with one another, and a test process whose client on one
/// private server is running while it probes another server has crashed inside libjack (seen
/// with this test beside `InputQueueOnJackTests`, and with `RecordOnJACKTests` beside
/// `InputLatencyOnJACKTests`), so it adds no parallel JACK suite.
extension RecordOnJACKTests {
    static let perPortInterval = 4800
    static let perPortLate = 300

    @Test(.timeLimit(.minutes(4)))
    func takesUseTheLatencyOfTheirPorts() throws {
        try liveRun("takesUseTheLatencyOfTheirPorts") { _, _ in try perPortRun() }
    }

    private func perPortRun() throws -> LiveRunVerdict {
        let dir = try TempDir()
        try RecordOnJACKTests.clickTrack(dir, seconds: 3)
        let server = try PrivateJackServer(sampleRate: RecordOnJACKTests.rate, period: 256, realtime: true)
        defer { server.stop() }
        let env = RecordOnJACKTests.environment(server.name)
        let clicker = try TwoPortClicker(interval: Self.perPortInterval, lateLatency: Self.perPortLate, environment: env, directory: dir.url)
        defer { clicker.stop() }
        try JackTools.waitForPorts([clicker.early, clicker.late], server: server.name)
        let session = try dir.write("s.toml", """
            [output]
            channels = 1
            [[track]]
            file = "click.wav"
            [[record]]
            file = "early.wav"
            format = "32f"
            connect = ["\(clicker.early)"]
            [[record]]
            file = "late.wav"
            format = "32f"
            connect = ["\(clicker.late)"]
            [[record]]
            file = "raw.wav"
            format = "32f"
            connect = ["\(clicker.late)"]
            compensate = false
            """)
        let (p, log) = try RecordOnJACKTests.play(session, server: server.name, dir: dir, extra: ["--no-connect"])
        defer { p.stop() }
        #expect(p.wait(timeout: .seconds(30)))
        let out = RecordOnJACKTests.text(log)
        // The three takes come from one capture ring at the same device frames, so an xrun
        // moves them alike and their placement against one another stays judged; each take's
        // own spacing is judged up to aqsync's first discontinuity (``untouchedFrames``).
        let cut = RecordOnJACKTests.untouchedFrames(out, compensation: Self.perPortLate)
        if cut < 3 * Self.perPortInterval { return .witnessCouldNotTell(reason: "aqsync saw an xrun within the first clicks: \(RecordOnJACKTests.xrunLines(out))", aqsyncFigures: aqsyncPlayFigures(out)) }
        if cut != .max { print("takesUseTheLatencyOfTheirPorts: aqsync reported an xrun; each take's spacing judged up to session frame \(cut)") }
        #expect(p.terminationStatus == 0 || (RecordOnJACKTests.xrunned(out) && p.terminationStatus == 3 && out.contains("frames lost")), "\(out)")
        let frames = 3 * RecordOnJACKTests.rate
        var clicks: [String: [Int]] = [:]
        for name in ["early.wav", "late.wav", "raw.wav"] {
            let take = try WAVReader.read(dir.file(name))
            #expect(take.frameCount == frames, "\(name)")
            let found = ImpulseFinder.find(take.channels[0], threshold: 0.5).filter { $0 < cut }
            #expect(ReferenceClicker.isFaithful(found, interval: Self.perPortInterval), "\(name): clicks not \(Self.perPortInterval) apart: \(found.prefix(4))…")
            guard !found.isEmpty else { return .judged }
            clicks[name] = found
        }
        // The take lines: each take's own capture latency, playback 0 (outputs unconnected).
        let early = try #require(RecordOnJACKTests.takeLine(out, "early.wav"), "\(out)")
        let late = try #require(RecordOnJACKTests.takeLine(out, "late.wav"), "\(out)")
        let raw = try #require(RecordOnJACKTests.takeLine(out, "raw.wav"), "\(out)")
        #expect(early.compensated && early.capture == 0 && early.playback == 0, "\(out)")
        #expect(late.compensated && late.capture == Self.perPortLate && late.playback == 0, "\(out)")
        #expect(!raw.compensated && raw.capture == Self.perPortLate, "\(out)")
        #expect(out.contains("capture latency of in_1,") && out.contains("capture latency of in_2,") && out.contains("capture latency of in_3,"), "\(out)")
        // Placement: the same clicks; the compensated 300 take exactly 300 frames earlier, the
        // raw one on the 0 take's frames.
        let phase = { (list: [Int]) in list[0] % Self.perPortInterval }
        let e = try #require(clicks["early.wav"]), l = try #require(clicks["late.wav"]), r = try #require(clicks["raw.wav"])
        #expect((phase(e) - phase(l) + Self.perPortInterval) % Self.perPortInterval == Self.perPortLate, "early \(e.prefix(3)), late \(l.prefix(3))\n\(out)")
        #expect(r == e, "raw \(r.prefix(3)), early \(e.prefix(3))\n\(out)")
        return .judged
    }
}
