import AQEngine
import AQJack
import AQSession
import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Prints `aqsync: MESSAGE` on stderr.
func printError(_ message: String) {
    FileHandle.standardError.write(Data("aqsync: \(message)\n".utf8))
}

/// Loads a session or exits with status 1 and one line naming the problem.
func loadSession(_ path: String) throws -> Session {
    do {
        return try SessionLoader.load(URL(fileURLWithPath: path))
    } catch {
        printError(error.description)
        throw ExitCode(1)
    }
}

/// Writes a line to stdout at once (stdout may be a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// `aqsync render SESSION -o OUT.wav`: offline render through the same player as `play`.
struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a session to a WAV file, as fast as possible (no JACK).",
        discussion: "The samples are those live playback sends for the same session at the same rate, frame for frame.")

    @Argument(help: "The session file (TOML, see docs/session-format.md); several: a set list, rendered one after another (each after its [session] gap).")
    var sessions: [String]

    @Option(name: .shortAndLong, help: "The WAV file to write.")
    var output: String

    @Option(help: "Sample format: f32 (IEEE float), s16 or s24 (PCM, rounded and clipped).")
    var format: String = "f32"

    @Option(help: "Frames per second of the render (default: the session's sample_rate, else 48000).")
    var rate: Double?

    @Option(help: "Frames per render cycle (the output does not depend on it).")
    var cycle: Int = 1024

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    @Option(help: ArgumentHelp("Start at this session position: seconds (90), m:ss.sss (1:30), frames:N (at the session rate) or a marker's name.", valueName: "POSITION"))
    var from: String?

    @Option(help: ArgumentHelp("Render only the tracks of this part (those with part = \"NAME\"), as 'aqsync play --part' plays them.", valueName: "NAME"))
    var part: String?

    func validate() throws {
        if sessions.isEmpty { throw ValidationError("give a session file") }
        if let from { try checkFromOption(from) }
        if sessions.count > 1 && from != nil { throw ValidationError("--from applies to one session, not to a set list") }
        guard WAVSampleFormat(rawValue: format) != nil else {
            throw ValidationError("--format must be f32, s16 or s24, not '\(format)'")
        }
        guard cycle >= 16 && cycle <= 65536 else { throw ValidationError("--cycle must be 16 to 65536 frames") }
        if let rate, !(rate >= 8000 && rate <= 192_000) { throw ValidationError("--rate must be 8000 to 192000") }
    }

    func run() throws {
        let fmt = WAVSampleFormat(rawValue: format)!
        if sessions.count > 1 {
            let list = try sessions.map { try selectPart(of: loadSession($0), part: part) }
            do {
                let began = Date()
                let results = try OfflineRenderer.renderSetList(list, to: URL(fileURLWithPath: output), format: fmt, sampleRate: rate, cycleFrames: cycle)
                if !quiet {
                    say("rendered a set list of \(list.count) sessions at \(Int(results[0].sampleRate)) Hz, \(fmt.rawValue) -> \(output) (\(String(format: "%.2f", Date().timeIntervalSince(began))) s)")
                    for (s, r) in zip(list, results) {
                        say("'\(s.name)': \(r.frames) frames\(s.gap != nil && s.url != list[0].url ? " (after its gap)" : "")")
                        printReport(r.tracks)
                    }
                    if let c = results.last?.clippedSamples, c > 0 { say("warning: \(c) samples clipped") }
                }
            } catch {
                printError(error.description)
                throw ExitCode(1)
            }
            return
        }
        let s = try selectPart(of: loadSession(sessions[0]), part: part)
        let tty = isatty(STDERR_FILENO) != 0
        let position = try parseFromOption(from ?? "0", session: s)
        do {
            let r = try OfflineRenderer.render(
                session: s, to: URL(fileURLWithPath: output), format: fmt, sampleRate: rate, cycleFrames: cycle,
                from: position,
                progress: quiet || !tty ? nil : { done, total in
                    let pct = total > 0 ? Double(done) * 100 / Double(total) : 100
                    FileHandle.standardError.write(Data(String(format: "\r\u{1B}[Krendering %5.1f%%", pct).utf8))
                })
            if tty && !quiet { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            if !quiet {
                say("rendered '\(s.name)': \(r.frames) frames (\(formatSeconds(Double(r.frames) / r.sampleRate))) at \(Int(r.sampleRate)) Hz, \(r.channels) ch, \(fmt.rawValue) -> \(output)")
                say(String(format: "took %.2f s: %.1f× real time", r.seconds, r.speed))
                if r.clippedSamples > 0 { say("warning: \(r.clippedSamples) samples clipped") }
                printReport(r.tracks)
            }
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
    }
}

/// `--from POSITION`, checked before the session is read: a negative position is refused.
func checkFromOption(_ text: String) throws {
    let t = text.trimmingCharacters(in: .whitespaces)
    if t.hasPrefix("-") || t.hasPrefix("frames:-") {
        throw ValidationError("--from '\(text)' is negative: a position is at or after the session start")
    }
}

/// `--from POSITION`: a marker of `session` (by name), seconds, `m:ss.sss`, or `frames:N`;
/// negative or unparsable positions are refused (a `ValidationError`: status 64).
func parseFromOption(_ text: String, session: Session) throws -> SessionTime {
    try checkFromOption(text)
    guard let p = session.position(text.trimmingCharacters(in: .whitespaces)) ?? session.position(text) else {
        let markers = session.markers.isEmpty ? "the session has no markers" : "markers: " + session.markers.map(\.name).joined(separator: ", ")
        throw ValidationError("--from '\(text)' is not a position nor a marker of the session: write seconds (90), m:ss.sss (1:30), frames:N or a marker's name (\(markers))")
    }
    return p
}

/// `h:mm:ss.mmm` or `m:ss.mmm`.
func formatSeconds(_ s: Double) -> String {
    let t = max(0, s)
    let h = Int(t) / 3600, m = (Int(t) / 60) % 60
    let sec = t - Double(h * 3600 + m * 60)
    return h > 0 ? String(format: "%d:%02d:%06.3f", h, m, sec) : String(format: "%d:%06.3f", m, sec)
}

/// The final report: one line per track.
func printReport(_ tracks: [SessionPlayer.TrackReport]) {
    let w = max(5, tracks.map(\.name.count).max() ?? 5)
    say("track".padding(toLength: w, withPad: " ", startingAt: 0) + "  scheduled start   actual start   frames played   late frames skipped")
    for t in tracks {
        let name = t.name.padding(toLength: w, withPad: " ", startingAt: 0)
        let actual = t.actualStartFrame.map(String.init) ?? "-"
        var line = "\(name)  \(String(t.scheduledStartFrame).leftPad(15))   \(actual.leftPad(12))   \(String(t.framesPlayed).leftPad(13))   \(String(t.lateFrames).leftPad(19))"
        if !t.completed { line += "   (stopped early)" }
        if t.damagedPackets > 0 { line += "   \(t.damagedPackets) damaged packet(s) played as silence" }
        if let e = t.error { line += "   error: \(e)" }
        say(line)
    }
}

extension String {
    func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: " ", count: n - count) + self }
}

/// `aqsync make-demo DIR` (hidden): writes the demo session's audio, synthesized.
struct MakeDemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make-demo", abstract: "Write the demo session's audio files (synthesized).", shouldDisplay: false)

    @Argument(help: "The folder (the session file's folder).")
    var directory: String

    func run() throws {
        do {
            let files = try DemoAudio.write(to: URL(fileURLWithPath: directory))
            for f in files { say("wrote \(f.path)") }
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
    }
}
