// A queue's callbacks on a caller's dispatch queue (issue 22): the toolchain's libdispatch, the
// queue given to AudioQueueNewOutputWithDispatchQueue or AudioQueueNewInputWithDispatchQueue.
// Each callback is one dispatch_async_f submission, made on the engine's events thread (or the
// thread of an immediate stop or reset), in the order the engine reports them.
// docs/c-api.md, "Threads and blocking".
import CAudioToolbox
import Foundation

/// One audio queue's dispatch queue, retained from creation until `invalidate` (the disposal).
/// Thread safety: `post` and `invalidate` from any thread; neither blocks (a short lock).
final class DispatchDelivery: @unchecked Sendable {
    /// The caller's `dispatch_queue_t`, retained while `live`.
    private let queue: OpaquePointer
    private let lock = NSLock()
    private var live = true

    /// Retains `queue` (a `dispatch_queue_t`). Any thread.
    init(queue: OpaquePointer) {
        aqc_dispatch_retain(queue)
        self.queue = queue
    }

    deinit { invalidate() }

    /// Submits `work` to the queue (asynchronously: it runs on one of the queue's threads after
    /// this returns). After `invalidate`, nothing is submitted. Any thread; does not block.
    func post(_ work: @escaping () -> Void) {
        lock.withLock {
            guard live else { return }
            let context = Unmanaged.passRetained(Work(work)).toOpaque()
            dispatch_async_f(queue, context) { context in
                guard let context else { return }
                Unmanaged<Work>.fromOpaque(context).takeRetainedValue().run()
            }
        }
    }

    /// Releases the queue; work already submitted still runs (the caller's work checks whether
    /// its audio queue was disposed of). Any thread; idempotent.
    func invalidate() {
        lock.withLock {
            guard live else { return }
            live = false
            aqc_dispatch_release(queue)
        }
    }

    /// A submission's closure, carried through `dispatch_async_f`'s context pointer.
    private final class Work {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
}
