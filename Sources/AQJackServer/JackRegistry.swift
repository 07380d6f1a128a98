import Foundation

/// JACK's machine-wide registry of servers (`/dev/shm/jack-shm-registry`, jack2's
/// `jack_shm_header_t`): 8 entries of (pid, `jack-UID:NAME:`). A server that dies without
/// unregistering (SIGKILL, a crash) keeps its entry; jackd reclaims an entry only when a server
/// of the same name registers, so servers with fresh names (every test's) fill it and the next
/// jackd fails with "Too many servers already active". This reads the entries so that the dead
/// ones can be reclaimed by name (``JackServer``).
///
/// Thread safety: plain functions; any thread.
package enum JackRegistry {
    /// The registry's path.
    package static let path = "/dev/shm/jack-shm-registry"

    /// One entry: the registering process and the server's name (without JACK's `jack-UID:`
    /// prefix and trailing `:`).
    package struct Entry: Equatable {
        package var pid: Int32
        package var name: String
        package init(pid: Int32, name: String) {
            self.pid = pid
            self.name = name
        }
    }

    /// The layout (jack2 `shm.h`): a 24-byte header (magic `'JACK'`, protocol, type, size,
    /// header length, entry length), then 8 entries of a 4-byte pid and a 257-byte name,
    /// 264 bytes each with padding.
    package static let headerBytes = 24, entryBytes = 264
    static let entries = 8

    /// The entries in use (pid not 0) of a registry's bytes; none when the bytes are not a
    /// registry (too short, wrong magic).
    package static func parse(_ bytes: [UInt8]) -> [Entry] {
        guard bytes.count >= headerBytes + entries * entryBytes, bytes.prefix(4) == [0x4B, 0x43, 0x41, 0x4A] else { return [] }
        var out: [Entry] = []
        for i in 0..<entries {
            let at = headerBytes + i * entryBytes
            let pid = Int32(bitPattern: UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24)
            guard pid != 0 else { continue }
            let raw = bytes[(at + 4)..<(at + entryBytes)].prefix { $0 != 0 }
            var name = String(decoding: raw, as: UTF8.self)
            if name.hasPrefix("jack-"), let colon = name.firstIndex(of: ":") { name = String(name[name.index(after: colon)...]) }
            if name.hasSuffix(":") { name.removeLast() }
            out.append(Entry(pid: pid, name: name))
        }
        return out
    }

    /// Names of the entries whose process is gone (or a zombie): their servers died without
    /// unregistering. Empty when the registry cannot be read.
    package static func deadServerNames() -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return parse([UInt8](data)).filter { !isAlive($0.pid) }.map(\.name).filter { !$0.isEmpty }
    }

    /// True when process `pid` exists and is not a zombie.
    static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        return processStat("\(pid)")?.state != "Z"
    }

    /// A process's command name and state letter from `/proc/PID/stat`; nil when unreadable.
    static func processStat(_ pid: String) -> (comm: Substring, state: Substring?)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
        return (stat[stat.index(after: open)..<close], stat[stat.index(after: close)...].split(separator: " ").first)
    }
}
