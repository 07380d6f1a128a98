import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24: `aqsync play --transport follow` on PipeWire's JACK (a private headless PipeWire),
/// with the same C transport master and judgement as on jackd
/// (``TransportFollowOnJACKTests/judge(recorded:full:)``). A run in which the witness's own
/// transport frames broke away from a locate is repeated through ``liveRun(_:attempts:_:)``.
@Suite("Transport follow on PipeWire's JACK", .serialized)
struct TransportFollowOnPipeWireJACKTests {
    /// Opt-in (`AQSYNC_TRANSPORT_TESTS=1`, `make transport-check`): it failed in the fresh
    /// clone's CI of ba32e32 with 512 samples wrong where the witness vouched; the device's
    /// reading of the transport after the engine's mix, found and fixed since, makes exactly
    /// that, but with every run judged it still fails in runs where the witness's own frames
    /// break on the loaded machine (docs/transport.md, "Known defects" 4). aqsync's summary
    /// lines are printed with the judgement (`server: …` says how many transport frames it
    /// skipped and played again).
    static var wanted: Bool { ProcessInfo.processInfo.environment["AQSYNC_TRANSPORT_TESTS"] == "1" }

    @Test(.enabled(if: wanted, "opt-in (make transport-check): docs/transport.md, Known defects 4"), .timeLimit(.minutes(3)))
    func commandFollowsTheTransportOnPipeWire() throws {
        let fx = try LoopRenderTests.make(loop: "")
        let session = try SessionLoader.load(fx.url)
        let refURL = fx.dir.file("ref.wav")
        try OfflineRenderer.render(session: session, to: refURL)
        let full = try WAVReader.read(refURL).channels
        try liveRun("commandFollowsTheTransportOnPipeWire") { _, isLast in
            let pw = try PipeWireServer(sampleRate: 48000, quantum: 256)
            defer { pw.stop() }
            let log = fx.dir.file("pw-follow.log")
            let aq = try pw.spawn(aqsyncURL().path, ["play", fx.url.path, "--transport", "follow", "--transport-offset", "4800",
                                                    "--no-connect", "--no-start-server", "--client-name", "aqfollow"], output: log)
            defer { pw.terminate(aq, signal: SIGKILL) }
            func text() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
            let deadline = Date().addingTimeInterval(20)
            while !text().contains("following the JACK transport") {
                try #require(Date() < deadline && aq.isRunning, "\(text())")
                usleep(20_000)
            }
            let targets: [UInt32] = [4800 + 10_007, 4800 + 60_001, 3, 4800 + 95_000]
            let master = try TransportMaster(environment: pw.childEnvironment, targets: targets, directory: fx.dir.url) { (try? pw.ports()) ?? [] }
            defer { master.stop() }
            let wav = fx.dir.file("pw-rec.wav")
            let recorder = try pw.spawn("jack-record", ["-b", "96000", "-n", "5", wav.path], output: fx.dir.file("pw-rec.log"), realtimePriority: 20)
            let inputs = (1...5).map { "jack-record-\(recorder.processIdentifier):in_\($0)" }
            let until = Date().addingTimeInterval(5)
            while !((try? pw.ports()).map { Set($0).isSuperset(of: inputs) } ?? false) {
                try #require(Date() < until, "jack-record's ports never appeared")
                usleep(20_000)
            }
            for (i, port) in ((1...4).map { "aqfollow:out_\($0)" } + [master.port]).enumerated() { try pw.connect(port, inputs[i]) }
            master.go()
            let finished = master.waitUntilDone(timeout: .seconds(60))
            pw.terminate(recorder, signal: SIGINT)
            #expect(finished, "the master's script did not end")
            aq.send(SIGINT)
            _ = aq.wait(timeout: .seconds(10))
            #expect(aq.terminationStatus == 130, "\(text())")
            let j = TransportFollowOnJACKTests.judge(recorded: try WAVReader.read(wav).channels, full: full)
            print("commandFollowsTheTransportOnPipeWire: rolling runs start at \(j.segments); \(j.rollingFrames) rolling frames, \(j.heard) samples heard; \(j.wrongRolling) wrong while rolling, \(j.wrongStopped) not silent while stopped (first: \(j.firstWrong ?? "-")); aqsync: \(text().split(separator: "\n").filter { $0.hasPrefix("transport:") || $0.hasPrefix("server:") || $0.contains("not primed") }.joined(separator: " | "))")
            // A rolling run that starts anywhere but at a locate target is a break in the
            // witness's own transport frames (the recorder, or PipeWire calling a client twice
            // for a cycle or not at all: docs/pipewire.md (d2)): there the witness cannot vouch
            // for the cycle beside it. Such a run is repeated, unless aqsync counted silent
            // rolling cycles of its own.
            let breaks = j.segments.filter { s in !targets.contains { Int64($0) == s } }
            if !isLast && !breaks.isEmpty && (j.wrongRolling > 0 || j.wrongStopped > 0) {
                let silent = text().contains("0 rolling cycle(s) silent") ? 0 : 1
                return .witnessCouldNotTell(
                    reason: "the witness's transport frames broke at \(breaks); \(j.wrongRolling + j.wrongStopped) samples off, first: \(j.firstWrong ?? "-")",
                    aqsyncFigures: ["silent rolling cycles": silent])
            }
            for t in targets { #expect(j.segments.contains(Int64(t)), "no rolling run starts at \(t): \(j.segments)") }
            #expect(j.rollingFrames > 48000 && j.heard > 10000, "\(j.rollingFrames) rolling frames, \(j.heard) samples heard")
            #expect(j.wrongRolling == 0 && j.wrongStopped == 0,
                "\(j.wrongRolling) samples wrong while rolling, \(j.wrongStopped) not silent while stopped; first: \(j.firstWrong ?? "-")")
            return .judged
        }
    }
}
