import AQTesting
import Foundation
import Testing

/// Dispatch-queue queues (issue 22): `dispatch_queue.c`, built with clang -fblocks against the
/// installed headers and library, plays a 1 kHz tone through AudioQueueNewOutputWithDispatchQueue
/// and records a clicker through AudioQueueNewInputWithDispatchQueue on a private jackd. The
/// program checks its blocks and listener ran on their dispatch queues; jack-record is the
/// witness of the tone, the clicker (which counts its own frames) of the recording, beside the
/// server's reports of late clients (``ClickSpacingJudgement``).
@Suite(.serialized) struct CAPIDispatchQueueJACKTests {
    @Test func blocksOnDispatchQueuesPlayAndRecord() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/dispatch_queue.c", compiler: "clang -fblocks")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqsync-capi-dispatch-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let interval = 4801  // not a multiple of the period or of the buffers
        let clicker = try ReferenceClicker(interval: interval, environment: ["JACK_DEFAULT_SERVER": server.name], connectTo: [], directory: dir)
        defer { clicker.stop() }
        let rec = try JackRecorder(server: server.name, channels: 2)
        defer { rec.removeFiles() }
        let r = try CAPI.run(exe, ["1.5"], environment: [
            "JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": rec.inputPortNames.joined(separator: ","),
            "AQSYNC_INPUT_CONNECT": "\(clicker.port),\(clicker.port)", "AQSYNC_CLIENT_NAME": "capi-dispatch",
        ], timeout: 60)
        rec.stop()
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        // The recording: 1.5 s of the 1 kHz tone, on both channels.
        let wav = try rec.read()
        for channel in wav.channels {
            guard let on = channel.firstIndex(where: { abs($0) > 0.05 }), let off = channel.lastIndex(where: { abs($0) > 0.05 }) else {
                Issue.record("no tone recorded")
                continue
            }
            // The program checks that exactly 1.5 s of frames were enqueued; one run on a
            // loaded machine recorded about a period more (not investigated: live lengths are
            // judged beside a witness in docs/timing.md, not what this test is about).
            let played = Double(off - on + 1) / 48000
            #expect(abs(played - 1.5) < 0.02, "the tone lasted \(played) s")
            #expect(abs(risingZeroCrossingFrequency(Array(channel[on...off]), rate: 48000) - 1000) < 1)
            // No gap: a 1 kHz sine at 48 kHz is never near 0 for more than a frame or two.
            var run = 0, longest = 0
            for v in channel[on...off] {
                run = abs(v) < 0.001 ? run + 1 : 0
                longest = max(longest, run)
            }
            #expect(longest < 4, "a gap of \(longest) silent frames in the tone")
        }
        // The input blocks heard every click exactly the clicker's interval apart.
        let clicks = r.output.split(separator: "\n").compactMap { $0.hasPrefix("click ") ? Int($0.dropFirst(6)) : nil }
        #expect(clicks.count >= 10, "clicks heard: \(clicks)")
        let spacing = zip(clicks.dropFirst(), clicks).map { $0 - $1 }
        let judged = ClickSpacingJudgement(spacings: [spacing], interval: interval, period: 256, serverLog: server.log)
        if judged.skippedCycles > 0 { print("blocksOnDispatchQueuesPlayAndRecord: \(judged)") }
        #expect(judged.exact, "spacing \(spacing): \(judged)")
    }
}
