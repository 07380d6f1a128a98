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
    /// inside the loop), 3 passes of its 1.000 s loop (`AQSYNC_LOOP_PASSES=100` for the issue's
    /// 100, `make loop-check`: about 100 s): the recording equals the offline render sample for
    /// sample (193 000 frames, 2 wraps, with 3). A run whose recording differs where the
    /// witness shows the recorder broke is repeated (``liveRun(_:attempts:_:)``); the last is
    /// judged relative to the witness, stretch by stretch (``LiveRenderMatch``).
    @Test(.timeLimit(.minutes(8)))
    func loopLiveEqualsOfflineRender() throws {
        let passes = ProcessInfo.processInfo.environment["AQSYNC_LOOP_PASSES"].flatMap { Int($0) }.map { max(2, $0) } ?? 3
        let fx = try LoopRenderTests.make(loop: "loop = { from = \"a\", to = \"b\", count = \(passes) }")
        let session = try SessionLoader.load(fx.url)
        let offlineURL = fx.dir.file("offline.wav")
        let r = try OfflineRenderer.render(session: session, to: offlineURL)
        let offline = try WAVReader.read(offlineURL).channels
        #expect(r.frames == Int64(72000 + (passes - 1) * 48000 + fx.length - 72000))
        try liveRun("loopLiveEqualsOfflineRender") { _, isLast in
            try playAndCompare(fx: fx, session: session, offline: offline, passes: passes, isLast: isLast)
        }
    }

    private func playAndCompare(fx: LoopRenderTests.Fixture, session: Session, offline: [[Float]], passes: Int, isLast: Bool) throws -> LiveRunVerdict {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsession-test", serverName: server.name, outputChannels: 4, outputConnections: .none))
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine)
        defer { player.close() }
        #expect(player.hasLoop && player.loopPasses == passes && player.lengthFrames == Int64(offline[0].count))
        let run = try LiveRenderRun.play(player, engine: engine, device: device, server: server.name, directory: fx.dir.url, offline: offline)
        if let again = run.unjudged(renderFrames: offline[0].count, isLast: isLast) { return again }
        let report = run.report
        #expect(report.allSatisfy { $0.completed && $0.lateFrames == 0 }, "\(report)")
        try run.expectMatches(offline, "loopLiveEqualsOfflineRender")
        return .judged
    }
}
