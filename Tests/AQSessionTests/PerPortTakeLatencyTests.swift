import AQCore
import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// Takes placed by the latency of their own ports (issue 21), on a hand-driven device that
/// reports a capture latency per input and a playback latency per output. Every input receives
/// the same clicks at the same device frames (a source playing them on two ports, one declaring
/// capture latency 0 and one 300): a compensated take from the 300 port lands exactly 300
/// frames before one from the 0 port, raw takes land on the same frames.
@Suite("Latency per port: takes", .serialized)
struct PerPortTakeLatencyTests {
    static let sessionStart: Int64 = 4096
    static let takeStart: Int64 = 1000
    static let length: Int64 = 5000
    /// Device frames the clicks reach the inputs at: session frame takeStart + 500 + 1000 j.
    static let arrivals: [Int64] = (0..<5).map { sessionStart + takeStart + 500 + 1000 * $0 }
    /// Where a take placed by `shift` frames (capture + playback it subtracts) has them.
    static func expected(shift: Int) -> [Int] {
        arrivals.map { Int($0 - sessionStart - takeStart) - shift }.filter { $0 >= 0 && $0 < Int(length) }
    }

    /// A device with per-port latencies, an engine, and takes recorded together.
    final class Rig {
        let device: ManualDevice
        let engine: AudioQueueEngine
        let cycle = 1024
        let inputs: Int

        init(capture: [Int], playback: [Int]) throws {
            inputs = capture.count
            device = ManualDevice(sampleRate: 48000, channels: playback.count, inputChannels: capture.count, framesPerCycle: 1024)
            for (c, l) in capture.enumerated() { device.setCaptureLatency(l, ofInput: c) }
            for (c, l) in playback.enumerated() { device.setPlaybackLatency(l, ofOutput: c) }
            engine = try AudioQueueEngine(device: device, capacities: RenderCapacities(queues: 8, outputChannels: playback.count, inputChannels: capture.count, captureFrames: 1 << 16))
        }
        deinit { engine.close() }

        /// Buffers enough for the whole take and its early start: nothing is ever waited for,
        /// nothing lost however slow the writer threads are.
        static let options = TakeRecorder.Options(bufferFrames: 2048, buffers: 8)

        /// Renders cycles with the clicks on every input, delivering after each, until every
        /// take is finished (the takes finish when a buffer past their end comes back).
        func record(_ recorders: [TakeRecorder]) {
            let marks = Set(PerPortTakeLatencyTests.arrivals)
            let limit = PerPortTakeLatencyTests.sessionStart + 100_000
            while recorders.contains(where: { !$0.isFinished }) && device.currentFrame < limit {
                let f = device.currentFrame
                let plane = (0..<cycle).map { marks.contains(f + Int64($0)) ? Float(0.5) : 0 }
                _ = device.render(frames: cycle, cycle: cycle, inputs: Array(repeating: plane, count: inputs))
                engine.deliverPendingEvents()
            }
            // The writer threads may give the last buffers back after the last delivery.
            let deadline = Date().addingTimeInterval(10)
            while recorders.contains(where: { !$0.isFinished }) && Date() < deadline {
                engine.deliverPendingEvents()
                sched_yield()
            }
        }
    }

    static func session(_ dir: TempDir, tracks: [SessionTrack] = [], outputs: Int = 1) -> Session {
        Session(url: dir.file("s.toml"), name: "s", sampleRate: nil, output: SessionOutput(channels: outputs), tracks: tracks)
    }

    static func take(_ dir: TempDir, _ name: String, channels: Int = 1, compensate: Bool = true) -> SessionTake {
        SessionTake(file: dir.file(name), format: TakeFormat(container: .wav, sample: .float32), channels: channels,
                    start: .frames(takeStart), length: .frames(length), compensate: compensate)
    }

    static func track(_ dir: TempDir, channels: Int, outputs: [Int]?) -> SessionTrack {
        SessionTrack(
            name: "t", file: dir.file("t.wav"), outputs: outputs,
            audio: AudioFileInfo(fileType: FourCharCode("WAVE"), format: .linearPCM(sampleRate: 48000, channels: UInt32(channels), bits: 16), frameCount: 48000))
    }

    /// The measured bug: takes from port 1 (capture latency 0) and port 2 (300), compensated
    /// and raw. Compensated: the port-2 take 300 frames before the port-1 take; raw: both on
    /// the frames the clicks reached the engine at, which (playback latency 0) is where the
    /// compensated port-1 take has them too. The reports say whose latency each used.
    @Test func compensatedTakesDifferByTheLatencyOfTheirPorts() throws {
        let dir = try TempDir()
        let rig = try Rig(capture: [0, 300, 0, 300], playback: [0])
        let s = Self.session(dir)
        let names = ["comp1.wav", "comp2.wav", "raw1.wav", "raw2.wav"]
        let recorders = try names.enumerated().map { i, n in
            try TakeRecorder(take: Self.take(dir, n, compensate: i < 2), session: s, engine: rig.engine, inputOffset: i, options: Rig.options)
        }
        for r in recorders { try r.start(sessionStart: Self.sessionStart) }
        rig.record(recorders)
        let reports = recorders.map { $0.report() }
        for r in reports { #expect(r.completed && r.frames == Self.length && r.lostFrames == 0 && r.leadingSilence == 0, "\(r.summary)") }
        #expect(reports.map(\.latency.capture) == [0, 300, 0, 300])
        #expect(reports.map(\.captureInputs) == [0..<1, 1..<2, 2..<3, 3..<4])
        #expect(reports[1].summary.contains("(compensated: capture 300 + playback 0 frames), capture latency of in_2, playback latency of all outputs"), "\(reports[1].summary)")
        #expect(reports[0].summary.contains("(compensated: capture 0 + playback 0 frames), capture latency of in_1"), "\(reports[0].summary)")
        for r in recorders { r.close() }
        let clicks = try names.map { ImpulseFinder.find(try WAVReader.read(dir.file($0)).channels[0], threshold: 0.25) }
        #expect(clicks[0] == Self.expected(shift: 0))
        #expect(clicks[1] == Self.expected(shift: 300))
        #expect(clicks[2] == Self.expected(shift: 0))
        #expect(clicks[3] == Self.expected(shift: 0))
        // Compensated placements differ by exactly 300 frames, raw ones by 0.
        #expect(zip(clicks[0], clicks[1]).allSatisfy { $0 - $1 == 300 } && clicks[1].count == clicks[0].count)
        #expect(clicks[2] == clicks[3] && clicks[2] == clicks[0])
    }

    /// The other order: a take of the 0-latency port recorded by a queue that also records the
    /// 300 port before it (the queue subtracts 300 from its time stamps, the take puts them
    /// back and subtracts its own 0).
    @Test func aTakeAfterALatePortUsesItsOwn() throws {
        let dir = try TempDir()
        let rig = try Rig(capture: [300, 0], playback: [0])
        let s = Self.session(dir)
        let late = try TakeRecorder(take: Self.take(dir, "late.wav"), session: s, engine: rig.engine, inputOffset: 0, options: Rig.options)
        let plain = try TakeRecorder(take: Self.take(dir, "plain.wav"), session: s, engine: rig.engine, inputOffset: 1, options: Rig.options)
        for r in [late, plain] { try r.start(sessionStart: Self.sessionStart) }
        rig.record([late, plain])
        #expect(late.report().latency.capture == 300 && plain.report().latency.capture == 0)
        for r in [late, plain] { r.close() }
        #expect(ImpulseFinder.find(try WAVReader.read(dir.file("late.wav")).channels[0], threshold: 0.25) == Self.expected(shift: 300))
        #expect(ImpulseFinder.find(try WAVReader.read(dir.file("plain.wav")).channels[0], threshold: 0.25) == Self.expected(shift: 0))
    }

    /// A take recording two ports of different latency at once (0 and 300) has one time axis:
    /// both its channels are placed by the largest, 300. Raw, both on their arrival.
    @Test(arguments: [true, false])
    func aTakeOfSeveralPortsUsesTheLargest(compensate: Bool) throws {
        let dir = try TempDir()
        let rig = try Rig(capture: [0, 300], playback: [0])
        let take = Self.take(dir, "both.wav", channels: 2, compensate: compensate)
        let recorder = try TakeRecorder(take: take, session: Self.session(dir), engine: rig.engine, inputOffset: 0, options: Rig.options)
        try recorder.start(sessionStart: Self.sessionStart)
        rig.record([recorder])
        let r = recorder.report()
        #expect(r.completed && r.lostFrames == 0 && r.latency.capture == 300 && r.captureInputs == 0..<2, "\(r.summary)")
        #expect(r.summary.contains("capture latency of in_1…in_2"), "\(r.summary)")
        recorder.close()
        let file = try WAVReader.read(take.file)
        let shift = compensate ? 300 : 0
        #expect(ImpulseFinder.find(file.channels[0], threshold: 0.25) == Self.expected(shift: shift))
        #expect(ImpulseFinder.find(file.channels[1], threshold: 0.25) == Self.expected(shift: shift))
    }

    /// The playback latency compensated is that of the outputs the tracks play on (the largest
    /// when several): outputs with 100 and 400 frames; tracks on output 1 only → 100; a stereo
    /// track → 400; a mono track (on every output) → 400; no tracks → the largest of all, 400.
    /// A take recorded with the track on output 1 only lands 100 frames early, not 400.
    @Test func playbackLatencyOfTheTracksOutputs() throws {
        let dir = try TempDir()
        let rig = try Rig(capture: [0], playback: [100, 400])
        let cases: [([SessionTrack], [Int]?, Int)] = [
            ([Self.track(dir, channels: 1, outputs: [1])], [0], 100),
            ([Self.track(dir, channels: 2, outputs: [1, 0])], [0], 100),
            ([Self.track(dir, channels: 2, outputs: nil)], [0, 1], 400),
            ([Self.track(dir, channels: 1, outputs: nil)], [0, 1], 400),
            ([Self.track(dir, channels: 1, outputs: [2]), Self.track(dir, channels: 1, outputs: [1])], [0, 1], 400),
            ([], nil, 400),
        ]
        for (i, (tracks, outputs, playback)) in cases.enumerated() {
            let s = Self.session(dir, tracks: tracks, outputs: 2)
            let r = try TakeRecorder(take: Self.take(dir, "p\(i).wav"), session: s, engine: rig.engine, inputOffset: 0, options: Rig.options)
            #expect(r.playbackOutputs == outputs && r.currentLatency == DeviceLatency(capture: 0, playback: playback), "case \(i)")
            r.close()
        }
        let s = Self.session(dir, tracks: [Self.track(dir, channels: 1, outputs: [1])], outputs: 2)
        let recorder = try TakeRecorder(take: Self.take(dir, "heard.wav"), session: s, engine: rig.engine, inputOffset: 0, options: Rig.options)
        try recorder.start(sessionStart: Self.sessionStart)
        rig.record([recorder])
        let r = recorder.report()
        #expect(r.completed && r.latency == DeviceLatency(capture: 0, playback: 100), "\(r.summary)")
        #expect(r.summary.contains("(compensated: capture 0 + playback 100 frames), capture latency of in_1, playback latency of out_1"), "\(r.summary)")
        recorder.close()
        #expect(ImpulseFinder.find(try WAVReader.read(dir.file("heard.wav")).channels[0], threshold: 0.25) == Self.expected(shift: 100))
    }
}
