import AQTesting
import Foundation
import Testing

/// The C API on a private JACK server (issue 12): programs built against the installed headers
/// and library, recorded by jack-record. The suite's name says JACK: these run one at a time.
@Suite(.serialized) struct CAPIJACKTests {
    /// The C tutorials (`make examples`), with their default client name (the program's), play
    /// their tones: a440 with its callbacks on its own run loop, stereo_sine on the internal thread.
    @Test(arguments: [("a440", 440.0, 440.0), ("stereo_sine", 150.0, 250.0)])
    func tutorialsPlayTheirTones(program: String, left: Double, right: Double) throws {
        let prefix = try CAPI.prefix()
        let make = try CAPI.shell("make -s -C '\(CAPI.root.path)' examples PREFIX='\(prefix.path)'")
        try #require(make.status == 0, "\(make.output)")
        let exe = CAPI.root.appendingPathComponent(".build/c-examples/\(program)")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let runner = ProgramRunner(exe, ["--seconds", "3"], ["JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": ""])
        let ports = ["\(program):out_1", "\(program):out_2"]
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, !Set(try JackTools.ports(server: server.name)).isSuperset(of: ports) { usleep(20_000) }
        let rec = try JackRecorder(server: server.name, ports: ports, seconds: 1)
        defer { rec.removeFiles() }
        try rec.wait()
        let wav = try rec.read()
        let fl = risingZeroCrossingFrequency(wav.channels[0], rate: 48000), fr = risingZeroCrossingFrequency(wav.channels[1], rate: 48000)
        #expect(abs(fl - left) < 2, "\(program) left: \(fl) Hz")
        #expect(abs(fr - right) < 2, "\(program) right: \(fr) Hz")
        let r = runner.finish(timeout: 30)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.seconds >= 2.9, "\(program) played for its 3 s (exited after \(r.seconds) s)")
    }

    /// An output queue on the main run loop, stopped by a CFRunLoopTimer after 1.5 s (issue 23):
    /// the program checks its callbacks and the timer ran on the main thread inside CFRunLoopRun
    /// and that the loop returned on time; the recording holds the tone for 1.5 s (±0.1 s) and
    /// then silence. Built with clang -fblocks (the toolchain's CF headers) and with gcc.
    @Test(arguments: ["clang -fblocks", "gcc"])
    func runLoopTimerStopsTheQueueOnTime(compiler: String) throws {
        let exe = try CAPI.build(
            "Tests/CAPIPrograms/runloop_timer.c", compiler: compiler,
            name: "runloop_timer-" + compiler.map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined())
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let rec = try JackRecorder(server: server.name, channels: 2)
        defer { rec.removeFiles() }
        let r = try CAPI.run(exe, ["1.5"], environment: [
            "JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": rec.inputPortNames.joined(separator: ","),
            "AQSYNC_CLIENT_NAME": "capi-timer",
        ], timeout: 30)
        rec.stop()
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        let wav = try rec.read()
        let loud = wav.channels[0].indices.filter { abs(wav.channels[0][$0]) > 0.05 }
        guard let first = loud.first, let last = loud.last else {
            Issue.record("no tone recorded")
            return
        }
        let played = Double(last - first) / 48000
        #expect(abs(played - 1.5) < 0.1, "the tone played \(played) s")
        #expect(abs(risingZeroCrossingFrequency(Array(wav.channels[0][first...last]), rate: 48000) - 1000) < 2)
    }

    /// Timing through a recording: start times, trims, parameter events, two queues' starts;
    /// the program checks listeners, translate round trips, nearest start times, starvation.
    /// The impulses' spacing is judged beside a ``FrameCountWitness`` recorded in the same
    /// file (its own count and the server's counter): each spacing exact in recorded frames,
    /// in the witness's or in the server's (a cycle the recorder missed moves the recording
    /// only; the fresh CI of ffacb4b had 29 744 for 30 000 in both channels, a period short).
    @Test func timingConformanceInARecording() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/conformance_jack.c")
        let (r, wav) = try CAPI.runRecorded(exe, clientName: "capi-timing")
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        try #require(wav.channels.count == 4)
        let timeline = WitnessTimeline(channel: wav.channels[2], serverChannel: wav.channels[3])
        let want = [0, 7777, 10009, 20011, 30000]
        for channel in wav.channels.prefix(2) {
            let hits = channel.indices.filter { abs(channel[$0]) > 0.01 }
            guard let first = hits.first else {
                Issue.record("no impulse recorded")
                continue
            }
            // Each spacing in the three measures; exact in one of them is exact.
            func spacing(_ i: Int, _ frames: [Int?]) -> Int? {
                guard hits[i] < frames.count, hits[i - 1] < frames.count, let a = frames[hits[i - 1]], let b = frames[hits[i]] else { return nil }
                return b - a
            }
            let exact = hits.count == want.count && (1..<hits.count).allSatisfy { i in
                let w = want[i] - want[i - 1]
                return hits[i] - hits[i - 1] == w || spacing(i, timeline.frames) == w || spacing(i, timeline.serverFrames) == w
            }
            #expect(exact, "impulses at \(hits.map { $0 - first }) (recorded frames), witness breaks \(timeline.breaks.count), slips \(timeline.slips.count)")
            #expect(hits.map { channel[$0] } == [1, 1, 1, 1, 0.5], "levels \(hits.map { channel[$0] })")
        }
    }

    /// An ADTS AAC file streamed through AudioFileStreamParseBytes into a queue plays to the end
    /// (its tone in the recording) and the program exits when its IsRunning listener hears the
    /// drain; the client is named by AQSYNC_CLIENT_NAME.
    @Test func adtsStreamPlaysToTheEnd() throws {
        let prefix = try CAPI.prefix()
        let file = prefix.appendingPathComponent("stream.aac")
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=48000:duration=2 -ac 2 -c:a aac -b:a 128k -f adts '\(file.path)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/stream_adts.c")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let rec = try JackRecorder(server: server.name, channels: 2)
        defer { rec.removeFiles() }
        let runner = ProgramRunner(exe, [file.path], [
            "JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": rec.inputPortNames.joined(separator: ","),
            "AQSYNC_CLIENT_NAME": "capi-stream",
        ])
        let deadline = Date().addingTimeInterval(5)
        var ports: [String] = []
        while Date() < deadline, !ports.contains("capi-stream:out_1") {
            ports = try JackTools.ports(server: server.name)
            usleep(20_000)
        }
        #expect(ports.contains("capi-stream:out_1"), "client named by AQSYNC_CLIENT_NAME: \(ports)")
        let r = runner.finish(timeout: 30)
        rec.stop()
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("drained"), "\(r.output)")
        #expect(r.seconds >= 1.9, "played the whole 2 s before exiting (\(r.seconds) s)")
        let wav = try rec.read()
        let x = wav.channels[0]
        guard let on = x.firstIndex(where: { abs($0) > 0.05 }), let off = x.lastIndex(where: { abs($0) > 0.05 }) else {
            Issue.record("no tone recorded")
            return
        }
        #expect(Double(off - on) > 1.9 * 48000, "about 2 s of tone recorded (\(off - on) frames)")
        // The tone without the encoder's ramps at its ends: its pitch, and no gap (a sine of
        // 1000 Hz at 48 kHz is never near 0 for more than a few frames in a row).
        let middle = Array(x[(on + 2400)..<max(on + 2401, off - 2400)])
        #expect(abs(risingZeroCrossingFrequency(middle, rate: 48000) - 1000) < 2, "\(risingZeroCrossingFrequency(middle, rate: 48000)) Hz")
        var run = 0, longest = 0
        for v in middle {
            run = abs(v) < 0.001 ? run + 1 : 0
            longest = max(longest, run)
        }
        #expect(longest < 8, "a gap of \(longest) silent frames in the tone")
    }

    /// No server reachable (issue 22): the library starts one under the name asked for, the
    /// program plays its tone through it and exits 0, and the server is gone afterwards.
    @Test func noServerStartsOneAndStopsItAtExit() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/autostart.c")
        let name = "aqsync-autostart-\(getpid())"
        // env -u: JACK_NO_START_SERVER must not be inherited from the test's environment.
        let r = try CAPI.run(URL(fileURLWithPath: "/usr/bin/env"), ["-u", "JACK_NO_START_SERVER", exe.path], environment: [
            "JACK_DEFAULT_SERVER": name, "AQSYNC_CONNECT": "", "AQSYNC_DEBUG": "1",
        ], timeout: 60)
        let left = try CAPI.shell("pgrep -f -- 'jackd.* -n \(name)( |$)' || true")
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("played"), "\(r.output)")
        #expect(r.output.contains("started a private JACK server '\(name)'"), "\(r.output)")
        #expect(r.output.contains("device jack:\(name):"), "\(r.output)")
        #expect(left.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "jackd -n \(name) left running: \(left.output)")
    }

    /// No server and JACK_NO_START_SERVER set: the output queue is made (for offline rendering
    /// only), but AudioQueueStart and AudioQueueNewInput answer kAudioQueueErr_InvalidDevice
    /// (-66680), with the reason under AQSYNC_DEBUG; nothing started.
    @Test func noServerAndNoStartIsInvalidDevice() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/autostart.c")
        let name = "aqsync-no-such-server-\(getpid())"
        let r = try CAPI.run(exe, environment: ["JACK_DEFAULT_SERVER": name, "JACK_NO_START_SERVER": "1", "AQSYNC_DEBUG": "1"])
        #expect(r.status == 1)
        #expect(r.output.contains("AudioQueueStart: -66680"), "\(r.output)")
        #expect(r.output.contains("AudioQueueNewInput: -66680"), "\(r.output)")
        #expect(r.output.contains("JACK_NO_START_SERVER is set"), "\(r.output)")
        let left = try CAPI.shell("pgrep -f -- 'jackd.* -n \(name)( |$)' || true")
        #expect(left.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(left.output)")
    }

    /// Any queue renders offline (issue 22, `offline_switch.c`, as Apple's AQOfflineRenderTest):
    /// with a second queue playing live on a private server, a queue made on JACK switches to
    /// offline rendering, renders 2 s of generated float PCM equal to it sample for sample while
    /// the other queue's time advances, refuses a switch from its own callback, and after NULL
    /// is back on JACK, stopped, and plays live when started.
    @Test func oneQueueRendersOfflineWhileAnotherPlaysLive() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/offline_switch.c")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let r = try CAPI.run(exe, ["live"], environment: [
            "JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": "", "AQSYNC_CLIENT_NAME": "capi-offline-switch",
        ], timeout: 60)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// Apple's AQOfflineRenderTest in C (issue 22, `offline_file.c`): with a second queue
    /// playing live on a private server, an AAC file (.m4a, with its magic cookie) is rendered
    /// offline through a queue made on JACK, to raw float; the output is exactly ffmpeg's
    /// untrimmed decode (`-flags2 +skip_manual`: the encoder's 1024 priming frames included,
    /// as the queue trims none unless asked), then silence.
    @Test func aacFileRendersOfflineAsFFmpegDecodesIt() throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("offline-file")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("tone.m4a").path
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=48000:duration=2 -ac 2 -c:a aac -b:a 128k '\(file)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/offline_file.c")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let r = try CAPI.run(exe, [file, file + ".ours.f32", "live"], environment: [
            "JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": "", "AQSYNC_CLIENT_NAME": "capi-offline-file",
        ], timeout: 60)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        let d = try CAPI.shell("ffmpeg -loglevel error -y -flags2 +skip_manual -i '\(file)' -f f32le '\(file).ffmpeg.f32'")
        try #require(d.status == 0, "\(d.output)")
        let ours = try Data(contentsOf: URL(fileURLWithPath: file + ".ours.f32"))
        let theirs = try Data(contentsOf: URL(fileURLWithPath: file + ".ffmpeg.f32"))
        try #require(!theirs.isEmpty && ours.count >= theirs.count, "\(ours.count) bytes rendered, ffmpeg \(theirs.count)")
        #expect(ours.prefix(theirs.count) == theirs, "the render differs from ffmpeg's decode")
        #expect(ours.dropFirst(theirs.count).allSatisfy { $0 == 0 }, "not silence after the file's end")
    }

    /// No server reachable and none may start (issue 22, `offline_switch.c noserver`): the output
    /// queue is made without any environment variable, renders offline equal to its source, and
    /// AudioQueueStart (before and after NULL) and AudioQueueNewInput answer InvalidDevice.
    @Test func noServerStillRendersOffline() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/offline_switch.c")
        let name = "aqsync-no-such-server-\(getpid())"
        let r = try CAPI.run(exe, ["noserver"], environment: ["JACK_DEFAULT_SERVER": name, "JACK_NO_START_SERVER": "1"], timeout: 60)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        let left = try CAPI.shell("pgrep -f -- 'jackd.* -n \(name)( |$)' || true")
        #expect(left.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(left.output)")
    }
}

/// A program running in the background while the test records.
final class ProgramRunner: @unchecked Sendable {
    private let lock = NSLock()
    private var result: CAPI.Run?
    private let thread: Thread

    init(_ exe: URL, _ args: [String], _ env: [String: String]) {
        let box = ResultBox()
        thread = Thread {
            let r = (try? CAPI.run(exe, args, environment: env, timeout: 60)) ?? CAPI.Run(status: -1, output: "could not run", seconds: 0)
            box.set(r)
        }
        self.box = box
        thread.start()
    }
    private let box: ResultBox

    /// Waits for the program (at most `timeout` s more).
    func finish(timeout: Double) -> CAPI.Run {
        let deadline = Date().addingTimeInterval(timeout)
        while box.get() == nil && Date() < deadline { usleep(10_000) }
        return box.get() ?? CAPI.Run(status: -1, output: "did not finish", seconds: timeout)
    }

    final class ResultBox: @unchecked Sendable {
        private let lock = NSLock()
        private var value: CAPI.Run?
        func set(_ r: CAPI.Run) { lock.withLock { value = r } }
        func get() -> CAPI.Run? { lock.withLock { value } }
    }
}

/// The server goes away for good (AQSYNC_RECONNECT=0): the queue stops, its IsRunning listener
/// hears it, and a start answers kAudioQueueErr_CannotStart.
@Suite(.serialized) struct CAPIServerLossJACKTests {
    @Test func serverGoneIsCannotStart() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/server_loss.c")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        var stopped = false
        defer { if !stopped { server.stop() } }
        let runner = ProgramRunner(exe, [], [
            "JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": "", "AQSYNC_RECONNECT": "0",
            "AQSYNC_CLIENT_NAME": "capi-loss",
        ])
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, !(try JackTools.ports(server: server.name)).contains("capi-loss:out_1") { usleep(20_000) }
        usleep(300_000)
        server.stop()
        stopped = true
        let r = runner.finish(timeout: 40)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }
}

/// Recording through the C API on a private JACK server (issues 11, 12).
@Suite(.serialized) struct CAPIRecordingJACKTests {
    /// A C program records a plain C client's clicks through AudioQueueNewInput: every click
    /// exactly the clicker's interval after the previous one on the start times' device time
    /// line (the clicker counts its own frames: the independent witness), across buffer edges;
    /// the program's own checks (flags, contiguous buffers, listeners, synchronous stop) pass.
    @Test func recordingQueueHearsClicksAtExactFrames() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/record_jack.c")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqsync-capi-rec-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let interval = 4801  // not a multiple of the period or of the buffer
        let clicker = try ReferenceClicker(interval: interval, environment: ["JACK_DEFAULT_SERVER": server.name], connectTo: [], directory: dir)
        defer { clicker.stop() }
        let r = try CAPI.run(exe, environment: [
            "JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": "",
            "AQSYNC_INPUT_CONNECT": "\(clicker.port),\(clicker.port)", "AQSYNC_CLIENT_NAME": "capi-record",
        ], timeout: 60)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        let clicks = r.output.split(separator: "\n").compactMap { $0.hasPrefix("click ") ? Int($0.dropFirst(6)) : nil }
        #expect(clicks.count >= 17, "clicks heard: \(clicks)")
        let spacing = zip(clicks.dropFirst(), clicks).map { $0 - $1 }
        // Judged beside the server's log (docs/timing.md, "Live tests"): exact, or off by whole
        // periods where jackd reported another client not finished (it skips the late client
        // for the cycle while the clicker goes on), no more cycles than reports.
        let judged = ClickSpacingJudgement(spacings: [spacing], interval: interval, period: 256, serverLog: server.log)
        if judged.skippedCycles > 0 { print("recordingQueueHearsClicksAtExactFrames: \(judged)") }
        #expect(judged.exact, "spacing \(spacing): \(judged)")
    }

    /// A recording queue assigned to inputs 2 and 1 (kAudioQueueProperty_ChannelAssignments,
    /// `channel_assign.c live`): in_1 hears the clicker, in_2 nothing; the queue's first channel
    /// is exactly silent and its second holds the clicks, each exactly the clicker's interval
    /// after the previous (or by whole cycles the server reported late: ``ClickSpacingJudgement``).
    @Test func recordingQueueAssignedToSwappedInputs() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/channel_assign.c")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqsync-capi-assign-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let interval = 4801
        let clicker = try ReferenceClicker(interval: interval, environment: ["JACK_DEFAULT_SERVER": server.name], connectTo: [], directory: dir)
        defer { clicker.stop() }
        let r = try CAPI.run(exe, ["live"], environment: [
            "JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": "",
            "AQSYNC_INPUT_CONNECT": clicker.port, "AQSYNC_CLIENT_NAME": "capi-assign",
        ], timeout: 60)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        let clicks = r.output.split(separator: "\n").compactMap { $0.hasPrefix("click ") ? Int($0.dropFirst(6)) : nil }
        #expect(clicks.count >= 10, "clicks heard on the second channel: \(clicks)")
        let spacing = zip(clicks.dropFirst(), clicks).map { $0 - $1 }
        let judged = ClickSpacingJudgement(spacings: [spacing], interval: interval, period: 256, serverLog: server.log)
        if judged.skippedCycles > 0 { print("recordingQueueAssignedToSwappedInputs: \(judged)") }
        #expect(judged.exact, "spacing \(spacing): \(judged)")
    }

    /// Apple Lossless through AudioQueueNewInput: cookie from creation, buffers with packet
    /// descriptions consistent with their bytes, start times advancing by whole packets.
    @Test func alacRecordingThroughTheCAPI() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/record_alac_jack.c")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let r = try CAPI.run(exe, environment: [
            "JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": "", "AQSYNC_CLIENT_NAME": "capi-alac",
        ], timeout: 60)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// The C recording example (`make examples`: docs/examples/c/record.c, the guide's recorder)
    /// writes exactly the seconds asked for, with the clicker's clicks exactly its interval
    /// apart, or by whole cycles the server reported the example late for
    /// (``ClickSpacingJudgement``). A run whose clicks moved while the server logged an xrun is
    /// repeated (``liveRun(_:attempts:_:)``, at most 3 runs, printed); the last is judged.
    @Test func recordExampleWritesTheClicks() throws {
        let prefix = try CAPI.prefix()
        let make = try CAPI.shell("make -s -C '\(CAPI.root.path)' examples PREFIX='\(prefix.path)'")
        try #require(make.status == 0, "\(make.output)")
        let exe = CAPI.root.appendingPathComponent(".build/c-examples/record")
        try liveRun("recordExampleWritesTheClicks") { _, isLast in try recordExampleRun(exe, isLast: isLast) }
    }

    private func recordExampleRun(_ exe: URL, isLast: Bool) throws -> LiveRunVerdict {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqsync-capi-recex-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let interval = 4801
        let clicker = try ReferenceClicker(interval: interval, environment: ["JACK_DEFAULT_SERVER": server.name], connectTo: [], directory: dir)
        defer { clicker.stop() }
        let file = dir.appendingPathComponent("take.wav")
        let r = try CAPI.run(exe, [file.path, "--seconds", "2"], environment: [
            "JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": "", "AQSYNC_INPUT_CONNECT": "\(clicker.port),\(clicker.port)",
        ], timeout: 60)
        #expect(r.status == 0, "\(r.output)")
        let wav = try WAVReader.read(file)
        #expect(wav.sampleRate == 48000 && wav.bitsPerSample == 16 && wav.channels.count == 2)
        #expect(wav.frameCount == 96_000, "frames \(wav.frameCount)")
        let spacings = wav.channels.map { channel in
            let clicks = channel.indices.filter { channel[$0] > 0.5 }
            return zip(clicks.dropFirst(), clicks).map { $0 - $1 }
        }
        let judged = ClickSpacingJudgement(spacings: spacings, interval: interval, period: 256, serverLog: server.log)
        let xruns = server.log.components(separatedBy: "xrun").count - 1
        if xruns > 0 && !judged.exact && !isLast {
            return .witnessCouldNotTell(reason: "the server xrunned \(xruns) time(s) and the clicks moved: \(judged)", aqsyncFigures: [:])
        }
        if judged.skippedCycles > 0 { print("recordExampleWritesTheClicks: \(judged)") }
        for spacing in spacings { #expect(spacing.count >= 18, "spacing \(spacing)") }
        #expect(judged.exact, "spacing \(spacings): \(judged)")
        return .judged
    }
}
