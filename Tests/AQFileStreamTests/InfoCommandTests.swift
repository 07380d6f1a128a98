import Foundation
import Testing

/// `aqsync info`, run as users run it: the built executable next to the test bundle.
@Suite struct InfoCommandTests {
    static var aqsync: URL {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = dir.appendingPathComponent("aqsync")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/aqsync")
    }

    /// Runs aqsync; output through files (Foundation traps on EINTR from pipes).
    func run(_ args: [String], in f: Fixtures) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = Self.aqsync
        p.arguments = args
        let out = f.dir.appendingPathComponent("out-\(UUID().uuidString)"), err = f.dir.appendingPathComponent("err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = try FileHandle(forWritingTo: err)
        try p.run()
        p.waitUntilExit()
        return (p.terminationStatus, try String(contentsOf: out, encoding: .utf8), try String(contentsOf: err, encoding: .utf8))
    }

    @Test func jsonForAWAVWrittenBySox() throws {
        let f = try Fixtures()
        try f.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "24", f.path("t.wav"), "synth", "0.5", "sine", "440"])
        let r = try run(["info", f.path("t.wav"), "--json"], in: f)
        #expect(r.status == 0, "\(r.err)")
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        for key in ["file_format", "format_id", "sample_rate", "channels", "bits_per_channel", "bytes_per_packet",
                    "frames_per_packet", "packet_count", "frame_count", "priming_frames", "remainder_frames", "data_offset",
                    "audio_data_byte_count", "maximum_packet_size", "bit_rate", "magic_cookie_bytes", "duration_seconds"] {
            #expect(obj[key] != nil, "missing \(key)")
        }
        #expect(obj["file_format"] as? String == "WAVE")
        #expect(obj["format_id"] as? String == "lpcm")
        #expect(obj["sample_rate"] as? Double == 44100)
        #expect(obj["channels"] as? Int == 2)
        #expect(obj["bits_per_channel"] as? Int == 24)
        #expect(obj["frame_count"] as? Int == 22050)
        #expect(abs((obj["duration_seconds"] as? Double ?? 0) - 0.5) < 1e-9)
        let human = try run(["info", f.path("t.wav")], in: f)
        #expect(human.status == 0 && human.out.contains("44100"))
    }

    @Test func unreadableFileIsOneLineAndStatus1() throws {
        let f = try Fixtures()
        let junk = f.path("junk.wav")
        try Data(repeating: 0x42, count: 1000).write(to: URL(fileURLWithPath: junk))
        for path in [junk, f.path("missing.wav")] {
            let r = try run(["info", path], in: f)
            #expect(r.status == 1)
            let lines = r.err.split(separator: "\n")
            #expect(lines.count == 1, "\(r.err)")
            #expect(r.err.contains(path))
        }
    }

    /// Length of ffmpeg's own decode of a file, in frames.
    func ffmpegFrames(_ f: Fixtures, _ file: String, channels: Int) throws -> Int {
        let out = f.path("decode-\(UUID().uuidString).f32")
        try f.ffmpeg(["-i", file, "-f", "f32le", out])
        return try f.read(out).count / 4 / channels
    }

    func json(_ r: (status: Int32, out: String, err: String)) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
    }

    /// ffmpeg's ALAC CAF (pakt after the data) is read with its packet table first, and the
    /// frame count is the decoded length: the short last packet counted as its own header says,
    /// also for a mono file ending in silence whose data arrives with the header.
    @Test(arguments: [(2, "sine=f=440:d=0.7", ""), (1, "sine=f=440:d=0.5", "apad=pad_dur=0.5")])
    func alacCAFWithPacketTableAfterData(channels: Int, source: String, filter: String) throws {
        let f = try Fixtures()
        try f.ffmpeg(["-f", "lavfi", "-i", source + ":sample_rate=44100"] + (filter.isEmpty ? [] : ["-af", filter])
            + ["-ac", "\(channels)", "-c:a", "alac", "-sample_fmt", "s16p", f.path("t.caf")])
        let r = try run(["info", f.path("t.caf"), "--json"], in: f)
        #expect(r.status == 0, "\(r.err)")
        let obj = try json(r)
        #expect(obj["format_id"] as? String == "alac")
        #expect(obj["frame_count"] as? Int == (try ffmpegFrames(f, f.path("t.caf"), channels: channels)))
    }

    /// RF64, Wave64, FLAC and M4A files: container, format and exact frame counts (gapless:
    /// the AAC's priming and padding are not counted).
    @Test(arguments: [
        ("t.wav", ["-c:a", "pcm_s24le", "-rf64", "always"], "RF64", "lpcm"),
        ("t.w64", ["-c:a", "pcm_s16le"], "W64f", "lpcm"),
        ("t.flac", ["-c:a", "flac"], "flac", "flac"),
        ("t.m4a", ["-c:a", "aac"], "m4af", "aac "),  // moov after mdat: read moov first
        ("a.m4a", ["-c:a", "alac"], "m4af", "alac"),
        ("t.opus", ["-c:a", "libopus"], "ogg ", "opus"),  // length: last granule − pre-skip
        ("t.oga", ["-c:a", "flac"], "ogg ", "flac"),  // ffmpeg's STREAMINFO has no length: the granule
        ("t.ogg", ["-c:a", "libvorbis"], "ogg ", "vorb"),
    ])
    func newContainers(name: String, codec: [String], fileFormat: String, formatID: String) throws {
        let f = try Fixtures()
        try f.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=0.3:sample_rate=48000"] + codec + [f.path(name)])
        let r = try run(["info", f.path(name), "--json"], in: f)
        #expect(r.status == 0, "\(r.err)")
        let obj = try json(r)
        #expect(obj["file_format"] as? String == fileFormat)
        #expect(obj["format_id"] as? String == formatID)
        #expect(obj["frame_count"] as? Int == 14400)
    }

    /// A format aqsync does not read is named in the one-line refusal.
    @Test func refusalNamesTheFormat() throws {
        let f = try Fixtures()
        try f.ffmpeg(["-f", "lavfi", "-i", "sine=d=0.2", "-c:a", "wavpack", f.path("t.wv")])
        let r = try run(["info", f.path("t.wv")], in: f)
        #expect(r.status == 1)
        #expect(r.err.contains("WavPack") && r.err.contains("'typ?'"), "\(r.err)")
        try f.ffmpeg(["-f", "lavfi", "-i", "sine=d=0.2", "-ar", "16000", "-c:a", "libspeex", "-f", "ogg", f.path("t.spx")])
        let v = try run(["info", f.path("t.spx")], in: f)
        #expect(v.status == 1)
        #expect(v.err.contains("Speex") && v.err.contains("'fmt?'"), "\(v.err)")
    }
}
