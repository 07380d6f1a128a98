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
    /// Without realtime scheduling on a shared machine the dummy backend can xrun; an xrun
    /// during playback legitimately skips frames (late frames, the tracks keep their place),
    /// so such a run proves nothing about equality and is repeated (at most `liveRunAttempts` runs).
    @Test(.timeLimit(.minutes(3)))
    func liveEqualsOfflineRender() throws {
        let fx = try ImpulseSession.make()
        let session = try SessionLoader.load(fx.url)
        let offlineURL = fx.dir.file("offline.wav")
        try OfflineRenderer.render(session: session, to: offlineURL)
        let offline = try WAVReader.read(offlineURL).channels
        for attempt in 1...liveRunAttempts {
            if try playAndCompare(fx: fx, session: session, offline: offline, lastAttempt: attempt == liveRunAttempts) { return }
        }
    }

    /// One live run; false when it xrunned (and this is not the last attempt).
    private func playAndCompare(fx: ImpulseSession, session: Session, offline: [[Float]], lastAttempt: Bool) throws -> Bool {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsession-test", serverName: server.name, outputChannels: 5, outputConnections: .none))
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine)
        defer { player.close() }
        let rec = try JackRecorder(server: server.name, ports: device.outputPortNames, seconds: 2.5)
        defer { rec.removeFiles() }
        let xruns = device.xrunCount
        let start = try player.start(at: AudioTimeStamp(sampleTime: engine.deviceCurrentTime().sampleTime + 14_400))
        #expect(player.waitUntilFinished(timeout: 10))
        try rec.wait()
        let live = try rec.read().channels
        let report = player.report()
        if !lastAttempt && (device.xrunCount != xruns || report.contains { $0.lateFrames > 0 }) { return false }
        #expect(report.map(\.scheduledStartFrame) == [12347, 24000, 1021, 4099, 30011].map { start + $0 })
        #expect(report.allSatisfy { $0.completed && $0.lateFrames == 0 && $0.actualStartFrame == $0.scheduledStartFrame }, "\(report)")

        // Relative frames: the same impulses, the same distances.
        let first = try #require(ImpulseFinder.find(live[0], threshold: 0.05).first, "nothing recorded")
        let origin = first - fx.exact[0][0].frame
        for c in 0..<4 {
            #expect(ImpulseFinder.find(live[c], threshold: 0.05).map { $0 - origin } == fx.exact[c].map(\.frame), "output \(c + 1)")
        }
        #expect(peaks(live[4], threshold: 0.2).map { $0 - origin } == fx.resampled)
        // Sample for sample over the recorded span.
        try #require(origin >= 0 && origin + fx.length <= live[0].count, "the recording covers the session (origin \(origin), \(live[0].count) frames)")
        var mismatches = 0
        for c in 0..<5 {
            for i in 0..<fx.length where live[c][origin + i] != offline[c][i] { mismatches += 1 }
            // Silence around it.
            #expect(live[c][..<origin].allSatisfy { $0 == 0 } && live[c][(origin + fx.length)...].allSatisfy { $0 == 0 })
        }
        #expect(mismatches == 0, "\(mismatches) samples differ from the offline render (xruns: \(device.xrunCount - xruns))")
        return true
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
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let fh = try FileHandle(forWritingTo: log)
        let p = Process()
        p.executableURL = aqsyncURL()
        p.arguments = [url.path, "--server", server.name, "--client-name", "aqt", "--no-connect", "--lead", "1.0", "--no-start-server", "--allow-loss"]
        p.standardOutput = fh
        p.standardError = fh
        try p.run()
        defer { if p.isRunning { p.terminate() }; p.waitUntilExit() }
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
    /// frames as the offline render.
    @Test(.timeLimit(.minutes(2)))
    func captureRecordsWhatWasPlayed() throws {
        let fx = try ImpulseSession.make()
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let cap = fx.dir.file("cap.wav")
        let r = try runTool(aqsyncURL().path, [fx.url.path, "--server", server.name, "--no-connect", "--capture", cap.path, "--no-start-server", "--allow-loss"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("capture:"), "\(r.output)")
        let wav = try WAVReader.read(cap)
        let first = try #require(ImpulseFinder.find(wav.channels[0], threshold: 0.05).first)
        let origin = first - fx.exact[0][0].frame
        for c in 0..<4 {
            #expect(ImpulseFinder.find(wav.channels[c], threshold: 0.05).map { $0 - origin } == fx.exact[c].map(\.frame), "output \(c + 1)")
        }
    }
}
