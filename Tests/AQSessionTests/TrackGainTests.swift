import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// Track gains above unity (`gain_db` up to +24 dB) and ``SessionPlayer/setGain(track:decibels:)``
/// (`/aqsync/gain` in plain play), on the offline renderer and the hand-driven device.
@Suite("Track gain")
struct TrackGainTests {
    /// `gain_db = +6` plays (it was refused: "volume 1.9952623 is outside 0…1"), and its output
    /// is the 0 dB render times 10^(6/20); the other outputs are unchanged.
    @Test func gainAboveUnityRenders() throws {
        let fx = try SeekAndFadeTests.make()
        let s0 = try SessionLoader.load(fx.url)
        var s6 = s0
        s6.tracks[0].gainDB = 6
        let plain = try SeekAndFadeTests.render(s0, fx.dir).0.channels
        let loud = try SeekAndFadeTests.render(s6, fx.dir).0.channels
        let g = Float(pow(10, 6.0 / 20))
        for c in 0..<2 {
            let d = zip(plain[c], loud[c]).map { abs($0 * g - $1) }.max() ?? 1
            #expect(d <= 1e-6, "output \(c + 1): max difference \(d)")
            #expect(loud[c].contains { abs($0) > 0.5 }, "output \(c + 1) is louder than unity allowed")
        }
        for c in 2..<5 {
            let first = plain[c].indices.first { plain[c][$0] != loud[c][$0] }
            #expect(first == nil && plain[c].count == loud[c].count, "output \(c + 1) changed at \(first ?? -1)")
        }
    }

    /// While playing: after the engine's volume ramp the track is the render times the new
    /// gain, other tracks untouched; a seek afterwards keeps the gain from the restart's first
    /// frame; bad tracks and gains are refused and change nothing.
    @Test func setGainWhilePlayingAndThroughASeek() throws {
        let fx = try SeekAndFadeTests.make()
        let session = try SessionLoader.load(fx.url)
        let full = try PlainSeekTests.offline(session, fx.dir, from: 0)
        let run = try PlainSeekTests.Run(session, cycle: 500)
        try run.render(20_000)
        let half = 20 * log10(0.5)
        #expect(run.player.setGain(track: 0, decibels: half))
        #expect(abs((run.player.gainDB(track: 0) ?? 0) - half) < 1e-6)
        #expect(!run.player.setGain(track: 4, decibels: 0))
        #expect(!run.player.setGain(track: -1, decibels: 0))
        #expect(!run.player.setGain(track: 1, decibels: 24.5))
        #expect(!run.player.setGain(track: 1, decibels: .nan))
        #expect(run.player.gainDB(track: 1) == 0)
        let changedAt = Int(run.now)
        try run.render(20_000)
        let ramp = Int((run.engine.volumeRampSeconds * 48000).rounded())
        let settled = changedAt + ramp
        for c in 0..<2 {
            let want = full[c][settled..<40_000].map { $0 * 0.5 }
            let d = zip(want, run.out[c][settled..<40_000]).map { abs($0 - $1) }.max() ?? 1
            #expect(d <= 1e-6, "output \(c + 1) after the ramp: max difference \(d)")
            #expect(Array(run.out[c][0..<changedAt]) == Array(full[c][0..<changedAt]), "output \(c + 1) before the change")
        }
        for c in 2..<5 {
            let d = zip(full[c][changedAt..<40_000], run.out[c][changedAt..<40_000]).map { abs($0 - $1) }.max() ?? 1
            #expect(d <= (c == 4 ? 1e-5 : 0), "output \(c + 1) (another track): max difference \(d)")
        }
        guard case .playing(let position, let restart) = try run.player.seek(to: 70_001, lead: 1000) else {
            Issue.record("seek")
            return
        }
        try run.render(until: restart + 10_000)
        let from = try PlainSeekTests.offline(session, fx.dir, from: position)
        for c in 0..<2 {
            let want = from[c][0..<10_000].map { $0 * 0.5 }
            let d = zip(want, run.out[c][Int(restart)..<Int(restart) + 10_000]).map { abs($0 - $1) }.max() ?? 1
            #expect(d <= 1e-6, "output \(c + 1) after the seek: max difference \(d)")
        }
    }
}
