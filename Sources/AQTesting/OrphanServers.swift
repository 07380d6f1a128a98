import Foundation

/// Private `jackd` servers that a test process of this project started and left running when
/// it died (killed by a timeout, a crash, a `kill -9` of the test runner). Such a server has
/// init as its parent and keeps running realtime cycles for ever; with a few of them on a
/// 2-core machine every later live test runs beside their load (one CI pass saw 5 723 xruns in
/// a 3-minute soak that way) and JACK's server registry fills up.
///
/// A server of ours is recognised by its name alone: test servers are named
/// `aq…-PID-…` (``PrivateJackServer``: `PREFIX-PID-N-RANDOM`; the soak: `aqsoak-PID-RANDOM`),
/// where PID is the test process that started it. It is an orphan when that process no longer
/// exists. A server of a test process that still runs (another test run on the same machine,
/// a helper's) is never touched, nor any server named otherwise (a user's, the demo's).
///
/// Thread safety: any control thread.
package enum OrphanServers {
    /// One orphan found: its process, its server name, and the test process that started it.
    package struct Orphan: Sendable, Equatable, CustomStringConvertible {
        package var pid: Int32
        package var name: String
        package var owner: Int32
        package var description: String {
            "jackd -n \(name) (pid \(pid); the test process \(owner) that started it is gone)"
        }
    }

    /// The test process that named a server `name`, or nil when the name is not one of ours
    /// (`aq` and lowercase letters, a dash, the decimal process id, a dash).
    package static func owner(ofServerNamed name: String) -> Int32? {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].hasPrefix("aq"),
            parts[0].allSatisfy({ $0.isASCII && $0.isLowercase }),
            let pid = Int32(parts[1]), pid > 0
        else { return nil }
        return pid
    }

    /// The server name passed with `-n` in a jackd command line, or nil when the command is
    /// not jackd's or names no server.
    package static func serverName(inCommandLine arguments: [String]) -> String? {
        guard let tool = arguments.first, (tool as NSString).lastPathComponent == "jackd" else { return nil }
        guard let i = arguments.firstIndex(of: "-n"), i + 1 < arguments.count else { return nil }
        return arguments[i + 1]
    }

    /// True while a process with this id exists (zombies included).
    static func exists(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }

    /// Every orphaned test server on this machine (read from `/proc`). Never blocks long.
    package static func find() -> [Orphan] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var found: [Orphan] = []
        for entry in entries {
            guard let pid = Int32(entry),
                let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"), !raw.isEmpty
            else { continue }
            let arguments = raw.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            guard let name = serverName(inCommandLine: arguments), let owner = owner(ofServerNamed: name),
                owner != getpid(), !exists(owner)
            else { continue }
            found.append(Orphan(pid: pid, name: name, owner: owner))
        }
        return found.sorted { $0.pid < $1.pid }
    }

    /// Sends SIGTERM to every orphaned test server (jackd then leaves the registry in order)
    /// and prints one line for each, so a log shows what ran beside the tests. Returns the
    /// orphans signalled. Does not wait for them to exit.
    @discardableResult
    package static func stopAll() -> [Orphan] {
        let orphans = find()
        for o in orphans where kill(o.pid, SIGTERM) == 0 {
            print("OrphanServers: stopped an orphaned test server, \(o)")
        }
        return orphans
    }

    /// ``stopAll()`` once per process: the first private server a test process starts calls
    /// this, so a live pass never begins beside the servers of dead runs.
    package static func stopAllOnce() {
        _ = once
    }

    private static let once: Void = { stopAll() }()
}
