import AQTesting
import Foundation
import Testing

/// `aqsync play` on a pseudo-terminal (a tmux pane of a given size), 20 tracks with long names.
@Suite("Terminal display on JACK", .serialized)
struct TerminalDisplayOnJACKTests {
    /// A tmux server of its own (its own socket), removed by `kill()`. tmux runs through
    /// posix_spawn with an empty signal mask, not Foundation's Process: a Process child (and
    /// the tmux server it forks, and the pane's shell) would inherit the descriptor Process
    /// watches for its end, and the test's blocked signals.
    final class Tmux {
        let socket = "aqsync-test-\(getpid())-\(UUID().uuidString.prefix(6))"
        func run(_ args: [String]) throws -> String {
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("\(socket)-\(UUID().uuidString.prefix(6)).log")
            defer { try? FileManager.default.removeItem(at: log) }
            let argv = ["/usr/bin/tmux", "-L", socket, "-f", "/dev/null"] + args
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            var attr = posix_spawnattr_t()
            posix_spawnattr_init(&attr)
            defer { posix_spawnattr_destroy(&attr) }
            var none = sigset_t()
            sigemptyset(&none)
            posix_spawnattr_setsigmask(&attr, &none)
            posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK))
            let cArgs = argv.map { strdup($0) } + [nil]
            defer { for a in cArgs { free(a) } }
            var pid: pid_t = 0
            let rc = posix_spawn(&pid, argv[0], &actions, &attr, cArgs, environ)
            guard rc == 0 else { throw ToolFailure(description: "tmux: posix_spawn: \(rc)") }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            guard status == 0 else { throw ToolFailure(description: "tmux \(args.first ?? ""): status \(status): \(output)") }
            return output
        }
        /// The pane's visible rows (`history`: with the scrollback above them).
        func capture(history: Bool = false) throws -> [String] {
            let text = try run(["capture-pane", "-p", "-t", "t"] + (history ? ["-S", "-"] : []))
            return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        func kill() { _ = try? run(["kill-server"]) }
    }

    /// Polls the pane (every 20 ms, at most 20 s) until `condition` holds for its rows.
    func awaitPane(_ tmux: Tmux, _ what: String, _ condition: ([String]) -> Bool) throws -> [String] {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let rows = try tmux.capture()
            if condition(rows) { return rows }
            usleep(20_000)
        }
        let rows = try tmux.capture()
        Issue.record("timed out waiting for \(what); the pane:\n\(rows.joined(separator: "\n"))")
        return rows
    }

    /// The session position the progress line shows, in seconds.
    static func position(_ rows: [String]) -> Double? {
        guard let head = rows.first(where: { $0.hasPrefix("▶ ") }) else { return nil }
        let parts = head.dropFirst(2).split(separator: " ").first?.split(separator: ":") ?? []
        guard parts.count == 2, let m = Double(parts[0]), let s = Double(parts[1]) else { return nil }
        return m * 60 + s
    }

    /// At 40 × 10 and 200 × 60, with the session playing: exactly one progress line in the pane
    /// and its scrollback after a second of redraws (a wrapped line or a display taller than
    /// the pane leaves copies behind), no row of the display wider than the pane less one, at
    /// most 9 (59) rows of it; at 40 × 10 the tracks come in pages with a line naming the page,
    /// at 200 × 60 every track, its bars and the scale are shown. aqsync then ends with status 0.
    @Test(.timeLimit(.minutes(2)), arguments: [(40, 10), (200, 60)])
    func displayFitsThePane(width: Int, height: Int) throws {
        let dir = try TempDir()
        var toml = "[output]\nclient_name = \"aqt-tty\"\n"
        for i in 1...20 {
            let name = String(format: "a-rather-long-track-name-%02d", i)
            let r = try runTool("/usr/bin/sox", ["-n", "-r", "48000", "-c", "1", "-b", "16", dir.file("\(name).wav").path,
                                                 "synth", "4", "sine", "\(200 + 20 * i)", "gain", "-\(i)"])
            try #require(r.status == 0, "sox: \(r.output)")
            toml += "[[track]]\nname = \"\(name)\"\nfile = \"\(name).wav\"\n"
        }
        let session = try dir.write("s.toml", toml)
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let tmux = Tmux()
        defer { tmux.kill() }
        let command = [aqsyncURL().path, "play", session.path, "--server", server.name, "--no-connect", "--no-start-server", "--allow-loss"]
            .map { "'\($0)'" }.joined(separator: " ")
        _ = try tmux.run(["new-session", "-d", "-s", "t", "-x", "\(width)", "-y", "\(height)",
                          "\(command); echo EXIT=$?; exec sleep 600"])

        // A second of 100 ms redraws.
        let rows = try awaitPane(tmux, "the progress line past 1 s") { (Self.position($0) ?? 0) >= 1 }
        let history = try tmux.capture(history: true)
        #expect(history.filter { $0.contains("▶") }.count == 1, "copies of the progress line:\n\(history.joined(separator: "\n"))")
        let top = try #require(rows.firstIndex { $0.hasPrefix("▶ ") })
        let display = Array(rows[top...]).reversed().drop { $0.isEmpty }.reversed()
        #expect(display.count <= height - 1, "\(display.count) rows drawn in a pane of \(height)")
        #expect(display.allSatisfy { $0.count <= width - 1 }, "a row wider than \(width - 1):\n\(display.joined(separator: "\n"))")
        let trackRows = display.filter { $0.hasPrefix("  a-rather-long-track-name-") }
        if width == 40 {
            #expect(trackRows.count == 6, "\(display.joined(separator: "\n"))")
            #expect(display.contains { $0.hasPrefix("  tracks ") && $0.hasSuffix(" of 20") }, "no page line:\n\(display.joined(separator: "\n"))")
            #expect(display.first?.hasSuffix("…") == true)
        } else {
            #expect(trackRows.count == 20, "\(display.joined(separator: "\n"))")
            #expect(trackRows.allSatisfy { $0.contains("[") && $0.contains(" dB") && !$0.hasSuffix("…") })
            #expect(display.contains { $0.contains("-60") && $0.hasSuffix("0  dBFS") }, "no scale:\n\(display.joined(separator: "\n"))")
        }
        let end = try awaitPane(tmux, "aqsync's exit") { $0.contains { $0.hasPrefix("EXIT=") } }
        #expect(end.contains("EXIT=0"), "\(end.joined(separator: "\n"))")
        #expect(!end.contains { $0.contains("▶") }, "the display was not cleared at the end")
    }
}
