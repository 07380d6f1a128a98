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
}
