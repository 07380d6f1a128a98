import AQEngine
import AQJack
import AQSession
import AQTesting
import Foundation
import Testing

/// One live run of a session compared with its offline render (the loop and start-position
/// live tests): the player started 0.3 s ahead, its outputs recorded beside a
/// ``FrameCountWitness`` until it has finished, and the recording lined up with the render.
struct LiveRenderRun {
    /// The device frame the player started at.
    let start: Int64
    /// The recorded outputs (the witness's channel left out), and the witness.
    let live: [[Float]]
    let witness: WitnessTimeline
    /// The recorded frame of the render's first non-silent frame's position, minus it: where
    /// the render's frame 0 is in the recording (negative: nothing recorded).
    let origin: Int
    /// True when every channel equals the render sample for sample from `origin`.
    let equal: Bool
    let report: [SessionPlayer.TrackReport]
    /// What the device reported of the server: frames lost and kept (lost minus skipped), and
    /// its counters, for the report.
    let keptLostFrames: Int
    let deviceFigures: String

    /// Plays `player` on `engine` (whose device's outputs are recorded) and records it. Blocks
    /// until the player has finished and a tenth of a second more (the last cycles reach the
    /// recorder after the player ends); not for a fixed time: on a loaded machine the start
    /// can come late enough for a fixed window to miss what was played.
    static func play(_ player: SessionPlayer, engine: AudioQueueEngine, device: JackDevice, server: String, directory: URL, offline: [[Float]]) throws -> LiveRenderRun {
        let (rec, witness) = try FrameCountWitness.recording(device.outputPortNames, server: server, directory: directory, serverCounter: true)
        defer { rec.removeFiles(); witness.stop() }
        let start = try player.start(at: AudioTimeStamp(sampleTime: engine.deviceCurrentTime().sampleTime + 14_400))
        #expect(player.waitUntilFinished(timeout: 15 + Double(offline[0].count) / engine.device.sampleRate))
        let end = engine.deviceCurrentTime().sampleTime + 4_800
        while engine.deviceCurrentTime().sampleTime < end { usleep(5_000) }
        rec.stop()
        let recorded = try rec.read().channels
        let outputs = device.outputPortNames.count
        let live = Array(recorded.prefix(outputs))
        let n = offline[0].count
        let origin = (live[0].firstIndex { $0 != 0 } ?? -1) - (offline[0].firstIndex { $0 != 0 } ?? 0)
        let equal = origin >= 0 && origin + n <= live[0].count
            && live.indices.allSatisfy { c in (0..<n).allSatisfy { live[c][origin + $0] == offline[c][$0] } }
        return LiveRenderRun(
            start: start, live: live, witness: WitnessTimeline(
                channel: recorded.count > outputs ? recorded[outputs] : [], serverChannel: recorded.count > outputs + 1 ? recorded[outputs + 1] : nil),
            origin: origin, equal: equal, report: player.report(),
            keptLostFrames: Int(device.lostFrames - device.skippedFrames),
            deviceFigures: "device: \(device.lostFrames) frames lost, \(device.skippedFrames) skipped, \(device.lateCycleCount) late cycles, \(device.repeatedCycleCount) repeated calls, policy \(device.lostTimePolicy)")
    }

    /// The verdict before the last run when the recording differs from the render: repeat only
    /// where the witness broke or slipped within the render's span (or nothing was recorded).
    func unjudged(renderFrames n: Int, isLast: Bool) -> LiveRunVerdict? {
        guard !isLast && !equal else { return nil }
        let span = max(0, origin)...(max(0, origin) + n)
        let breaks = witness.breaks.filter { span.contains($0) }, slips = witness.slips.filter { span.contains($0) }
        guard !breaks.isEmpty || !slips.isEmpty || origin < 0 else { return nil }
        return .witnessCouldNotTell(
            reason: "the recording differs from the render; the recorder broke \(breaks.count) time(s), the witness slipped \(slips.count) time(s) (origin \(origin))",
            aqsyncFigures: ["late frames": report.reduce(0) { $0 + Int($1.lateFrames) }])
    }

    /// Judged relative to the witness: stretch by stretch between its breaks and slips
    /// (``LiveRenderMatch``). Records the expectation; `name` labels what is printed.
    func expectMatches(_ offline: [[Float]], _ name: String) throws {
        let n = offline[0].count
        try #require(origin >= 0 && origin + n <= live[0].count, "the recording covers the render (origin \(origin))")
        let match = LiveRenderMatch(live: live, witness: witness, offline: offline, origin: origin, keptLostFrames: keptLostFrames)
        #expect(match.mismatches == 0 && match.judgedFrames * 2 >= n, "\(name): \(match); \(deviceFigures)")
        if !equal { print("\(name): \(match); \(deviceFigures)") }
    }
}
