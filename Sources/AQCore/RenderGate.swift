import Synchronization

/// The gate that keeps the render thread and a control thread applying commands out of each
/// other's way (docs/architecture.md, "The gate"). Allocated alone on two cache lines of its own
/// (``RenderGate/allocate()``): the events thread writes ``RenderControl`` often.
struct RenderGate: ~Copyable {
    /// Asymmetric gate: 1 while the render thread is in a cycle. Compare-and-swap gate: 0 free,
    /// 1 the render thread, 2 a control thread.
    let inCycle = Atomic<Int>(0)
    /// Asymmetric gate: 1 while a control thread claims the renderer.
    let claimed = Atomic<Int>(0)
    /// 1 when the gate is asymmetric (membarrier(2) available: the render thread's side is plain
    /// stores and loads, the control thread's side a system call), 0 when it is the
    /// compare-and-swap on ``inCycle``. Set when the renderer is made.
    let asymmetric = Atomic<Int>(0)

    /// Two cache lines' worth, aligned: nothing else shares the gate's line (nor the adjacent line
    /// the hardware prefetcher pairs with it). Control side.
    static func allocate() -> UnsafeMutablePointer<RenderGate> {
        let p = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 128)
        p.initializeMemory(as: UInt8.self, repeating: 0, count: 128)
        let gate = p.bindMemory(to: RenderGate.self, capacity: 1)
        gate.initialize(to: RenderGate())
        return gate
    }

    /// Frees what ``allocate()`` made. Control side, once no thread uses the gate.
    static func deallocate(_ gate: UnsafeMutablePointer<RenderGate>) {
        gate.deinitialize(count: 1)
        UnsafeMutableRawPointer(gate).deallocate()
    }
}
