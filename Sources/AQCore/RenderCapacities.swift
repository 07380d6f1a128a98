#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFloatMode
import CMembarrier
import Synchronization

/// Capacities of the renderer, fixed when it is made. Running out is an error on the control
/// side, never a wait on the render thread.
public struct RenderCapacities: Sendable, Equatable {
    /// Queues that can exist at once.
    public var queues: Int
    /// Buffers one queue can have scheduled at once.
    public var buffersPerQueue: Int
    /// Commands in flight from control threads to the render thread.
    public var commands: Int
    /// Output channels the renderer can mix into.
    public var outputChannels: Int
    /// Device input channels the renderer reads each cycle (more are ignored).
    public var inputChannels: Int
    /// Frames of the capture ring (rounded up to a power of two): how far behind the device the
    /// control side may read captured input before frames are lost. 0: no capture ring.
    public var captureFrames: Int

    public init(
        queues: Int = 256, buffersPerQueue: Int = 64, commands: Int = 8192, outputChannels: Int = 32,
        inputChannels: Int = 8, captureFrames: Int = 16384
    ) {
        self.queues = queues
        self.buffersPerQueue = buffersPerQueue
        self.commands = commands
        self.outputChannels = outputChannels
        self.inputChannels = inputChannels
        self.captureFrames = captureFrames
    }
}

/// Render-thread statistics, readable from any thread.
public struct RenderStatistics: Sendable, Equatable {
    public var cycles: UInt64
    /// Frames of buffers and starts that had already passed when the render thread saw them.
    public var lateFrames: UInt64
    /// Events the render thread could not report because the event ring was full. Every
    /// event is paid for before its command is sent, so this stays 0; it is kept as a check.
    public var droppedEvents: UInt64
    /// Cycles rendered silent because a control thread was applying commands at that moment
    /// (a synchronous stop, reset or dispose while the device was stalled; see
    /// docs/architecture.md, "Synchronous calls").
    public var skippedCycles: UInt64
}
