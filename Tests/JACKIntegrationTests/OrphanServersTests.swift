import AQJackServer
import AQTesting
import Foundation
import Testing

/// Orphaned test servers: recognised by name, the live ones of running processes left alone,
/// an orphan stopped (issue 21).
@Suite(.serialized) struct OrphanServersTests {
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
