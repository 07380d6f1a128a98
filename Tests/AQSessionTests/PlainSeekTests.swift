import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24 (items 3 and 7): seeking, pausing and resuming a playing ``SessionPlayer`` without
/// JACK transport, on a hand-driven device: the test renders cycle by cycle and seeks between
/// cycles, so time is the test's (no sleeps). After a seek to session frame P that restarts on
/// device frame R, the output from R on equals the offline render of the session from P,
/// sample for sample, on every output (PCM, FLAC and MP3 tracks exact; a 44.1 kHz track,
/// whose rate converter restarts, within 1e-5), every track aligned with the others.
@Suite("Plain seek, hand-driven")
struct PlainSeekTests {
    /// A player on a ``ManualDevice`` at 48 kHz, the output of every cycle kept.
    final class Run {
        let device: ManualDevice
        let engine: AudioQueueEngine
        let player: SessionPlayer
        /// Every output channel, from device frame 0.
        var out: [[Float]]
        let cycle: Int

        init(_ session: Session, cycle: Int = 1000) throws {
            self.cycle = cycle
            device = ManualDevice(sampleRate: 48000, channels: session.output.channels, framesPerCycle: cycle, uid: "plain-seek")
            engine = try AudioQueueEngine(device: device)
            player = try SessionPlayer(session: session, engine: engine)
            out = Array(repeating: [], count: session.output.channels)
            try player.start(at: AudioTimeStamp(sampleTime: 0))
        }

        deinit {
            player.close()
            engine.close()
        }

        var now: Int64 { device.currentFrame }

        /// Renders `frames` frames in cycles, each after every track fed past its end.
        func render(_ frames: Int) throws {
            var left = frames
            while left > 0 {
                let n = min(cycle, left)
                try player.waitUntilEnqueued(through: now + Int64(n))
                let o = device.render(frames: n, cycle: n)
                for c in out.indices { out[c] += o[c] }
                left -= n
            }
        }

        /// Renders until device frame `frame`.
        func render(until frame: Int64) throws { try render(Int(frame - now)) }
    }

    /// `got` from index `at` equals `want` (the whole of it) on every output; output 5 (the
    /// 44.1 kHz track) within 1e-5.
    static func expectEqual(_ got: [[Float]], from at: Int, _ want: [[Float]], count: Int, _ what: String) {
        for c in want.indices {
            let g = Array(got[c][at..<(at + count)])
            let w = Array(want[c][0..<count])
            if c == 4 {
                let d = zip(w, g).map { abs($0 - $1) }.max() ?? 0
                #expect(d <= 1e-5, "\(what) output 5: max difference \(d)")
            } else {
                let first = zip(w, g).enumerated().first { $0.element.0 != $0.element.1 }
                #expect(first == nil, "\(what) output \(c + 1): first difference at \(first.map { "\($0.offset): \($0.element.1) vs \($0.element.0)" } ?? "")")
            }
        }
    }

    static func offline(_ session: Session, _ dir: TempDir, from: Int64) throws -> [[Float]] {
        try SeekAndFadeTests.render(session, dir, from: .frames(from)).0.channels
    }

    /// Seeks forward, backward, into a track's middle and to a frame where some tracks have
    /// ended: from each restart frame on the output is the offline render from the position,
    /// sample for sample; before the seek it is the render from the start; between the seek
    /// and the restart, silence. The player ends where the session does, every track complete.
    @Test func seekPlaysTheOfflineRenderFromThePosition() throws {
        let fx = try SeekAndFadeTests.make()
        let session = try SessionLoader.load(fx.url)
        let full = try Self.offline(session, fx.dir, from: 0)
        let length = 167_000
        let run = try Run(session)
        try run.render(30_000)
        Self.expectEqual(run.out, from: 0, full, count: 30_000, "before any seek")
        // Forward into every track (an odd frame, on no packet or buffer edge), back, then on
        // past the MP3's and the 44.1 kHz track's ends.
        var last = (position: Int64(0), restart: Int64(0))
        for (p, lead) in [(Int64(61_111), Int64(2000)), (12_345, 777), (130_001, 0), (95_999, 4800)] {
            let seekAt = run.now
            let r = try run.player.seek(to: p, lead: lead)
            guard case .playing(let position, let restart) = r else {
                Issue.record("seek to \(p): \(r)")
                return
            }
            #expect(position == p && restart >= seekAt + lead && restart < seekAt + lead + 1000, "seek to \(p): \(r) at \(seekAt)")
            #expect(run.player.position == p)
            // What played before: the previous position's render, up to the seek.
            if last.restart > 0 {
                let before = try Self.offline(session, fx.dir, from: last.position)
                Self.expectEqual(run.out, from: Int(last.restart), before, count: Int(seekAt - last.restart), "before the seek to \(p)")
            }
            try run.render(until: restart + 20_000)
            for c in run.out.indices {
                #expect(run.out[c][Int(seekAt)..<Int(restart)].allSatisfy { $0 == 0 }, "seek to \(p): output \(c + 1) silent until the restart")
            }
            // The mapping follows: the display's session frame at the restart frame is p.
            #expect(run.player.sessionFrame(atDeviceFrame: restart)?.frame == p)
            #expect(run.player.sessionFrame(atDeviceFrame: restart + 1234)?.frame == p + 1234)
            last = (p, restart)
        }
        try run.render(until: last.restart + Int64(length) - last.position + 2000)
        let tail = try Self.offline(session, fx.dir, from: last.position)
        Self.expectEqual(run.out, from: Int(last.restart), tail, count: length - Int(last.position), "the last seek, to the end")
        for c in run.out.indices {
            #expect(run.out[c][(Int(last.restart) + length - Int(last.position))...].allSatisfy { $0 == 0 }, "silent after the end, output \(c + 1)")
        }
        #expect(run.player.waitUntilFinished(timeout: 5))
        let reports = run.player.report()
        #expect(reports.allSatisfy { $0.completed && $0.error == nil && $0.lateFrames == 0 && $0.damagedPackets == 0 }, "\(reports)")
        #expect(run.player.sessionFrame(atDeviceFrame: run.now) == nil)
    }

    /// Pause stops every track at once where it is; nothing plays while paused; a seek while
    /// paused stays paused at the new position; resume plays on from the paused position.
    @Test func pauseAndResume() throws {
        let fx = try SeekAndFadeTests.make()
        let session = try SessionLoader.load(fx.url)
        let full = try Self.offline(session, fx.dir, from: 0)
        let run = try Run(session, cycle: 512)
        try run.render(40_000)
        let at = try #require(try run.player.pause())
        let pausedAt = run.now
        #expect(at == pausedAt, "paused at session frame \(at), device frame \(pausedAt)")
        #expect(run.player.isPaused)
        #expect(try run.player.pause() == nil)
        #expect(run.player.positionText(atDeviceFrame: run.now + 9999).hasSuffix("paused"))
        try run.render(10_000)
        #expect(!run.player.isFinished)
        #expect(run.player.sessionFrame(atDeviceFrame: run.now)?.frame == at)
        Self.expectEqual(run.out, from: 0, full, count: Int(pausedAt), "before the pause")
        for c in run.out.indices { #expect(run.out[c][Int(pausedAt)...].allSatisfy { $0 == 0 }, "silent while paused, output \(c + 1)") }
        let heard = run.player.report().map(\.framesPlayed)
        let r = try #require(try run.player.resume(lead: 300))
        guard case .playing(let position, let restart) = r else {
            Issue.record("resume: \(r)")
            return
        }
        #expect(position == at && !run.player.isPaused)
        try run.render(until: restart + 30_000)
        let from = try Self.offline(session, fx.dir, from: at)
        Self.expectEqual(run.out, from: Int(restart), from, count: 30_000, "after the resume")
        #expect(run.player.report().map(\.framesPlayed).elementsEqual(heard) { $0 >= $1 })
        // Paused again, then moved while paused: it stays paused; resume plays from there.
        _ = try run.player.pause()
        let moved = try run.player.seek(to: 100_000)
        #expect(moved == .paused(position: 100_000))
        try run.render(5000)
        let s2 = run.now
        guard case .playing(_, let restart2)? = try run.player.resume(lead: 0) else {
            Issue.record("second resume")
            return
        }
        try run.render(until: restart2 + 40_000)
        for c in run.out.indices { #expect(run.out[c][Int(s2)..<Int(restart2)].allSatisfy { $0 == 0 }) }
        Self.expectEqual(run.out, from: Int(restart2), try Self.offline(session, fx.dir, from: 100_000), count: 40_000, "after the move while paused")
        #expect(try run.player.resume() == nil)
    }

    /// Before 0 is 0; at or past the end ends playback as reaching the end does (every track
    /// reported complete).
    @Test func seekClamps() throws {
        let fx = try SeekAndFadeTests.make()
        let session = try SessionLoader.load(fx.url)
        let full = try Self.offline(session, fx.dir, from: 0)
        let run = try Run(session)
        try run.render(20_000)
        guard case .playing(0, let restart)? = try? run.player.seek(to: -48_000, lead: 100) else {
            Issue.record("a seek before 0 plays from 0")
            return
        }
        try run.render(until: restart + 50_000)
        Self.expectEqual(run.out, from: Int(restart), full, count: 50_000, "from 0 after a seek to -1 s")
        #expect(try run.player.seek(to: 167_000) == .ended)
        #expect(run.player.isFinished)
        #expect(run.player.report().allSatisfy { $0.completed && $0.error == nil })
        let stopped = run.now
        try run.render(5000)
        for c in run.out.indices { #expect(run.out[c][Int(stopped)...].allSatisfy { $0 == 0 }) }
        // Once stopped, a seek is refused.
        run.player.stop()
        #expect(throws: SessionError.self) { try run.player.seek(to: 0) }
    }

    /// A session with `[[record]]` takes refuses seek, pause and resume with a line saying why,
    /// and plays on untouched.
    @Test func takesRefuseSeeking() throws {
        let dir = try TempDir()
        _ = try makeImpulseFile(dir, "a.wav", rate: 48000, frames: 48000, impulses: [[5, 30_000]], encoding: ["-e", "signed-integer", "-b", "16"])
        let url = try dir.write("s.toml", "[session]\nsample_rate = 48000\n[[track]]\nfile = \"a.wav\"\n[[record]]\nfile = \"t.wav\"\n")
        let session = try SessionLoader.load(url)
        let run = try Run(session)
        try run.render(10_000)
        for (what, call) in [("seeking", { () throws(SessionError) in _ = try run.player.seek(to: 0) }),
                             ("pausing", { () throws(SessionError) in _ = try run.player.pause() }),
                             ("resuming", { () throws(SessionError) in _ = try run.player.resume() })] {
            do {
                try call()
                Issue.record("\(what) was not refused")
            } catch {
                #expect(error.kind == .invalidValue && error.message.contains("\(what) is not possible in a session with [[record]] takes"), "\(error)")
            }
        }
        try run.render(40_000)
        #expect(run.out[0][30_000] == 0.5 && run.out[0][5] == 0.5)
        #expect(run.player.waitUntilFinished(timeout: 5))
    }

    /// A loop keeps applying after a seek: a seek before or into the loop plays it with all its
    /// passes, as `--from` there does (the offline render from that position).
    @Test func seekWithALoopPlaysAsFromThere() throws {
        let fx = try LoopRenderTests.make(loop: "loop = { from = \"a\", to = 72000, count = 3 }")
        let session = try SessionLoader.load(fx.url)
        let run = try Run(session)
        try run.render(80_000)
        for p: Int64 in [50_001, 10_000] {
            let rendered = try Self.offline(session, fx.dir, from: p)
            guard case .playing(_, let restart) = try run.player.seek(to: p, lead: 64) else {
                Issue.record("seek to \(p)")
                return
            }
            try run.render(until: restart + Int64(rendered[0].count))
            Self.expectEqual(run.out, from: Int(restart), rendered, count: rendered[0].count, "loop, seek to \(p)")
        }
        #expect(run.player.waitUntilFinished(timeout: 5))
    }
}
