import AQTesting
import Testing

/// The click judge of the live tests (``WitnessedClicks``) on made-up recordings.
@Suite("WitnessedClicks judges clicks in recorded, witness and server frames")
struct WitnessedClicksTests {
    /// A witness channel counting every recorded frame, and a server channel that jumps by
    /// `gap` frames at recorded frame `at` (a cycle the recorder and the witness missed).
    static func timeline(frames: Int, gap: Int, at: Int, server: Bool) -> WitnessTimeline {
        let own = (0..<frames).map { Float($0 + 1) }
        let counter = (0..<frames).map { p in Float((p < at ? p : p + gap) + 10_001) }
        return WitnessTimeline(channel: own, serverChannel: server ? counter : nil)
    }

    @Test func exactClicksAreExact() {
        let w = Self.timeline(frames: 40_000, gap: 0, at: 0, server: true)
        let f = WitnessedClicks(clicks: [[1000, 13_000, 25_000], [7001, 19_001, 31_001]], witness: w, spacing: 12_000, offsets: [6001])
        #expect(f.exact && f.windows == 7 && f.windowsJudged == 7, "\(f)")
    }

    /// aqsync got a 256-frame cycle at 20 000 that the recorder and the witness missed: its
    /// next clicks land 256 early in recorded and witness frames, on time in server frames.
    @Test func aCycleOnlyAqsyncGotIsExactInServerFrames() {
        let clicks = [[1000, 13_000, 24_744], [7001, 19_001, 30_745]]
        let w = Self.timeline(frames: 40_000, gap: 256, at: 20_000, server: true)
        let f = WitnessedClicks(clicks: clicks, witness: w, spacing: 12_000, offsets: [6001])
        #expect(f.exact && f.exactOnlyInServerFrames == 2, "\(f)")
        // Without the server channel, the same clicks are off where the witness vouched.
        let blind = WitnessedClicks(clicks: clicks, witness: Self.timeline(frames: 40_000, gap: 256, at: 20_000, server: false), spacing: 12_000, offsets: [6001])
        #expect(!blind.exact && blind.offWhereVouched.count == 2, "\(blind)")
    }

    /// A click early in every measure, the server's too, is aqsync's doing.
    @Test func aClickEarlyInEveryMeasureIsOff() {
        let w = Self.timeline(frames: 40_000, gap: 0, at: 0, server: true)
        let f = WitnessedClicks(clicks: [[1000, 13_000, 24_872], [7001, 19_001, 31_001]], witness: w, spacing: 12_000, offsets: [6001])
        #expect(!f.exact && !f.offWhereVouched.isEmpty && f.windowsJudged == f.windows, "\(f)")
    }

    /// jackd's log names the clients it found late, one line per client per xrun (lines as
    /// jackd 1.9.21 wrote them in the battery's runs).
    @Test func theServersLogNamesLateClients() {
        let log = """
            JackEngine::XRun: client = jack-record-18911 was not finished, state = Triggered
            JackAudioDriver::ProcessGraphAsyncMaster: Process error
            JackEngine::XRun: client = aqt was not finished, state = Triggered
            JackEngine::XRun: client = witness-18905 was not finished, state = Triggered
            JackEngine::XRun: client = jack-record-18911 was not finished, state = Triggered
            JackPosixProcessSync::LockedTimedWait error usec = 5000 err = Connection timed out
            """
        #expect(PrivateJackServer.clientsReportedLate(inLog: log) == ["jack-record-18911": 2, "aqt": 1, "witness-18905": 1])
        #expect(PrivateJackServer.clientsReportedLate(inLog: "JACK server starting in non-realtime mode\n").isEmpty)
    }
}
