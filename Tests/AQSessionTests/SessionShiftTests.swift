import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 26: ``SessionPlayer/shift(by:lead:)`` moves a playing session on the device's timeline
/// (what `--netjack-slave` does when the master's stamps place its part elsewhere), on a
/// hand-driven device: after each shift the output from the restart frame R is the offline
/// render from the session frame that R plays once moved, sample for sample, every track aligned.
@Suite("Shifting a playing session, hand-driven")
struct SessionShiftTests {
    typealias Run = PlainSeekTests.Run

    @Test func aShiftPlaysTheSessionAsIfItHadStartedThatMuchLaterOrEarlier() throws {
        let fx = try SeekAndFadeTests.make()
        let session = try SessionLoader.load(fx.url)
        let run = try Run(session)
        try run.render(30_000)
        // Earlier by 5000 (started at 0: session frame R + 5000 plays at R), then later by
        // 20 000 (as if started at 15 000), then so much later that the session has not begun
        // at R: it restarts from its start on its new start frame.
        var start: Int64 = 0
        for (delta, lead) in [(Int64(-5000), Int64(2000)), (20_000, 1000), (100_000, 3000)] {
            let at = run.now
            let (moved, result) = try run.player.shift(by: delta, lead: lead)
            #expect(moved == delta, "shift by \(delta): moved \(moved)")
            start += delta
            guard case .playing(let position, let restart) = result else {
                Issue.record("shift by \(delta): \(String(describing: result))")
                return
            }
            let want = max(0, restart - start)
            #expect(position == want, "shift by \(delta) at \(at): position \(position) at \(restart), want \(want)")
            #expect(restart >= at + lead, "restart \(restart) before now + lead \(at + lead)")
            if restart - start < 0 { #expect(restart == start, "not begun: restarts on its new start frame") }
            try run.render(until: restart + 15_000)
            let from = try PlainSeekTests.offline(session, fx.dir, from: position)
            PlainSeekTests.expectEqual(run.out, from: Int(restart), from, count: 15_000, "after the shift by \(delta)")
            for c in run.out.indices {
                #expect(run.out[c][Int(at)..<Int(restart)].allSatisfy { $0 == 0 }, "shift by \(delta): output \(c + 1) silent until the restart")
            }
            #expect(run.player.sessionFrame(atDeviceFrame: restart + 1000)?.frame == position + 1000)
        }
        // 0 does nothing; a paused player is refused, nothing moved.
        #expect(try run.player.shift(by: 0).result == nil)
        _ = try run.player.pause()
        #expect(throws: SessionError.self) { _ = try run.player.shift(by: 100) }
    }
}
