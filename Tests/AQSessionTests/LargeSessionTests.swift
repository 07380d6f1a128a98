import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 25: a session of more tracks than the engine's default 256 queue slots plays; the
/// engine is sized from the session (``SessionPlayer/engineCapacities(for:options:inputChannels:)``).
@Suite("Sessions larger than the default engine")
struct LargeSessionTests {
    /// 300 tracks of one file holding a single impulse, track k starting at frame 7k: the
    /// offline render (the same player and engine sizing `aqsync play` uses) has every impulse
    /// on its frame, each track complete and on time.
    @Test func threeHundredTracksRender() throws {
        let dir = try TempDir()
        _ = try makeImpulseFile(dir, "one.wav", rate: 48000, frames: 64, impulses: [[0]], amplitude: 0.25, encoding: ["-e", "floating-point", "-b", "32"])
        var toml = "[output]\nchannels = 1\n"
        for k in 0..<300 { toml += "[[track]]\nfile = \"one.wav\"\nname = \"t\(k)\"\nstart = \(7 * k)\n" }
        let url = try dir.write("large.toml", toml)
        let session = try SessionLoader.load(url)
        #expect(SessionPlayer.engineCapacities(for: session).queues == 300 + SessionPlayer.spareQueues)
        let out = dir.file("render.wav")
        let r = try OfflineRenderer.render(session: session, to: out, cycleFrames: 256)
        #expect(r.tracks.count == 300 && r.tracks.allSatisfy { $0.completed && $0.lateFrames == 0 })
        let wav = try WAVReader.read(out)
        #expect(ImpulseFinder.find(wav.channels[0], threshold: 0.1) == (0..<300).map { 7 * $0 })
    }

    /// A small session keeps the engine's defaults.
    @Test func smallSessionsKeepTheDefaults() throws {
        let dir = try TempDir()
        _ = try makeImpulseFile(dir, "one.wav", rate: 48000, frames: 64, impulses: [[0]], encoding: ["-e", "floating-point", "-b", "32"])
        let session = try SessionLoader.load(try dir.write("s.toml", "[[track]]\nfile = \"one.wav\"\n"))
        let c = SessionPlayer.engineCapacities(for: session)
        #expect(c.queues == 256 && c.commands == 8192 && c.buffersPerQueue == 64)
    }
}
