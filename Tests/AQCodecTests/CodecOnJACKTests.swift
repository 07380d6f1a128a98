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
        let offset = try impulseOffsetThroughJACK(fx, at: k, name: "impulse.mp3", codec: ["-c:a", "libmp3lame", "-b:a", "320k"])
        #expect(offset == k, "MP3 impulse \(offset) frames after the track start, encoded at \(k)")
    }

    /// Apple IMA4 in AIFC (issue 23) the same way, with a 256-frame Hann-windowed 1 kHz burst
    /// at k (ADPCM cannot follow a lone impulse out of silence: it decodes to 1e-3 of it): the
    /// burst's largest sample is where ffmpeg's decode of the file has it, and plays exactly
    /// that many frames after the track's start.
    @Test(.timeLimit(.minutes(2)))
    func ima4ImpulseOnItsFrameThroughJACK() throws {
        let fx = try CodecFixtures()
        let offset = try impulseOffsetThroughJACK(fx, at: 20_011, name: "impulse.aiff", codec: ["-c:a", "adpcm_ima_qt"], burst: true)
        let decoded = try fx.ffmpegDecode(fx.path("impulse.aiff"), channels: 1)[0]
        let expected = decoded.indices.max { abs(decoded[$0]) < abs(decoded[$1]) }!
        #expect(offset == expected, "IMA4 impulse \(offset) frames after the track start, ffmpeg's decode has it at \(expected)")
    }

    /// Encodes a second of silence with an impulse (or a `burst`) at frame `k` as `name`, plays it beside a
    /// float WAV with an impulse at its frame 0 (both from session frame 0, on a 44.1 kHz
    /// private server, recorded by jack-record), and returns how many frames after the WAV's
    /// impulse the file's largest sample played.
    func impulseOffsetThroughJACK(_ fx: CodecFixtures, at k: Int, name: String, codec: [String], burst: Bool = false) throws -> Int {
        let frames = 44100
        var samples = [Float](repeating: 0, count: frames)
        samples[k] = 0.9
        for i in 0..<(burst ? 256 : 0) {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / 256)
            samples[k + i] = Float(0.9 * w * sin(2 * Double.pi * 1000 * Double(i) / 44100))
        }
        let raw = fx.path("impulse.f32")
        try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
        try fx.ffmpeg(["-f", "f32le", "-ar", "44100", "-ac", "1", "-i", raw] + codec + [fx.path(name)])
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
            file = "\(name)"
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
        #expect(player.report().allSatisfy { $0.lateFrames == 0 })
        return peak - ref
    }
}
