import CFloatMode
import Synchronization

/// A device driven by hand: each ``render(frames:into:)`` call renders one cycle on the
/// calling thread, with the same renderer the JACK device runs. For deterministic tests,
/// benchmarks and offline rendering.
///
/// Host time is synthetic: frame `f` is at `f × 1e9 / sampleRate` ns after ``hostTimeOrigin``,
/// so translations are exact and repeatable.
///
/// Inputs: a device made with input channels takes the frames captured in each cycle from its
/// caller (``render(frames:inputs:into:)``), so tests feed known samples at known device frames;
/// ``render(frames:into:)`` captures silence.
///
/// Thread safety: ``render(frames:into:)`` and ``render(frames:inputs:into:)`` from one thread
/// at a time (it is the render thread while it runs); everything else from any thread.
public final class ManualDevice: HandDrivenDevice, @unchecked Sendable {
    public let uid: String
    public let sampleRate: Double
    public let outputChannelCount: Int
    /// Input channels: each cycle's captured frames come from the caller of
    /// ``render(frames:inputs:into:)``.
    public let inputChannelCount: Int
    public var framesPerCycle: Int { Int(lastFrames.load(ordering: .relaxed)) }
    public var schedulingLead: Int64 { 0 }
    public var isRunning: Bool { core.load(ordering: .acquiring) != 0 }
    /// Host time of device frame 0.
    public let hostTimeOrigin: UInt64
    /// Nanoseconds per frame (1e9 / sampleRate), so that a cycle's host time is a multiply.
    let nsPerFrame: Double

    /// The latencies the device reports (see ``DeviceLatency``): none until set. Tests set them
    /// to check what the engine makes of them. Reading: the largest of the per-channel values
    /// (``captureLatency(ofInput:)``, ``playbackLatency(ofOutput:)``; for a side without
    /// channels, the value last set). Setting: every channel of each side gets the value. Any
    /// thread; does not block (atomics). A change is seen by the next reader; there is no
    /// notification.
    public var latency: DeviceLatency {
        get {
            DeviceLatency(
                capture: largest(inputLatencies, inputChannelCount, otherwise: latencyCapture),
                playback: largest(outputLatencies, outputChannelCount, otherwise: latencyPlayback))
        }
        set {
            latencyCapture.store(newValue.capture, ordering: .relaxed)
            latencyPlayback.store(newValue.playback, ordering: .relaxed)
            for c in 0..<inputChannelCount { inputLatencies[c].store(newValue.capture, ordering: .relaxed) }
            for c in 0..<outputChannelCount { outputLatencies[c].store(newValue.playback, ordering: .relaxed) }
        }
    }

    /// The capture latency of input `channel` (0-based; 0 for a channel the device does not
    /// have), as last set by ``setCaptureLatency(_:ofInput:)`` or ``latency``. Any thread; does
    /// not block (one atomic load).
    public func captureLatency(ofInput channel: Int) -> Int {
        channel >= 0 && channel < inputChannelCount ? inputLatencies[channel].load(ordering: .relaxed) : 0
    }

    /// The playback latency of output `channel` (0-based; 0 for a channel the device does not
    /// have), as last set by ``setPlaybackLatency(_:ofOutput:)`` or ``latency``. Any thread;
    /// does not block (one atomic load).
    public func playbackLatency(ofOutput channel: Int) -> Int {
        channel >= 0 && channel < outputChannelCount ? outputLatencies[channel].load(ordering: .relaxed) : 0
    }

    /// Sets the capture latency of input `channel` (0-based; ignored for a channel the device
    /// does not have), as a JACK server would after connecting it to a source of that latency.
    /// Any thread; does not block (one atomic store).
    public func setCaptureLatency(_ frames: Int, ofInput channel: Int) {
        guard channel >= 0 && channel < inputChannelCount else { return }
        inputLatencies[channel].store(frames, ordering: .relaxed)
    }

    /// Sets the playback latency of output `channel` (0-based; ignored for a channel the device
    /// does not have). Any thread; does not block (one atomic store).
    public func setPlaybackLatency(_ frames: Int, ofOutput channel: Int) {
        guard channel >= 0 && channel < outputChannelCount else { return }
        outputLatencies[channel].store(frames, ordering: .relaxed)
    }

    private func largest(_ values: UnsafeMutablePointer<Atomic<Int>>, _ count: Int, otherwise: borrowing Atomic<Int>) -> Int {
        guard count > 0 else { return otherwise.load(ordering: .relaxed) }
        var m = Int.min
        for c in 0..<count { m = max(m, values[c].load(ordering: .relaxed)) }
        return m
    }

    private let latencyCapture = Atomic<Int>(0)
    private let latencyPlayback = Atomic<Int>(0)
    /// Per-channel latencies: ``inputChannelCount`` and ``outputChannelCount`` atomics.
    private let inputLatencies: UnsafeMutablePointer<Atomic<Int>>
    private let outputLatencies: UnsafeMutablePointer<Atomic<Int>>
    private let core = Atomic<UInt>(0)
    private let nextFrame = Atomic<Int64>(0)
    private let lastFrames = Atomic<Int64>(0)
    private let scratch: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let inputScratch: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Silence for ``render(frames:into:)``'s inputs (grown on the calling thread when a cycle
    /// is longer than it; the hand-driven device's caller is not realtime).
    private var silence: UnsafeMutablePointer<Float>
    private var silenceFrames: Int

    /// - Parameters:
    ///   - sampleRate: nominal frames per second.
    ///   - channels: output channels.
    ///   - inputChannels: input channels (0: none), fed by ``render(frames:inputs:into:)``.
    ///   - framesPerCycle: the cycle size reported before the first render.
    /// Any thread; does not block.
    public init(
        sampleRate: Double = 48000, channels: Int = 2, inputChannels: Int = 0, framesPerCycle: Int = 256,
        uid: String = "manual"
    ) {
        self.sampleRate = sampleRate
        self.outputChannelCount = channels
        self.inputChannelCount = max(inputChannels, 0)
        self.uid = uid
        self.hostTimeOrigin = HostClock.now()
        self.nsPerFrame = 1e9 / sampleRate
        lastFrames.store(Int64(framesPerCycle), ordering: .relaxed)
        scratch = .allocate(capacity: max(channels, 1))
        inputScratch = .allocate(capacity: max(inputChannels, 1))
        silenceFrames = max(framesPerCycle, 1)
        silence = .allocate(capacity: silenceFrames)
        silence.initialize(repeating: 0, count: silenceFrames)
        inputLatencies = .allocate(capacity: max(inputChannels, 1))
        for c in 0..<max(inputChannels, 1) { (inputLatencies + c).initialize(to: Atomic(0)) }
        outputLatencies = .allocate(capacity: max(channels, 1))
        for c in 0..<max(channels, 1) { (outputLatencies + c).initialize(to: Atomic(0)) }
    }

    deinit {
        scratch.deallocate()
        inputScratch.deallocate()
        silence.deallocate()
        inputLatencies.deinitialize(count: max(inputChannelCount, 1))
        inputLatencies.deallocate()
        outputLatencies.deinitialize(count: max(outputChannelCount, 1))
        outputLatencies.deallocate()
    }

    public func start(rendering target: RenderTarget) throws(DeviceError) {
        let core = target.core
        self.core.store(UInt(bitPattern: core), ordering: .releasing)
    }

    public func stop() { core.store(0, ordering: .releasing) }

    /// The device frame the next cycle starts at.
    public var currentFrame: Int64 { nextFrame.load(ordering: .relaxed) }

    /// Host time of device frame `frame` (a frame before 0, such as a capture time before the
    /// first cycle, is before ``hostTimeOrigin``).
    /// Rounded to the nearest nanosecond (half away from zero) without a libm call: it runs
    /// once a cycle, and `rounded()` was a tenth of a one-queue cycle's cost. Inlined into
    /// ``render(frames:inputs:into:)``: the call was a few per cent of it.
    @inline(__always)
    public func hostTime(ofFrame frame: Int64) -> UInt64 {
        let x = Double(frame) * nsPerFrame
        let ns = x >= 0 ? Int64(x + 0.5) : -Int64(-x + 0.5)
        return hostTimeOrigin &+ UInt64(bitPattern: ns)
    }

    /// Renders one cycle of `frames` frames into `outputs` (one pointer per output channel,
    /// each with room for `frames` floats). Returns false when the device is not started.
    /// A device with input channels captures silence in that cycle.
    @discardableResult
    public func render(frames: Int, into outputs: UnsafePointer<UnsafeMutablePointer<Float>>) -> Bool {
        if inputChannelCount == 0 {
            // The renderer's cycle inlined, without inputs (what ``render(frames:inputs:into:)``
            // does with nil, less a call): the offline benchmark's and offline rendering's cycle.
            guard let p = UnsafeMutablePointer<RenderCore>(bitPattern: core.load(ordering: .acquiring)) else {
                return false
            }
            let f = nextFrame.load(ordering: .relaxed)
            let cycle = CycleInfo(frame: f, frames: Int32(frames), hostTimeNs: hostTime(ofFrame: f), nextHostTimeNs: 0)
            lastFrames.store(Int64(frames), ordering: .relaxed)
            p.pointee.renderCycle(cycle, outputs: outputs, channelCount: outputChannelCount, inputs: nil, inputCount: 0)
            nextFrame.store(f + Int64(frames), ordering: .relaxed)
            return true
        }
        if frames > silenceFrames {
            silence.deallocate()
            silenceFrames = frames
            silence = .allocate(capacity: frames)
            silence.initialize(repeating: 0, count: frames)
        }
        for c in 0..<inputChannelCount { inputScratch[c] = silence }
        return render(frames: frames, inputs: UnsafePointer(inputScratch), into: outputs)
    }

    /// Renders one cycle of `frames` frames into `outputs` (one pointer per output channel, each
    /// with room for `frames` floats), the device having captured `inputs` in it: one pointer
    /// per input channel (``inputChannelCount`` of them), each with `frames` floats, sample `i`
    /// captured at device frame ``currentFrame`` + `i`. nil: the device captured nothing (as a
    /// device without inputs). Returns false when the device is not started. The calling thread
    /// is the render thread while it runs; it does not block (but waits for a control thread
    /// applying commands, see ``RenderCore``). Like every render thread, the calling thread
    /// flushes denormals to zero from its first cycle on and keeps that mode after the call
    /// (giving it back every cycle would write the control register twice a cycle): the
    /// multi-cycle ``render(frames:cycle:)`` and offline rendering give the caller's mode back
    /// when they return. The mode is set on a thread's first cycle and then taken as set: a
    /// caller that changes its thread's floating-point mode between cycles gives it back with
    /// `aq_restore_float_mode` (CFloatMode), after which the next cycle sets it again.
    @discardableResult
    public func render(
        frames: Int, inputs: UnsafePointer<UnsafeMutablePointer<Float>>?,
        into outputs: UnsafePointer<UnsafeMutablePointer<Float>>
    ) -> Bool {
        guard let p = UnsafeMutablePointer<RenderCore>(bitPattern: core.load(ordering: .acquiring)) else {
            return false
        }
        let f = nextFrame.load(ordering: .relaxed)
        let cycle = CycleInfo(
            frame: f, frames: Int32(frames), hostTimeNs: hostTime(ofFrame: f),
            nextHostTimeNs: 0)  // exactly the nominal rate
        lastFrames.store(Int64(frames), ordering: .relaxed)
        p.pointee.render(
            cycle, outputs: outputs, channelCount: outputChannelCount, inputs: inputs,
            inputCount: inputs == nil ? 0 : inputChannelCount)
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
        render(frames: frames, cycle: cycle, inputs: [])
    }

    /// Renders `frames` frames in cycles of `cycle` frames, the device capturing `inputs`
    /// (planar, `[channel][frame]`, frame 0 captured at ``currentFrame``; a missing channel or
    /// frame is silence), and returns the outputs, planar. Convenience for tests. Calling
    /// thread as ``render(frames:inputs:into:)``.
    public func render(frames: Int, cycle: Int, inputs: [[Float]]) -> [[Float]] {
        // The calling thread gets its own floating-point mode back (see
        // ``render(frames:inputs:into:)``).
        let mode = aq_float_mode()
        defer { aq_restore_float_mode(mode) }
        let ins = max(inputChannelCount, 1)
        let inTmp = UnsafeMutablePointer<Float>.allocate(capacity: cycle * ins)
        defer { inTmp.deallocate() }
        var done = 0
        var out = [[Float]](repeating: [Float](repeating: 0, count: frames), count: outputChannelCount)
        let tmp0 = UnsafeMutablePointer<Float>.allocate(capacity: cycle * max(outputChannelCount, 1))
        defer { tmp0.deallocate() }
        for c in 0..<outputChannelCount { scratch[c] = tmp0 + c * cycle }
        while done < frames {
            let n = min(cycle, frames - done)
            for c in 0..<inputChannelCount {
                let dst = inTmp + c * cycle
                for i in 0..<n {
                    let k = done + i
                    dst[i] = c < inputs.count && k < inputs[c].count ? inputs[c][k] : 0
                }
                inputScratch[c] = dst
            }
            guard render(frames: n, inputs: inputChannelCount == 0 ? nil : UnsafePointer(inputScratch), into: scratch)
            else { break }
            for c in 0..<outputChannelCount {
                out[c].withUnsafeMutableBufferPointer { $0.baseAddress!.advanced(by: done).update(from: scratch[c], count: n) }
            }
            done += n
        }
        return out
    }
}
