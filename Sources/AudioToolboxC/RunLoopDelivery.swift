// A queue's callbacks on a caller's run loop (issue 23): the run loop is Core Foundation's own
// (the toolchain's swift-corelibs-foundation, in libFoundation.so); the library exports no CF
// symbol of its own. A queue made with a run loop gets a version-0 run-loop source in the mode
// it was given (NULL: kCFRunLoopCommonModes, as Apple's queue); its callbacks and listeners are
// queued here and run by the source's perform routine, on the thread that runs that loop, inside
// CFRunLoopRun or CFRunLoopRunInMode (which then return kCFRunLoopRunHandledSource when asked
// to return after a source). docs/c-api.md, "Threads and blocking".
import CAudioToolbox
import Foundation

/// One queue's source on one run loop. Thread safety: `post` and `invalidate` from any thread
/// (short lock, never blocking); the work runs on the loop's thread.
final class RunLoopDelivery: @unchecked Sendable {
    let loop: CFRunLoop
    private let lock = NSLock()
    private var pending: [() -> Void] = []
    private var source: CFRunLoopSource?

    /// Adds a source for this delivery to `loop` in `mode` (nil: the common modes). Any thread.
    init(loop: CFRunLoop, mode: CFString?) {
        self.loop = loop
        var context = CFRunLoopSourceContext(
            version: 0, info: Unmanaged.passUnretained(self).toOpaque(),
            // The source keeps its delivery alive (until `invalidate` drops the source).
            retain: { info in
                guard let info else { return nil }
                _ = Unmanaged<RunLoopDelivery>.fromOpaque(info).retain()
                return UnsafeRawPointer(info)
            },
            release: { info in
                guard let info else { return }
                Unmanaged<RunLoopDelivery>.fromOpaque(info).release()
            },
            copyDescription: nil, equal: nil, hash: nil, schedule: nil, cancel: nil,
            perform: { info in
                guard let info else { return }
                Unmanaged<RunLoopDelivery>.fromOpaque(info).takeUnretainedValue().performPending()
            })
        let made = CFRunLoopSourceCreate(nil, 0, &context)
        source = made
        CFRunLoopAddSource(loop, made, mode ?? kCFRunLoopCommonModes)
    }

    /// True on the thread whose run loop this is (work posted there could run at once).
    var isCurrent: Bool { CFRunLoopGetCurrent() === loop }

    /// Queues `work` for the loop's thread and wakes the loop. Any thread; does not block.
    func post(_ work: @escaping () -> Void) {
        let s: CFRunLoopSource? = lock.withLock {
            pending.append(work)
            return source
        }
        guard let s else { return }
        CFRunLoopSourceSignal(s)
        CFRunLoopWakeUp(loop)
    }

    /// Runs what was posted now, when the calling thread is the loop's (AudioQueueOfflineRender
    /// on the thread whose loop the queue was given: Apple's offline renderers, aqrender and
    /// AQOfflineRenderTest, refill their buffers from callbacks without running the loop). Returns
    /// whether it ran. Issue 23.
    @discardableResult
    func performIfOnLoopThread() -> Bool {
        guard CFRunLoopGetCurrent() === loop else { return false }
        performPending()
        return true
    }

    /// Runs what was posted (the source's perform routine, on the loop's thread).
    private func performPending() {
        let work: [() -> Void] = lock.withLock {
            let w = pending
            pending.removeAll()
            return w
        }
        for w in work { w() }
    }

    /// Removes the source from every loop and mode; posted work not yet run is dropped. Any
    /// thread; after it returns no work of this delivery starts (work already running on the
    /// loop's thread finishes).
    func invalidate() {
        let s: CFRunLoopSource? = lock.withLock {
            let s = source
            source = nil
            pending.removeAll()
            return s
        }
        if let s { CFRunLoopSourceInvalidate(s) }
    }

    /// The run loop behind a C `CFRunLoopRef` (not retained: the caller's loop outlives its queues).
    static func loop(_ ref: OpaquePointer) -> CFRunLoop {
        Unmanaged<CFRunLoop>.fromOpaque(UnsafeRawPointer(ref)).takeUnretainedValue()
    }

    /// The mode behind a C `CFStringRef` (nil stays nil).
    static func mode(_ ref: OpaquePointer?) -> CFString? {
        ref.map { Unmanaged<CFString>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
    }
}
