import Foundation
import Testing

/// `aqsync play` stops cleanly on SIGINT, SIGTERM and SIGHUP: it exits 128 + the signal and
/// stops the private JACK server it started (none left running under its name).
@Suite("aqsync play stops on signals, with its private JACK server", .serialized)
struct SignalOnJACKTests {
    @Test(.timeLimit(.minutes(2)), arguments: [SIGINT, SIGTERM, SIGHUP])
    func stopSignalStopsPlaybackAndThePrivateServer(sig: Int32) throws {
        let dir = try TempDir()
        _ = try makeImpulseFile(dir, "a.wav", rate: 48000, frames: 48000 * 30, impulses: [[0]], encoding: ["-e", "signed-integer", "-b", "16"])
        let session = try dir.write("s.toml", """
            [output]
            channels = 1
            [[track]]
            file = "a.wav"
            """)
        let log = dir.file("play.log")
        // A server name nobody runs: aqsync starts a private server (aqsync-PID).
        let p = try startAqsync([session.path, "--server", "aqsig-none-\(getpid())", "--no-connect"], log: log)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) }; p.waitUntilExit() }
        // Wait until it plays (its log says so), then signal it.
        let deadline = Date().addingTimeInterval(20)
        var out = ""
        while Date() < deadline && p.isRunning {
            out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if out.contains("playing 's'") { break }
            usleep(20_000)
        }
        try #require(out.contains("playing 's'"), "\(out)")
        let serverName = "aqsync-\(p.processIdentifier)"
        #expect(jackdRunning(named: serverName), "the private server runs while playing")
        kill(p.processIdentifier, sig)
        let end = Date().addingTimeInterval(15)
        while p.isRunning && Date() < end { usleep(20_000) }
        #expect(!p.isRunning, "aqsync did not stop on signal \(sig)")
        p.waitUntilExit()
        out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(p.terminationReason == .exit && p.terminationStatus == 128 + sig, "\(out)")
        #expect(out.contains("stopped by"), "\(out)")
        #expect(!jackdRunning(named: serverName), "the private server \(serverName) was left running")
    }

    /// True when a jackd with `-n name` is alive (zombies excluded).
    private func jackdRunning(named name: String) -> Bool {
        guard let pids = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return false }
        for pid in pids where pid.allSatisfy(\.isNumber) {
            guard let cmd = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")) else { continue }
            let args = cmd.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard args.first?.hasSuffix("jackd") == true, let i = args.firstIndex(of: "-n"), i + 1 < args.count, args[i + 1] == name else { continue }
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            if stat.contains(") Z ") { continue }
            return true
        }
        return false
    }
}
