import AQEngine
import AQJack
import AQJackServer
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24 live: `from` and fades on a private jackd, recorded by jack-record beside a
/// ``FrameCountWitness``, equal to the offline render from the same position.
@Suite("Start position and fades live on a private JACK server", .serialized)
struct SeekOnJACKTests {
    /// The impulse session with two fades, played live from session frame 15000 (inside the
    /// first track's fade-out; two tracks ended, two not started): the recording equals the
    /// offline render from 15000 sample for sample. A run whose recording differs where the
    /// witness shows the recorder broke is repeated (``liveRun(_:attempts:_:)``).
    @Test(.timeLimit(.minutes(3)))
    func fromLiveEqualsOfflineRender() throws {
        let fx = try ImpulseSession.make()
        var session = try SessionLoader.load(fx.url)
        session.tracks[0].fadeOut = SessionFade(length: .frames(15000), curve: .equalPower)
        session.tracks[1].fadeIn = SessionFade(length: .seconds(0.1), curve: .exponential)
        let from = SessionTime.frames(15000)
        let offlineURL = fx.dir.file("offline.wav")
        let r = try OfflineRenderer.render(session: session, to: offlineURL, from: from)
        let offline = try WAVReader.read(offlineURL).channels
        #expect(r.frames == Int64(fx.length - 15000))
        // Faded impulses are there, smaller than unfaded ones.
        let firstOffline = try #require(offline[0].firstIndex { $0 != 0 })
        let faded = 0.5 * pow(10, -6.0 / 20) * sin(Double.pi / 2 * Double(19999 - 8191) / 15000)
        #expect(firstOffline == 12347 + 8191 - 15000 && abs(Double(offline[0][firstOffline]) - faded) < 1e-6)
        try liveRun("fromLiveEqualsOfflineRender") { _, isLast in
            try playAndCompare(fx: fx, session: session, from: from, offline: offline, isLast: isLast)
        }
    }

    private func playAndCompare(fx: ImpulseSession, session: Session, from: SessionTime, offline: [[Float]], isLast: Bool) throws -> LiveRunVerdict {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsession-test", serverName: server.name, outputChannels: 5, outputConnections: .none))
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine, from: from)
        defer { player.close() }
        #expect(player.position == 15000 && player.lengthFrames == Int64(offline[0].count))
        let run = try LiveRenderRun.play(player, engine: engine, device: device, server: server.name, directory: fx.dir.url, offline: offline)
        if let again = run.unjudged(renderFrames: offline[0].count, isLast: isLast) { return again }
        let (start, report) = (run.start, run.report)
        // Placement relative to the position: t1 at once, t2 at 24000 − 15000, t3 and t4 ended
        // (nothing played), t5 at 30011 − 15000.
        #expect(report.map(\.scheduledStartFrame) == [0, 9000, 0, 0, 15011].map { start + $0 })
        #expect(report.map(\.framesPlayed) == [20000 - 2653, 11993, 0, 0, Int64((20000.0 * 48000 / 44100).rounded())])
        #expect(report.allSatisfy { $0.completed && $0.lateFrames == 0 }, "\(report)")
        try run.expectMatches(offline, "fromLiveEqualsOfflineRender from 15000")
        return .judged
    }
}
