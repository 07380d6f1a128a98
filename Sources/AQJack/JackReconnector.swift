import AQCore
import Foundation
import Synchronization

/// Where a ``JackDevice`` stands with its server.
public enum JackConnectionState: Sendable, Equatable, CustomStringConvertible {
    /// The device renders.
    case running
    /// The server went away; the device is trying to reach it again.
    case reconnecting
    /// Not rendering and not trying (before start, after stop, or after giving up).
    case stopped

    public var description: String {
        switch self {
        case .running: "running"
        case .reconnecting: "reconnecting"
        case .stopped: "stopped"
        }
    }
}

/// The thread that brings a ``JackDevice`` back when its server returns (the device closed its
/// dead client before starting it): it tries to open a new one on a server of the same name with a growing pause
/// between tries (50 ms, ×1.5, at most 1 s) until one answers or the device is stopped.
///
/// Thread safety: made by the device's event thread; ``cancelAndWait()`` from any control
/// thread but its own.
final class JackReconnector: @unchecked Sendable {
    private let cancelled = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private weak var device: JackDevice?
    private let threadID = Mutex<pthread_t?>(nil)

    init(device: JackDevice, lostAt: ContinuousClock.Instant) {
        self.device = device
        let thread = Thread { [self] in
            threadID.withLock { $0 = pthread_self() }
            setCurrentThreadName("aqsync-reconnect")
            run(lostAt: lostAt)
            done.signal()
        }
        thread.name = "aqsync-jack-reconnect"
        thread.start()
    }

    /// The device is held only during one attempt, so that dropping it stops the retries.
    private func run(lostAt: ContinuousClock.Instant) {
        var pause = 0.05
        var outcome: DeviceStatus?
        while !cancelled.load(ordering: .acquiring) {
            // A probe first, and the real client a moment after the server first answers (a
            // server that has just started may still be setting up). A server that is not up
            // yet makes libjack print several lines per try: muted.
            let reachable = device.map { d in JackMessages.whileMuted { JackDevice.isServerReachable(d.serverName) } } ?? false
            if reachable { _ = wake.wait(timeout: .now() + 0.25) }
            guard reachable, !cancelled.load(ordering: .acquiring),
                let o = JackMessages.whileMuted({ device?.tryResume(awaySince: lostAt) })
            else {
                if device == nil { return }
                _ = wake.wait(timeout: .now() + pause)
                pause = min(pause * 1.5, 1.0)
                continue
            }
            outcome = o
            break
        }
        device?.reconnectorFinished(self, outcome: cancelled.load(ordering: .acquiring) ? nil : outcome)
    }

    /// Stops trying and returns once the thread has finished (at once when called from the
    /// thread itself, which then ends after the current attempt).
    func cancelAndWait() {
        cancelled.store(true, ordering: .releasing)
        wake.signal()
        let mine = threadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if !mine { done.wait() }
    }
}
