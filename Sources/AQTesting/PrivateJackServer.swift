import AQJack
import AQJackServer
import Foundation
import Synchronization

/// A failure of a testing helper (server start, external tool), with a message for people.
package struct TestingError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// A private `jackd` with the dummy backend, for tests: `jackd [-R|--no-realtime] -n NAME
/// -d dummy -r RATE -p PERIOD` (launched by AQJackServer's ``JackServer``). Each instance has its own
/// unique server name; clients reach it by passing ``name`` as their server name (e.g.
/// ``JackDeviceOptions/serverName``, or `JACK_DEFAULT_SERVER` in a child process's
/// environment), never by changing this process's environment. The server is stopped by
/// ``stop()`` or when the instance is released.
///
/// Thread safety: any control thread; the members may be called concurrently.
package final class PrivateJackServer: @unchecked Sendable {
    /// The server name (`-n`), unique per instance.
    package var name: String { server.name }
    /// Sample rate (`-r`).
    package var sampleRate: Int { server.sampleRate }
    /// Frames per period at start (`-p`).
    package var period: Int { server.period }
    /// True when the server runs with realtime scheduling (`-R` was asked for and accepted).
    package var isRealtime: Bool { server.isRealtime }
    /// The server itself.
    package let server: JackServer

    private static let counter = Atomic<Int>(0)

    /// Starts the server and waits until it accepts clients.
    ///
    /// - Parameters:
    ///   - realtime: try `-R` first (falling back to `--no-realtime` when the server does not
    ///     come up with it); default false, so tests run as root without realtime privileges.
    ///   - timeout: how long to wait for the server to accept clients.
    /// - Throws: ``TestingError`` with jackd's output when it exits or does not accept clients
    ///   in time.
    package init(
        sampleRate: Int = 48000, period: Int = 256, realtime: Bool = false, namePrefix: String = "aqtest",
        timeout: Duration = .seconds(10)
    ) throws(TestingError) {
        OrphanServers.stopAllOnce()
        let n = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        let name = "\(namePrefix)-\(getpid())-\(n)-\(UInt32.random(in: 0...UInt32.max))"
        var started: JackServer?
        var lastError = TestingError("jackd was not started")
        for rt in realtime ? [true, false] : [false] {
            do {
                started = try JackServer(name: name, sampleRate: sampleRate, period: period, realtime: rt, timeout: timeout)
                break
            } catch {
                lastError = TestingError(error.message)
            }
        }
        guard let started else { throw lastError }
        server = started
    }

    /// jackd's output so far (stdout and stderr).
    package var log: String { server.log }
    /// The clients jackd reported late so far, with how many times: its log's
    /// `JackEngine::XRun: client = NAME was not finished` lines (jackd2 writes one per late
    /// client per xrun, unasked). The server's own word on which clients missed a cycle.
    package var clientsReportedLate: [String: Int] { Self.clientsReportedLate(inLog: log) }

    /// ``clientsReportedLate`` of a jackd log. Pure function.
    package static func clientsReportedLate(inLog log: String) -> [String: Int] {
        var late: [String: Int] = [:]
        for line in log.split(separator: "\n") {
            guard let start = line.range(of: "client = "), let end = line.range(of: " was not finished", range: start.upperBound..<line.endIndex)
            else { continue }
            late[String(line[start.upperBound..<end.lowerBound]), default: 0] += 1
        }
        return late
    }
    /// The process id of jackd.
    package var processIdentifier: Int32 { server.processIdentifier }
    /// True while jackd runs.
    package var isRunning: Bool { server.isRunning }
    /// Stops the server (see ``JackServer/stop()``). Idempotent.
    package func stop() { server.stop() }
    /// Kills the server at once, as a crash would (see ``JackServer/kill(signal:)``).
    package func kill(signal: Int32 = SIGKILL) { server.kill(signal: signal) }
}

/// Runs JACK's command-line tools against a named server (through `JACK_DEFAULT_SERVER` in
/// the tool's own environment). Any control thread.
package enum JackTools {
    /// Output and status of a finished tool.
    package struct Result: Sendable {
        package var status: Int32
        package var output: String
    }

    /// Runs `/usr/bin/TOOL ARGS` with `JACK_DEFAULT_SERVER=server` (and `environment` added to
    /// the tool's environment), waiting at most `timeout` (then kills it).
    package static func run(
        _ tool: String, _ arguments: [String], server: String, environment: [String: String] = [:],
        timeout: Duration = .seconds(5)
    ) throws(TestingError) -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool.hasPrefix("/") ? tool : "/usr/bin/\(tool)")
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server
        env.merge(environment) { $1 }
        p.environment = env
        // Output goes to a file, not a pipe: Foundation's FileHandle reading traps on EINTR,
        // and signals do arrive here (child processes, JACK clients).
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("jacktool-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: out) }
        guard let fh = try? FileHandle(forWritingTo: out) else { throw TestingError("cannot create \(out.path)") }
        p.standardOutput = fh
        p.standardError = fh
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch { throw TestingError("cannot run \(tool): \(error)") }
        try? fh.close()
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while p.isRunning && clock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if p.isRunning {
            Foundation.kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            throw TestingError("\(tool) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        p.waitUntilExit()
        let text = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        return Result(status: p.terminationStatus, output: text)
    }

    /// Sets the server's period with `jack_bufsize FRAMES`.
    /// - Throws: ``TestingError`` with the tool's output when it fails.
    package static func setBufferSize(_ frames: Int, server: String) throws(TestingError) {
        let r = try run("jack_bufsize", ["\(frames)"], server: server)
        guard r.status == 0 else {
            throw TestingError("jack_bufsize \(frames) on server “\(server)” failed (\(r.status)): \(r.output)")
        }
    }

    /// The server's period as `jack_bufsize` prints it.
    package static func bufferSize(server: String) throws(TestingError) -> Int {
        let r = try run("jack_bufsize", [], server: server)
        guard r.status == 0, let n = Int(r.output.split(whereSeparator: \.isWhitespace).first ?? "") else {
            throw TestingError("jack_bufsize on server “\(server)” failed (\(r.status)): \(r.output)")
        }
        return n
    }

    /// Connects two ports with `jack_connect`.
    package static func connect(_ source: String, _ destination: String, server: String) throws(TestingError) {
        // jack_connect failing to open its own client (the server slow to answer on a loaded
        // machine) is no judgement of what is connected: tried again, three times in all.
        var r = try run("jack_connect", [source, destination], server: server)
        var tries = 1
        while r.status != 0 && r.output.contains("Cannot open") && tries < 3 {
            tries += 1
            r = try run("jack_connect", [source, destination], server: server)
        }
        guard r.status == 0 else {
            throw TestingError("jack_connect \(source) \(destination) on “\(server)” failed: \(r.output)")
        }
    }

    /// All port names on the server (`jack_lsp`).
    package static func ports(server: String) throws(TestingError) -> [String] {
        let r = try run("jack_lsp", [], server: server)
        guard r.status == 0 else { throw TestingError("jack_lsp on “\(server)” failed: \(r.output)") }
        return r.output.split(separator: "\n").map(String.init)
    }

    /// Polls `jack_lsp` (every 20 ms, at most `seconds`) until every one of `ports` is on the
    /// server: a port's appearance has no notification a test could wait on.
    /// - Throws: a ``TestingError`` naming the ports when they do not all appear in time.
    package static func waitForPorts(_ ports: [String], server: String, seconds: Double = 10) throws(TestingError) {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int(seconds * 1000))
        while true {
            if Set((try? Self.ports(server: server)) ?? []).isSuperset(of: ports) { return }
            if clock.now >= deadline { throw TestingError("ports \(ports) did not appear on “\(server)” within \(seconds) s") }
            usleep(20_000)
        }
    }
}
