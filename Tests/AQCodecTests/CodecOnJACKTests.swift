import AQEngine
import AQJack
import AQJackServer
import AQSession
import AQTesting
import Foundation
import Testing

/// Compressed tracks through a real JACK server, recorded by jack-record.
@Suite("Compressed playback on a private JACK server", .serialized)
struct CodecOnJACKTests {
    /// An impulse encoded in an MP3 at frame k plays exactly k frames after the track's start:
    /// a session of the MP3 and a float WAV with an impulse at its frame 0, both starting at
    /// session frame 0 on a 44.1 kHz server, recorded by jack-record: the two impulses are
    /// exactly k frames apart.
    @Test(.timeLimit(.minutes(2)))
    func mp3ImpulseOnItsFrameThroughJACK() throws {
        let fx = try CodecFixtures()
        let k = 20_011
        let frames = 44100
        var samples = [Float](repeating: 0, count: frames)
        samples[k] = 0.9
        let raw = fx.path("impulse.f32")
        try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
        try fx.ffmpeg(["-f", "f32le", "-ar", "44100", "-ac", "1", "-i", raw, "-c:a", "libmp3lame", "-b:a", "320k", fx.path("impulse.mp3")])
        var reference = [Float](repeating: 0, count: 1000)
        reference[0] = 0.5
        let refRaw = fx.path("ref.f32")
        try reference.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: refRaw)) }
        try fx.ffmpeg(["-f", "f32le", "-ar", "44100", "-ac", "1", "-i", refRaw, "-c:a", "pcm_f32le", fx.path("ref.wav")])
        let sessionURL = fx.dir.appendingPathComponent("s.toml")
        try """
            [session]
            sample_rate = 44100
            [[track]]
            file = "ref.wav"
            outputs = [1]
            [[track]]
            file = "impulse.mp3"
            outputs = [2]
            """.write(to: sessionURL, atomically: true, encoding: .utf8)
        let session = try SessionLoader.load(sessionURL)

        let server = try PrivateJackServer(sampleRate: 44100, period: 256)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqcodec-test", serverName: server.name, outputChannels: 2, outputConnections: .none))
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine)
        defer { player.close() }
        let rec = try JackRecorder(server: server.name, ports: device.outputPortNames, seconds: 2)
        defer { rec.removeFiles() }
        _ = try player.start(at: AudioTimeStamp(sampleTime: engine.deviceCurrentTime().sampleTime + 8820))
        #expect(player.waitUntilFinished(timeout: 10))
        try rec.wait()
        let live = try rec.read().channels
        let ref = try #require(ImpulseFinder.find(live[0], threshold: 0.25).first, "reference impulse not recorded")
        let peak = live[1].indices.max { abs(live[1][$0]) < abs(live[1][$1]) }!
        #expect(peak - ref == k, "MP3 impulse \(peak - ref) frames after the track start, encoded at \(k)")
        #expect(player.report().allSatisfy { $0.lateFrames == 0 })
    }
}
