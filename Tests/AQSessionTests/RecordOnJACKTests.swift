import AQSession
import AQTesting
import Foundation
import Testing

/// `aqsync play` records `[[record]]` takes on a private JACK server, checked against
/// independent witnesses: a plain C clicker (its own frame count), jack-record, a plain C echo
/// client, and the files' own frames read by ffmpeg. A run during which the machine xrunned
/// (the server says so, or the witness's clicks are not exactly their interval apart) proves
/// nothing about placement: it is repeated through `liveRun` (at most 3 runs, printed).
@Suite("Recording sessions on JACK", .serialized)
struct RecordOnJACKTests {
    static let interval = 4800
    static let rate = 48000

    /// A click every `interval` frames from frame 0, `seconds` long, 16-bit mono.
    static func clickTrack(_ dir: TempDir, seconds: Int) throws {
        let frames = seconds * rate
        _ = try makeImpulseFile(dir, "click.wav", rate: rate, frames: frames, impulses: [Array(stride(from: 0, to: frames, by: interval))], encoding: ["-e", "signed-integer", "-b", "16"])
    }

    static func environment(_ server: String) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server
        return env
    }

    /// Starts `aqsync play SESSION` on `server` as client `aqt` (through /bin/sh with `prefix`
    /// when given, e.g. a ulimit).
    static func play(_ session: URL, server: String, dir: TempDir, prefix: String? = nil, extra: [String] = []) throws -> (ChildProcess, URL) {
        let log = dir.file("play-\(UUID().uuidString.prefix(6)).log")
        let args = [session.path, "--server", server, "--client-name", "aqt", "--lead", "1.0", "--no-start-server"] + extra
        let p: ChildProcess
        if let prefix {
            let line = "\(prefix); exec '\(aqsyncURL().path)' " + args.map { "'\($0)'" }.joined(separator: " ")
            p = try ChildProcess(path: "/bin/sh", arguments: ["-c", line], environment: environment(server), output: log)
        } else {
            p = try ChildProcess(path: aqsyncURL().path, arguments: args, environment: environment(server), output: log)
        }
        return (p, log)
    }

    static func text(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }

    static func waitFor(_ what: String, timeout: Double = 20, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { throw TestingError("timed out waiting for \(what)") }
            usleep(10_000)
        }
    }

    /// The numbers of a take's report line: frames, session frame, capture, playback.
    struct TakeLine {
        var frames: Int, sessionFrame: Int, capture: Int, playback: Int, compensated: Bool
    }

    static func takeLine(_ log: String, _ name: String) -> TakeLine? {
        guard let line = log.split(separator: "\n").first(where: { $0.hasPrefix("take \(name): ") }) else { return nil }
        let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        // "take NAME: F frames from session frame S (compensated: capture C + playback P frames)"
        // "take NAME: F frames from session frame S (raw: capture latency C frames added back, playback P …)"
        let digitsInName = name.split(whereSeparator: { !$0.isNumber }).count
        let n = Array(numbers.dropFirst(digitsInName))
        guard n.count >= 4 else { return nil }
        return TakeLine(frames: n[0], sessionFrame: n[1], capture: n[2], playback: n[3], compensated: line.contains("(compensated:"))
    }

    static func xrunned(_ log: String) -> Bool { log.contains("xrun") || log.contains("discontinuity") }

    /// aqsync's lines about xruns and discontinuities, for a repeat's printed reason.
    static func xrunLines(_ log: String) -> String {
        log.split(separator: "\n").filter { $0.contains("xrun") || $0.contains("discontinuity") }.prefix(4).joined(separator: "; ")
    }

    /// The session frame from which an xrun may have moved anything, by aqsync's own report:
    /// one period (the largest, 1024) before the first discontinuity's session position, less
    /// the report's millisecond rounding and `compensation` (a compensated take holds at
    /// session frame f what arrived at f + its latency). `Int.max` when nothing xrunned; 0 when
    /// it xrunned but no discontinuity says where (nothing can be judged), `Int.max` too when
    /// every discontinuity came before the session's start frame. What is recorded
    /// before it the xrun cannot have touched: the in-run witness for the frames judged is
    /// aqsync's own log.
    static func untouchedFrames(_ log: String, compensation: Int = 0, rate: Int = rate) -> Int {
        guard xrunned(log) else { return .max }
        // Discontinuities before the session's start frame touch nothing recorded.
        let start = log.range(of: #"session start at device frame (\d+)"#, options: .regularExpression)
            .flatMap { Int(log[$0].split(separator: " ").last ?? "") }
        var seen = false
        for line in log.split(separator: "\n") where line.contains("discontinuity") {
            seen = true
            if let start, let r = line.range(of: #"at device frame (\d+)"#, options: .regularExpression),
               let at = Int(line[r].split(separator: " ").last ?? ""), at <= start { continue }
            guard let r = line.range(of: #"session position (\d+):(\d+)\.(\d+)"#, options: .regularExpression) else { continue }
            let parts = line[r].dropFirst("session position ".count).split(whereSeparator: { $0 == ":" || $0 == "." }).compactMap { Int($0) }
            guard parts.count == 3 else { continue }
            let ms = (parts[0] * 60 + parts[1]) * 1000 + parts[2]
            return max(0, ms * rate / 1000 - rate / 1000 - 1024 - compensation)
        }
        // Every discontinuity came before the start: nothing recorded was touched. None at
        // all (an xrun only the server line counts): nobody can say where.
        return seen ? .max : 0
    }

    /// Runs `run` through ``liveRun(_:attempts:_:)``: again only when it says the machine
    /// xrunned before anything could be judged (``untouchedFrames``: two recorders are skipped
    /// independently by jackd2, so what an xrun did between the source and the take is known
    /// only up to it), at most 3 runs, printed, never when aqsync's late frames moved.
    /// `run` is told whether it is the last attempt (judged whatever the witness says).
    private func repeatedOnlyWhenTheMachineXruns(_ name: String, _ run: (_ lastAttempt: Bool) throws -> LiveRunVerdict) throws {
        try liveRun(name) { _, isLast in try run(isLast) }
    }

    // MARK: - Placement against the clicker

    /// A take recorded from the reference clicker while a click track plays: its clicks are
    /// exactly where jack-record (recording the click track and the clicker at the same time)
    /// says the clicker's clicks are on the session's timeline — the click track's clicks are
    /// the timeline, so the clicker's offset from them is the same in both recordings.
    @Test(.timeLimit(.minutes(4)))
    func takeClicksWhereTheClickerSays() throws {
        try repeatedOnlyWhenTheMachineXruns("takeClicksWhereTheClickerSays") { _ in try clickerRun() }
    }

    private func clickerRun() throws -> LiveRunVerdict {
        let dir = try TempDir()
        try Self.clickTrack(dir, seconds: 4)
        let server = try PrivateJackServer(sampleRate: Self.rate, period: 256, realtime: true)
        defer { server.stop() }
        let clicker = try ReferenceClicker(interval: Self.interval, environment: Self.environment(server.name), connectTo: [], directory: dir.url)
        defer { clicker.stop() }
        try JackTools.waitForPorts([clicker.port], server: server.name)
        let session = try dir.write("s.toml", """
            [output]
            channels = 1
            [[track]]
            file = "click.wav"
            [[record]]
            file = "take.wav"
            format = "32f"
            connect = ["\(clicker.port)"]
            """)
        let (p, log) = try Self.play(session, server: server.name, dir: dir, extra: ["--no-connect"])
        defer { p.stop() }
        try JackTools.waitForPorts(["aqt:out_1"], server: server.name)
        let rec = try JackRecorder(server: server.name, ports: ["aqt:out_1", clicker.port])
        defer { rec.removeFiles() }
        #expect(p.wait(timeout: .seconds(30)))
        rec.stop()
        let out = Self.text(log)
        let witness = try rec.read()
        let track = ImpulseFinder.find(witness.channels[0], threshold: 0.25)
        let ref = ImpulseFinder.find(witness.channels[1], threshold: 0.5)
        // After an xrun only what was recorded before aqsync's first discontinuity is judged
        // (``untouchedFrames``); repeated only when that is under three clicks, or the clicker's
        // own clicks moved in jack-record's recording: never because aqsync's track moved.
        let cut = Self.untouchedFrames(out)
        if cut < 3 * Self.interval || !ReferenceClicker.isFaithful(Array(ref.prefix(3)), interval: Self.interval) {
            return .witnessCouldNotTell(
                reason: "aqsync saw an xrun at session frame \(cut == .max ? "-" : "\(cut)"), clicker faithful: \(ReferenceClicker.isFaithful(ref, interval: Self.interval)), track: \(track.prefix(3))…",
                aqsyncFigures: aqsyncPlayFigures(out))
        }
        if cut != .max { print("takeClicksWhereTheClickerSays: aqsync reported an xrun; the take judged up to session frame \(cut)") }
        #expect(p.terminationStatus == 0 || (RecordOnJACKTests.xrunned(out) && p.terminationStatus == 3 && out.contains("frames lost")), "\(out)")
        let line = try #require(Self.takeLine(out, "take.wav"), "\(out)")
        let frames = 4 * Self.rate
        #expect(line.frames == frames && line.sessionFrame == 0, "\(out)")
        let take = try WAVReader.read(dir.file("take.wav"))
        #expect(take.frameCount == frames)
        // The clicker's offset from the click track, measured from the track's first click to
        // the clicker's next one: clicks recorded earlier (in the lead-in) may be on the other
        // side of frames the server lost there, which the recording does not show.
        let nextRef = try #require(ref.first { $0 >= track[0] }, "no clicker click after the track's first: \(ref.prefix(4)), track \(track.prefix(3))")
        let offset = (nextRef - track[0]) % Self.interval
        let expected = Array(stride(from: offset, to: min(frames, cut), by: Self.interval))
        let got = ImpulseFinder.find(take.channels[0], threshold: 0.5).filter { $0 < cut }
        #expect(got == expected, "the take's clicks (first \(got.prefix(3))) are not where jack-record puts the clicker (offset \(offset) from the click track)\n\(out)")
        return .judged
    }

    // MARK: - Overdub

    /// The overdub: the session plays a click track into an echo client (a performer who plays
    /// what they hear `delay` frames late, and declares it), whose output a take records. The
    /// raw take (`compensate = false`) has the clicks where they reached the engine: the loop's
    /// true delay, `delay` + one period (jackd2's feedback edge) after the click track's. The
    /// compensated take lines up with the click track to the frame: the device reads the
    /// latencies the echo declares (capture `delay`, playback one period) from JACK.
    @Test(.timeLimit(.minutes(4)))
    func overdubLinesUpWithTheClickTrack() throws {
        try repeatedOnlyWhenTheMachineXruns("overdubLinesUpWithTheClickTrack") { _ in try overdubRun() }
    }

    private func overdubRun() throws -> LiveRunVerdict {
        let dir = try TempDir()
        try Self.clickTrack(dir, seconds: 4)
        let period = 256, delay = 1000
        let server = try PrivateJackServer(sampleRate: Self.rate, period: period, realtime: true)
        defer { server.stop() }
        let echo = try EchoClient(delay: delay, environment: Self.environment(server.name), directory: dir.url)
        defer { echo.stop() }
        try JackTools.waitForPorts([echo.input, echo.output], server: server.name)
        let session = try dir.write("s.toml", """
            [output]
            channels = 1
            connect = ["\(echo.input)"]
            [[track]]
            file = "click.wav"
            [[record]]
            file = "raw.wav"
            format = "32f"
            connect = ["\(echo.output)"]
            compensate = false
            [[record]]
            file = "comp.caf"
            format = "32f"
            connect = ["\(echo.output)"]
            """)
        let (p, log) = try Self.play(session, server: server.name, dir: dir)
        defer { p.stop() }
        #expect(p.wait(timeout: .seconds(30)))
        let out = Self.text(log)
        // After an xrun only what was recorded before aqsync's first discontinuity is judged
        // (the compensated take's frames hold what arrived the loop's delay later).
        let cut = Self.untouchedFrames(out, compensation: delay + period)
        if cut < 3 * Self.interval { return .witnessCouldNotTell(reason: "aqsync saw an xrun within the first clicks: \(Self.xrunLines(out))", aqsyncFigures: aqsyncPlayFigures(out)) }
        if cut != .max { print("overdubLinesUpWithTheClickTrack: aqsync reported an xrun; the takes judged up to session frame \(cut)") }
        #expect(p.terminationStatus == 0 || (RecordOnJACKTests.xrunned(out) && p.terminationStatus == 3 && out.contains("frames lost")), "\(out)")
        let frames = 4 * Self.rate
        let clicks = Array(stride(from: 0, to: min(frames, cut), by: Self.interval))
        // Raw: where the frames reached the engine (capture latency added back once known).
        let raw = try WAVReader.read(dir.file("raw.wav"))
        let loop = delay + period
        #expect(raw.frameCount == frames)
        #expect(ImpulseFinder.find(raw.channels[0], threshold: 0.25).filter { $0 < cut } == clicks.map { $0 + loop }.filter { $0 < min(frames, cut) },
                "raw take: clicks \(ImpulseFinder.find(raw.channels[0], threshold: 0.25).prefix(3)), expected the loop delay \(loop) after the click track\n\(out)")
        // Compensated: on the click track's frames.
        let line = try #require(Self.takeLine(out, "comp.caf"), "\(out)")
        #expect(line.compensated && line.frames == frames, "\(out)")
        let comp = try TakeWriterTests.read(dir.file("comp.caf"))
        #expect(comp.count == frames)
        let got = ImpulseFinder.find(comp, threshold: 0.25).filter { $0 < cut }
        #expect(line.capture == delay && line.playback == period, "declared latencies: \(out)")
        #expect(got == clicks, "compensated take: clicks \(got.prefix(3)), expected on the click track's frames\n\(out)")
        return .judged
    }

    // MARK: - Stopping

    /// Ctrl-C while recording: exit 130, the take's file valid and holding every frame the
    /// report counts, the clicker's clicks in it exactly their interval apart (nothing lost
    /// at the stop or before).
    @Test(.timeLimit(.minutes(3)))
    func sigintFinishesTheTake() throws {
        try repeatedOnlyWhenTheMachineXruns("sigintFinishesTheTake") { last in try stopRun(prefix: nil, signal: SIGINT, lastAttempt: last) }
    }

    /// A write error while recording (here the file size limit, as a full disk): the take
    /// stops cleanly — its file valid with the frames written —, the others and the session
    /// go on, aqsync exits 1 saying why.
    @Test(.timeLimit(.minutes(3)))
    func writeErrorStopsTheTakeCleanly() throws {
        try repeatedOnlyWhenTheMachineXruns("writeErrorStopsTheTakeCleanly") { last in try stopRun(prefix: "ulimit -f 600", signal: nil, lastAttempt: last) }
    }

    private func stopRun(prefix: String?, signal: Int32?, lastAttempt: Bool) throws -> LiveRunVerdict {
        let dir = try TempDir()
        try Self.clickTrack(dir, seconds: signal == nil ? 6 : 30)
        let server = try PrivateJackServer(sampleRate: Self.rate, period: 256, realtime: true)
        defer { server.stop() }
        let clicker = try ReferenceClicker(interval: Self.interval, environment: Self.environment(server.name), connectTo: [], directory: dir.url)
        defer { clicker.stop() }
        try JackTools.waitForPorts([clicker.port], server: server.name)
        let session = try dir.write("s.toml", """
            [output]
            channels = 1
            [[track]]
            file = "click.wav"
            [[record]]
            file = "take.caf"
            format = 16
            connect = ["\(clicker.port)"]
            """)
        let (p, log) = try Self.play(session, server: server.name, dir: dir, prefix: prefix, extra: ["--no-connect"])
        defer { p.stop() }
        if let signal {
            // Recording: the file has grown past 100 KB (about a second).
            try Self.waitFor("the take to grow") {
                ((try? FileManager.default.attributesOfItem(atPath: dir.file("take.caf").path)[.size] as? Int) ?? 0) > 100_000
            }
            p.send(signal)
        }
        #expect(p.wait(timeout: .seconds(30)))
        let out = Self.text(log)
        // After an xrun the clicks' spacing is judged up to aqsync's first discontinuity;
        // what the stop does to the file does not depend on it.
        let cut = Self.untouchedFrames(out)
        if cut < 3 * Self.interval { return .witnessCouldNotTell(reason: "aqsync saw an xrun within the first clicks: \(Self.xrunLines(out))", aqsyncFigures: aqsyncPlayFigures(out)) }
        if let signal {
            #expect(p.terminationStatus == 128 + signal && out.contains("stopped by"), "\(out)")
        } else {
            #expect(p.terminationStatus == 1, "\(out)")
            #expect(out.contains("take take.caf stopped early") && out.contains("file size limit"), "\(out)")
            #expect(out.contains("track 'click.wav' finished"), "the session played on: \(out)")
        }
        let line = try #require(Self.takeLine(out, "take.caf"), "\(out)")
        if signal != nil {
            // Everything up to the stop: as many frames as the click track played (the take
            // stops a moment after the tracks: at most a tenth of a second more).
            let played = out.split(separator: "\n").first { $0.hasPrefix("click.wav ") }
                .map { $0.split(separator: " ").compactMap { Int($0) } } ?? []
            let inStep = played.count >= 3 && line.frames >= played[2] && line.frames <= played[2] + Self.rate / 10
            // Late cycles the server caught up on and frames it lost are counted differently
            // by a track (frames it played) and a take (device frames captured): with
            // discontinuities reported the comparison cannot tell, and the run is repeated.
            if !inStep && cut != .max && !lastAttempt {
                return .witnessCouldNotTell(reason: "take \(line.frames) frames, track \(played) after discontinuities: \(Self.xrunLines(out))", aqsyncFigures: aqsyncPlayFigures(out))
            }
            #expect(played.count >= 3 && line.frames >= played[2] && line.frames <= played[2] + Self.rate / 10, "take \(line.frames) frames, track \(played)\n\(out)")
        }
        let samples = try TakeWriterTests.read(dir.file("take.caf"))
        #expect(line.frames > Self.rate && samples.count == line.frames, "report \(line.frames) frames, file \(samples.count)\n\(out)")
        // The header says exactly the frames in the file: CAF's data chunk size.
        let data = try Data(contentsOf: dir.file("take.caf"))
        let headerBytes = 8 + 12 + 32 + 12 + 4
        let size = data[(headerBytes - 12)..<(headerBytes - 4)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(Int(size) - 4 == line.frames * 2 && data.count == headerBytes + line.frames * 2, "data chunk \(size), file \(data.count) bytes")
        let clicks = ImpulseFinder.find(samples, threshold: 0.5).filter { $0 < cut }
        #expect(ReferenceClicker.isFaithful(clicks, interval: Self.interval) && clicks.count >= min(line.frames, cut) / Self.interval - 1,
                "clicks not \(Self.interval) apart: \(zip(clicks.dropFirst(), clicks).map { $0 - $1 }.filter { $0 != Self.interval })")
        return .judged
    }

    // MARK: - record-tone

    /// The example: two seconds from the clicker into a WAV: exactly 96000 frames, the clicks
    /// exactly their interval apart (or by whole cycles the server reported record-tone late
    /// for: ``ClickSpacingJudgement``), exit 0.
    @Test(.timeLimit(.minutes(2)))
    func recordToneRecordsTheClicker() throws {
        try liveRun("recordToneRecordsTheClicker") { _, isLast in
            let dir = try TempDir()
            let server = try PrivateJackServer(sampleRate: Self.rate, period: 256, realtime: true)
            defer { server.stop() }
            let clicker = try ReferenceClicker(interval: Self.interval, environment: Self.environment(server.name), connectTo: [], directory: dir.url)
            defer { clicker.stop() }
            try JackTools.waitForPorts([clicker.port], server: server.name)
            let log = dir.file("record-tone.log")
            let p = try ChildProcess(
                path: builtProduct("record-tone").path, arguments: [dir.file("tone.wav").path, "--seconds", "2", "--connect", clicker.port],
                environment: Self.environment(server.name), output: log)
            defer { p.stop() }
            #expect(p.wait(timeout: .seconds(20)))
            let out = Self.text(log)
            let xruns = JackTools.xrunCount(server)
            let file = try WAVReader.read(dir.file("tone.wav"))
            let clicks = ImpulseFinder.find(file.channels[0], threshold: 0.5)
            // The file is the only recording: judged beside the server's reports of late clients
            // (``ClickSpacingJudgement``); a run whose clicks moved while the server xrunned is
            // repeated, through liveRun.
            let spacings = zip(clicks.dropFirst(), clicks).map { $0 - $1 }
            let judged = ClickSpacingJudgement(spacings: [spacings], interval: Self.interval, period: 256, serverLog: server.log)
            if xruns > 0 && !ReferenceClicker.isFaithful(clicks, interval: Self.interval) && !isLast {
                return .witnessCouldNotTell(reason: "the server xrunned \(xruns) time(s) and the clicks moved: \(judged)", aqsyncFigures: [:])
            }
            if judged.skippedCycles > 0 { print("recordToneRecordsTheClicker: \(judged)") }
            #expect(p.terminationStatus == 0, "\(out)")
            #expect(file.frameCount == 2 * Self.rate && file.bitsPerSample == 16, "\(out)")
            #expect(judged.exact && clicks.count >= 2 * Self.rate / Self.interval - judged.skippedCycles, "clicks \(clicks): \(judged)")
            return .judged
        }
    }
}

extension JackTools {
    /// Xruns the server logged so far (its log's "xrun" lines); 0 when unknown.
    static func xrunCount(_ server: PrivateJackServer) -> Int {
        server.log.components(separatedBy: "xrun").count - 1
    }
}
