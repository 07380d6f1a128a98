import AQEngine
import AQJack
import AQJackServer
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24 live: a loop played on a private jackd, recorded by jack-record beside a
/// ``FrameCountWitness``, equal to the offline render of the same looped session.
@Suite("Loops live on a private JACK server", .serialized)
struct LoopOnJACKTests {
    /// The loop fixture of ``LoopRenderTests`` (PCM and FLAC clicks, an MP3 sweep, a track
    /// inside the loop), 3 passes of its 1.000 s loop: the recording equals the offline render
    /// sample for sample (193 000 frames, 2 wraps). A run whose recording differs where the
    /// witness shows the recorder broke is repeated (``liveRun(_:attempts:_:)``); the last is
    /// judged relative to the witness, stretch by stretch (``LiveRenderMatch``).
    @Test(.timeLimit(.minutes(3)))
    func loopLiveEqualsOfflineRender() throws {
        let fx = try LoopRenderTests.make(loop: "loop = { from = \"a\", to = \"b\", count = 3 }")
        let session = try SessionLoader.load(fx.url)
        let offlineURL = fx.dir.file("offline.wav")
        let r = try OfflineRenderer.render(session: session, to: offlineURL)
        let offline = try WAVReader.read(offlineURL).channels
        #expect(r.frames == Int64(72000 + 2 * 48000 + fx.length - 72000))
        try liveRun("loopLiveEqualsOfflineRender") { _, isLast in
            try playAndCompare(fx: fx, session: session, offline: offline, isLast: isLast)
        }
    }

    private func playAndCompare(fx: LoopRenderTests.Fixture, session: Session, offline: [[Float]], isLast: Bool) throws -> LiveRunVerdict {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsession-test", serverName: server.name, outputChannels: 4, outputConnections: .none))
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine)
        defer { player.close() }
        #expect(player.hasLoop && player.loopPasses == 3 && player.lengthFrames == Int64(offline[0].count))
        // Recorded until the player has finished (a fixed window can miss a late start).
        let (rec, witness) = try FrameCountWitness.recording(device.outputPortNames, server: server.name, directory: fx.dir.url)
        defer { rec.removeFiles(); witness.stop() }
        _ = try player.start(at: AudioTimeStamp(sampleTime: engine.deviceCurrentTime().sampleTime + 14_400))
        #expect(player.waitUntilFinished(timeout: 15))
        // A tenth of a second more: the last cycles reach the recorder after the player ends.
        let end = engine.deviceCurrentTime().sampleTime + 4_800
        while engine.deviceCurrentTime().sampleTime < end { usleep(5_000) }
        rec.stop()
        let recorded = try rec.read().channels
        let live = Array(recorded.prefix(4))
        let report = player.report()
        let n = offline[0].count
        let origin = (live[0].firstIndex { $0 != 0 } ?? -1) - (offline[0].firstIndex { $0 != 0 } ?? 0)
        let equal = origin >= 0 && origin + n <= live[0].count
            && (0..<4).allSatisfy { c in (0..<n).allSatisfy { live[c][origin + $0] == offline[c][$0] } }
        if !isLast && !equal {
            let witnessed = WitnessTimeline(channel: recorded[4])
            let span = max(0, origin)...(max(0, origin) + n)
            let breaks = witnessed.breaks.filter { span.contains($0) }, slips = witnessed.slips.filter { span.contains($0) }
            if !breaks.isEmpty || !slips.isEmpty || origin < 0 {
                return .witnessCouldNotTell(
                    reason: "the recording differs from the render; the recorder broke \(breaks.count) time(s), the witness slipped \(slips.count) time(s) (origin \(origin))",
                    aqsyncFigures: ["late frames": report.reduce(0) { $0 + Int($1.lateFrames) }])
            }
        }
        #expect(report.allSatisfy { $0.completed && $0.lateFrames == 0 }, "\(report)")
        try #require(origin >= 0 && origin + n <= live[0].count, "the recording covers the render (origin \(origin))")
        // Judged relative to the witness: stretch by stretch between its breaks and slips.
        let match = LiveRenderMatch(live: live, witness: WitnessTimeline(channel: recorded[4]), offline: offline, origin: origin)
        #expect(match.mismatches == 0 && match.judgedFrames * 2 >= n, "\(match)")
        if !equal { print("loopLiveEqualsOfflineRender: \(match)") }
        return .judged
    }
}
