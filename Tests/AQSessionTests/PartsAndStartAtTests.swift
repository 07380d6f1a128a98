import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 26: `part = "NAME"` on tracks and takes, `--part` selection, and the `--start-at`
/// instant's forms.
@Suite("Parts and --start-at: input")
struct PartsAndStartAtTests {
    static func load(_ dir: TempDir, _ text: String) -> Result<Session, SessionError> {
        let url = try! dir.write("p\(UUID().uuidString.prefix(4)).toml", text)
        do throws(SessionError) { return .success(try SessionLoader.load(url)) } catch { return .failure(error) }
    }

    static let session = """
        [session]
        sample_rate = 48000
        [[track]]
        name = "drums"
        file = "pcm.wav"
        part = "A"
        [[track]]
        name = "bass"
        file = "pcm.wav"
        part = "B"
        [[track]]
        name = "pad"
        file = "pcm.wav"
        [[record]]
        file = "takeA.wav"
        part = "A"
        [[record]]
        file = "take.wav"
        """

    @Test func partsSelectTracksAndTakes() throws {
        let dir = try MarkerAndLoopInputTests.folder()
        let s = try Self.load(dir, Self.session).get()
        #expect(s.parts == ["A", "B"])
        #expect(s.tracks.map(\.part) == ["A", "B", nil])
        #expect(s.takes.map(\.part) == ["A", nil])
        // No --part: everything.
        let all = try s.selecting(part: nil)
        #expect(all.tracks.map(\.name) == ["drums", "bass", "pad"] && all.takes.count == 2)
        // A part: only its tracks and takes (none without a part).
        let a = try s.selecting(part: "A")
        #expect(a.tracks.map(\.name) == ["drums"])
        #expect(a.takes.map(\.name) == ["takeA.wav"])
        let b = try s.selecting(part: "B")
        #expect(b.tracks.map(\.name) == ["bass"] && b.takes.isEmpty)
    }

    @Test func unknownPartsAndBadValuesAreRefused() throws {
        let dir = try MarkerAndLoopInputTests.folder()
        let s = try Self.load(dir, Self.session).get()
        do {
            _ = try s.selecting(part: "C")
            Issue.record("part C accepted")
        } catch {
            #expect(error.description.contains("no track or take of the session is in part 'C'; its parts: A, B"), "\(error.description)")
        }
        let plain = try Self.load(dir, "[[track]]\nfile = \"pcm.wav\"").get()
        do {
            _ = try plain.selecting(part: "A")
            Issue.record("a part of a session without parts accepted")
        } catch {
            #expect(error.description.contains("the session names no parts"), "\(error.description)")
        }
        // A part with takes only plays nothing: refused.
        let takesOnly = try Self.load(dir, "[[track]]\nfile = \"pcm.wav\"\n[[record]]\nfile = \"t.wav\"\npart = \"R\"").get()
        do {
            _ = try takesOnly.selecting(part: "R")
            Issue.record("a part without tracks accepted")
        } catch {
            #expect(error.description.contains("part 'R' has no tracks"), "\(error.description)")
        }
        for (value, message) in [("1", "part must be a string"), ("\"\"", "part must be a non-empty name"), ("\" A\"", "part must be a non-empty name")] {
            switch Self.load(dir, "[[track]]\nfile = \"pcm.wav\"\npart = \(value)") {
            case .success: Issue.record("part = \(value) accepted")
            case .failure(let e): #expect(e.description.contains(message) && e.line == 3, "\(e.description)")
            }
        }
    }

    @Test func startAtForms() throws {
        let now = SystemInstant(clock: .realtime, nanoseconds: 1_800_000_000_000_000_000)
        func p(_ s: String) throws -> Int64 { try StartInstant.parse(s, now: now).nanoseconds }
        // Checked against date(1): `date -u -d 2026-11-27T12:00:03Z +%s` is 1795780803.
        #expect(try p("2026-11-27T12:00:03Z") == 1_795_780_803_000_000_000)
        #expect(try p("2026-11-27T12:00:03.250Z") == 1_795_780_803_250_000_000)
        #expect(try p("2026-11-27T12:00:03.123456789Z") == 1_795_780_803_123_456_789)
        #expect(try p("2026-11-27t12:00:03,5z") == 1_795_780_803_500_000_000)
        #expect(try p("2026-11-27T13:00:03.250+01:00") == 1_795_780_803_250_000_000)
        #expect(try p("2026-11-27T07:30:03.250-0430") == 1_795_780_803_250_000_000)
        #expect(try p("2024-02-29T00:00:00Z") == 1_709_164_800_000_000_000)
        #expect(try p("1970-01-01T00:00:00Z") == 0)
        #expect(try p("+3") == now.nanoseconds + 3_000_000_000)
        #expect(try p("+2.5s") == now.nanoseconds + 2_500_000_000)
        #expect(try p(" +0.001 ") == now.nanoseconds + 1_000_000)
        #expect(try StartInstant.parse("+1", now: now).clock == .realtime)
        for bad in ["2026-11-27T12:00:03", "2026-11-27T12:00:03.Z", "2026-11-27T12:00:60Z", "2026-02-29T12:00:00Z",
                    "2026-13-01T00:00:00Z", "2026-11-27T24:00:00Z", "2026-11-27T12:00:03.1234567891Z", "2026-11-27",
                    "12:00:03Z", "+0", "+-1", "+", "+1.2.3", "+.5", "+1e3", "now", "2026-11-27T12:00:03+25:00", "2026-11-27T12:00:03Zjunk"] {
            #expect(throws: StartInstantError.self, "\(bad)") { try StartInstant.parse(bad, now: now) }
        }
        #expect(StartInstant.format(1_795_780_803_250_000_000) == "2026-11-27T12:00:03.250000000Z")
        #expect(StartInstant.format(1_709_164_800_000_000_001) == "2024-02-29T00:00:00.000000001Z")
    }

    /// The command line refuses, before any server is touched: an unknown part (status 1,
    /// listing the parts), an instant less than --lead ahead or past (status 1), a malformed
    /// instant, --start-at with --transport or a set list (status 64).
    @Test func commandLineRefusals() throws {
        let dir = try MarkerAndLoopInputTests.folder()
        let url = try dir.write("parts.toml", Self.session)
        let env = ["JACK_DEFAULT_SERVER": "aqsync-none-\(getpid())"]
        func run(_ args: [String]) throws -> (status: Int32, output: String) {
            try runTool(aqsyncURL().path, ["play", url.path, "--no-start-server"] + args, environment: env)
        }
        let unknown = try run(["--part", "C"])
        #expect(unknown.status == 1 && unknown.output.contains("no track or take of the session is in part 'C'; its parts: A, B"), "\(unknown)")
        let soon = try run(["--start-at", "+0.1"])
        #expect(soon.status == 1 && soon.output.contains("s from now; it must be at least --lead (0.25 s) ahead"), "\(soon)")
        let past = try run(["--start-at", "2020-01-01T00:00:00Z", "--lead", "0"])
        #expect(past.status == 1 && past.output.contains("--start-at 2020-01-01T00:00:00.000000000Z is ") && past.output.contains(" s ago"), "\(past)")
        let bad = try run(["--start-at", "tomorrow"])
        #expect(bad.status == 64 && bad.output.contains("'tomorrow' is not an instant"), "\(bad)")
        let transport = try run(["--start-at", "+3", "--transport", "follow"])
        #expect(transport.status == 64 && transport.output.contains("--start-at and --transport follow exclude each other"), "\(transport)")
        let setList = try runTool(aqsyncURL().path, ["play", url.path, url.path, "--start-at", "+3"], environment: env)
        #expect(setList.status == 64 && setList.output.contains("--start-at starts one session, not a set list"), "\(setList)")
        // --netjack-master / --netjack-slave (docs/netjack.md): three full port names, one side,
        // no --transport, no set list, no --start-at on the slave.
        let ports = "system:capture_1,system:capture_2,system:playback_1"
        let few = try run(["--netjack-slave", "system:capture_1"])
        #expect(few.status == 64 && few.output.contains("--netjack-slave takes three full JACK port names, CLIENT:PORT"), "\(few)")
        let noClient = try run(["--netjack-master", "a:b,:c,d:e"])
        #expect(noClient.status == 64 && noClient.output.contains("--netjack-master takes three full JACK port names"), "\(noClient)")
        let both = try run(["--netjack-slave", ports, "--netjack-master", ports])
        #expect(both.status == 64 && both.output.contains("--netjack-master and --netjack-slave exclude each other"), "\(both)")
        let slaveAt = try run(["--netjack-slave", ports, "--start-at", "+3"])
        #expect(slaveAt.status == 64 && slaveAt.output.contains("--netjack-slave and --start-at exclude each other"), "\(slaveAt)")
        let following = try run(["--netjack-master", ports, "--transport", "follow"])
        #expect(following.status == 64 && following.output.contains("--netjack-master and --transport follow exclude each other"), "\(following)")
        // Several --netjack-master (one per slave): each checked, and no port shared by two links.
        let one = "s1:to_slave_1,s1:to_slave_2,s1:from_slave_1"
        let badSecond = try run(["--netjack-master", one, "--netjack-master", "s2:to_slave_1,s2:to_slave_2"])
        #expect(badSecond.status == 64 && badSecond.output.contains("--netjack-master takes three full JACK port names"), "\(badSecond)")
        let shared = try run(["--netjack-master", one, "--netjack-master", "s2:to_slave_1,s2:to_slave_2,s1:from_slave_1"])
        #expect(shared.status == 64 && shared.output.contains("names s1:from_slave_1, which the 1st --netjack-master names too"), "\(shared)")
        let twice = try run(["--netjack-master", "s1:to_slave_1,s1:to_slave_1,s1:from_slave_1"])
        #expect(twice.status == 64 && twice.output.contains("names s1:to_slave_1 twice"), "\(twice)")
        let list = try runTool(aqsyncURL().path, ["play", url.path, url.path, "--netjack-slave", ports], environment: env)
        #expect(list.status == 64 && list.output.contains("--netjack-slave starts one session, not a set list"), "\(list)")
    }
}

