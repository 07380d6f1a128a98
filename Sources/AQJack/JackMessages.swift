import CJACK
import Foundation
import Synchronization

/// Where libjack's own error and information messages go.
///
/// libjack prints to standard error by default, several lines each time a client cannot reach
/// a server ("Cannot connect to server socket …"). A device that probes for a server, or keeps
/// trying to reach one that went away, would fill a terminal with them; so AQJack routes them
/// through one handler and mutes them while it probes (``whileMuted(_:)``).
///
/// Thread safety: every member from any thread; libjack calls the handler on whichever thread
/// reports (never with a lock of ours held).
public enum JackMessages {
    private static let state = Mutex<(handler: (@Sendable (String) -> Void)?, installed: Bool)>(
        (handler: { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }, installed: false))
    private static let muted = Atomic<Int>(0)

    /// Sends libjack's messages to `handler` (nil discards them). The default writes them to
    /// standard error. Any thread.
    public static func setHandler(_ handler: (@Sendable (String) -> Void)?) {
        install()
        state.withLock { $0.handler = handler }
    }

    /// Installs the routing into libjack once. Any thread.
    static func install() {
        let first = state.withLock { s in
            defer { s.installed = true }
            return !s.installed
        }
        guard first else { return }
        jack_set_error_function(jackMessage)
        jack_set_info_function(jackMessage)
    }

    /// Runs `body` with libjack's messages discarded (from every thread of the process). Any
    /// thread.
    static func whileMuted<T>(_ body: () throws -> T) rethrows -> T {
        install()
        muted.wrappingAdd(1, ordering: .relaxed)
        defer { muted.wrappingSubtract(1, ordering: .relaxed) }
        return try body()
    }

    /// Sends a line of AQJack's own to the handler, muted or not (a problem with a client that
    /// a person should hear of, such as a close that does not return). Any thread.
    static func report(_ line: String) {
        install()
        state.withLock { $0.handler }?(line)
    }

    fileprivate static func deliver(_ message: UnsafePointer<CChar>?) {
        guard let message, muted.load(ordering: .relaxed) == 0 else { return }
        let line = String(cString: message)
        state.withLock { $0.handler }?(line)
    }
}

/// libjack's error and info callback (a plain C function: it can capture nothing).
private func jackMessage(_ message: UnsafePointer<CChar>?) {
    JackMessages.deliver(message)
}
