import AQCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What JACK's shutdown callback leaves for the event thread: written from a context that must
/// behave like a signal handler (memory writes, atomics and `sem_post` only).
///
/// Memory: allocated and freed by ``JackEventThread`` on control threads.
struct JackEventSignal: ~Copyable {
    /// A shutdown is waiting to be reported.
    let pending = Atomic<Bool>(false)
    /// The thread should end.
    let quit = Atomic<Bool>(false)
    /// JACK's `jack_status_t` bits from the shutdown callback.
    let code = Atomic<UInt32>(0)
    /// Posted once per event.
    let sem: UnsafeMutablePointer<sem_t>
    /// NUL-terminated reason, copied by the shutdown callback.
    let reason: UnsafeMutablePointer<CChar>
    static let reasonCapacity = 512

    init() {
        sem = .allocate(capacity: 1)
        _ = sem_init(sem, 0, 0)
        reason = .allocate(capacity: Self.reasonCapacity)
        reason.initialize(repeating: 0, count: Self.reasonCapacity)
    }

    deinit {
        sem_destroy(sem)
        sem.deallocate()
        reason.deallocate()
    }
}

/// Records a server shutdown and wakes the event thread. Callable from JACK's shutdown callback
/// (any JACK thread): copies at most `reasonCapacity − 1` bytes, stores atomics, posts.
@_noLocks
func signalShutdown(_ s: UnsafeMutablePointer<JackEventSignal>, code: UInt32, reason: UnsafePointer<CChar>?) {
    let buf = s.pointee.reason
    var i = 0
    if let reason {
        while i < JackEventSignal.reasonCapacity - 1 {
            let ch = reason[i]
            if ch == 0 { break }
            buf[i] = ch
            i += 1
        }
    }
    buf[i] = 0
    s.pointee.code.store(code, ordering: .relaxed)
    s.pointee.pending.store(true, ordering: .releasing)
    // sem_post is async-signal-safe: no lock, no allocation.
    _unsafePerformance { _ = sem_post(s.pointee.sem) }
}

/// The device's event thread : sleeps on a semaphore and, when JACK
/// reports a shutdown, calls the handler with the reason, off JACK's threads, so no user code
/// ever runs on a JACK thread.
///
/// Thread safety: `init` and ``stop()`` on control threads; ``stop()`` may also be called from
/// the handler itself (then the thread is detached instead of joined).
final class JackEventThread: @unchecked Sendable {
    let signal: UnsafeMutablePointer<JackEventSignal>
    private let handler: @Sendable (String, UInt32) -> Void
    private var thread: pthread_t = pthread_t()
    private var stopped = false

    init(handler: @escaping @Sendable (String, UInt32) -> Void) throws(DeviceError) {
        signal = .allocate(capacity: 1)
        signal.initialize(to: JackEventSignal())
        self.handler = handler
        let ctx = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, nil, { arg in
            let me = Unmanaged<JackEventThread>.fromOpaque(arg!).takeRetainedValue()
            me.run()
            return nil
        }, ctx)
        if rc != 0 {
            Unmanaged<JackEventThread>.fromOpaque(ctx).release()
            stopped = true
            throw DeviceError("cannot start the JACK event thread (error \(rc))")
        }
    }

    deinit {
        signal.deinitialize(count: 1)
        signal.deallocate()
    }

    private func run() {
        while true {
            while sem_wait(signal.pointee.sem) != 0 {}  // EINTR
            if signal.pointee.quit.load(ordering: .acquiring) { return }
            if signal.pointee.pending.exchange(false, ordering: .acquiring) {
                let reason = String(cString: signal.pointee.reason)
                handler(reason, signal.pointee.code.load(ordering: .relaxed))
            }
        }
    }

    /// Ends the thread; joins it unless called from it or `join` is false (then it ends by
    /// itself once its handler has returned: the thread holds its own reference). Call once,
    /// after the JACK client that signals it has been closed.
    func stop(join: Bool = true) {
        guard !stopped else { return }
        stopped = true
        signal.pointee.quit.store(true, ordering: .releasing)
        _ = sem_post(signal.pointee.sem)
        if !join || pthread_equal(pthread_self(), thread) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }
}
