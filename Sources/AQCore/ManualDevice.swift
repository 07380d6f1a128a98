import Synchronization

/// A device driven by hand: each ``render(frames:into:)`` call renders one cycle on the
/// calling thread, with the same renderer the JACK device runs. For deterministic tests,
/// benchmarks and offline rendering.
///
/// Host time is synthetic: frame `f` is at `f × 1e9 / sampleRate` ns after ``hostTimeOrigin``,
/// so translations are exact and repeatable.
///
/// Thread safety: ``render(frames:into:)`` from one thread at a time (it is the render thread
/// while it runs); everything else from any thread.
public final class ManualDevice: HandDrivenDevice, @unchecked Sendable {
    public let uid: String
    public let sampleRate: Double
    public let outputChannelCount: Int
    public var framesPerCycle: Int { Int(lastFrames.load(ordering: .relaxed)) }
    public var schedulingLead: Int64 { 0 }
    public var isRunning: Bool { core.load(ordering: .acquiring) != 0 }
    /// Host time of device frame 0.
    public let hostTimeOrigin: UInt64

    private let core = Atomic<UInt>(0)
    private let nextFrame = Atomic<Int64>(0)
    private let lastFrames = Atomic<Int64>(0)
    private let scratch: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// - Parameters:
    ///   - sampleRate: nominal frames per second.
    ///   - channels: output channels.
    ///   - framesPerCycle: the cycle size reported before the first render.
    public init(sampleRate: Double = 48000, channels: Int = 2, framesPerCycle: Int = 256, uid: String = "manual") {
        self.sampleRate = sampleRate
        self.outputChannelCount = channels
        self.uid = uid
        self.hostTimeOrigin = HostClock.now()
        lastFrames.store(Int64(framesPerCycle), ordering: .relaxed)
        scratch = .allocate(capacity: max(channels, 1))
    }

    deinit { scratch.deallocate() }

    public func start(rendering core: UnsafeMutablePointer<RenderCore>) throws(DeviceError) {
        self.core.store(UInt(bitPattern: core), ordering: .releasing)
    }

    public func stop() { core.store(0, ordering: .releasing) }

    /// The device frame the next cycle starts at.
    public var currentFrame: Int64 { nextFrame.load(ordering: .relaxed) }

    /// Same as ``currentFrame``: the hand-driven device always knows its next frame.
    public var nextCycleFrame: Int64? { currentFrame }

    /// Host time of device frame `frame`.
    public func hostTime(ofFrame frame: Int64) -> UInt64 {
        hostTimeOrigin &+ UInt64((Double(frame) * 1e9 / sampleRate).rounded())
    }

    /// Renders one cycle of `frames` frames into `outputs` (one pointer per output channel,
    /// each with room for `frames` floats). Returns false when the device is not started.
    @discardableResult
    public func render(frames: Int, into outputs: UnsafePointer<UnsafeMutablePointer<Float>>) -> Bool {
        guard let p = UnsafeMutablePointer<RenderCore>(bitPattern: core.load(ordering: .acquiring)) else {
            return false
        }
        let f = nextFrame.load(ordering: .relaxed)
        let cycle = CycleInfo(
            frame: f, frames: Int32(frames), hostTimeNs: hostTime(ofFrame: f),
            nextHostTimeNs: 0)  // exactly the nominal rate
        lastFrames.store(Int64(frames), ordering: .relaxed)
        p.pointee.render(cycle, outputs: outputs, channelCount: outputChannelCount)
        nextFrame.store(f + Int64(frames), ordering: .relaxed)
        return true
    }

    /// Skips `frames` frames without rendering them, as a device that missed cycles would:
    /// the next cycle's first frame is `frames` later, and the clock records a time-jump
    /// discontinuity.
    public func skip(frames: Int64) {
        nextFrame.wrappingAdd(frames, ordering: .relaxed)
        if let p = UnsafeMutablePointer<RenderCore>(bitPattern: core.load(ordering: .acquiring)) {
            p.pointee.clock.noteDiscontinuity(.timeJump)
        }
    }

    /// Renders `frames` frames in cycles of `cycle` frames and returns them, planar
    /// (`[channel][frame]`). Convenience for tests and offline rendering.
    public func render(frames: Int, cycle: Int) -> [[Float]] {
        var out = [[Float]](repeating: [Float](repeating: 0, count: frames), count: outputChannelCount)
        var done = 0
        let tmp = UnsafeMutablePointer<Float>.allocate(capacity: cycle * outputChannelCount)
        defer { tmp.deallocate() }
        for c in 0..<outputChannelCount { scratch[c] = tmp + c * cycle }
        while done < frames {
            let n = min(cycle, frames - done)
            guard render(frames: n, into: scratch) else { break }
            for c in 0..<outputChannelCount {
                out[c].withUnsafeMutableBufferPointer { $0.baseAddress!.advanced(by: done).update(from: scratch[c], count: n) }
            }
            done += n
        }
        return out
    }
}
