import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 25 ("time to the first frame"): a player given its tracks' feeds made ahead
/// (``SessionPlayer/prepare(_:deviceRate:from:bufferFrames:)``, as `aqsync play` makes them
/// while its JACK client opens) plays exactly what it plays with its own, from the start and
/// from a position; feeds made for another rate are ignored (the player makes its own). On a
/// hand-driven device: the test renders cycle by cycle (no sleeps).
@Suite("Player with feeds prepared ahead, hand-driven")
struct PreparedFeedsTests {
    /// The first `frames` frames (every output) of a player made with `prepared`, started on
    /// device frame 0 of a 48 kHz hand-driven device, from session frame `from`.
    static func play(_ session: Session, from: Int64, prepared: SessionPlayer.Preparation?, frames: Int) throws -> [[Float]] {
        let device = ManualDevice(sampleRate: 48000, channels: session.output.channels, framesPerCycle: 1000, uid: "prepared-feeds")
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine, from: .frames(from), prepared: prepared)
        defer { player.close() }
        try player.start(at: AudioTimeStamp(sampleTime: 0))
        var out = [[Float]](repeating: [], count: session.output.channels)
        while device.currentFrame < Int64(frames) {
            try player.waitUntilEnqueued(through: device.currentFrame + 1000)
            let o = device.render(frames: 1000, cycle: 1000)
            for c in out.indices { out[c] += o[c] }
        }
        return out
    }

    @Test func preparedFeedsPlayAsTheirOwn() throws {
        // PCM, FLAC, MP3 and a 44.1 kHz track (rate converted), with fades.
        let fx = try SeekAndFadeTests.make()
        let session = try SessionLoader.load(fx.url)
        let bufferFrames = SessionPlayer.Options().bufferFrames
        for from in [Int64(0), 61_111] {
            let own = try Self.play(session, from: from, prepared: nil, frames: 60_000)
            #expect(own.contains { $0.contains { $0 != 0 } }, "from \(from): something plays")
            let ahead = SessionPlayer.prepare(session, deviceRate: 48000, from: .frames(from), bufferFrames: bufferFrames)
            #expect(ahead != nil)
            #expect(try Self.play(session, from: from, prepared: ahead, frames: 60_000) == own, "from \(from): prepared at the device's rate")
            let elsewhere = SessionPlayer.prepare(session, deviceRate: 44100, from: .frames(from), bufferFrames: bufferFrames)
            #expect(try Self.play(session, from: from, prepared: elsewhere, frames: 60_000) == own, "from \(from): prepared for 44.1 kHz, ignored")
        }
    }

    /// A loop until released, with feeds prepared ahead: the release reaches the feeds (they
    /// follow the timeline they were made on, which the player takes), so the loop ends and
    /// the player reaches the session's end. (CI met `aqsync play` looping on after the `l` key
    /// when the player kept a timeline of its own.)
    @Test func aReleasedLoopEndsWithPreparedFeeds() throws {
        let fx = try LoopRenderTests.make(loop: "loop = { from = \"a\", to = \"b\" }")
        let session = try SessionLoader.load(fx.url)
        let ahead = SessionPlayer.prepare(session, deviceRate: 48000, from: .frames(0), bufferFrames: SessionPlayer.Options().bufferFrames)
        let device = ManualDevice(sampleRate: 48000, channels: 4, framesPerCycle: 1000, uid: "prepared-loop")
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine, prepared: ahead)
        defer { player.close() }
        try player.start(at: AudioTimeStamp(sampleTime: 0))
        var passes: Int?
        while device.currentFrame < player.lengthFrames {
            // Released in the middle of the 4th pass (the loop is 24 000…72 000: the first pass
            // ends at player frame 72 000, the k-th at 72 000 + (k − 1) × 48 000).
            if passes == nil && device.currentFrame >= 72_000 + 2 * 48_000 + 24_000 { passes = player.releaseLoop() }
            let n = Int(min(1000, player.lengthFrames - device.currentFrame))
            if n <= 0 { break }  // the release decided an end already passed
            try player.waitUntilEnqueued(through: device.currentFrame + Int64(n))
            _ = device.render(frames: n, cycle: n)
            if device.currentFrame >= 60 * 48_000 {
                Issue.record("the released loop did not end: \(player.positionText(atDeviceFrame: device.currentFrame))")
                return
            }
        }
        // The feeders run at most 4 buffers of 8192 frames ahead: the pass playing or the next.
        #expect(passes == 4 || passes == 5, "\(String(describing: passes)) passes")
        #expect(player.waitUntilFinished(timeout: 5))
    }

    /// Nothing is prepared for a position at or past the session's end (the player refuses it
    /// itself, with its own message).
    @Test func nothingPreparedPastTheEnd() throws {
        let fx = try SeekAndFadeTests.make()
        let session = try SessionLoader.load(fx.url)
        let end = session.deviceLength(deviceRate: 48000)
        #expect(SessionPlayer.prepare(session, deviceRate: 48000, from: .frames(end), bufferFrames: 8192) == nil)
    }
}
