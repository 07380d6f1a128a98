import AQTesting
import Testing

/// The judge of the live render tests (``LiveRenderMatch``) on made-up recordings: exact, one
/// whose tracks all moved later by a cycle aqsync reported lost and kept, and the same move
/// without such a report (aqsync's doing, which must fail).
@Suite("LiveRenderMatch judges a recording against the render")
struct LiveRenderMatchTests {
    static let n = 20_000, origin = 100

    /// Two channels: a ramp that never repeats within ±8192 frames, and a click every 3000.
    static let render: [[Float]] = [
        (0..<n).map { Float($0 % 9001 + 1) / 16384 },
        (0..<n).map { $0 % 3000 == 0 ? 0.5 : 0 },
    ]

    /// The render recorded from `origin`, moved `shift` frames later from render frame `at`
    /// (silence in the gap), with a witness counting every recorded frame.
    static func recording(shift: Int, at: Int) -> (live: [[Float]], witness: WitnessTimeline) {
        let live = render.map { ch -> [Float] in
            [Float](repeating: 0, count: origin) + ch[..<at] + [Float](repeating: 0, count: shift) + ch[at...] + [Float](repeating: 0, count: 500)
        }
        let witness = (0..<live[0].count).map { Float($0 + 1000) }
        return (live, WitnessTimeline(channel: witness))
    }

    @Test func exactRecordingMatches() {
        let r = Self.recording(shift: 0, at: 5000)
        let m = LiveRenderMatch(live: r.live, witness: r.witness, offline: Self.render, origin: Self.origin)
        #expect(m.mismatches == 0 && m.stretches == 1 && m.judgedFrames == Self.n, "\(m)")
    }

    @Test func moveByTheReportedKeptTimeIsAqsyncsPolicy() {
        let r = Self.recording(shift: 256, at: 8000)
        let m = LiveRenderMatch(live: r.live, witness: r.witness, offline: Self.render, origin: Self.origin, keptLostFrames: 256)
        #expect(m.mismatches == 0 && m.shiftedByKeptTime == 1 && m.shifts == [256], "\(m)")
    }

    @Test func moveNobodyReportedIsAMismatch() {
        let r = Self.recording(shift: 256, at: 8000)
        for kept in [0, 128] {
            let m = LiveRenderMatch(live: r.live, witness: r.witness, offline: Self.render, origin: Self.origin, keptLostFrames: kept)
            #expect(m.mismatches > 0 && m.shiftedByKeptTime == 0 && m.shifts == [256], "kept \(kept): \(m)")
            #expect(m.description.contains("256 frames later"), "\(m)")
        }
    }

    @Test func earlierMoveIsAMismatchWhateverWasKept() {
        // The render moved 256 frames earlier from 8000: frames 8000..<8256 never played.
        let live = Self.render.map { ch in [Float](repeating: 0, count: Self.origin) + ch[..<8000] + ch[8256...] + [Float](repeating: 0, count: 800) }
        let witness = WitnessTimeline(channel: (0..<live[0].count).map { Float($0 + 1) })
        let m = LiveRenderMatch(live: live, witness: witness, offline: Self.render, origin: Self.origin, keptLostFrames: 256)
        #expect(m.mismatches > 0 && m.shifts == [-256], "\(m)")
    }

    /// The server gave aqsync a cycle (256 frames at render frame 8000) that the recorder and
    /// the witness both missed: their counts go on, only the server's counter jumps. The
    /// recording matches neither the recorded nor the witness mapping there, but the server's.
    @Test func cycleOnlyAqsyncGotMatchesThroughTheServerCounter() {
        let at = 8000, gap = 256
        let live = Self.render.map { ch in [Float](repeating: 0, count: Self.origin) + ch[..<at] + ch[(at + gap)...] + [Float](repeating: 0, count: 800) }
        let count = live[0].count
        let own = (0..<count).map { Float($0 + 1) }
        let server = (0..<count).map { p in Float((p < Self.origin + at ? p : p + gap) + 5001) }
        let witness = WitnessTimeline(channel: own, serverChannel: server)
        let m = LiveRenderMatch(live: live, witness: witness, offline: Self.render, origin: Self.origin)
        #expect(m.mismatches == 0 && m.matchedThroughServerCounter == 1 && m.serverCounterShifts == [0], "\(m)")
        // Without the server channel the same recording is aqsync's doing.
        let blind = LiveRenderMatch(live: live, witness: WitnessTimeline(channel: own), offline: Self.render, origin: Self.origin)
        #expect(blind.mismatches > 0, "\(blind)")
    }
}
