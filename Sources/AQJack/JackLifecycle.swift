import AQCore
import CJACK
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process-wide order of libjack client opens and closes (docs/jack-device.md, "Closing a
/// client").
///
/// libjack (jackd2) keeps process-wide state that opening and closing clients on several
/// threads at once corrupts, and a client opened while a dead one of the same process is still
/// open reuses the dead server's shared memory (closing either then crashed). So:
///
/// - one libjack open or close at a time (``busy``);
/// - a close is *announced* (``announceClose(_:)``) the moment a device lets go of its client,
///   under the device's control lock, before that lock is released; from then on no open
///   starts (``open(limit:_:)``) until the close has run, although the close itself runs later,
///   on a thread of its own, outside every device lock;
/// - an open waits for that at most `limit` and then gives up, saying which close it waits for
///   (a libjack close can block for as long as a dying server keeps it waiting, or for ever).
///
/// The internal mutex is only held for this bookkeeping, never across a libjack call.
///
/// Thread safety: control threads only (never a JACK thread, never the render thread).
final class JackLifecycle: @unchecked Sendable {
    /// The one gate of the process.
    static let shared = JackLifecycle()

    /// How long a device waits for a close, and an open for the closes before it, unless told
    /// otherwise (``JackDevice/closeWaitLimit``).
    static let defaultWaitLimit: Duration = .seconds(5)

    /// Test hook: called on the closing thread, holding the gate, before libjack's
    /// deactivate/close, with the close's description. Tests make it block to stand for a
    /// libjack close that does not return.
    static var beforeClose: (@Sendable (String) -> Void)? {
        get { hook.withLock { $0 } }
        set { hook.withLock { $0 = newValue } }
    }
    private static let hook = Mutex<(@Sendable (String) -> Void)?>(nil)

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    /// A libjack open or close runs.
    private var busy = false
    /// Closes announced and not finished, by ticket: what and since when.
    private var pending: [Int: (what: String, since: ContinuousClock.Instant)] = [:]
    private var nextTicket = 0
    /// Clients of the process beside a device's own (``JackEchoReader``), by server: what lets
    /// go of each one's client when the server went away (``letGoOfCompanions(of:)``).
    private let companions = Mutex<[ObjectIdentifier: (server: String, letGo: @Sendable () -> Void)]>([:])

    /// Registers a client beside a device's (`id`: its owner), of server `server`: when a
    /// device of that server learns the server went away, `letGo` is called (on the device's
    /// event thread, under its control lock: it must announce its close, ``JackClientClose``,
    /// and take no device lock) before the device's reconnection can open anything. Any
    /// control thread; does not block.
    func addCompanion(_ id: ObjectIdentifier, server: String, letGo: @escaping @Sendable () -> Void) {
        companions.withLock { $0[id] = (server, letGo) }
    }

    /// Forgets a companion (its client closed). Any control thread; does not block.
    func removeCompanion(_ id: ObjectIdentifier) {
        _ = companions.withLock { $0.removeValue(forKey: id) }
    }

    /// Lets go of every companion client of `server` (a device of it learned the server went
    /// away): each one's close is announced before this returns, so that no open of the process
    /// can start before those dead clients are closed (libjack would reuse the dead server's
    /// shared memory for it). A companion's own shutdown notice may come later or never.
    /// Device's event thread.
    func letGoOfCompanions(of server: String) {
        let all = companions.withLock { c in c.values.filter { $0.server == server }.map(\.letGo) }
        for letGo in all { letGo() }
    }

    init() {
        mutex = .allocate(capacity: 1)
        _ = pthread_mutex_init(mutex, nil)
        cond = .allocate(capacity: 1)
        var attr = pthread_condattr_t()
        _ = pthread_condattr_init(&attr)
        _ = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        _ = pthread_cond_init(cond, &attr)
        _ = pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Registers a close about to be handed to its thread; from now on no open starts until
    /// ``close(_:_:)`` with this ticket has finished. Does not block (beyond the bookkeeping).
    func announceClose(_ what: String) -> Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        nextTicket += 1
        pending[nextTicket] = (what, ContinuousClock.now)
        return nextTicket
    }

    /// Runs the announced close `body` once no other libjack open or close runs (waiting as
    /// long as that takes: the closing thread's own wait), then lets waiting opens go on.
    func close(_ ticket: Int, _ body: () -> Void) {
        pthread_mutex_lock(mutex)
        while busy { pthread_cond_wait(cond, mutex) }
        busy = true
        pthread_mutex_unlock(mutex)
        body()
        pthread_mutex_lock(mutex)
        busy = false
        pending[ticket] = nil
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
    }

    /// Runs the libjack open (or probe) `body` once no close is pending and no other open or
    /// close runs; nil when that did not happen within `limit` (``pendingDescription`` says
    /// what it waited for).
    func open<T>(limit: Duration = JackLifecycle.defaultWaitLimit, _ body: () throws -> T) rethrows -> T? {
        guard wait(limit: limit, forPendingOnly: false, take: true) else { return nil }
        defer {
            pthread_mutex_lock(mutex)
            busy = false
            pthread_cond_broadcast(cond)
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }

    /// Waits until no close is pending (at most `limit`); true when none is. Takes nothing.
    func waitForCloses(limit: Duration = JackLifecycle.defaultWaitLimit) -> Bool {
        wait(limit: limit, forPendingOnly: true, take: false)
    }

    /// The oldest close not finished, and how long it has taken so far; nil when none.
    var pendingDescription: String? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard let oldest = pending.values.min(by: { $0.since < $1.since }) else { return nil }
        let d = ContinuousClock.now - oldest.since
        let s = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        return "\(oldest.what) has not finished after \(String(format: "%.1f", s)) s"
    }

    private func wait(limit: Duration, forPendingOnly: Bool, take: Bool) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let ns = Int64(deadline.tv_nsec) + limit.components.attoseconds / 1_000_000_000
        deadline.tv_sec += Int(limit.components.seconds + ns / 1_000_000_000)
        deadline.tv_nsec = Int(ns % 1_000_000_000)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !pending.isEmpty || (!forPendingOnly && busy) {
            if pthread_cond_timedwait(cond, mutex, &deadline) == ETIMEDOUT {
                if !pending.isEmpty || (!forPendingOnly && busy) { return false }
            }
        }
        if take { busy = true }
        return true
    }
}

/// A value handed to another thread that the compiler cannot prove `Sendable` (a libjack
/// client, the device's callback state): ownership passes with it.
struct JackUnchecked<T>: @unchecked Sendable {
    let value: T
}

/// One client's `jack_deactivate`/`jack_client_close`, on a thread of its own
/// ("aqsync-jack-close"), under the process-wide ``JackLifecycle`` gate and outside every lock
/// of the device, so that a libjack close that blocks freezes nothing but this thread (and the
/// opens that must wait for it).
///
/// Thread safety: made under the device's control lock (it announces itself to the gate
/// there); ``wait(limit:)`` and ``whenFinished(_:)`` from any control thread.
final class JackClientClose: @unchecked Sendable {
    /// What is closed ("closing JACK client “aqtest” on server “x”").
    let what: String
    /// When it was announced.
    let since = ContinuousClock.now
    private let finishedGroup = DispatchGroup()
    private let after = Mutex<(finished: Bool, actions: [@Sendable () -> Void])>((false, []))

    /// Announces the close and starts its thread. `deactivate`: the client is active. `muted`:
    /// libjack's messages are discarded while it closes (a client of a dead server: libjack
    /// complains about the server it cannot reach). `cleanup` runs on the closing thread right after libjack's close returned (still under
    /// the gate: before any new client of the process opens); `device` is left when all is done.
    init(
        client: OpaquePointer, deactivate: Bool, muted: Bool = false, what: String, device: DispatchGroup,
        cleanup: @escaping @Sendable () -> Void
    ) {
        self.what = what
        let ticket = JackLifecycle.shared.announceClose(what)
        finishedGroup.enter()
        device.enter()
        let c = JackUnchecked(value: client)
        let thread = Thread { [self] in
            setCurrentThreadName("aqsync-jack-close")
            var actions: [@Sendable () -> Void] = []
            JackLifecycle.shared.close(ticket) {
                JackLifecycle.beforeClose?(what)
                let close = {
                    if deactivate { _ = jack_deactivate(c.value) }
                    _ = jack_client_close(c.value)  // then JACK calls nothing of this client
                }
                if muted { JackMessages.whileMuted(close) } else { close() }
                cleanup()
                // Finished before the gate lets opens go on: whoever sees the gate free sees
                // this close finished too.
                actions = after.withLock { a in
                    a.finished = true
                    defer { a.actions = [] }
                    return a.actions
                }
                finishedGroup.leave()
                device.leave()
            }
            for action in actions { action() }
        }
        thread.name = "aqsync-jack-close"
        thread.start()
    }

    /// True when the close has finished.
    var isFinished: Bool { after.withLock { $0.finished } }

    /// "closing JACK client “…” on server “…” has not finished after N s" (how long so far).
    var progress: String {
        let d = ContinuousClock.now - since
        let s = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        return "\(what) has not finished after \(String(format: "%.1f", s)) s"
    }

    /// Waits at most `limit` for the close; true when it has finished.
    func wait(limit: Duration) -> Bool {
        let ns = limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000
        return finishedGroup.wait(timeout: .now() + .nanoseconds(Int(ns))) == .success
    }

    /// Runs `action` once the close has finished: at once (on this thread) when it has, else on
    /// the closing thread.
    func whenFinished(_ action: @escaping @Sendable () -> Void) {
        let now = after.withLock { a -> Bool in
            if a.finished { return true }
            a.actions.append(action)
            return false
        }
        if now { action() }
    }
}
