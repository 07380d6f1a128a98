import Synchronization

/// A pointer the control side hands to the render thread, taken back only once the render
/// thread has said it let go: lifetimes without timeouts (issue 20).
///
/// The control side ``publish(_:)``es a pointer (or nil) under a new generation. The render
/// thread calls ``acquire()`` once at the start of every cycle: it reads the generation, then
/// the pointer, and acknowledges the generation it read. Once ``isAcknowledged(_:)`` is true
/// for the generation a publish returned, a cycle has begun with that pointer (or a later
/// one), so no cycle still uses anything published before: the old memory may be freed.
/// (The render thread reads the generation before the pointer and the control side writes
/// the pointer before the generation, so an acknowledged generation never goes with an older
/// pointer.) A control side that never sees the acknowledgement (the device stopped calling
/// back) must not free the old memory: it keeps it, and counts it.
///
/// Thread safety: ``acquire()`` from the render thread only (one thread); ``publish(_:)`` from
/// one control thread at a time; ``isAcknowledged(_:)`` from any thread. Nothing blocks.
package struct RenderHandoff: ~Copyable, @unchecked Sendable {
    private let pointer = Atomic<UInt>(0)
    private let generation = Atomic<UInt64>(0)
    private let acknowledged = Atomic<UInt64>(0)

    package init() {}

    /// The pointer for this cycle; acknowledges the generation it belongs to. Render thread,
    /// once per cycle (also when it uses nothing: the acknowledgement is what frees the old).
    @_noLocks
    package func acquire() -> UnsafeMutableRawPointer? {
        let g = generation.load(ordering: .acquiring)
        let p = pointer.load(ordering: .acquiring)
        if acknowledged.load(ordering: .relaxed) != g { acknowledged.store(g, ordering: .releasing) }
        return UnsafeMutableRawPointer(bitPattern: p)
    }

    /// The pointer last published (nil: none). Any thread.
    package var current: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: pointer.load(ordering: .acquiring)) }

    /// Publishes `p` (nil: nothing) for the cycles to come; returns its generation, for
    /// ``isAcknowledged(_:)``. One control thread at a time; does not block.
    @discardableResult
    package func publish(_ p: UnsafeMutableRawPointer?) -> UInt64 {
        pointer.store(UInt(bitPattern: p), ordering: .releasing)
        return generation.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
    }

    /// True once a cycle has begun with generation `g` or a later one: nothing published before
    /// `g` is in use any more. Any thread; does not block.
    package func isAcknowledged(_ g: UInt64) -> Bool { acknowledged.load(ordering: .acquiring) >= g }
}
