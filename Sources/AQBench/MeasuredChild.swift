import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn (stdin /dev/null, stdout and stderr into a file)
/// and reaped with wait4, so that its whole CPU time and peak RSS (`rusage`, every thread,
/// those that ended included) are known exactly when it has exited. Foundation's `Process`
/// reaps its children itself, and their rusage with them.
///
/// Thread safety: one control thread.
final class MeasuredChild {
    let pid: pid_t
    private(set) var status: Int32?
    private(set) var usage = rusage()

    /// `environment`: variables set (or replaced) in the child's copy of this process's.
    init(path: String, arguments: [String], output: String, environment: [String: String] = [:]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for e in envp { free(e) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw BenchError("cannot run \(path): \(String(cString: strerror(rc)))") }
        pid = child
    }

    /// Reaps it if it has exited; true while it runs.
    var isRunning: Bool {
        if status != nil { return false }
        var st: Int32 = 0
        if wait4(pid, &st, WNOHANG, &usage) == pid { status = st }
        return status == nil
    }

    /// The exit status (128 + the signal when a signal ended it); nil while it runs.
    var exitStatus: Int32? {
        guard let st = status else { return nil }
        return st & 0x7f == 0 ? (st >> 8) & 0xff : 128 + (st & 0x7f)
    }

    /// User + system CPU seconds of the whole process (after it exited).
    var cpuSeconds: Double {
        Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// The largest VmHWM read from /proc/PID/status by ``sampleMemory()`` (0: none read).
    private(set) var sampledHWMBytes = 0

    /// Reads the child's peak resident set so far (VmHWM of /proc/PID/status) while it runs.
    /// rusage's `ru_maxrss` cannot be used for a child started with posix_spawn: glibc starts it
    /// sharing this process's memory until the exec (CLONE_VM), and the kernel carries the
    /// high-water mark of the memory the exec replaces into the child's, so the child reports
    /// at least this process's own peak (seen: 766 MiB for a 190 MiB ecasound, after the bench
    /// had read a large log).
    func sampleMemory() {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return }
        sampledHWMBytes = max(sampledHWMBytes, kib * 1024)
    }

    /// Peak resident set, bytes: the largest VmHWM sampled while it ran (growth in its last
    /// moments, after the last sample, is missed); rusage's figure when none was sampled.
    var maxRSSBytes: Int { sampledHWMBytes > 0 ? sampledHWMBytes : Int(usage.ru_maxrss) * 1024 }
}

extension MeasuredChild {
    /// Waits for the child to exit (an offline render), polling every 2 ms and sampling its
    /// memory every 10 ms (``sampleMemory()``); a stop request (SIGINT or SIGTERM to the bench)
    /// is passed on to the child as SIGINT. Control thread; blocks until the child exits.
    /// - Throws: ``BenchError`` when the bench was asked to stop.
    func waitSamplingMemory() throws {
        var interrupted = false
        var polls = 0
        while isRunning {
            if polls % 5 == 0 { sampleMemory() }
            polls += 1
            if capacityStopRequested.load(ordering: .relaxed) && !interrupted { kill(pid, SIGINT); interrupted = true }
            usleep(2000)
        }
        if interrupted { throw BenchError("stopped by a signal") }
    }
}
