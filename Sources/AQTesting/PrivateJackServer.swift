import AQJack
import Foundation
import Synchronization

/// A failure of a testing helper (server start, external tool), with a message for people.
public struct TestingError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A private `jackd` with the dummy backend, for tests: `jackd [-R|--no-realtime] -n NAME
/// -d dummy -r RATE -p PERIOD`. Each instance has its own unique server name; clients reach
/// it by passing ``name`` as their server name (e.g. ``JackDeviceOptions/serverName``, or
/// `JACK_DEFAULT_SERVER` in a child process's environment), never by changing this process's
/// environment. The server is stopped by ``stop()`` or when the instance is released.
///
/// Thread safety: any control thread; the members may be called concurrently.
public final class PrivateJackServer: @unchecked Sendable {
    /// The server name (`-n`), unique per instance.
    public let name: String
    /// Sample rate (`-r`).
    public let sampleRate: Int
    /// Frames per period at start (`-p`).
    public let period: Int
    /// True when the server runs with realtime scheduling (`-R` was asked for and accepted).
    public let isRealtime: Bool

    private let process: Process
    private let logURL: URL
    private let stopped = Mutex(false)

    private static let counter = Atomic<Int>(0)

    /// Starts the server and waits until it accepts clients.
    ///
    /// - Parameters:
    ///   - realtime: try `-R` first (falling back to `--no-realtime` when the server does not
    ///     come up with it); default false, so tests run as root without realtime privileges.
    ///   - timeout: how long to wait for the server to accept clients.
    /// - Throws: ``TestingError`` with jackd's output when it exits or does not accept clients
    ///   in time.
    public init(
        sampleRate: Int = 48000, period: Int = 256, realtime: Bool = false, namePrefix: String = "aqtest",
        timeout: Duration = .seconds(10)
    ) throws(TestingError) {
        let n = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        let name = "\(namePrefix)-\(getpid())-\(n)-\(UInt32.random(in: 0...UInt32.max))"
        self.name = name
        self.sampleRate = sampleRate
        self.period = period
        var started: (Process, URL, Bool)?
        var lastError = TestingError("jackd was not started")
        for rt in realtime ? [true, false] : [false] {
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)\(rt ? "-rt" : "").log")
            do {
                started = (try Self.launch(name: name, rate: sampleRate, period: period, realtime: rt, log: log, timeout: timeout), log, rt)
                break
            } catch {
                lastError = error
            }
        }
        guard let started else { throw lastError }
        (process, logURL, isRealtime) = started
    }

    deinit { stop() }

    private static func launch(
        name: String, rate: Int, period: Int, realtime: Bool, log: URL, timeout: Duration
    ) throws(TestingError) -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        p.arguments = [realtime ? "-R" : "--no-realtime", "-n", name, "-d", "dummy", "-r", "\(rate)", "-p", "\(period)"]
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        guard let fh = try? FileHandle(forWritingTo: log) else {
            throw TestingError("cannot create the jackd log \(log.path)")
        }
        p.standardOutput = fh
        p.standardError = fh
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch {
            throw TestingError("cannot run jackd: \(error)")
        }
        try? fh.close()
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if !p.isRunning {
                throw TestingError(
                    "jackd -n \(name) exited with status \(p.terminationStatus) before accepting clients:\n"
                        + readLog(log))
            }
            if JackDevice.isServerReachable(name) { return p }
            Thread.sleep(forTimeInterval: 0.05)
        }
        terminate(p, grace: .seconds(2))
        throw TestingError(
            "jackd -n \(name) did not accept clients within \(timeout):\n" + readLog(log))
    }

    /// jackd's output so far (stdout and stderr).
    public var log: String { Self.readLog(logURL) }

    private static func readLog(_ url: URL) -> String {
        (try? String(contentsOf: url, encoding: .utf8)) ?? "(no output)"
    }

    /// The process id of jackd.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// True while jackd runs.
    public var isRunning: Bool { process.isRunning }

    /// Stops the server: SIGTERM, up to 3 s for it to exit, then SIGKILL. Idempotent.
    public func stop() {
        let already = stopped.withLock { s in
            defer { s = true }
            return s
        }
        guard !already else { return }
        if !process.isRunning {
            if process.terminationReason == .uncaughtSignal { Self.reclaim(name: name) }  // see kill(signal:)
        } else {
            Self.terminate(process, grace: .seconds(3))
        }
        try? FileManager.default.removeItem(at: logURL)
    }

    /// Kills the server at once with `signal` (default SIGKILL), as a crash would, and waits
    /// for it to exit. For shutdown tests.
    ///
    /// A jackd that dies without its orderly shutdown leaves its slot in libjack's server
    /// registry (`/dev/shm/jack-shm-registry`, 8 slots for the whole machine) taken; jackd
    /// reclaims a dead slot only when a server of the same name registers. So after the kill
    /// this starts a server of the same name and stops it properly, freeing the slot and its
    /// shared memory. That happens in ``stop()`` (or deinit), which must come after every
    /// client of the dead server in this process is closed (libjack crashes otherwise).
    public func kill(signal: Int32 = SIGKILL) {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    /// Starts and cleanly stops a server named `name` to free a dead server's registry slot.
    static func reclaim(name: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-reclaim.log")
        if let p = try? launch(name: name, rate: 48000, period: 256, realtime: false, log: log, timeout: .seconds(5)) {
            terminate(p, grace: .seconds(3), reclaimAfterKill: false)
        }
        try? FileManager.default.removeItem(at: log)
    }

    private static func terminate(_ p: Process, grace: Duration, reclaimAfterKill: Bool = true) {
        guard p.isRunning else { return }
        p.terminate()
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        while p.isRunning && clock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if p.isRunning {
            Foundation.kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            if reclaimAfterKill, let name = p.arguments?.drop(while: { $0 != "-n" }).dropFirst().first {
                reclaim(name: name)  // see kill(signal:)
            }
            return
        }
        p.waitUntilExit()
    }
}

/// Runs JACK's command-line tools against a named server (through `JACK_DEFAULT_SERVER` in
/// the tool's own environment). Any control thread.
public enum JackTools {
    /// Output and status of a finished tool.
    public struct Result: Sendable {
        public var status: Int32
        public var output: String
    }

    /// Runs `/usr/bin/TOOL ARGS` with `JACK_DEFAULT_SERVER=server` (and `environment` added to
    /// the tool's environment), waiting at most `timeout` (then kills it).
    public static func run(
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
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch { throw TestingError("cannot run \(tool): \(error)") }
        let data = Mutex(Data())
        let reader = Thread {
            let d = pipe.fileHandleForReading.readDataToEndOfFile()
            data.withLock { $0 = d }
        }
        reader.start()
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while p.isRunning && clock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if p.isRunning {
            Foundation.kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            throw TestingError("\(tool) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        p.waitUntilExit()
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.005) }
        let text = data.withLock { String(decoding: $0, as: UTF8.self) }
        return Result(status: p.terminationStatus, output: text)
    }

    /// Sets the server's period with `jack_bufsize FRAMES`.
    /// - Throws: ``TestingError`` with the tool's output when it fails.
    public static func setBufferSize(_ frames: Int, server: String) throws(TestingError) {
        let r = try run("jack_bufsize", ["\(frames)"], server: server)
        guard r.status == 0 else {
            throw TestingError("jack_bufsize \(frames) on server “\(server)” failed (\(r.status)): \(r.output)")
        }
    }

    /// The server's period as `jack_bufsize` prints it.
    public static func bufferSize(server: String) throws(TestingError) -> Int {
        let r = try run("jack_bufsize", [], server: server)
        guard r.status == 0, let n = Int(r.output.split(whereSeparator: \.isWhitespace).first ?? "") else {
            throw TestingError("jack_bufsize on server “\(server)” failed (\(r.status)): \(r.output)")
        }
        return n
    }

    /// Connects two ports with `jack_connect`.
    public static func connect(_ source: String, _ destination: String, server: String) throws(TestingError) {
        let r = try run("jack_connect", [source, destination], server: server)
        guard r.status == 0 else {
            throw TestingError("jack_connect \(source) \(destination) on “\(server)” failed: \(r.output)")
        }
    }

    /// All port names on the server (`jack_lsp`).
    public static func ports(server: String) throws(TestingError) -> [String] {
        let r = try run("jack_lsp", [], server: server)
        guard r.status == 0 else { throw TestingError("jack_lsp on “\(server)” failed: \(r.output)") }
        return r.output.split(separator: "\n").map(String.init)
    }
}
