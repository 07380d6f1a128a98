import AQCore
import AQJack
import Foundation
import Synchronization

/// A `jackd` this process started and will stop: for `aqsync` when no server is reachable,
/// and (through AQTesting's `PrivateJackServer`) for tests.
///
/// Thread safety: any control thread; the members may be called concurrently.
public final class JackServer: @unchecked Sendable {
    /// The audio backend of a started server.
    public enum Backend: Sendable, Equatable, CustomStringConvertible {
        /// `-d dummy`: no hardware, the clock is the system timer.
        case dummy
        /// `-d alsa -d DEVICE`: a sound card.
        case alsa(device: String)

        public var description: String {
            switch self {
            case .dummy: "dummy backend"
            case .alsa(let d): "ALSA backend on \(d)"
            }
        }

        /// ALSA on the first card when the machine has one (`/proc/asound/cards` lists it),
        /// the dummy backend otherwise.
        public static var preferred: Backend {
            guard let cards = try? String(contentsOfFile: "/proc/asound/cards", encoding: .utf8),
                  cards.split(separator: "\n").contains(where: { $0.trimmingCharacters(in: .whitespaces).first?.isNumber == true })
            else { return .dummy }
            return .alsa(device: "hw:0")
        }
    }

    /// The server name (`-n`).
    public let name: String
    public let backend: Backend
    public let sampleRate: Int
    /// Frames per period at start (`-p`).
    public let period: Int
    /// True when the server runs with realtime scheduling (`-R`).
    public let isRealtime: Bool

    private let process: ChildProcess
    private let logURL: URL
    private let stopped = Mutex(false)

    /// Starts `jackd [-R|--no-realtime] -n NAME -d BACKEND -r RATE -p PERIOD` and waits until
    /// it accepts clients.
    ///
    /// - Throws: ``DeviceError`` with jackd's output when it exits or does not accept clients
    ///   within `timeout`.
    public init(
        name: String, backend: Backend = .dummy, sampleRate: Int = 48000, period: Int = 256, realtime: Bool = false,
        timeout: Duration = .seconds(10)
    ) throws(DeviceError) {
        self.name = name
        self.backend = backend
        self.sampleRate = sampleRate
        self.period = period
        self.isRealtime = realtime
        logURL = FileManager.default.temporaryDirectory.appendingPathComponent("jackd-\(name)\(realtime ? "-rt" : "").log")
        process = try Self.launch(
            name: name, backend: backend, rate: sampleRate, period: period, realtime: realtime, log: logURL, timeout: timeout)
    }

    deinit { stop() }

    /// Starts a private server for a program that found none: realtime scheduling when the
    /// system grants it, else without; on `backend` (default: ALSA when there is a sound card);
    /// ALSA falling back to the dummy backend when the card cannot be opened.
    public static func startPrivate(
        name: String, backend: Backend = .preferred, sampleRate: Int = 48000, period: Int = 256
    ) throws(DeviceError) -> JackServer {
        var last = DeviceError("jackd was not started")
        let backends = backend == .dummy ? [Backend.dummy] : [backend, .dummy]
        for b in backends {
            for rt in [true, false] {
                do { return try JackServer(name: name, backend: b, sampleRate: sampleRate, period: period, realtime: rt) } catch {
                    last = error
                }
            }
        }
        throw last
    }

    /// A one-line account: "private JACK server 'NAME' (dummy backend, 48000 Hz, 256 frames)".
    public var summary: String {
        "private JACK server '\(name)' (\(backend), \(sampleRate) Hz, \(period) frames\(isRealtime ? ", realtime" : ""))"
    }

    private static func launch(
        name: String, backend: Backend, rate: Int, period: Int, realtime: Bool, log: URL, timeout: Duration,
        reclaimRegistry: Bool = true
    ) throws(DeviceError) -> ChildProcess {
        var args = [realtime ? "-R" : "--no-realtime", "-n", name]
        switch backend {
        case .dummy: args += ["-d", "dummy"]
        case .alsa(let device): args += ["-d", "alsa", "-d", device]
        }
        args += ["-r", "\(rate)", "-p", "\(period)"]
        var p = try ChildProcess(path: "/usr/bin/jackd", arguments: args, output: log.path)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var reclaimed = !reclaimRegistry
        while clock.now < deadline {
            if !p.isRunning {
                // JACK's registry (/dev/shm/jack-shm-registry) has 8 server entries, and an
                // entry of a server that died without unregistering (SIGKILL, a crash) is
                // reclaimed only by a new server of the same name (``JackRegistry``). With no
                // jackd alive at all, every entry is stale: the registry is removed (jackd
                // makes a new one). Otherwise each dead server's entry is reclaimed by starting
                // and stopping a server of its name. Then jackd is started once more; both
                // are said on standard error.
                if !reclaimed && readLog(log).contains("Too many servers already active") {
                    reclaimed = true
                    if !isAnyJackdAlive() {
                        unlink(registryPath)
                        FileHandle.standardError.write(Data("JackServer: JACK's server registry was full of servers that are gone (no jackd runs): removed \(registryPath), starting jackd -n \(name) again\n".utf8))
                    } else {
                        let dead = JackRegistry.deadServerNames()
                        guard !dead.isEmpty else {
                            throw DeviceError("jackd -n \(name): JACK's server registry is full (8 servers run on this machine):\n" + readLog(log))
                        }
                        FileHandle.standardError.write(Data("JackServer: JACK's server registry was full; reclaiming the entries of \(dead.count) server(s) that are gone (\(dead.joined(separator: ", "))), then starting jackd -n \(name) again\n".utf8))
                        for n in dead { reclaim(name: n) }
                    }
                    p = try ChildProcess(path: "/usr/bin/jackd", arguments: args, output: log.path)
                    continue
                }
                throw DeviceError(
                    "jackd -n \(name) (\(backend)) exited with status \(p.terminationStatus) before accepting clients:\n"
                        + readLog(log))
            }
            if JackDevice.isServerReachable(name) { return p }
            Thread.sleep(forTimeInterval: 0.05)
        }
        terminate(p, grace: .seconds(2))
        throw DeviceError("jackd -n \(name) did not accept clients within \(timeout):\n" + readLog(log))
    }

    /// JACK's shared registry of servers and their shared memory.
    static let registryPath = JackRegistry.path

    /// True when a process named `jackd` runs (zombies aside), by `/proc/PID/stat`. Any thread.
    static func isAnyJackdAlive() -> Bool {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return true }
        for e in entries where e.allSatisfy(\.isNumber) {
            guard let (comm, state) = JackRegistry.processStat(e) else { continue }
            if (comm == "jackd" || comm == "jackdmp") && state != "Z" { return true }
        }
        return false
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
            if process.terminatedBySignal { Self.reclaim(name: name) }  // see kill(signal:)
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
    /// ``stop()`` starts a server of the same name and stops it properly, freeing the slot and
    /// its shared memory; call it after every client of the dead server in this process is
    /// closed (libjack crashes otherwise).
    public func kill(signal: Int32 = SIGKILL) {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    /// Starts and cleanly stops a server named `name` to free a dead server's registry slot.
    static func reclaim(name: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("jackd-\(name)-reclaim.log")
        if let p = try? launch(name: name, backend: .dummy, rate: 48000, period: 256, realtime: false, log: log, timeout: .seconds(5), reclaimRegistry: false) {
            terminate(p, grace: .seconds(3), reclaimAfterKill: false)
        }
        try? FileManager.default.removeItem(at: log)
    }

    private static func terminate(_ p: ChildProcess, grace: Duration, reclaimAfterKill: Bool = true) {
        guard p.isRunning else { return }
        p.terminate()
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        while p.isRunning && clock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if p.isRunning {
            Foundation.kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            if reclaimAfterKill, let name = p.arguments.drop(while: { $0 != "-n" }).dropFirst().first {
                reclaim(name: name)  // see kill(signal:)
            }
            return
        }
        p.waitUntilExit()
    }
}

/// jackd as a child process, started with posix_spawn rather than Foundation's `Process`:
/// `Process` watches its children through a CFRunLoop source, and in libAudioToolbox.so (which
/// starts a server when none is reachable, issue 22) the C API's own `CFRunLoopGetCurrent` and
/// friends take the place of Foundation's functions of the same names, which crashes `Process`.
/// The child gets an empty signal mask and default dispositions (a test thread's blocked
/// SIGTERM must not be inherited), stdin from /dev/null, stdout and stderr into `output`, and
/// no other descriptor of this process.
///
/// Thread safety: any thread; the members may be called concurrently.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    let arguments: [String]
    /// nil while it runs; then the wait status.
    private let exit = Mutex<Int32?>(nil)

    init(path: String, arguments: [String], output: String) throws(DeviceError) {
        self.arguments = arguments
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // glibc 2.34's closefrom action (Swift's Glibc module does not declare it).
        if let f = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            _ = unsafeBitCast(f, to: AddCloseFrom.self)(&actions, 3)
        }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, environ)
        guard rc == 0 else {
            throw DeviceError("cannot run \(path) (is Debian's jackd2 installed?): \(String(cString: strerror(rc)))")
        }
        pid = child
    }

    var processIdentifier: Int32 { pid }

    /// The wait status once it exited (reaps it), else nil.
    private func poll() -> Int32? {
        exit.withLock { status in
            if status == nil {
                var st: Int32 = 0
                if waitpid(pid, &st, WNOHANG) == pid { status = st }
            }
            return status
        }
    }

    var isRunning: Bool { poll() == nil }

    /// The exit status, or the signal's number when a signal ended it.
    var terminationStatus: Int32 {
        guard let st = poll() else { return 0 }
        return st & 0x7f == 0 ? (st >> 8) & 0xff : st & 0x7f
    }

    /// True when a signal ended it.
    var terminatedBySignal: Bool {
        guard let st = poll() else { return false }
        return st & 0x7f != 0
    }

    /// SIGTERM.
    func terminate() { kill(pid, SIGTERM) }

    func waitUntilExit() {
        while isRunning { usleep(5_000) }
    }
}
