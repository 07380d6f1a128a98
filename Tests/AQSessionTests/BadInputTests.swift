import AQSession
import AQTesting
import Foundation
import Testing

/// Broken sessions are refused before anything plays: exit status 1 and one line naming the
/// file and the problem, no stack trace, no JACK server started.
@Suite("Bad input")
struct BadInputTests {
    /// A folder with one good audio file (`ok.wav`, 1000 frames), a text file posing as audio,
    /// a ten-channel file, and a folder named like a file.
    static func fixtures() throws -> TempDir {
        let dir = try TempDir()
        _ = try makeImpulseFile(dir, "ok.wav", rate: 48000, frames: 1000, impulses: [[10]], encoding: ["-e", "signed-integer", "-b", "16"])
        _ = try dir.write("notes.wav", "these are not samples\n")
        _ = try makeImpulseFile(dir, "ten.wav", rate: 48000, frames: 100, impulses: Array(repeating: [1], count: 10), encoding: ["-e", "signed-integer", "-b", "16"])
        try FileManager.default.createDirectory(at: dir.file("folder.wav"), withIntermediateDirectories: true)
        return dir
    }

    static let cases: [(name: String, toml: String, kind: SessionError.Kind, message: String)] = [
        ("syntax", "[session]\nname = \"x\n[[track]]\nfile = \"ok.wav\"\n", .syntax, "TOML syntax error"),
        ("missing file", "[[track]]\nfile = \"nope.wav\"\n", .unreadableFile, "no such file"),
        ("unreadable file", "[[track]]\nfile = \"folder.wav\"\n", .unreadableFile, "directory"),
        ("unknown key", "[[track]]\nfile = \"ok.wav\"\nvolume = 3\n", .unknownKey, "unknown key 'volume'"),
        ("unknown section", "[mixer]\nx = 1\n[[track]]\nfile = \"ok.wav\"\n", .unknownKey, "unknown key 'mixer'"),
        ("negative start", "[[track]]\nfile = \"ok.wav\"\nstart = -5\n", .invalidValue, "negative"),
        ("negative start string", "[[track]]\nfile = \"ok.wav\"\nstart = \"-1.5s\"\n", .invalidValue, "negative"),
        ("bad time", "[[track]]\nfile = \"ok.wav\"\nstart = \"soon\"\n", .invalidValue, "is not a time"),
        ("trims too long", "[[track]]\nfile = \"ok.wav\"\ntrim_start = 600\ntrim_end = 400\n", .trimTooLong, "leave nothing"),
        ("gain not a number", "[[track]]\nfile = \"ok.wav\"\ngain_db = \"loud\"\n", .invalidValue, "gain_db must be a number"),
        ("no tracks", "[session]\nname = \"empty\"\n", .noTracks, "no tracks"),
        ("not audio", "[[track]]\nfile = \"notes.wav\"\n", .unsupportedAudio, "not an audio file"),
        ("too many channels", "[[track]]\nfile = \"ten.wav\"\n", .unsupportedAudio, "at most 8"),
        ("outputs mismatch", "[[track]]\nfile = \"ok.wav\"\noutputs = [1, 2]\n", .invalidValue, "outputs lists 2"),
        ("output out of range", "[output]\nchannels = 2\n[[track]]\nfile = \"ok.wav\"\noutputs = [3]\n", .invalidValue, "from 1 to 2"),
        ("no file", "[[track]]\nname = \"x\"\n", .invalidValue, "has no file"),
    ]

    /// The library error: its kind, its message, and the session file named.
    @Test(arguments: 0..<cases.count)
    func loaderRefuses(index: Int) throws {
        let c = Self.cases[index]
        let dir = try Self.fixtures()
        let url = try dir.write("s.toml", c.toml)
        #expect(throws: SessionError.self, "\(c.name)") { try SessionLoader.load(url) }
        do {
            _ = try SessionLoader.load(url)
        } catch {
            #expect(error.kind == c.kind, "\(c.name): \(error)")
            #expect(error.message.contains(c.message), "\(c.name): \(error)")
            #expect(error.description.contains(dir.url.lastPathComponent), "\(c.name): the file is named: \(error)")
        }
    }

    /// The command: exit status 1, the message on stderr, no stack trace, no server left.
    @Test(arguments: 0..<cases.count)
    func commandRefuses(index: Int) throws {
        let c = Self.cases[index]
        let dir = try Self.fixtures()
        let url = try dir.write("s.toml", c.toml)
        for args in [[url.path], ["render", url.path, "-o", dir.file("o.wav").path]] {
            let r = try runTool(aqsyncURL().path, args, environment: ["JACK_DEFAULT_SERVER": "aqsync-none-\(getpid())"])
            #expect(r.status == 1, "\(c.name) \(args.first!): status \(r.status): \(r.output)")
            #expect(r.output.contains(c.message), "\(c.name): \(r.output)")
            #expect(r.output.hasPrefix("aqsync: "), "\(c.name): \(r.output)")
            #expect(r.output.split(separator: "\n").count == 1, "one line: \(r.output)")
            #expect(!r.output.contains("Fatal error") && !r.output.contains("backtrace") && !r.output.contains("jackd"))
        }
    }

    /// TOML errors and keys carry line and column.
    @Test func positions() throws {
        let dir = try Self.fixtures()
        let a = try dir.write("a.toml", "[session]\nname = \"x\"\n\n[[track]]\nfile = \"ok.wav\"\n\n[[track]]\nfile = \"ok.wav\"\n  volume = 2\n")
        do { _ = try SessionLoader.load(a); Issue.record("accepted") } catch {
            #expect(error.kind == .unknownKey && error.line == 9 && error.column == 3, "\(error)")
            #expect(error.description.hasPrefix(a.path + ":9:3: "), "\(error)")
        }
        let b = try dir.write("b.toml", "[session]\nname = = 1\n")
        do { _ = try SessionLoader.load(b); Issue.record("accepted") } catch {
            #expect(error.kind == .syntax && error.line == 2 && error.column != nil, "\(error)")
        }
        let c = try dir.write("c.toml", "[[track]]\nfile = \"ok.wav\"\ngain_db = true\n")
        do { _ = try SessionLoader.load(c); Issue.record("accepted") } catch {
            #expect(error.line == 3, "\(error)")
        }
    }

    /// Times: frames, seconds, h:m:s; converted to device frames by rounding.
    @Test func times() {
        #expect(SessionTime.parse("1.5s") == .seconds(1.5))
        #expect(SessionTime.parse("250ms") == .seconds(0.25))
        #expect(SessionTime.parse("00:01:02.500") == .seconds(62.5))
        #expect(SessionTime.parse("01:02.5") == .seconds(62.5))
        #expect(SessionTime.parse("1:75") == nil && SessionTime.parse("x") == nil)
        #expect(SessionTime.frames(12347).deviceFrames(sessionRate: 44100, deviceRate: 48000) == 13439)
        #expect(SessionTime.frames(12347).deviceFrames(sessionRate: 48000, deviceRate: 48000) == 12347)
        #expect(SessionTime.seconds(1.5).deviceFrames(sessionRate: 44100, deviceRate: 48000) == 72000)
    }

    /// --no-start-server with no server: refused, status 1, nothing started.
    @Test func noStartServer() throws {
        let dir = try Self.fixtures()
        let url = try dir.write("s.toml", "[[track]]\nfile = \"ok.wav\"\n")
        let r = try runTool(aqsyncURL().path, ["play", url.path, "--no-start-server", "--server", "aqsync-none-\(getpid())"])
        #expect(r.status == 1 && r.output.contains("no JACK server") && r.output.contains("--no-start-server"), "\(r.output)")
    }
}
