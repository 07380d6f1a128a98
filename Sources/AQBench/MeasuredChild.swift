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

    init(path: String, arguments: [String], output: String) throws {
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
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, environ)
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

    /// Peak resident set, bytes (after it exited).
    var maxRSSBytes: Int { Int(usage.ru_maxrss) * 1024 }
}
