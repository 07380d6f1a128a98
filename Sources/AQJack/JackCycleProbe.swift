import AQCore
import Synchronization

/// What the process callback records about one cycle when a ``JackCycleProbe`` is installed.
///
/// Thread safety: a plain value.
public struct JackCycleMeasurement: Sendable, BitwiseCopyable {
    /// CLOCK_MONOTONIC ns when the process callback was entered.
    public var entryNs: UInt64
    /// CLOCK_MONOTONIC ns when it returned (after the renderer).
    public var exitNs: UInt64
    /// The cycle as the renderer saw it: 64-bit first frame, frames, and JACK's cycle start
    /// (`jack_get_cycle_times` usecs, on CLOCK_MONOTONIC ns) and its estimate of the next.
    public var cycle: CycleInfo
    /// Xruns JACK had reported when the callback was entered (a change between two cycles
    /// means the time line broke between them).
    public var xruns: UInt64

    public init(entryNs: UInt64, exitNs: UInt64, cycle: CycleInfo, xruns: UInt64) {
        self.entryNs = entryNs
        self.exitNs = exitNs
        self.cycle = cycle
        self.xruns = xruns
    }
}

/// The render-thread half of the probe: a fixed-capacity single-producer single-consumer ring
/// written by the process callback and read by one control thread. Indices only grow (an Int
/// does not wrap in practice); slot = index % capacity. Memory owned by ``JackCycleProbe``.
struct JackProbeStorage: ~Copyable {
    let storage: UnsafeMutablePointer<JackCycleMeasurement>
    let capacity: Int
    /// Next index the callback writes (only the callback stores it).
    let head = Atomic<Int>(0)
    /// Next index the control thread reads (only it stores it).
    let tail = Atomic<Int>(0)
    /// Cycles not recorded because the ring was full.
    let dropped = Atomic<UInt64>(0)

    init(capacity: Int) {
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    /// Records one cycle. Render thread; no lock, no allocation.
    @_noLocks
    func record(entryNs: UInt64, exitNs: UInt64, cycle: CycleInfo, xruns: UInt64) {
        let h = head.load(ordering: .relaxed)
        if h &- tail.load(ordering: .acquiring) >= capacity {
            dropped.wrappingAdd(1, ordering: .relaxed)
            return
        }
        let slot = storage + h % capacity
        slot.pointee.entryNs = entryNs
        slot.pointee.exitNs = exitNs
        slot.pointee.cycle = cycle
        slot.pointee.xruns = xruns
        head.store(h &+ 1, ordering: .releasing)
    }

    /// The oldest recorded cycle, or nil. The one control thread.
    func pop() -> JackCycleMeasurement? {
        let t = tail.load(ordering: .relaxed)
        guard t != head.load(ordering: .acquiring) else { return nil }
        let m = storage[t % capacity]
        tail.store(t &+ 1, ordering: .releasing)
        return m
    }
}

/// Per-cycle timing measured from inside ``JackDevice``'s process callback, for benchmarks:
/// each cycle's entry and exit time, JACK's cycle start and the renderer's cycle anchor go into
/// a preallocated ring that a control thread empties with ``drain(into:)``. The callback only
/// reads the clock twice and writes one ring slot (no lock, no allocation); the ring is read
/// and the statistics made off the render thread.
///
/// Made by ``JackDevice/installCycleProbe(capacity:)``; the device keeps it (and its memory)
/// for the rest of its life.
///
/// Thread safety: ``drain(into:)`` from one control thread at a time; the rest any thread.
public final class JackCycleProbe: @unchecked Sendable {
    let storage: UnsafeMutablePointer<JackProbeStorage>
    /// Cycles the ring can hold between two drains.
    public let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        storage = .allocate(capacity: 1)
        storage.initialize(to: JackProbeStorage(capacity: capacity))
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Appends every measurement recorded since the last drain to `out`; returns how many.
    /// One control thread at a time.
    @discardableResult
    public func drain(into out: inout [JackCycleMeasurement]) -> Int {
        var n = 0
        while let m = storage.pointee.pop() {
            out.append(m)
            n += 1
        }
        return n
    }

    /// Cycles lost because the ring was full when the callback wanted to record them.
    public var droppedCount: UInt64 { storage.pointee.dropped.load(ordering: .relaxed) }
}
