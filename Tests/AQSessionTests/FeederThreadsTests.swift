import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 25: several feeder threads feed a session's tracks in parallel, each track's buffers
/// in order. With small buffers (many refills a second) the offline render is the same, sample
/// for sample, with one feeder and with eight, and every impulse is on its frame.
@Suite("Feeder threads")
struct FeederThreadsTests {
    @Test func oneFeederAndEightRenderTheSame() throws {
        let dir = try TempDir()
        var toml = "[output]\nchannels = 2\n"
        var expected: [[Int]] = [[], []]
        for k in 0..<8 {
            // Track k: an impulse every 997 frames from frame k, 1.5 s; WAV and FLAC alternating.
            let impulses = Array(stride(from: k, to: 72000, by: 997))
            let name = "t\(k)." + (k % 2 == 0 ? "wav" : "flac")
            _ = try makeImpulseFile(dir, name, rate: 48000, frames: 72000, impulses: [impulses], amplitude: 0.125,
                                    encoding: ["-e", "signed-integer", "-b", "16"])
            let start = 301 * k
            toml += "[[track]]\nfile = \"\(name)\"\nname = \"t\(k)\"\nstart = \(start)\noutputs = [\(k % 2 + 1)]\n"
            expected[k % 2] += impulses.map { start + $0 }
        }
        let session = try SessionLoader.load(try dir.write("feeders.toml", toml))
        var renders: [[[Float]]] = []
        for feeders in [1, 8] {
            let out = dir.file("render-\(feeders).wav")
            let r = try OfflineRenderer.render(
                session: session, to: out, cycleFrames: 256,
                options: SessionPlayer.Options(bufferFrames: 512, buffersPerTrack: 2, feederThreads: feeders))
            #expect(r.tracks.count == 8 && r.tracks.allSatisfy { $0.completed && $0.lateFrames == 0 }, "\(r.tracks)")
            let wav = try WAVReader.read(out)
            for c in 0..<2 {
                #expect(ImpulseFinder.find(wav.channels[c], threshold: 0.06) == expected[c].sorted(), "output \(c + 1), \(feeders) feeder(s)")
            }
            renders.append(wav.channels)
        }
        #expect(renders[0] == renders[1], "one feeder and eight rendered differently")
    }

    /// The tracks' first buffers are staggered over 64 sizes, so that tracks starting together
    /// do not all change buffers on one cycle (docs/benchmarking.md, "Buffer boundaries
    /// staggered"); the render above, whose tracks use them, keeps every impulse on its frame.
    @Test func firstBuffersAreStaggered() {
        #expect(SessionPlayer.firstBufferFrames(track: 0, bufferFrames: 8192) == 8192)
        #expect(SessionPlayer.firstBufferFrames(track: 1, bufferFrames: 8192) == 8064)
        #expect(SessionPlayer.firstBufferFrames(track: 63, bufferFrames: 8192) == 128)
        #expect(SessionPlayer.firstBufferFrames(track: 64, bufferFrames: 8192) == 8192)
        #expect(SessionPlayer.firstBufferFrames(track: 5, bufferFrames: 32) == 32)
        #expect(Set((0..<64).map { SessionPlayer.firstBufferFrames(track: $0, bufferFrames: 8192) }).count == 64)
    }
}
