import AQJackServer
import AQTesting
import Foundation
import Testing

/// Orphaned test servers: recognised by name, the live ones of running processes left alone,
/// an orphan stopped (issue 21).
@Suite(.serialized) struct OrphanServersTests {
    /// A C client the tests compile ends when the process that started it ends (the orphan
    /// guard of ``compileJackClient(_:name:directory:)``): started in the background by a shell
    /// that exits at once, a program that would wait forever is gone within seconds.
    @Test(.timeLimit(.minutes(1)))
    func aTestClientWhoseStarterIsGoneEnds() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aq-orphan-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let bin = try compileJackClient("#include <unistd.h>\nint main(void) { for (;;) pause(); }\n", name: "forever", directory: dir)
        let out = Pipe()
        let sh = Process()
        sh.executableURL = URL(fileURLWithPath: "/bin/sh")
        sh.arguments = ["-c", "'\(bin.path)' </dev/null >/dev/null 2>&1 & echo $!"]
        sh.standardOutput = out
        try sh.run()
        sh.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let pid = try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), "the shell printed \(text)")
        // Gone: no such process, or a zombie (PID 1 here need not reap it).
        func gone() -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return true }
            return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
        }
        let deadline = Date().addingTimeInterval(10)
        while !gone() && Date() < deadline { usleep(20_000) }
        let ended = gone()
        if !ended { kill(pid, SIGKILL) }
        #expect(ended, "the orphaned client \(pid) still ran 10 s after its starter ended")
    }

    @Test func namesOfTestServersGiveTheirOwner() {
        #expect(OrphanServers.owner(ofServerNamed: "aqtest-4242-3-123456") == 4242)
        #expect(OrphanServers.owner(ofServerNamed: "aqsoak-17-99") == 17)
        #expect(OrphanServers.owner(ofServerNamed: "aqnetjack-88-1-2") == 88)
        // Not ours, or not a process id where one must be.
        #expect(OrphanServers.owner(ofServerNamed: "default") == nil)
        #expect(OrphanServers.owner(ofServerNamed: "studio-4242-1") == nil)
        #expect(OrphanServers.owner(ofServerNamed: "aqtest-close") == nil)
        #expect(OrphanServers.owner(ofServerNamed: "aqtest-x1-2") == nil)
        #expect(OrphanServers.owner(ofServerNamed: "aqTest-4242-1") == nil)
        #expect(OrphanServers.owner(ofServerNamed: "aqtest-0-1") == nil)
        #expect(OrphanServers.owner(ofServerNamed: "aqtest-4242") == nil)
    }

    @Test func serverNamesAreReadFromJackdCommandLinesOnly() {
        #expect(OrphanServers.serverName(inCommandLine: ["/usr/bin/jackd", "--no-realtime", "-n", "aqtest-1-2-3", "-d", "dummy"]) == "aqtest-1-2-3")
        #expect(OrphanServers.serverName(inCommandLine: ["jackd", "-R", "-n", "x"]) == "x")
        #expect(OrphanServers.serverName(inCommandLine: ["jackd", "-d", "dummy"]) == nil)
        #expect(OrphanServers.serverName(inCommandLine: ["jackd", "-n"]) == nil)
        #expect(OrphanServers.serverName(inCommandLine: ["/usr/bin/jack_lsp", "-n", "aqtest-1-2-3"]) == nil)
        #expect(OrphanServers.serverName(inCommandLine: []) == nil)
    }

    /// A server named for a test process that is gone is found and stopped; this process's
    /// own server is not.
    @Test func anOrphanOnJACKIsStoppedAndALiveOnesServerIsNot() throws {
        // A process id that is certainly gone: a child that ran and was reaped.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let dead = gone.processIdentifier
        // This process's own server first: the first private server of a process stops the
        // orphans there are (``OrphanServers/stopAllOnce()``), which would take the one below.
        let mine = try PrivateJackServer()
        defer { mine.stop() }
        let orphan = try JackServer(name: "aqorphan-\(dead)-1-\(UInt32.random(in: 0...UInt32.max))", sampleRate: 48000, period: 256)
        defer { orphan.stop() }

        let found = OrphanServers.find()
        #expect(found.contains { $0.pid == orphan.processIdentifier && $0.name == orphan.name && $0.owner == dead })
        #expect(!found.contains { $0.name == mine.name })
        #expect(found.allSatisfy { kill($0.owner, 0) != 0 })

        let stopped = OrphanServers.stopAll()
        #expect(stopped.contains { $0.name == orphan.name })
        // jackd leaves on SIGTERM; its exit is reaped by this process (its parent).
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while orphan.isRunning && clock.now < deadline { usleep(10_000) }
        #expect(!orphan.isRunning, "the orphan did not exit within 5 s of SIGTERM")
        #expect(mine.isRunning)
    }
}
