import AQSession
import AQTesting
import Foundation
import Testing

/// `aqsync play --capture` together with a `[[record]]` take (issue 20): one capture ring, two
/// input queues. The take records the reference clicker; the capture records every capture
/// port — the take's, then the click track taken back through an input of aqsync's own. Both
/// files hold the clicker's clicks exactly their interval apart, and the capture (raw) holds
/// the take's samples exactly where the documented placement says: capture frame = take frame
/// + the take's capture + playback latency − the capture's session frame, sample for sample
/// (docs/recording.md, "Sessions"). Judged beside jack-record's recording of the clicker and
/// aqsync's own discontinuity reports, as ``RecordOnJACKTests``; repeated (through
/// ``liveRun(_:attempts:_:)``) only when they say the server or the recorder lost frames where
/// the spacing would be judged; the last of three such runs judges what they cannot move: the
/// take and the capture, from one ring, sample for sample at the documented shift.
@Suite("--capture beside a take on JACK", .serialized)
struct CaptureWithTakeOnJACKTests {
    typealias R = RecordOnJACKTests

    /// The numbers of the capture line: frames, the device frame and session frame of file
    /// frame 0, frames dropped.
    struct CaptureLine {
        var frames: Int, deviceFrame: Int, sessionFrame: Int, dropped: Int
    }

    /// `capture: F frames written to NAME (in_1…in_2, raw: file frame 0 is device frame D,
    /// session frame S)` and ` (N frames dropped: …)`.
    static func captureLine(_ log: String) -> CaptureLine? {
        guard let line = log.split(separator: "\n").first(where: { $0.hasPrefix("capture: ") }).map(String.init) else { return nil }
        func number(after label: String) -> Int? {
            guard let r = line.range(of: label) else { return nil }
            return Int(line[r.upperBound...].prefix { $0.isNumber || $0 == "-" })
        }
        guard let frames = Int(line.dropFirst("capture: ".count).prefix { $0.isNumber }),
              let device = number(after: "file frame 0 is device frame "), let session = number(after: ", session frame ") else { return nil }
        let dropped = line.range(of: #"\((\d+) frames dropped"#, options: .regularExpression).flatMap { Int(line[$0].dropFirst().prefix { $0.isNumber }) } ?? 0
        return CaptureLine(frames: frames, deviceFrame: device, sessionFrame: session, dropped: dropped)
    }

    @Test(.timeLimit(.minutes(4)))
    func captureAndTakeAgree() throws {
        try liveRun("captureAndTakeAgree") { _, isLast in try run(isLast: isLast) }
    }

    private func run(isLast: Bool) throws -> LiveRunVerdict {
        let dir = try TempDir()
        let interval = R.interval, rate = R.rate, period = 256
        try R.clickTrack(dir, seconds: 4)
        let server = try PrivateJackServer(sampleRate: rate, period: period, realtime: true)
        defer { server.stop() }
        let clicker = try ReferenceClicker(interval: interval, environment: R.environment(server.name), connectTo: [], directory: dir.url)
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
        let (p, log) = try R.play(session, server: server.name, dir: dir, extra: ["--no-connect", "--capture", dir.file("cap.wav").path])
        defer { p.stop() }
        try JackTools.waitForPorts(["aqt:out_1"], server: server.name)
        let rec = try JackRecorder(server: server.name, ports: [clicker.port])
        defer { rec.removeFiles() }
        #expect(p.wait(timeout: .seconds(30)))
        rec.stop()
        let out = R.text(log)
        let ref = ImpulseFinder.find(try rec.read().channels[0], threshold: 0.5)
        // The witnesses: aqsync's first discontinuity (nothing recorded before it was touched by
        // it) and jack-record's clicks of the clicker (the source itself kept its interval).
        let cut = R.untouchedFrames(out)
        let spacingJudged = cut >= 3 * interval && ReferenceClicker.isFaithful(Array(ref.prefix(3)), interval: interval)
        let why = "aqsync saw an xrun at session frame \(cut == .max ? "-" : "\(cut)"), clicker faithful: \(ReferenceClicker.isFaithful(ref, interval: interval)): \(R.xrunLines(out))"
        if !spacingJudged && !isLast {
            return .witnessCouldNotTell(reason: why, aqsyncFigures: aqsyncPlayFigures(out))
        }
        // The last of three such runs: the clicks' spacing cannot be judged (the server lost
        // frames of the clicker, as jack-record shows), but the take and the capture read one
        // ring, so they must still agree sample for sample at the documented shift.
        if !spacingJudged { print("captureAndTakeAgree: the clicks' spacing not judged (\(why)); the take and the capture compared sample for sample") }
        else if cut != .max { print("captureAndTakeAgree: aqsync reported an xrun; the files judged up to session frame \(cut)") }
        #expect(p.terminationStatus == 0 || (R.xrunned(out) && p.terminationStatus == 3 && out.contains("frames lost")), "\(out)")
        #expect(!out.contains("cannot be used together"), "\(out)")
        let take = try #require(R.takeLine(out, "take.wav"), "\(out)")
        let capLine = try #require(Self.captureLine(out), "\(out)")
        #expect(take.frames == 4 * rate && take.sessionFrame == 0 && take.compensated, "\(out)")
        #expect(out.contains("capture: \(capLine.frames) frames written to \(dir.file("cap.wav").path) (in_1…in_2, raw:"), "\(out)")
        let takeFile = try WAVReader.read(dir.file("take.wav"))
        let cap = try WAVReader.read(dir.file("cap.wav"))
        #expect(cap.channels.count == 2 && cap.frameCount == capLine.frames && capLine.dropped == 0, "\(out)")
        #expect(takeFile.frameCount == 4 * rate)

        // Both hold the clicker's clicks, each exactly the interval after the one before.
        let judged = min(4 * rate, cut)
        let takeClicks = ImpulseFinder.find(takeFile.channels[0], threshold: 0.5).filter { $0 < judged }
        if spacingJudged {
            #expect(takeClicks.count >= judged / interval - 1 && ReferenceClicker.isFaithful(takeClicks, interval: interval), "take clicks \(takeClicks)")
        }
        // The capture's file frame k is device frame D + k at the inputs; the take's file frame
        // t holds what reached them at session start + t + capture + playback latency (the take
        // is compensated, the capture raw): k = t + C + P − (D − session start).
        let shift = take.capture + take.playback - capLine.sessionFrame
        let capCut = judged + shift
        let capClicks = ImpulseFinder.find(cap.channels[0], threshold: 0.5).filter { $0 < capCut }
        if spacingJudged { #expect(ReferenceClicker.isFaithful(capClicks, interval: interval), "capture clicks \(capClicks)") }
        #expect(capClicks.filter { $0 >= shift }.map { $0 - shift } == takeClicks, "the capture's clicks (shift \(shift)) \(capClicks.prefix(4)) against the take's \(takeClicks.prefix(4))\n\(out)")
        // Sample for sample over the whole take, xruns or not: both queues read the same ring,
        // so whatever the server did to the clicks, it did to both alike.
        try #require(shift >= 0 && shift + takeFile.frameCount <= cap.frameCount, "the capture covers the take (shift \(shift), \(cap.frameCount) frames)\n\(out)")
        let differ = (0..<takeFile.frameCount).filter { cap.channels[0][shift + $0] != takeFile.channels[0][$0] }
        #expect(differ.isEmpty, "\(differ.count) samples of the take differ from the capture, the first at take frame \(differ.first ?? -1)")

        // The click track came back on in_2: its clicks exactly the interval apart, the first a
        // whole number of periods (the server's loop back to aqsync) after session frame 0.
        let track = ImpulseFinder.find(cap.channels[1], threshold: 0.25)
        #expect(!track.isEmpty, "no click track in the capture\n\(out)")
        if spacingJudged, let first = track.first {
            let track = track.filter { $0 < capCut }
            let delay = first + capLine.sessionFrame
            #expect(delay >= 0 && delay % period == 0 && delay <= 4 * period, "the click track's first click at session frame \(delay)")
            #expect(ReferenceClicker.isFaithful(track, interval: interval) && track.count >= (capCut - first) / interval, "click track \(track.prefix(4))…")
        }
        return .judged
    }

    /// A write error while capturing (the file size limit, as a full disk): the capture stops
    /// with its file valid — a WAV holding exactly the frames the line reports —, the session
    /// plays on, aqsync exits 1 saying why. (Nothing here depends on the server's timing: no
    /// repeat.)
    @Test(.timeLimit(.minutes(2)))
    func writeErrorStopsTheCaptureCleanly() throws {
        let dir = try TempDir()
        try R.clickTrack(dir, seconds: 4)
        let server = try PrivateJackServer(sampleRate: R.rate, period: 256)
        defer { server.stop() }
        let session = try dir.write("s.toml", """
            [output]
            channels = 1
            [[track]]
            file = "click.wav"
            """)
        // 600 KiB: the float capture of one output passes it after about 3 s.
        let (p, log) = try R.play(session, server: server.name, dir: dir, prefix: "ulimit -f 600", extra: ["--no-connect", "--capture", dir.file("cap.wav").path])
        defer { p.stop() }
        #expect(p.wait(timeout: .seconds(30)))
        let out = R.text(log)
        #expect(p.terminationStatus == 1, "\(out)")
        #expect(out.contains("--capture \(dir.file("cap.wav").path) stopped early") && out.contains("file size limit"), "\(out)")
        #expect(out.contains("track 'click.wav' finished"), "the session played on: \(out)")
        let line = try #require(Self.captureLine(out), "\(out)")
        let cap = try WAVReader.read(dir.file("cap.wav"))
        #expect(cap.frameCount == line.frames && line.frames > R.rate && cap.channels.count == 1, "file \(cap.frameCount) frames, line \(line.frames)")
        let size = (try FileManager.default.attributesOfItem(atPath: dir.file("cap.wav").path)[.size] as? Int) ?? 0
        #expect(size <= 600 * 1024 && size >= line.frames * 4, "\(size) bytes")
    }
}
