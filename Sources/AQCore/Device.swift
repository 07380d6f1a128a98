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
    /// The device's sample time jumped forward by frames it did not render (the hand-driven
    /// device's ``ManualDevice/skip(frames:)``).
    case timeJump = 7
    /// The server lost frames (its clock went on while the device did not render: an xrun the
    /// server accounted for, or the time a dead server took to come back); the device skipped
    /// them or kept them as its ``LostTimePolicy`` says.
    case framesLost = 8
    /// The server came back after a shutdown and the device renders again.
    case serverReturned = 9

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
        case .framesLost: "frames lost"
        case .serverReturned: "server returned"
        }
    }
}

/// A source of render cycles: the JACK device, or the hand-driven device for tests and
/// offline rendering. Both call the same ``RenderTarget/render(_:outputs:channelCount:inputs:inputCount:)``.
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
    /// Input (capture) channels the device hands the renderer each cycle; 0 for none.
    var inputChannelCount: Int { get }
    /// Frames per cycle now (may change: a buffer-size change is a discontinuity).
    var framesPerCycle: Int { get }
    /// Frames after the next cycle's first frame that a command sent now is sure to reach the
    /// render thread before. The hand-driven device: 0. JACK: one period.
    var schedulingLead: Int64 { get }
    /// True while the device calls the renderer.
    var isRunning: Bool { get }
    /// Starts calling `target.render` once per cycle. `target` stays valid until `stop()`
    /// has returned.
    func start(rendering target: RenderTarget) throws(DeviceError)
    /// Stops calling the renderer; when it returns, no render call is under way.
    func stop()
    /// Installs the engine's handler for the device's own state changes (server lost, back,
    /// gone for good), replacing the previous one; nil removes it. The handler runs on a thread
    /// of the device's (never the render thread) and must not block for long. Control thread.
    func setStatusHandler(_ handler: (@Sendable (DeviceStatus) -> Void)?)
    /// The latencies of the device's ports now, in device frames (see ``DeviceLatency``): a
    /// summary, the largest capture latency of the inputs and the largest playback latency of
    /// the outputs. May change while the device runs (JACK recomputes latencies when
    /// connections change). For what one recording or one output hears, use the per-channel
    /// ``captureLatency(ofInput:)`` and ``playbackLatency(ofOutput:)``.
    var latency: DeviceLatency { get }
    /// The capture latency of input `channel` (0-based) now, in device frames: a sound that
    /// reaches the renderer's input `channel` at device frame `f` entered the graph at
    /// `f - captureLatency(ofInput: channel)`. 0 for a channel the device does not have.
    /// Any thread but the render thread; does not block. Default: `latency.capture` for every
    /// channel (a device that knows one value for all its ports).
    func captureLatency(ofInput channel: Int) -> Int
    /// The playback latency of output `channel` (0-based) now, in device frames: a frame the
    /// renderer writes to output `channel` at device frame `f` is heard at
    /// `f + playbackLatency(ofOutput: channel)`. 0 for a channel the device does not have.
    /// Any thread but the render thread; does not block. Default: `latency.playback` for every
    /// channel.
    func playbackLatency(ofOutput channel: Int) -> Int
    /// Who drives the device's cycles: its own clock on a realtime thread, or its caller, one
    /// call a cycle (``HandDrivenDevice``). Fixed for the device's life. Any thread. Default:
    /// `.realtime`; a ``HandDrivenDevice`` is `.byCaller(self)`.
    var clocking: DeviceClocking { get }
    /// The SCHED_FIFO/SCHED_RR priority of the thread that renders, or nil when it is not a
    /// realtime thread (a server run without realtime scheduling, the hand-driven device).
    /// Threads that serve the render thread are put below it (``ServicePriority``). Any thread
    /// but the render thread; does not block. Default: nil.
    var renderPriority: Int32? { get }
}

/// Who drives a device's cycles (``AudioDevice/clocking``). The engine asks this instead of
/// testing the device's type: a device driven by its caller has no events thread pumping its
/// inputs, renders offline, and its time is the frame its caller has reached.
public enum DeviceClocking: Sendable {
    /// The device's own clock calls the renderer on its realtime thread (``JackDevice``).
    case realtime
    /// The caller renders each cycle on its own thread (``ManualDevice``, offline rendering).
    case byCaller(any HandDrivenDevice)
}

extension AudioDevice {
    /// Realtime unless the device says otherwise.
    public var clocking: DeviceClocking { .realtime }
    /// Devices that do not say: not a realtime thread.
    public var renderPriority: Int32? { nil }
    /// The device as hand-driven when its caller drives its cycles, else nil. Any thread.
    public var handDriven: (any HandDrivenDevice)? {
        if case .byCaller(let d) = clocking { return d }
        return nil
    }
    /// True when the device's own clock drives its cycles. Any thread.
    public var isRealtime: Bool { handDriven == nil }
}

/// How far the device's ports are from the world, in device frames.
///
/// - `capture`: a frame that reaches the renderer's inputs at device frame `f` entered the
///   physical input (the microphone's converter) at `f - capture`.
/// - `playback`: a frame the renderer writes at device frame `f` leaves the physical output
///   (is heard) at `f + playback`.
///
/// Input queues' start times already subtract `capture` (the time stamp is when the frame was
/// played into the input, not when it arrived at the engine). A take recorded while a
/// performer listens to the engine lands where it was played on the engine's timeline when
/// `playback` is subtracted as well (docs/recording.md, "Latency").
public struct DeviceLatency: Sendable, Equatable, CustomStringConvertible {
    /// Frames from the physical input to the renderer's inputs.
    public var capture: Int
    /// Frames from the renderer's outputs to the physical output.
    public var playback: Int
    public init(capture: Int = 0, playback: Int = 0) {
        self.capture = capture
        self.playback = playback
    }
    public var description: String { "capture \(capture), playback \(playback) frames" }
}

/// A device whose cycles its caller renders, one call a cycle, on the calling thread (the
/// hand-driven ``ManualDevice``): deterministic tests and offline rendering. The engine needs
/// no more of it than this protocol says.
///
/// Thread safety: as ``ManualDevice``: ``render(frames:into:)`` from one thread at a time (it
/// is the render thread while it runs); everything else from any thread.
public protocol HandDrivenDevice: AudioDevice {
    /// The device frame the next cycle starts at.
    var currentFrame: Int64 { get }
    /// The (synthetic) host time of device frame `frame`.
    func hostTime(ofFrame frame: Int64) -> UInt64
    /// Renders one cycle of `frames` frames into `outputs` (one pointer per output channel);
    /// false when the device is not started.
    @discardableResult
    func render(frames: Int, into outputs: UnsafePointer<UnsafeMutablePointer<Float>>) -> Bool
}

extension HandDrivenDevice {
    /// Its caller drives it.
    public var clocking: DeviceClocking { .byCaller(self) }
}

/// A change of a device's availability, told to the handler set with
/// ``AudioDevice/setStatusHandler(_:)``.
public enum DeviceStatus: Sendable, Equatable {
    /// The device stopped rendering because its server went away. `reconnecting`: the device
    /// is trying to reach the server again (rendering resumes by itself when it comes back).
    case lost(reason: String, reconnecting: Bool)
    /// The server is back and the device renders again, after `seconds` away. `lostFrames`:
    /// the frames the wall clock went on meanwhile; `skipped`: whether the device's sample time
    /// jumped over them (``LostTimePolicy/followWallClock``).
    case restored(seconds: Double, lostFrames: Int64, skipped: Bool)
    /// The device will not render again (it stopped reconnecting, or the server came back in a
    /// form the engine cannot use, such as another sample rate).
    case failed(reason: String)
}

extension AudioDevice {
    /// Devices without inputs need not say so; the default: 0.
    public var inputChannelCount: Int { 0 }
    /// Devices that never change state ignore the handler.
    public func setStatusHandler(_ handler: (@Sendable (DeviceStatus) -> Void)?) {}
    /// Devices that know no latency: none.
    public var latency: DeviceLatency { DeviceLatency() }
    /// Devices that know one capture latency for all their inputs: that one.
    public func captureLatency(ofInput channel: Int) -> Int { latency.capture }
    /// Devices that know one playback latency for all their outputs: that one.
    public func playbackLatency(ofOutput channel: Int) -> Int { latency.playback }

    /// The largest capture latency of the inputs `channels` (0-based), 0 for none: the latency
    /// of a recording of those inputs on one time axis (docs/recording.md, "Latency"). Any
    /// thread but the render thread; does not block (one read per channel, not one snapshot:
    /// a change while reading may be seen for some channels only).
    public func captureLatency(ofInputs channels: some Sequence<Int>) -> Int {
        channels.reduce(0) { max($0, captureLatency(ofInput: $1)) }
    }
    /// The largest playback latency of the outputs `channels` (0-based), 0 for none: the
    /// latency of what a listener hears from those outputs, taken as that of the latest of them
    /// (docs/recording.md, "Latency"). Any thread but the render thread; does not block.
    public func playbackLatency(ofOutputs channels: some Sequence<Int>) -> Int {
        channels.reduce(0) { max($0, playbackLatency(ofOutput: $1)) }
    }
}

/// A device failure, with a message for people.
public struct DeviceError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, where a caller can act on it.
    public enum Reason: Sendable, Equatable {
        /// Anything else (the message says what).
        case other
        /// No server answered: the caller may start one and try again.
        case serverUnreachable
    }
    public var message: String
    public var reason: Reason
    public init(_ message: String) { self.init(message, reason: .other) }
    public init(_ message: String, reason: Reason) {
        self.message = message
        self.reason = reason
    }
    public var description: String { message }
}

extension AudioDevice {
    /// Nanoseconds on CLOCK_MONOTONIC now.
    public static var hostTimeNow: UInt64 { HostClock.now() }
}
