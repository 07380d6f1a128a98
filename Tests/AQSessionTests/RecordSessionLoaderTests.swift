import AQSession
import AQTesting
import Foundation
import Testing

/// `[[record]]` tables: every key read, every mistake refused before anything plays, with the
/// session file, line and column of the key at fault.
@Suite("Record session loader")
struct RecordSessionLoaderTests {
    static func fixtures() throws -> TempDir {
        let dir = try TempDir()
        _ = try makeImpulseFile(dir, "ok.wav", rate: 48000, frames: 1000, impulses: [[10]], encoding: ["-e", "signed-integer", "-b", "16"])
        try FileManager.default.createDirectory(at: dir.file("folder.wav"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dir.file("locked"), withIntermediateDirectories: true)
        chmod(dir.file("locked").path, 0o555)
        return dir
    }

    static let head = "[[track]]\nfile = \"ok.wav\"\n[[record]]\n"

    /// (name, the [[record]] body, kind, message, line, column); the body starts on line 4.
    static let cases: [(name: String, body: String, kind: SessionError.Kind, message: String, line: Int?, column: Int?)] = [
        ("unknown key", "file = \"t.wav\"\n  gain = 1\n", .unknownKey, "unknown key 'gain' in record 1", 5, 3),
        ("no file", "channels = 1\n", .invalidValue, "record 1 has no file", 3, 1),
        ("bad extension", "file = \"t.mp3\"\n", .invalidValue, "must end in .wav, .caf, .aif or .aiff", 4, 1),
        ("bad bit depth", "file = \"t.wav\"\nformat = 20\n", .invalidValue, "format must be 16, 24 or 32", 5, 1),
        ("bad format string", "file = \"t.wav\"\nformat = \"mp3\"\n", .invalidValue, "not 'mp3'", 5, 1),
        ("alac in wav", "file = \"t.wav\"\nformat = \"alac\"\n", .invalidValue, "alac takes must be .caf", 5, 1),
        ("aac in aiff", "file = \"t.aiff\"\nformat = \"aac\"\n", .invalidValue, "aac takes must be .caf", 5, 1),
        ("alac nine channels", "file = \"t.caf\"\nformat = \"alac\"\nchannels = 9\n", .invalidValue, "ALAC takes have 1 to 8 channels, not 9", 6, 1),
        ("aac nine channels", "file = \"t.caf\"\nformat = \"aac\"\nchannels = 9\n", .invalidValue, "AAC takes have 1 to 8 channels, not 9", 6, 1),
        ("channels zero", "file = \"t.wav\"\nchannels = 0\n", .invalidValue, "channels must be an integer from 1 to 32", 5, 1),
        ("channels too many", "file = \"t.wav\"\nchannels = 33\n", .invalidValue, "from 1 to 32", 5, 1),
        ("connect not a list", "file = \"t.wav\"\nconnect = \"system:capture_1\"\n", .invalidValue, "connect must be an array", 5, 1),
        ("connect not strings", "file = \"t.wav\"\nconnect = [1]\n", .invalidValue, "non-empty strings", 5, 1),
        ("connect count", "file = \"t.wav\"\nchannels = 2\nconnect = [\"a:b\"]\n", .invalidValue, "connect lists 1 port(s) for 2 channel(s)", 6, 1),
        ("negative start", "file = \"t.wav\"\nstart = -1\n", .invalidValue, "start -1 is negative", 5, 1),
        ("negative start string", "file = \"t.wav\"\nstart = \"-2s\"\n", .invalidValue, "is negative", 5, 1),
        ("zero length", "file = \"t.wav\"\nlength = 0\n", .invalidValue, "length 0 is not positive", 5, 1),
        ("zero length string", "file = \"t.wav\"\nlength = \"0s\"\n", .invalidValue, "not positive", 5, 1),
        ("bad length", "file = \"t.wav\"\nlength = \"long\"\n", .invalidValue, "is not a time", 5, 1),
        ("compensate not bool", "file = \"t.wav\"\ncompensate = \"yes\"\n", .invalidValue, "compensate must be true or false", 5, 1),
        ("a directory", "file = \"folder.wav\"\n", .unwritableFile, "is a directory", 4, 1),
        ("missing folder", "file = \"nowhere/t.wav\"\n", .unwritableFile, "does not exist", 4, 1),
        ("unwritable folder", "file = \"locked/t.wav\"\n", .unwritableFile, "cannot write in", 4, 1),
        ("a track's file", "file = \"ok.wav\"\n", .invalidValue, "is a track of the session", 4, 1),
        ("two takes one file", "file = \"t.wav\"\n[[record]]\nfile = \"./t.wav\"\n", .invalidValue, "record 1 already records to", 6, 1),
        ("too many channels in all", "file = \"a.wav\"\nchannels = 20\n[[record]]\nfile = \"b.wav\"\nchannels = 20\n", .invalidValue, "more than 32 channels in all", 8, 1),
    ]

    @Test(arguments: 0..<cases.count)
    func loaderRefuses(index: Int) throws {
        let c = Self.cases[index]
        if c.name == "unwritable folder" && getuid() == 0 {
            // root writes anywhere: access(2) says yes. Checked with a read-only folder a
            // non-root user cannot write (and by the unwritable-path CLI test below).
            return
        }
        let dir = try Self.fixtures()
        let url = try dir.write("s.toml", Self.head + c.body)
        do {
            _ = try SessionLoader.load(url)
            Issue.record("\(c.name): accepted")
        } catch {
            #expect(error.kind == c.kind, "\(c.name): \(error)")
            #expect(error.message.contains(c.message), "\(c.name): \(error)")
            #expect(error.line == c.line && error.column == c.column, "\(c.name): position \(String(describing: error.line)):\(String(describing: error.column)) in \(error)")
            #expect(error.description.hasPrefix(url.path), "\(c.name): \(error)")
        }
    }

    @Test func keysAreRead() throws {
        let dir = try Self.fixtures()
        let url = try dir.write("s.toml", Self.head + """
            file = "vox.aiff"
            format = "32f"
            connect = ["system:capture_1", "system:capture_2"]
            start = "1.5s"
            length = 48000
            compensate = false
            [[record]]
            file = "room.caf"
            format = 16
            channels = 3
            [[record]]
            file = "gtr.WAV"
            connect = ["x:y"]
            """)
        let s = try SessionLoader.load(url)
        try #require(s.takes.count == 3)
        let a = s.takes[0], b = s.takes[1], c = s.takes[2]
        #expect(a.file == dir.file("vox.aiff") && a.format == TakeFormat(container: .aiff, sample: .float32))
        #expect(a.channels == 2 && a.connect == ["system:capture_1", "system:capture_2"])
        #expect(a.start == .seconds(1.5) && a.length == .frames(48000) && !a.compensate)
        #expect(b.format == TakeFormat(container: .caf, sample: .int(bits: 16)) && b.channels == 3 && b.connect.isEmpty)
        #expect(b.start == .frames(0) && b.length == nil && b.compensate)
        #expect(c.format == TakeFormat(container: .wav, sample: .int(bits: 24)) && c.channels == 1)
        // Connected takes first on the capture ports, so the connection list has no gap.
        let layout = s.takeInputLayout
        #expect(layout.offsets == [0, 3, 2] && layout.total == 6)
        #expect(layout.connections == ["system:capture_1", "system:capture_2", "x:y"])
        // Lengths: given, or up to the end of the last track (1000 frames).
        #expect(s.deviceLength(of: a, deviceRate: 48000) == 48000)
        #expect(s.deviceLength(of: b, deviceRate: 48000) == 1000)
        #expect(s.startOffset(of: a, deviceRate: 48000) == 72000)
    }

    /// The command: an unwritable take is refused before anything plays (exit 1, no server).
    @Test func commandRefusesUnwritableTake() throws {
        let dir = try Self.fixtures()
        let url = try dir.write("s.toml", Self.head + "file = \"nowhere/t.wav\"\n")
        let r = try runTool(aqsyncURL().path, ["play", url.path, "--server", "aqrec-none-\(getpid())", "--no-start-server"])
        #expect(r.status == 1, "\(r.output)")
        #expect(r.output.contains("\(url.path):4:1: take 't.wav': the folder") && r.output.contains("does not exist"), "\(r.output)")
        #expect(!r.output.contains("playing"), "\(r.output)")
    }
}
