/// What a device renders into: the engine's renderer, as an opaque handle. A device gets one in
/// ``AudioDevice/start(rendering:)`` and calls ``render(_:outputs:channelCount:inputs:inputCount:)``
/// once per cycle until ``AudioDevice/stop()`` has returned; the renderer itself (its memory,
/// commands and events) is not part of the public API.
///
/// Thread safety: a plain value (one pointer); ``render(_:outputs:channelCount:inputs:inputCount:)``
/// on the device's render thread only.
public struct RenderTarget: @unchecked Sendable, Equatable {
    /// The renderer.
    package let core: UnsafeMutablePointer<RenderCore>

    /// Wraps the engine's renderer.
    package init(_ core: UnsafeMutablePointer<RenderCore>) { self.core = core }

    /// Renders one cycle: applies pending commands, mixes every running queue into the
    /// `channelCount` non-interleaved outputs (`cycle.frames` frames each, overwritten), reads
    /// the device's `inputCount` non-interleaved inputs (`cycle.frames` frames each; only read,
    /// never kept: nil or 0 when the device has none), reports what happened, and publishes the
    /// cycle's anchor to the clock. Render thread only; never blocks, allocates or locks.
    @_noLocks
    @inline(__always)
    public func render(
        _ cycle: CycleInfo, outputs: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int,
        inputs: UnsafePointer<UnsafeMutablePointer<Float>>? = nil, inputCount: Int = 0
    ) {
        core.pointee.render(cycle, outputs: outputs, channelCount: channelCount, inputs: inputs, inputCount: inputCount)
    }
}
