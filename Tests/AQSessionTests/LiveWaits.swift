import AQTesting
import Foundation
import Testing

/// Waits the live tests share: aqsync's log, an OSC sender and a tmux pane. Each polls (every
/// 20 ms, bounded), because a line in a log or a row on a terminal has no notification a test
/// could wait on; a wait that runs out records an issue holding what was there.

/// aqsync's log file, read again at every poll.
struct AqsyncLog {
    let url: URL

    /// The whole log as it is now ("" before aqsync has written it).
    var text: String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }

    /// Polls until the log holds `want` (at most `seconds`); false, with an issue recorded that
    /// quotes the log, when it does not.
    func waitFor(_ want: String, seconds: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if text.contains(want) { return true }
            usleep(20_000)
        }
        Issue.record("timed out waiting for '\(want)'; the log:\n\(text)")
        return false
    }
}

/// Sends OSC messages to aqsync's `--osc` port with `oscsend` (Debian's liblo-tools), as a user's
/// controller would: `try send(["/aqsync/locate", "f", "0.5"])`.
struct OSCSend {
    let port: Int

    /// Sends one message (address, type tags, arguments); expects oscsend to succeed.
    func callAsFunction(_ args: [String]) throws {
        let r = try runTool("/usr/bin/oscsend", ["127.0.0.1", "\(port)"] + args)
        #expect(r.status == 0, "oscsend \(args): \(r.output)")
    }
}

extension TerminalDisplayOnJACKTests.Tmux {
    /// Polls the pane (`history`: with its scrollback) until a row holds `text` (at most
    /// `seconds`); false, with an issue recorded that quotes the pane, when none does.
    func waitFor(_ text: String, history: Bool = false, seconds: Double = 20) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try capture(history: history).contains(where: { $0.contains(text) }) { return true }
            usleep(20_000)
        }
        Issue.record("timed out waiting for '\(text)'; the pane:\n\(try capture(history: true).joined(separator: "\n"))")
        return false
    }
}
