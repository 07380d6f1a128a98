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
        // Recorded until the player has finished (not for a fixed time: on a loaded machine the
        // start can come late enough for a fixed window to miss what was played).
        let (rec, witness) = try FrameCountWitness.recording(device.outputPortNames, server: server.name, directory: fx.dir.url)
        defer { rec.removeFiles(); witness.stop() }
        let start = try player.start(at: AudioTimeStamp(sampleTime: engine.deviceCurrentTime().sampleTime + 14_400))
        #expect(player.waitUntilFinished(timeout: 10))
        // A tenth of a second more: the last cycles reach the recorder after the player ends.
        let end = engine.deviceCurrentTime().sampleTime + 4_800
        while engine.deviceCurrentTime().sampleTime < end { usleep(5_000) }
        rec.stop()
        let recorded = try rec.read().channels
        let live = Array(recorded.prefix(5))
        let report = player.report()
        let n = offline[0].count
        let origin = (live[0].firstIndex { $0 != 0 } ?? -1) - (offline[0].firstIndex { $0 != 0 } ?? 0)
        let equal = origin >= 0 && origin + n <= live[0].count
            && (0..<5).allSatisfy { c in (0..<n).allSatisfy { live[c][origin + $0] == offline[c][$0] } }
        if !isLast && !equal {
            let witnessed = WitnessTimeline(channel: recorded[5])
            let span = max(0, origin)...(max(0, origin) + n)
            let breaks = witnessed.breaks.filter { span.contains($0) }, slips = witnessed.slips.filter { span.contains($0) }
            if !breaks.isEmpty || !slips.isEmpty || origin < 0 {
                return .witnessCouldNotTell(
                    reason: "the recording differs from the render; the recorder broke \(breaks.count) time(s), the witness slipped \(slips.count) time(s) (origin \(origin))",
                    aqsyncFigures: ["late frames": report.reduce(0) { $0 + Int($1.lateFrames) }])
            }
        }
        // Placement relative to the position: t1 at once, t2 at 24000 − 15000, t3 and t4 ended
        // (nothing played), t5 at 30011 − 15000.
        #expect(report.map(\.scheduledStartFrame) == [0, 9000, 0, 0, 15011].map { start + $0 })
        #expect(report.map(\.framesPlayed) == [20000 - 2653, 11993, 0, 0, Int64((20000.0 * 48000 / 44100).rounded())])
        #expect(report.allSatisfy { $0.completed && $0.lateFrames == 0 }, "\(report)")
        try #require(origin >= 0 && origin + n <= live[0].count, "the recording covers the render (origin \(origin))")
        // Judged relative to the witness: stretch by stretch between its breaks and slips.
        let match = LiveRenderMatch(live: live, witness: WitnessTimeline(channel: recorded[5]), offline: offline, origin: origin)
        #expect(match.mismatches == 0 && match.judgedFrames * 2 >= n, "from 15000: \(match)")
        if !equal { print("fromLiveEqualsOfflineRender: \(match)") }
        return .judged
    }
}
