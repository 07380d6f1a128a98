import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24: the keys of `aqsync play --transport follow` on a terminal (a tmux pane), on a
/// private jackd: `]`/`[` locate the transport to the next/previous marker, → 5 s on, Home the
/// session's start, space starts and stops it, q quits (status 0). Judged on what aqsync's own
/// line shows of the transport (read back from JACK every redraw) and on its log.
@Suite("Keys on JACK", .serialized)
struct KeysOnJACKTests {
    @Test func decoding() {
        #expect(ControlKey.decode(Array(" []lqQ".utf8)) == [.playPause, .previousMarker, .nextMarker, .loop, .quit, .quit])
        #expect(ControlKey.decode([0x1B, 0x5B, 0x43, 0x1B, 0x5B, 0x44, 0x1B, 0x5B, 0x48, 0x1B, 0x4F, 0x48, 0x1B, 0x5B, 0x31, 0x7E]) == [.forward, .back, .home, .home, .home])
        // Other sequences and bytes are skipped; a cut sequence is dropped.
        #expect(ControlKey.decode([0x1B, 0x5B, 0x32, 0x34, 0x7E, 0x78, 0x5D, 0x1B, 0x5B]) == [.nextMarker])
    }

    @Test(.timeLimit(.minutes(2)))
    func keysLocateTheTransport() throws {
        let fx = try LoopRenderTests.make(loop: "")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let tmux = TerminalDisplayOnJACKTests.Tmux()
        defer { tmux.kill() }
        let command = [aqsyncURL().path, "play", fx.url.path, "--transport", "follow", "--transport-offset", "4800",
                       "--server", server.name, "--no-connect", "--no-start-server", "--allow-loss"]
            .map { "'\($0)'" }.joined(separator: " ")
        _ = try tmux.run(["new-session", "-d", "-s", "t", "-x", "160", "-y", "30", "\(command); echo EXIT=$?; exec sleep 600"])
        func waitFor(_ text: String) throws -> Bool { try tmux.waitFor(text) }
        try #require(try waitFor("■ transport frame 0 "))
        try #require(try waitFor("primed"))
        for (keys, shown) in [
            ("]", "■ transport frame 28800  session 0:00.500 / 0:02.021  [a]"),
            ("]", "■ transport frame 62400  session 0:01.200 / 0:02.021  [chorus]"),
            ("[", "■ transport frame 28800  session 0:00.500 / 0:02.021  [a]"),
            ("Right", "■ transport frame 268800  session 0:05.500 / 0:02.021"),
            ("Home", "■ transport frame 4800  session 0:00.000 / 0:02.021  primed"),
        ] as [(String, String)] {
            _ = try tmux.run(["send-keys", "-t", "t", keys])
            #expect(try waitFor(shown), "after \(keys)")
        }
        _ = try tmux.run(["send-keys", "-t", "t", "Space"])
        #expect(try waitFor("▶ transport frame"))
        _ = try tmux.run(["send-keys", "-t", "t", "Space"])
        #expect(try waitFor("key space: transport stopped"))
        _ = try tmux.run(["send-keys", "-t", "t", "q"])
        #expect(try waitFor("EXIT=0"))
        let history = try tmux.capture(history: true).joined(separator: "\n")
        #expect(history.contains("key ]: marker 'a': locate to transport frame 28800"), "\(history)")
        #expect(history.contains("stopped by the q key"), "\(history)")
        // Every redraw replaced the line before it, and the last one made way for the report.
        #expect(!history.contains("■ transport frame") && !history.contains("▶ transport frame"), "display lines left behind:\n\(history)")
    }

    /// Plain play of a loop without a count: the display counts the passes (`loop 2/∞`); `l`
    /// ends the loop after the pass playing (or the next, when fed already), and aqsync plays
    /// to the session's end and exits 0.
    @Test(.timeLimit(.minutes(2)))
    func loopKeyEndsTheLoop() throws {
        let fx = try LoopRenderTests.make(loop: "loop = { from = \"a\", to = \"b\" }")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let tmux = TerminalDisplayOnJACKTests.Tmux()
        defer { tmux.kill() }
        // --allow-loss: what is judged is what the keys do; frames the server loses on a loaded
        // machine are reported (and would make the exit status 3).
        let command = [aqsyncURL().path, "play", fx.url.path, "--server", server.name, "--no-connect", "--no-start-server", "--allow-loss"]
            .map { "'\($0)'" }.joined(separator: " ")
        _ = try tmux.run(["new-session", "-d", "-s", "t", "-x", "160", "-y", "30", "\(command); echo EXIT=$?; exec sleep 600"])
        func waitFor(_ text: String, history: Bool = false) throws -> Bool { try tmux.waitFor(text, history: history, seconds: 30) }
        try #require(try waitFor("loop 2/∞"))
        _ = try tmux.run(["send-keys", "-t", "t", "l"])
        #expect(try waitFor("EXIT=0"))
        let history = try tmux.capture(history: true).joined(separator: "\n")
        #expect(history.contains("key l: the loop ends after pass 2") || history.contains("key l: the loop ends after pass 3"), "\(history)")
        #expect(history.contains("looping until released"), "\(history)")
    }
}
