import Foundation
import Synchronization

/// A private headless PipeWire for tests: its own `XDG_RUNTIME_DIR` (a temporary directory), a
/// session `dbus-daemon`, `pipewire` with a `support.null-audio-sink` node added through a
/// `pipewire.conf.d` fragment (found through `XDG_CONFIG_HOME`), and `wireplumber`, which gives
/// the sink its ports. Nothing of the machine's own PipeWire (if any) is touched: every socket
/// and state file lives under the temporary directories, removed by ``stop()``.
///
/// JACK clients of this PipeWire are child processes run with ``environment`` (PipeWire's
/// libjack on `LD_LIBRARY_PATH`, as `pw-jack` does, and this instance's runtime directory); this
/// process never loads PipeWire's libjack, so it may itself be linked against jackd2's. Use
/// ``run(_:_:timeout:)`` for a tool that finishes and ``spawn(_:_:output:realtimePriority:)`` for one that runs
/// on; everything spawned is stopped with the servers.
///
/// The sink's JACK ports are ``playbackPorts`` (what a player connects to) and
/// ``monitorPorts`` (what was played, for recording). The graph's quantum (JACK's buffer size)
/// is set with ``setQuantum(_:timeout:)``.
///
/// Thread safety: any control thread; the members may be called concurrently.
package final class PipeWireServer: @unchecked Sendable {
    /// The sink's `node.name` and `node.description`, and so its JACK client name.
    package let sinkName: String
    /// The sink's rate (`audio.rate`), also the graph's default and only allowed rate.
    package let sampleRate: Int
    /// The directory holding everything this instance made (runtime, config, state, logs).
    package let directory: URL
    /// `XDG_RUNTIME_DIR` of the servers: holds `pipewire-0` and the D-Bus socket `bus`.
    package let runtimeDirectory: URL
    /// The session bus address (`DBUS_SESSION_BUS_ADDRESS`).
    package let dbusAddress: String
    /// The directory holding PipeWire's `libjack.so.0` (e.g.
    /// `/usr/lib/x86_64-linux-gnu/pipewire-0.3/jack`).
    package let jackLibraryDirectory: String
    /// The sink's input ports, in channel order (`SINK:playback_FL`, `SINK:playback_FR`).
    package let playbackPorts: [String]
    /// The sink's monitor outputs, in channel order (`SINK:monitor_FL`, `SINK:monitor_FR`):
    /// what the sink played.
    package let monitorPorts: [String]

    private struct Child {
        var name: String
        var process: ChildProcess
    }

    /// dbus-daemon, pipewire, wireplumber, then whatever ``spawn(_:_:output:realtimePriority:)`` started.
    private let children = Mutex<[Child]>([])
    private let stopped = Mutex(false)

    /// Starts the servers and waits until a JACK client sees the sink's ports.
    ///
    /// - Parameters:
    ///   - sampleRate: the sink's and the graph's rate.
    ///   - quantum: when given, forced (`clock.force-quantum`) before this returns.
    ///   - sinkName: the sink's node name (its JACK client name); no spaces or colons.
    ///   - timeout: for each step (bus, PipeWire socket, sink ports).
    /// - Throws: ``TestingError`` naming the step that failed, with the servers' output; all
    ///   that was started is stopped first.
    package init(
        sampleRate: Int = 48000, quantum: Int? = nil, sinkName: String = "aqtest-sink", timeout: Duration = .seconds(15)
    ) throws(TestingError) {
        self.sinkName = sinkName
        self.sampleRate = sampleRate
        guard let lib = Self.findJackLibraryDirectory() else {
            throw TestingError("PipeWire's libjack was not found (is Debian's pipewire-jack installed?)")
        }
        jackLibraryDirectory = lib
        let base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aqpw-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        directory = base
        runtimeDirectory = base.appendingPathComponent("run")
        dbusAddress = "unix:path=" + runtimeDirectory.appendingPathComponent("bus").path
        playbackPorts = ["FL", "FR"].map { "\(sinkName):playback_\($0)" }
        monitorPorts = ["FL", "FR"].map { "\(sinkName):monitor_\($0)" }
        do {
            try writeFiles()
            try startServers(timeout: timeout)
            if let quantum { try setQuantum(quantum, timeout: timeout) }
        } catch {
            let log = self.log
            stop()
            throw TestingError("\(error.message)\n\(log)")
        }
    }

    deinit { stop() }

    // MARK: Environment

    /// What a child process needs to be a JACK client of this PipeWire: `XDG_RUNTIME_DIR`,
    /// `PIPEWIRE_RUNTIME_DIR`, `DBUS_SESSION_BUS_ADDRESS`, `XDG_CONFIG_HOME`, `XDG_STATE_HOME`,
    /// and `LD_LIBRARY_PATH` with PipeWire's libjack first. Merge it into the environment.
    package var environment: [String: String] {
        let inherited = ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"].map { ":" + $0 } ?? ""
        return [
            "XDG_RUNTIME_DIR": runtimeDirectory.path,
            "PIPEWIRE_RUNTIME_DIR": runtimeDirectory.path,
            "DBUS_SESSION_BUS_ADDRESS": dbusAddress,
            "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_STATE_HOME": directory.appendingPathComponent("state").path,
            "LD_LIBRARY_PATH": jackLibraryDirectory + inherited,
        ]
    }

    /// This process's environment with ``environment`` merged in and the settings that would
    /// lead a client or the servers elsewhere removed (`JACK_DEFAULT_SERVER`, `PIPEWIRE_REMOTE`,
    /// `PIPEWIRE_CONFIG_DIR`, `PIPEWIRE_QUANTUM`, `PIPEWIRE_LATENCY`).
    package var childEnvironment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        for key in ["JACK_DEFAULT_SERVER", "PIPEWIRE_REMOTE", "PIPEWIRE_CONFIG_DIR", "PIPEWIRE_QUANTUM", "PIPEWIRE_LATENCY"] {
            env[key] = nil
        }
        env.merge(environment) { $1 }
        return env
    }

    /// PipeWire's libjack directory: `/usr/lib/<multiarch>/pipewire-0.3/jack` (what `pw-jack`'s
    /// `/usr/${LIB}/pipewire-0.3/jack` resolves to), or nil when pipewire-jack is not installed.
    package static func findJackLibraryDirectory() -> String? {
        var candidates: [String] = []
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib") {
            candidates += entries.sorted().map { "/usr/lib/\($0)/pipewire-0.3/jack" }
        }
        candidates += ["/usr/lib64/pipewire-0.3/jack", "/usr/lib/pipewire-0.3/jack"]
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/libjack.so.0") }
    }

    // MARK: Start and stop

    private var configDirectory: URL { directory.appendingPathComponent("config") }

    private func logURL(_ name: String) -> URL { directory.appendingPathComponent("\(name).log") }

    private func writeFiles() throws(TestingError) {
        let fm = FileManager.default
        let confD = configDirectory.appendingPathComponent("pipewire/pipewire.conf.d")
        do {
            try fm.createDirectory(at: runtimeDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try fm.createDirectory(at: confD, withIntermediateDirectories: true)
            try fm.createDirectory(at: directory.appendingPathComponent("state"), withIntermediateDirectories: true)
            // The sink is made by PipeWire itself (context.objects); WirePlumber configures
            // its ports. object.linger keeps it when no client uses it.
            let fragment = """
                context.properties = {
                    default.clock.rate = \(sampleRate)
                    default.clock.allowed-rates = [ \(sampleRate) ]
                }
                context.objects = [
                    { factory = adapter
                      args = {
                          factory.name     = support.null-audio-sink
                          node.name        = "\(sinkName)"
                          node.description = "\(sinkName)"
                          media.class      = "Audio/Sink"
                          audio.position   = [ FL FR ]
                          audio.rate       = \(sampleRate)
                          object.linger    = true
                          monitor.channel-volumes = false
                      }
                    }
                ]

                """
            try fragment.write(to: confD.appendingPathComponent("50-aqtest-null-sink.conf"), atomically: true, encoding: .utf8)
        } catch {
            throw TestingError("cannot write PipeWire's configuration under \(directory.path): \(error)")
        }
    }

    private func startServers(timeout: Duration) throws(TestingError) {
        let bus = runtimeDirectory.appendingPathComponent("bus").path
        try launch("dbus-daemon", "/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=\(dbusAddress)"])
        try waitFor("the D-Bus session bus (\(bus))", timeout: timeout, watching: "dbus-daemon") {
            FileManager.default.fileExists(atPath: bus)
        }
        let socket = runtimeDirectory.appendingPathComponent("pipewire-0").path
        try launch("pipewire", "/usr/bin/pipewire", [])
        try waitFor("PipeWire's socket (\(socket))", timeout: timeout, watching: "pipewire") {
            FileManager.default.fileExists(atPath: socket)
        }
        try launch("wireplumber", "/usr/bin/wireplumber", [])
        let wanted = playbackPorts + monitorPorts
        try waitFor("the sink's JACK ports (\(wanted.joined(separator: ", ")))", timeout: timeout, watching: "wireplumber") {
            guard let r = try? run("jack_lsp", [], timeout: .seconds(5)), r.status == 0 else { return false }
            let ports = Set(r.output.split(separator: "\n").map(String.init))
            return wanted.allSatisfy(ports.contains)
        }
    }

    private func launch(_ name: String, _ path: String, _ arguments: [String]) throws(TestingError) {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestingError("\(path) is missing (make deps installs pipewire, wireplumber and dbus)")
        }
        let p = try ChildProcess(path: path, arguments: arguments, environment: childEnvironment, output: logURL(name))
        children.withLock { $0.append(Child(name: name, process: p)) }
    }

    /// A bare tool name means /usr/bin/NAME.
    private static func resolve(_ tool: String) -> String { tool.hasPrefix("/") ? tool : "/usr/bin/\(tool)" }

    /// Polls `condition` every 20 ms until it holds; fails when `timeout` passes or the
    /// process named `watching` exits.
    private func waitFor(
        _ what: String, timeout: Duration, watching: String, _ condition: () -> Bool
    ) throws(TestingError) {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !condition() {
            if let dead = children.withLock({ $0.first { !$0.process.isRunning && $0.name == watching } }) {
                throw TestingError("\(dead.name) exited with status \(dead.process.terminationStatus) before \(what) appeared")
            }
            if clock.now >= deadline { throw TestingError("\(what) did not appear within \(timeout)") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// The servers' output so far (dbus-daemon, pipewire, wireplumber), each under a heading.
    package var log: String {
        ["dbus-daemon", "pipewire", "wireplumber"].map { name in
            "--- \(name) ---\n" + ((try? String(contentsOf: logURL(name), encoding: .utf8)) ?? "(no output)")
        }.joined(separator: "\n")
    }

    /// True while pipewire, wireplumber and dbus-daemon all run.
    package var isRunning: Bool {
        children.withLock { c in
            ["dbus-daemon", "pipewire", "wireplumber"].allSatisfy { n in c.contains { $0.name == n && $0.process.isRunning } }
        }
    }

    /// Stops every process this instance started, newest first (spawned tools, wireplumber,
    /// pipewire, dbus-daemon): SIGTERM, up to 3 s to exit, then SIGKILL. Removes the
    /// temporary directories. Idempotent; also done on deinit.
    package func stop() {
        let already = stopped.withLock { s in
            defer { s = true }
            return s
        }
        guard !already else { return }
        let all = children.withLock { c in
            defer { c.removeAll() }
            return c
        }
        for child in all.reversed() { child.process.stop(signal: SIGTERM, grace: .seconds(3)) }
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Tools

    /// Runs `TOOL ARGS` (a bare name is looked up in /usr/bin) as a client of this PipeWire
    /// (``childEnvironment``), waiting at most `timeout` (then kills it and throws).
    package func run(_ tool: String, _ arguments: [String], timeout: Duration = .seconds(5)) throws(TestingError) -> JackTools.Result {
        let out = directory.appendingPathComponent("tool-\(UInt64.random(in: 0...UInt64.max)).txt")
        defer { try? FileManager.default.removeItem(at: out) }
        let p = try ChildProcess(path: Self.resolve(tool), arguments: arguments, environment: childEnvironment, output: out)
        guard p.wait(timeout: timeout) else {
            p.stop(signal: SIGKILL)
            throw TestingError("\(tool) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        let text = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        return JackTools.Result(status: p.terminationStatus, output: text)
    }

    /// Starts `TOOL ARGS` as a client of this PipeWire and returns at once; its stdout and
    /// stderr go to `output` (default: a file in ``directory``). The process is stopped with
    /// the servers by ``stop()`` unless it has ended before; stop it earlier with
    /// ``terminate(_:signal:grace:)``.
    ///
    /// `realtimePriority`: start the process (all its threads) with SCHED_FIFO at that
    /// priority when the system allows it (root, or an rtprio limit), else normally. pipewire-jack
    /// runs a client's process callback realtime anyway, but not the thread that handles a
    /// quantum change: on a loaded machine that thread is late and the client misses the first
    /// cycle at the new quantum (docs/pipewire.md). Tests whose result depends on no cycle being
    /// missed start their clients this way.
    @discardableResult
    package func spawn(
        _ tool: String, _ arguments: [String], output: URL? = nil, realtimePriority: Int32? = nil
    ) throws(TestingError) -> ChildProcess {
        let path = Self.resolve(tool)
        let name = URL(fileURLWithPath: path).lastPathComponent
        let out = output ?? directory.appendingPathComponent("\(name)-\(UInt32.random(in: 0...UInt32.max)).out")
        let env = childEnvironment
        let started = stopped.withLock { s -> Result<ChildProcess, TestingError> in
            guard !s else { return .failure(TestingError("the PipeWire server was stopped")) }
            do throws(TestingError) {
                let p: ChildProcess
                if let realtimePriority,
                    let rt = try? ChildProcess(
                        path: path, arguments: arguments, environment: env, output: out, realtimePriority: realtimePriority)
                {
                    p = rt
                } else {
                    p = try ChildProcess(path: path, arguments: arguments, environment: env, output: out)
                }
                children.withLock { $0.append(Child(name: name, process: p)) }
                return .success(p)
            } catch {
                return .failure(error)
            }
        }
        return try started.get()
    }

    /// Stops a process from ``spawn(_:_:output:realtimePriority:)``: `signal` (default SIGTERM; SIGINT lets
    /// jack-record finish its file), then SIGKILL after `grace`.
    package func terminate(_ process: ChildProcess, signal: Int32 = SIGTERM, grace: Duration = .seconds(3)) {
        process.stop(signal: signal, grace: grace)
        children.withLock { $0.removeAll { $0.process === process } }
    }

    /// Connects two ports with `jack_connect`.
    package func connect(_ source: String, _ destination: String) throws(TestingError) {
        let r = try run("jack_connect", [source, destination])
        guard r.status == 0 else { throw TestingError("jack_connect \(source) \(destination) failed: \(r.output)") }
    }

    /// All JACK port names (`jack_lsp`).
    package func ports() throws(TestingError) -> [String] {
        let r = try run("jack_lsp", [])
        guard r.status == 0 else { throw TestingError("jack_lsp failed (\(r.status)): \(r.output)") }
        return r.output.split(separator: "\n").map(String.init)
    }

    /// The state of a node (`pw-cli info NAME`): "running", "idle" (no links: its driver stops
    /// and a new unconnected JACK client runs on PipeWire's Dummy-Driver), "suspended" (idle for
    /// WirePlumber's 5 s), "creating" or "error"; nil when there is no such node. Default: the sink.
    package func nodeState(_ node: String? = nil) throws(TestingError) -> String? {
        let r = try run("pw-cli", ["info", node ?? sinkName])
        guard r.status == 0 else { return nil }
        for line in r.output.split(separator: "\n") where line.contains("state:") {
            return line.split(separator: "\"").dropFirst().first.map(String.init)
        }
        return nil
    }

    /// The graph's quantum as a JACK client sees it (`jack_bufsize`).
    package func quantum() throws(TestingError) -> Int {
        let r = try run("jack_bufsize", [])
        guard r.status == 0, let n = Int(r.output.split(whereSeparator: \.isWhitespace).first ?? "") else {
            throw TestingError("jack_bufsize failed (\(r.status)): \(r.output)")
        }
        return n
    }

    /// Forces the graph's quantum: `pw-metadata -n settings 0 clock.force-quantum FRAMES`
    /// (0 gives the choice back to PipeWire). For a non-zero value, waits until a JACK client
    /// sees that buffer size (``quantum()``); running clients get their buffer-size callback
    /// before their first cycle at the new size.
    package func setQuantum(_ frames: Int, timeout: Duration = .seconds(5)) throws(TestingError) {
        let r = try run("pw-metadata", ["-n", "settings", "0", "clock.force-quantum", "\(frames)"])
        guard r.status == 0 else { throw TestingError("pw-metadata clock.force-quantum \(frames) failed: \(r.output)") }
        guard frames > 0 else { return }
        try waitFor("quantum \(frames)", timeout: timeout, watching: "pipewire") { (try? quantum()) == frames }
    }
}

/// A child process started with `posix_spawn` with every signal unblocked and at its default
/// disposition. Foundation's `Process` passes on the signal mask of the thread that starts
/// it, and test and dispatch threads block nearly every signal: a server started that way
/// never sees SIGTERM or SIGINT (pipewire and wireplumber then only die by SIGKILL, and
/// jack-record cannot be asked to finish its file).
///
/// Thread safety: any thread.
package final class ChildProcess: @unchecked Sendable {
    /// The process id.
    package let processIdentifier: Int32
    /// The program's path.
    package let executable: String
    /// The raw wait status once the process was reaped.
    private let status = Mutex<Int32?>(nil)

    /// Starts `path ARGUMENTS` with exactly `environment`, stdin from /dev/null, stdout and
    /// stderr appended to `output`; with SCHED_FIFO at `realtimePriority` when given (throws
    /// when the system refuses it).
    package init(
        path: String, arguments: [String], environment: [String: String], output: URL, realtimePriority: Int32? = nil
    ) throws(TestingError) {
        executable = path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var standard = sigset_t()
        sigemptyset(&standard)
        for sig: Int32 in 1..<32 where sig != SIGKILL && sig != SIGSTOP { sigaddset(&standard, sig) }
        posix_spawnattr_setsigdefault(&attributes, &standard)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if let realtimePriority {
            var param = sched_param()
            param.sched_priority = realtimePriority
            posix_spawnattr_setschedpolicy(&attributes, SCHED_FIFO)
            posix_spawnattr_setschedparam(&attributes, &param)
            flags |= POSIX_SPAWN_SETSCHEDULER
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw TestingError("cannot run \(path): \(String(cString: strerror(rc)))") }
        processIdentifier = pid
    }

    /// Reaps the process if it has exited; its raw wait status then.
    private func poll() -> Int32? {
        status.withLock { s in
            if let s { return s }
            var st: Int32 = 0
            let r = waitpid(processIdentifier, &st, WNOHANG)
            if r == processIdentifier {
                s = st
            } else if r < 0 && errno == ECHILD {
                s = 0x7f00  // reaped by someone else: status unknown, reported as exit code 127
            }
            return s
        }
    }

    /// True until the process has exited.
    package var isRunning: Bool { poll() == nil }

    /// The exit code, or the number of the signal that ended it; 0 while it runs.
    package var terminationStatus: Int32 {
        guard let st = poll() else { return 0 }
        return st & 0x7f == 0 ? (st >> 8) & 0xff : st & 0x7f
    }

    /// True when a signal ended the process.
    package var wasSignalled: Bool {
        guard let st = poll() else { return false }
        return st & 0x7f != 0
    }

    /// Sends `signal` while the process runs.
    package func send(_ signal: Int32) {
        if isRunning { kill(processIdentifier, signal) }
    }

    /// Waits up to `timeout` for the process to exit; true when it did.
    @discardableResult
    package func wait(timeout: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while isRunning {
            if clock.now >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return true
    }

    /// Sends `signal`, waits up to `grace`, then SIGKILL and waits for the exit.
    package func stop(signal: Int32 = SIGTERM, grace: Duration = .seconds(3)) {
        send(signal)
        if !wait(timeout: grace) {
            kill(processIdentifier, SIGKILL)
            wait(timeout: .seconds(3600))
        }
    }

    deinit {
        // Never leave a zombie or an orphan behind.
        if isRunning { stop(signal: SIGKILL, grace: .seconds(5)) }
    }
}
