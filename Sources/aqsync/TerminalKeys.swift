import AQSession
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Reads the keys of `aqsync play` from its terminal (docs/control.md): stdin in
/// non-canonical mode without echo (Ctrl-C still signals), a thread that polls it every
/// 100 ms and hands each ``ControlKey`` to the handler. The terminal's mode is restored by
/// ``stop()``.
///
/// Thread safety: `init` and `stop` from the main thread; the handler runs on the reader thread.
final class TerminalKeys: @unchecked Sendable {
    private var saved = termios()
    private let done = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Nil when stdin is not a terminal.
    init?(handler: @escaping @Sendable (ControlKey) -> Void) {
        guard isatty(STDIN_FILENO) != 0, tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return nil }
        let thread = Thread { [self] in
            var buf = [UInt8](repeating: 0, count: 64)
            while !done.load(ordering: .relaxed) {
                var p = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
                if poll(&p, 1, 100) > 0 {
                    let n = read(STDIN_FILENO, &buf, buf.count)
                    if n <= 0 { if n == 0 { break } else { continue } }
                    for key in ControlKey.decode(Array(buf[0..<n])) { handler(key) }
                }
            }
            finished.signal()
        }
        thread.name = "aqsync-keys"
        thread.start()
    }

    /// Stops the reader thread and restores the terminal. Idempotent.
    func stop() {
        if done.exchange(true, ordering: .relaxed) { return }
        finished.wait()
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }

    deinit { stop() }
}
