import Synchronization

/// A fixed-capacity single-producer single-consumer ring of plain values.
///
/// One thread pushes, one thread pops; neither ever waits. A full ring refuses the value
/// (``push(_:)`` returns false) — the producer decides what that means; an empty ring pops nil.
/// The ring is a value holding pointers: copies share the same storage. Memory is allocated by
/// ``allocate(capacity:)`` and freed by ``deallocate()`` on a control thread, when neither side
/// uses it any more.
///
/// Thread safety: ``push(_:)`` from the one producer thread, ``pop()`` from the one consumer
/// thread, ``count`` from either. Producer and consumer may be different for each ring, but
/// each role is held by one thread at a time (callers serialise with a lock on the control side).
package struct SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    /// The element storage; slot `i` is used as `storage[i]` after ``RingIndex/writeSlot()`` or
    /// ``RingIndex/readSlot()`` returned `i`.
    package let storage: UnsafeMutablePointer<Element>
    /// The positions, shared by producer and consumer.
    package let index: RingIndex
    /// Slots in the ring (a power of two).
    package var capacity: Int { index.capacity }

    /// Allocates a ring holding at least `capacity` values (rounded up to a power of two).
    /// The storage is written once here, so that its pages are mapped before a realtime
    /// thread touches them (no page fault on the render thread).
    package static func allocate(capacity: Int) -> SPSCRing {
        let index = RingIndex.allocate(capacity: capacity)
        let storage = UnsafeMutablePointer<Element>.allocate(capacity: index.capacity)
        let raw = UnsafeMutableRawPointer(storage)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: index.capacity * MemoryLayout<Element>.stride)
        // Plain values (BitwiseCopyable): the zeroed bytes are bound back to the element type.
        return SPSCRing(storage: raw.bindMemory(to: Element.self, capacity: index.capacity), index: index)
    }

    /// Frees the ring. No thread may use it afterwards.
    package func deallocate() {
        storage.deallocate()
        index.deallocate()
    }

    /// Appends a value; false when the ring is full. Producer thread only.
    @discardableResult
    package func push(_ value: Element) -> Bool {
        guard let i = index.writeSlot() else { return false }
        storage[i] = value
        index.commitWrite()
        return true
    }

    /// Removes the oldest value; nil when empty. Consumer thread only.
    package func pop() -> Element? {
        guard let i = index.readSlot() else { return nil }
        let v = storage[i]
        index.commitRead()
        return v
    }

    /// Free slots as the producer sees them. Producer thread only.
    package var freeCount: Int { index.freeCount }

    /// Values pushed since the ring was made (wrapping). Any thread.
    package var produced: Int { index.produced }

    /// Values waiting (a snapshot). Any thread.
    package var count: Int { index.count }
}

/// The positions of a single-producer single-consumer ring, apart from its element type, so
/// that the render path (checked by `@_noLocks`, which refuses unspecialised generic calls)
/// can use a ring of any element type through plain functions.
///
/// Thread safety: ``writeSlot()``/``commitWrite()`` from the producer, ``readSlot()``/
/// ``commitRead()`` from the consumer.
package struct RingIndex: @unchecked Sendable {
    /// The two positions, each on a cache line of its own (128 bytes: two 64-byte lines, for
    /// adjacent-line prefetch), so that the producer's stores do not evict the consumer's line
    /// and the reverse.
    struct Indices: ~Copyable {
        /// Next slot the producer writes (only the producer stores it).
        let head = Atomic<Int>(0)
        let padding: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        /// Next slot the consumer reads (only the consumer stores it).
        let tail = Atomic<Int>(0)
    }
    static let lineSize = 128
    let indices: UnsafeMutablePointer<Indices>
    package let capacity: Int
    let mask: Int

    static func allocate(capacity: Int) -> RingIndex {
        var cap = 1
        while cap < max(capacity, 2) { cap <<= 1 }
        let bytes = max(MemoryLayout<Indices>.stride, 2 * lineSize)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: lineSize)
        let i = raw.bindMemory(to: Indices.self, capacity: 1)
        i.initialize(to: Indices())
        return RingIndex(indices: i, capacity: cap, mask: cap - 1)
    }

    func deallocate() {
        indices.deinitialize(count: 1)
        UnsafeMutableRawPointer(indices).deallocate()
    }

    /// The slot the next value goes into, or nil when full. Producer only.
    @_noLocks
    package func writeSlot() -> Int? {
        let h = indices.pointee.head.load(ordering: .relaxed)
        let t = indices.pointee.tail.load(ordering: .acquiring)
        return h &- t >= capacity ? nil : h & mask
    }

    /// Publishes the value written into ``writeSlot()``. Producer only.
    @_noLocks
    package func commitWrite() {
        // Only the producer stores `head`: a load and a release store, no locked add.
        let h = indices.pointee.head.load(ordering: .relaxed)
        indices.pointee.head.store(h &+ 1, ordering: .releasing)
    }

    /// The slot of the oldest value, or nil when empty. Consumer only.
    @_noLocks
    package func readSlot() -> Int? {
        let t = indices.pointee.tail.load(ordering: .relaxed)
        let h = indices.pointee.head.load(ordering: .acquiring)
        return t == h ? nil : t & mask
    }

    /// Frees the slot read through ``readSlot()``. Consumer only.
    @_noLocks
    package func commitRead() {
        // Only the consumer stores `tail`: a load and a release store, no locked add.
        let t = indices.pointee.tail.load(ordering: .relaxed)
        indices.pointee.tail.store(t &+ 1, ordering: .releasing)
    }

    /// Free slots as the producer sees them.
    package var freeCount: Int {
        capacity - (indices.pointee.head.load(ordering: .relaxed) &- indices.pointee.tail.load(ordering: .acquiring))
    }

    /// Values waiting (a snapshot). Any thread.
    package var count: Int {
        indices.pointee.head.load(ordering: .acquiring) &- indices.pointee.tail.load(ordering: .acquiring)
    }

    /// Values pushed since the ring was made (wrapping). Any thread.
    package var produced: Int { indices.pointee.head.load(ordering: .acquiring) }

    /// Values consumed since the ring was made (wrapping); the consumer releases a slot only
    /// after it is done with its value. Any thread.
    package var consumed: Int { indices.pointee.tail.load(ordering: .acquiring) }
}
