@testable import AQBench
import Foundation
import Testing

/// The peers of the capacity bench (issue 25): ecasound's command line for a capacity session
/// and its output read back into the rule's terms; the offline tools' command lines; the float
/// WAV comparison; the comparison tables. Made-up inputs; no JACK, no ecasound.
@Suite struct CapacityPeerTests {
    @Test func ecasoundPlaysOneChainPerTrackIntoOneJACKOutput() throws {
        let a = try #require(ecasoundCapacityArguments(format: .wav, file: "/tmp/n.wav", tracks: 3, period: 64, deviceRate: 48000, clientName: "aqcap-eca"))
        #expect(a == ["-d:23", "-b:64", "-z:mixmode,sum", "-G:jack,aqcap-eca,notransport",
                      "-a:1", "-i:/tmp/n.wav", "-a:2", "-i:/tmp/n.wav", "-a:3", "-i:/tmp/n.wav",
                      "-a:1,2,3", "-o:jack,,out"])
        let mp3 = try #require(ecasoundCapacityArguments(format: .mp3, file: "/tmp/n.mp3", tracks: 1, period: 256, deviceRate: 48000, clientName: "e"))
        #expect(mp3.contains("-i:sndfile,/tmp/n.mp3") && mp3.contains("-b:256"))
        let w44 = try #require(ecasoundCapacityArguments(format: .wav44, file: "/tmp/n.wav", tracks: 1, period: 64, deviceRate: 48000, clientName: "e"))
        #expect(w44.contains("-i:resample,48000,/tmp/n.wav") && w44.contains("-f:s16_le,2,48000"))
        #expect(ecasoundCapacityArguments(format: .aac, file: "/tmp/n.m4a", tracks: 1, period: 64, deviceRate: 48000, clientName: "e") == nil)
        #expect(ecasoundCapacityArguments(format: .wav, file: "/tmp/n.wav", tracks: 0, period: 64, deviceRate: 48000, clientName: "e") == nil)
    }

    /// ecasound 2.9.3's own words (audioio-db-client.cpp, eca-control), as it prints them.
    @Test func ecasoundsUnderrunsAreItsLateFrames() {
        let text = """
            (eca-chainsetup) "rt" buffering mode selected.
            - [ Engine - Driver start ] ----------------------------------------------
            (audioio-db-client) WARNING: Underrun in reading from "/tmp/n.wav". Trying to recover.
            (audioio-db-client) WARNING: Underrun in reading from "/tmp/n.wav". Trying to recover.
            (audioio-db-client) WARNING: Underrun in reading from "/tmp/n.wav". Trying to recover.
            - [ Engine - Processing finished ] ---------------------------------------
            (audioio-db-client) There were total 2 xruns.
            (audioio-db-client) There were total 1 xruns.
            """
        let r = EcasoundReport(output: text)
        #expect(r.underrunLines == 3 && r.totalXruns == 3 && r.underruns == 3 && r.finished && r.errors.isEmpty)
        let o = ecasoundObservation(r, exitStatus: 0, wallSeconds: 10.4, seconds: 10, tracks: 8, bufferFrames: 64)
        #expect(o.lateFrames == 192 && o.exitStatus == 3 && o.incompleteTracks == 0)
        guard case .aqsync(let why) = CapacityVerdict(o, player: "ecasound") else { Issue.record("not the player's"); return }
        #expect(why.contains("192 frames of the tracks late"))

        let clean = ecasoundObservation(EcasoundReport(output: "- [ Engine - Processing finished ] ---"), exitStatus: 0, wallSeconds: 10.2, seconds: 10, tracks: 8, bufferFrames: 64)
        #expect(CapacityVerdict(clean, player: "ecasound") == .pass)
        // Ended before the session's length: every track incomplete.
        let short = ecasoundObservation(EcasoundReport(output: ""), exitStatus: 0, wallSeconds: 3, seconds: 10, tracks: 8, bufferFrames: 64)
        #expect(short.incompleteTracks == 8 && !CapacityVerdict(short).passed)
        // An error line, and a failed exit.
        let error = EcasoundReport(output: "ERROR:  Connecting chainsetup failed: \"All audio objects must have a common\n... sampling rate\"")
        #expect(error.errors.count == 1)
        let failed = ecasoundObservation(error, exitStatus: 2, wallSeconds: 0.3, seconds: 10, tracks: 8, bufferFrames: 64)
        guard case .aqsync(let w) = CapacityVerdict(failed, player: "ecasound") else { Issue.record("not the player's"); return }
        #expect(w.contains("ecasound exited with status 2"))
    }

    /// Playing that took longer than the session: frames lost; beyond what the xruns naming its
    /// client explain, cycles it muted (late frames of every track, its own).
    @Test func ecasoundsStretchedPlayingIsLoss() {
        var marks = EcasoundMarks()
        marks.scan("- [ Engine - Driver start ] ---\nprefilling i/o buffers.\n", at: 1.6)
        #expect(marks.playedSeconds == nil)
        marks.scan("i/o buffers prefilled.\n", at: 4.6)
        marks.scan("- [ Engine - Processing finished ] ---\n", at: 14.8)
        marks.scan("i/o buffers prefilled.\n- [ Engine - Processing finished ] ---\n", at: 20)
        #expect(abs(marks.playedSeconds! - 10.2) < 1e-9)
        let r = EcasoundReport(output: "")
        // 0.2 s over: within the tolerance (0.3 s).
        let fine = ecasoundObservation(r, exitStatus: 0, wallSeconds: 15, seconds: 10, tracks: 4, bufferFrames: 64, playedSeconds: 10.2)
        #expect(CapacityVerdict(fine, player: "ecasound") == .pass)
        // 1.3 s over, 750 xruns naming its client (1.0 s of 64-frame cycles): lost, explained.
        let explained = ecasoundObservation(r, exitStatus: 0, wallSeconds: 15, seconds: 10, tracks: 4, bufferFrames: 64, playedSeconds: 11.3, namedXruns: 750)
        #expect(explained.lateFrames == 0 && explained.serverLostFrames == 62400 && explained.exitStatus == 3)
        // 1.3 s over, no xrun naming it: 1 s muted on every track, and no xrun: its own.
        let muted = ecasoundObservation(r, exitStatus: 0, wallSeconds: 15, seconds: 10, tracks: 4, bufferFrames: 64, playedSeconds: 11.3)
        #expect(muted.lateFrames == 4 * 48000)
        #expect(!CapacityVerdict(muted, player: "ecasound").passed)
    }

    /// jackd's log names ecasound's client as it names aqsync's; the rule is the same.
    @Test func jackdNamingEcasoundsClientIsJudgedAsForAqsync() {
        let log = """
            JackEngine::XRun: client = aqcap-eca was not finished, state = Running
            JackAudioDriver::ProcessGraphAsyncMaster: Process error
            JackEngine::XRun: client = aqcap-eca was not finished, state = Running
            JackAudioDriver::ProcessGraphAsyncMaster: Process error
            JackEngine::XRun: client = aqcap-ref was not finished, state = Triggered
            JackAudioDriver::ProcessGraphAsyncMaster: Process error
            """
        let e = LateClientEvents(log: Substring(log), aqsync: "aqcap-eca", reference: "aqcap-ref")
        var o = ecasoundObservation(EcasoundReport(output: ""), exitStatus: 0, wallSeconds: 10.1, seconds: 10, tracks: 4, bufferFrames: 64)
        o.referenceXruns = 3
        o.aqsyncAloneLate = e.aqsyncAlone
        o.referenceAloneLate = e.referenceAlone
        guard case .aqsync(let why) = CapacityVerdict(o, player: "ecasound") else { Issue.record("not the player's"); return }
        #expect(why == "jackd named ecasound's client alone late in 2 xrun(s), the reference client alone in 1")
        o.referenceAloneLate = 2
        #expect(CapacityVerdict(o, player: "ecasound").passed)
    }

    @Test func offlineToolsMixTheSameSession() throws {
        let f = try #require(offlinePeerArguments(.ffmpeg, format: .wav, file: "/n.wav", tracks: 2, spacing: 480, rate: 48000, output: "/o.wav"))
        #expect(f == ["-v", "error", "-nostdin", "-y", "-i", "/n.wav", "-i", "/n.wav", "-filter_complex",
                      "[0:a]aresample=48000,adelay=0S:all=1[a0];[1:a]aresample=48000,adelay=480S:all=1[a1];[a0][a1]amix=inputs=2:normalize=0:dropout_transition=0[mix]",
                      "-map", "[mix]", "-ac", "2", "-ar", "48000", "-c:a", "pcm_f32le", "/o.wav"])
        let e = try #require(offlinePeerArguments(.ecasound, format: .mp3, file: "/n.mp3", tracks: 2, spacing: 480, rate: 48000, output: "/o.wav"))
        #expect(e == ["-q", "-z:mixmode,sum", "-a:1", "-i:playat,0sa,sndfile,/n.mp3", "-a:2", "-i:playat,480sa,sndfile,/n.mp3",
                      "-a:1,2", "-f:f32_le,2,48000", "-o:/o.wav"])
        let s = try #require(offlinePeerArguments(.sox, format: .wav44, file: "/it's.wav", tracks: 2, spacing: 480, rate: 48000, output: "/o.wav"))
        #expect(s == ["-m", "-v", "1", "|sox '/it'\\''s.wav' -p rate 48000 pad 0s", "-v", "1", "|sox '/it'\\''s.wav' -p rate 48000 pad 480s",
                      "-e", "floating-point", "-b", "32", "/o.wav"])
        #expect(offlinePeerArguments(.sox, format: .mp3, file: "/n.mp3", tracks: 2, spacing: 0, rate: 48000, output: "/o.wav") == nil)
        #expect(offlinePeerArguments(.ecasound, format: .aac, file: "/n.m4a", tracks: 2, spacing: 0, rate: 48000, output: "/o.wav") == nil)
        #expect(OfflinePeer.list("ffmpeg,sox") == [.ffmpeg, .sox] && OfflinePeer.list("ffmpeg,vlc") == nil)
    }

    /// A float WAV made here (a "fact"-like chunk before the data, an odd-sized chunk padded).
    @Test func floatWAVsAreReadAndCompared() throws {
        func wav(_ samples: [Float], tag: UInt16 = 3, bits: UInt16 = 32) -> Data {
            var d = Data()
            func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
            func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
            d.append(contentsOf: Array("RIFF".utf8)); u32(0); d.append(contentsOf: Array("WAVE".utf8))
            d.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(tag); u16(2); u32(48000); u32(48000 * 8); u16(8); u16(bits)
            d.append(contentsOf: Array("odd ".utf8)); u32(3); d.append(contentsOf: [1, 2, 3, 0])
            d.append(contentsOf: Array("data".utf8)); u32(UInt32(samples.count * 4))
            for s in samples { u32(s.bitPattern) }
            return d
        }
        let a = wav([0, 0.5, -0.25, 1])
        let r = try #require(readFloatWAV(a))
        #expect(r.channels == 2 && r.samples == [0, 0.5, -0.25, 1])
        #expect(readFloatWAV(wav([0, 1], tag: 1, bits: 16)) == nil)
        let c = try #require(compareFloatWAVs(a, wav([0, 0.5, -0.25, 0.75, 0, 0])))
        #expect(c.framesA == 2 && c.framesB == 3 && c.maxDifference == 0.25)
    }

    @Test func comparisonTablesGiveTheRatios() {
        func cell(_ p: CapacityPlayer, _ n: Int, limit: Bool = false) -> CapacityCell {
            var c = CapacityCell(format: .wav, period: 64, sampleRate: 48000, realtime: true, capacity: n, atLimit: limit, trials: 5, machineTrials: 0,
                                 cpuMsPerTrackSecond: 1, maxRSSMiB: 100, controlShare: 0.9, rssSlopeMiBPerTrack: 0.9, rssMiBPerTrack: 1,
                                 cpuSlopeMsPerTrackSecond: 0.8, xrunsAtCapacity: 0, bothLateAtCapacity: 0, referenceLateAtCapacity: 0, aqsyncLateAtCapacity: 0)
            c.player = p
            return c
        }
        let t = describeCapacityComparison([cell(.aqsync, 1024, limit: true), cell(.ecasound, 128)])
        #expect(t.contains("| wav | 64 | ≥ 1024 | ecasound | 128 | ≥ 8.00 |"))
        let table = describeCapacity([cell(.aqsync, 300), cell(.ecasound, 100)], seconds: 10, strict: false)
        #expect(table.contains("| aqsync | wav | 64 | 300 |") && table.contains("| 3.00 |"))

        // A peer that is not installed: a skipped cell, never a failure.
        var missing = cell(.ecasound, 0)
        missing.skipped = "ecasound is not installed"
        let skipped = describeCapacity([cell(.aqsync, 300), missing], seconds: 10, strict: false)
        #expect(skipped.contains("| ecasound | wav | 64 | — | skipped: ecasound is not installed |"))
        #expect(skipped.contains("| wav | 64 | 300 | ecasound | — (ecasound is not installed) | — |"))
        #expect(findExecutable("ecasound", path: "/nonexistent") == nil)
        #expect(findExecutable("sh", path: "/nonexistent:/bin")?.path == "/bin/sh")

        let rows = [
            CapacityCPURow(player: .aqsync, format: .wav, period: 64, tracks: 1, seconds: 10, cpuSeconds: [0.2, 0.3, 0.25], controlShares: [0.9], maxRSSMiB: [150], passed: 3, failures: []),
            CapacityCPURow(player: .ecasound, format: .wav, period: 64, tracks: 1, seconds: 10, cpuSeconds: [0.1], controlShares: [0.1], maxRSSMiB: [20], passed: 1, failures: []),
            CapacityCPURow(player: .aqsync, format: .wav, period: 64, tracks: 64, seconds: 10, cpuSeconds: [0.89], controlShares: [0.9], maxRSSMiB: [200], passed: 1, failures: []),
            CapacityCPURow(player: .ecasound, format: .wav, period: 64, tracks: 64, seconds: 10, cpuSeconds: [3.25], controlShares: [0.1], maxRSSMiB: [90], passed: 1, failures: []),
        ]
        let cpu = describeCapacityCPU(rows)
        // 64 tracks: aqsync 0.89 s / 640 track-seconds = 1.391 ms, ecasound 5.078 ms: 0.27.
        #expect(cpu.contains("| wav | 64 | 64 | ecasound | 5.078; 5.08 | 0.27 |"))
        // Marginal: aqsync (0.89 − 0.25) / 630 = 1.016 ms; ecasound (3.25 − 0.1) / 630 = 5.000 ms.
        #expect(cpu.contains("aqsync 1.016; ecasound 5.000 (aqsync / ecasound 0.20)"))
        #expect(median([3, 1, 2]) == 2 && median([1, 2, 3, 4]) == 2.5 && median([]) == 0)
    }
}
