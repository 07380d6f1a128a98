import Synchronization

/// The clock shared between the render thread (the only writer of the cycle anchor) and
/// control threads (readers). A sequence lock: the writer never waits; a reader retries when
/// it raced a write.
///
/// Memory: every field lives in memory allocated by ``allocate()`` and freed by
/// ``deallocate()`` on a control thread.
package struct DeviceClockCore: @unchecked Sendable {
    struct Storage: ~Copyable {
        let seq = Atomic<UInt64>(0)
        let frame = Atomic<Int64>(0)
        let frames = Atomic<Int64>(0)
        let hostNs = Atomic<UInt64>(0)
        let nextHostNs = Atomic<UInt64>(0)
        let cycles = Atomic<UInt64>(0)
        let epoch = Atomic<UInt64>(0)
        let lastReason = Atomic<UInt8>(0)
        let nominalRateBits = Atomic<UInt64>(0)
    }
    let s: UnsafeMutablePointer<Storage>

    /// Allocates the clock for a device of nominal rate `sampleRate`.
    package static func allocate(sampleRate: Double) -> DeviceClockCore {
        let p = UnsafeMutablePointer<Storage>.allocate(capacity: 1)
        p.initialize(to: Storage())
        p.pointee.nominalRateBits.store(sampleRate.bitPattern, ordering: .relaxed)
        return DeviceClockCore(s: p)
    }

    /// Frees the memory; no thread may use the clock afterwards.
    package func deallocate() {
        s.deinitialize(count: 1)
        s.deallocate()
    }

    /// Nominal frames per second. Any thread.
    package var nominalSampleRate: Double {
        Double(bitPattern: s.pointee.nominalRateBits.load(ordering: .relaxed))
    }

    /// Sets the nominal rate after a device rate change (control or device notification thread).
    package func setNominalSampleRate(_ rate: Double) {
        s.pointee.nominalRateBits.store(rate.bitPattern, ordering: .relaxed)
    }

    /// Publishes a cycle's anchor. Render thread only. Inlined into the render entry point (a
    /// call and its frame were a measurable part of a one-queue cycle).
    @_noLocks @inline(__always)
    package func publish(_ c: CycleInfo) {
        let st = s
        let seq = st.pointee.seq.load(ordering: .relaxed)
        st.pointee.seq.store(seq &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        st.pointee.frame.store(c.frame, ordering: .relaxed)
        st.pointee.frames.store(Int64(c.frames), ordering: .relaxed)
        st.pointee.hostNs.store(c.hostTimeNs, ordering: .relaxed)
        st.pointee.nextHostNs.store(c.nextHostTimeNs, ordering: .relaxed)
        st.pointee.cycles.store(st.pointee.cycles.load(ordering: .relaxed) &+ 1, ordering: .relaxed)  // one writer
        st.pointee.seq.store(seq &+ 2, ordering: .releasing)
    }

    /// Records a discontinuity: the timeline's epoch advances. Any thread, render included.
    @_noLocks
    package func noteDiscontinuity(_ reason: DiscontinuityReason) {
        s.pointee.lastReason.store(unsafeBitCast(reason, to: UInt8.self), ordering: .relaxed)  // rawValue is not inlinable here
        s.pointee.epoch.wrappingAdd(1, ordering: .releasing)
    }

    /// The current discontinuity epoch and the reason of the latest one. Any thread.
    package var epoch: (count: UInt64, lastReason: DiscontinuityReason) {
        let e = s.pointee.epoch.load(ordering: .acquiring)
        let r = DiscontinuityReason(rawValue: s.pointee.lastReason.load(ordering: .relaxed)) ?? .none
        return (e, r)
    }

    /// Cycles rendered since the clock was made. Any thread.
    package var cycleCount: UInt64 { s.pointee.cycles.load(ordering: .relaxed) }

    /// A consistent copy of the latest anchor, or nil before the first cycle. Control threads.
    package func anchor() -> CycleInfo? {
        let st = s
        while true {
            let a = st.pointee.seq.load(ordering: .acquiring)
            if a & 1 == 1 { continue }
            let c = CycleInfo(
                frame: st.pointee.frame.load(ordering: .relaxed),
                frames: Int32(truncatingIfNeeded: st.pointee.frames.load(ordering: .relaxed)),
                hostTimeNs: st.pointee.hostNs.load(ordering: .relaxed),
                nextHostTimeNs: st.pointee.nextHostNs.load(ordering: .relaxed))
            let cycles = st.pointee.cycles.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            if st.pointee.seq.load(ordering: .relaxed) == a { return cycles == 0 ? nil : c }
        }
    }
}
