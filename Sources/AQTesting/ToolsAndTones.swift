import Foundation

/// The frequency of `x` (at `rate` frames per second) from its rising zero crossings; 0 when
/// there are fewer than three. Periods more than 20 % away from the median period are left
/// out: a recording in which the machine lost a cycle (an xrun) has one broken period there,
/// which says nothing about the tone. For tests that measure a tone in a recording. Any thread.
package func risingZeroCrossingFrequency(_ x: [Float], rate: Double) -> Double {
    var crossings: [Int] = []
    for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 { crossings.append(i) }
    guard crossings.count > 2 else { return 0 }
    let periods = zip(crossings.dropFirst(), crossings).map { Double($0 - $1) }
    let median = periods.sorted()[periods.count / 2]
    let kept = periods.filter { abs($0 - median) <= 0.2 * median }
    guard !kept.isEmpty else { return 0 }
    return Double(kept.count) * rate / kept.reduce(0, +)
}

/// An executable of this package built beside the running test bundle (`swift build
/// --build-tests` builds them), else in `.build/debug` of the package this file belongs to.
/// Any thread.
package func builtProduct(_ name: String) -> URL {
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/\(name)")
}

/// Put in front of every C client the tests compile: a thread started before `main` that waits
/// for the process that started the client (a test process) to end, through a pidfd, and then
/// ends the client. A test process that crashed or was killed used to leave its witnesses
/// running, connected to nothing, until removed by hand (issue 21). Where `pidfd_open` is
/// missing (Linux before 5.3) the thread looks at its parent once a second instead.
let orphanGuard = #"""
    #include <poll.h>
    #include <pthread.h>
    #include <sys/syscall.h>
    #include <unistd.h>
    static void *aq_orphan_guard_main(void *arg) {
        pid_t parent = (pid_t)(long)arg;
        long fd = syscall(SYS_pidfd_open, parent, 0);
        if (fd >= 0) {
            struct pollfd p = { .fd = (int)fd, .events = POLLIN };
            while (poll(&p, 1, -1) < 0) {}
        } else {
            while (getppid() == parent) sleep(1);
        }
        _exit(0);
        return 0;
    }
    __attribute__((constructor)) static void aq_orphan_guard(void) {
        pid_t parent = getppid();
        if (parent <= 1) _exit(0);
        pthread_t t;
        if (pthread_create(&t, 0, aq_orphan_guard_main, (void *)(long)parent) == 0) pthread_detach(t);
    }

    """#

/// Compiles a C JACK client (`NAME.c` in `directory`) against jackd2's headers
/// (`pkg-config jack`); it runs on either libjack. Returns the executable.
package func compileJackClient(_ source: String, name: String, directory: URL) throws(TestingError) -> URL {
    let src = directory.appendingPathComponent("\(name).c"), bin = directory.appendingPathComponent(name)
    do { try (orphanGuard + source).write(to: src, atomically: true, encoding: .utf8) } catch {
        throw TestingError("cannot write \(src.path): \(error)")
    }
    let log = directory.appendingPathComponent("\(name).cc.log")
    let cc = try ChildProcess(
        path: "/bin/sh", arguments: ["-c", "cc -O2 -o '\(bin.path)' '\(src.path)' $(pkg-config --cflags --libs jack)"],
        environment: ProcessInfo.processInfo.environment, output: log)
    guard cc.wait(timeout: .seconds(60)), cc.terminationStatus == 0 else {
        throw TestingError("cc \(name).c failed: " + ((try? String(contentsOf: log, encoding: .utf8)) ?? ""))
    }
    return bin
}

/// A plain C JACK client compiled from `source` (``compileJackClient(_:name:directory:)``) and
/// run as a child process, its output in `NAME.log` beside it; stopped with SIGKILL (such a
/// client holds nothing worth finishing). The witnesses and test clients of AQTesting run on it.
///
/// Thread safety: `init` and `stop` from the test's thread.
package final class JackClientProgram: @unchecked Sendable {
    /// The running client.
    package let process: ChildProcess

    /// Compiles and starts the client with `arguments` on the server that `environment` names;
    /// the process SCHED_FIFO at `realtimePriority` when given and allowed (its threads inherit
    /// it where the JACK library lets them: pipewire-jack does, jackd2's libjack makes a
    /// non-realtime server's client threads ordinary ones). Blocks while the compiler runs.
    package init(
        source: String, name: String, arguments: [String], environment: [String: String], directory: URL,
        realtimePriority: Int32? = nil
    ) throws(TestingError) {
        let bin = try compileJackClient(source, name: name, directory: directory)
        let log = directory.appendingPathComponent("\(name).log")
        if let realtimePriority,
            let rt = try? ChildProcess(path: bin.path, arguments: arguments, environment: environment, output: log, realtimePriority: realtimePriority)
        {
            process = rt
        } else {
            process = try ChildProcess(path: bin.path, arguments: arguments, environment: environment, output: log)
        }
    }

    /// True while the client runs.
    package var isRunning: Bool { process.isRunning }

    /// Stops the client. Idempotent.
    package func stop() {
        process.send(SIGKILL)
        _ = process.wait(timeout: .seconds(5))
    }

    deinit { stop() }
}
