/// What a device tells the renderer about one render cycle.
///
/// Thread safety: a plain value, made on the render thread by the device.
public struct CycleInfo: Sendable, BitwiseCopyable {
    /// Device sample time of the cycle's first frame: a 64-bit frame count that never wraps.
    public var frame: Int64
    /// Frames in this cycle.
    public var frames: Int32
    /// Host time of the cycle's first frame, in nanoseconds on CLOCK_MONOTONIC.
    public var hostTimeNs: UInt64
    /// The device's estimate of the host time of the next cycle's first frame; 0 when unknown
    /// (then the nominal rate is assumed).
    public var nextHostTimeNs: UInt64

    public init(frame: Int64, frames: Int32, hostTimeNs: UInt64, nextHostTimeNs: UInt64) {
        self.frame = frame
        self.frames = frames
        self.hostTimeNs = hostTimeNs
        self.nextHostTimeNs = nextHostTimeNs
    }
}

/// Why the line between device sample time and host time broke.
public enum DiscontinuityReason: UInt8, Sendable, BitwiseCopyable, CustomStringConvertible {
    case none = 0
    /// The device missed a deadline (JACK xrun).
    case xrun = 1
    /// The device's sample rate changed.
    case sampleRateChange = 2
    /// The device's period (frames per cycle) changed.
    case bufferSizeChange = 3
    /// The server entered or left freewheel mode.
    case freewheel = 4
    /// The server went away.
    case serverShutdown = 5
    /// The device (re)started: a new time line begins.
    case deviceStarted = 6
    /// A cycle's first frame was not the previous cycle's end (frames were skipped or repeated).
    case timeJump = 7

    public var description: String {
        switch self {
        case .none: "none"
        case .xrun: "xrun"
        case .sampleRateChange: "sample-rate change"
        case .bufferSizeChange: "period-size change"
        case .freewheel: "freewheel change"
        case .serverShutdown: "server shutdown"
        case .deviceStarted: "device started"
        case .timeJump: "time jump"
        }
    }
}

/// A source of render cycles: the JACK device, or the hand-driven device for tests and
/// offline rendering. Both call the same ``RenderCore/render(_:outputs:channelCount:)``.
///
/// Thread safety: every member may be called from any control thread; none from the render
/// thread.
public protocol AudioDevice: AnyObject, Sendable {
    /// A unique identifier of the device (for JACK, `jack:SERVER:CLIENT`).
    var uid: String { get }
    /// Nominal frames per second.
    var sampleRate: Double { get }
    /// Output channels the renderer mixes into.
    var outputChannelCount: Int { get }
    /// Frames per cycle now (may change: a buffer-size change is a discontinuity).
    var framesPerCycle: Int { get }
    /// Frames after the next cycle's first frame that a command sent now is sure to reach the
    /// render thread before. The hand-driven device: 0. JACK: one period.
    var schedulingLead: Int64 { get }
    /// True while the device calls the renderer.
    var isRunning: Bool { get }
    /// Starts calling `core.pointee.render` once per cycle. `core` stays valid until `stop()`
    /// has returned.
    func start(rendering core: UnsafeMutablePointer<RenderCore>) throws(DeviceError)
    /// Stops calling the renderer; when it returns, no render call is under way.
    func stop()
}

/// A device failure, with a message for people.
public struct DeviceError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension AudioDevice {
    /// Nanoseconds on CLOCK_MONOTONIC now.
    public static var hostTimeNow: UInt64 { HostClock.now() }
}
