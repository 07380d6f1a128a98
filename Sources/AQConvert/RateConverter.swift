import CSoxr

/// Why a ``RateConverter`` could not be made.
///
/// Thread safety: a plain value; use from any thread.
public struct RateConverterError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, in words (a bad rate or channel count, or libsoxr's own error text).
    public let message: String
    /// The Audio Queue result code to report: `'fmt?'` (1718449215,
    /// `kAudioFormatUnsupportedDataFormatError`).
    public var resultCode: Int32 { PCMFormatError.unsupportedDataFormatResultCode }
    /// Same as ``message``.
    public var description: String { message }
}

/// Streaming sample-rate conversion of planar Float32 audio with libsoxr, with exact timing.
///
/// **Timing contract.** For a stream of N input frames (fed through any sequence of
/// ``process(input:frames:output:capacity:)`` calls of any sizes) followed by ``flush(output:capacity:)``
/// until it returns 0, exactly `round(N × outputRate / inputRate)` frames come out in total
/// (``outputFrames(forInputFrames:)``), and input frame q lands at output frame
/// `q × outputRate / inputRate`: an impulse at q peaks at `round(q × out / in)` ± 1.
/// The filter's group delay is removed at the start of the stream (libsoxr's linear-phase
/// filters start their output at input time 0, so nothing of the delay reaches the caller) and
/// the frames held inside the filter (``filterDelay``) come out at flush. The total is made exact
/// by counting: flush delivers precisely ``pendingOutputFrames``, taking them from libsoxr's tail
/// and padding with silence should libsoxr's tail fall short.
///
/// **Quality.** `SOXR_HQ` (20-bit precision, ≈ 120 dB stop band, pass band to 0.914 × Nyquist)
/// with linear phase, so an impulse stays symmetric and its peak stays where the contract says
/// (minimum or intermediate phase would move the peak later); `SOXR_HI_PREC_CLOCK` for rates
/// whose ratio is not a small fraction. 20 bits exceed what the Float32 mixer needs at its
/// levels; `SOXR_VHQ` (28 bits) would only lengthen the filter and the delay.
///
/// **Equal rates** take a pass-through path (a copy) with the same API and the same contract.
///
/// **Output capacity.** A call writes at most `capacity` frames; anything libsoxr has ready
/// beyond that stays inside and comes out on the next call, so no frame is lost whatever the
/// capacity. libsoxr releases output in blocks, so one call may have more ready than its own
/// input accounts for; giving every call at least
/// ``maximumOutputFrames(inputFrames:inputRate:outputRate:)`` of its input keeps that backlog
/// from growing.
///
/// Thread safety: **not thread-safe.** One control or worker thread at a time may use an
/// instance (it may be handed from thread to thread between calls). Never call it from the
/// render thread: it allocates, and libsoxr's processing time is unbounded per call.
public final class RateConverter {
    /// Frames per second of the input. Any thread may read it.
    public let inputRate: Double
    /// Frames per second of the output. Any thread may read it.
    public let outputRate: Double
    /// Channels (planes) of input and output.
    public let channelCount: Int
    /// True when the rates are equal and audio is copied without filtering.
    public var isPassthrough: Bool { soxr == nil }

    /// Input frames accepted since the stream started (creation or ``reset()``).
    public private(set) var inputFramesProcessed: Int = 0
    /// Output frames delivered since the stream started.
    public private(set) var outputFramesDelivered: Int = 0

    /// Frames a flush would still deliver if the stream ended now:
    /// `outputFrames(forInputFrames: inputFramesProcessed) − outputFramesDelivered`.
    /// Exact; use it to size the flush buffer.
    public var pendingOutputFrames: Int {
        outputFrames(forInputFrames: inputFramesProcessed) - outputFramesDelivered
    }

    /// libsoxr's current delay in output frames: output already determined by the input but
    /// still inside the filter (0 when passing through). This is latency, not a timing offset.
    public var filterDelay: Double { soxr.map { soxr_delay($0) } ?? 0 }

    /// Silent frames flush appended because libsoxr's tail fell short of the exact count
    /// (for tests and diagnostics; 0 in every case measured).
    private(set) var flushPadding: Int = 0

    /// Frames libsoxr's tail had beyond the exact count, discarded at flush (for tests and
    /// diagnostics; 0 in every case measured).
    private(set) var flushTrimmed: Int = 0

    private var soxr: soxr_t?
    private var flushing = false
    private var soxrDrained = false
    /// Scratch array of output plane pointers moved by the frames already written.
    private let planes: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    /// Pass-through only: input frames that did not fit the caller's capacity.
    private var backlog: [[Float]]
    /// Exact integer rates, when both rates are whole numbers (for exact rounding).
    private let integralRates: (input: Int, output: Int)?

    /// The quality recipe and flags given to libsoxr.
    private static let qualityRecipe = UInt(SOXR_HQ) | UInt(SOXR_LINEAR_PHASE)
    private static let qualityFlags = UInt(SOXR_HI_PREC_CLOCK)

    /// Makes a converter for a stream of `channels` planes from `inputRate` to `outputRate`.
    ///
    /// Thread safety: any control or worker thread (allocates).
    /// - Throws: ``RateConverterError`` when a rate is not within 1000…768000 Hz, `channels` is
    ///   not within 1…32, or libsoxr refuses.
    public init(inputRate: Double, outputRate: Double, channels: Int) throws(RateConverterError) {
        for (name, rate) in [("input", inputRate), ("output", outputRate)] {
            guard rate.isFinite, rate >= 1000, rate <= 768_000 else {
                throw RateConverterError(message: "\(name) rate \(rate) Hz is out of range: must be 1000…768000 Hz")
            }
        }
        guard channels >= 1, channels <= 32 else {
            throw RateConverterError(message: "channel count \(channels) is out of range: must be 1…32")
        }
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channelCount = channels
        if inputRate == inputRate.rounded(), outputRate == outputRate.rounded() {
            integralRates = (Int(inputRate), Int(outputRate))
        } else {
            integralRates = nil
        }
        // Made before `planes`: a throw after every stored property is set would run deinit.
        let made = inputRate != outputRate ? try Self.makeSoxr(inputRate, outputRate, channels) : nil
        planes = .allocate(capacity: channels)
        planes.initialize(repeating: nil, count: channels)
        backlog = Array(repeating: [], count: channels)
        soxr = made
    }

    deinit {
        if let soxr { soxr_delete(soxr) }
        planes.deallocate()
    }

    private static func makeSoxr(_ inRate: Double, _ outRate: Double, _ channels: Int) throws(RateConverterError) -> soxr_t {
        var io = soxr_io_spec(SOXR_FLOAT32_S, SOXR_FLOAT32_S)
        var quality = soxr_quality_spec(qualityRecipe, qualityFlags)
        var runtime = soxr_runtime_spec(1)  // one thread: the caller's
        // Smaller DFT blocks than libsoxr's defaults (2^10 / 2^17) roughly halve the output held
        // inside the converter (e.g. 44.1 → 48 kHz: 1005 → 448 frames) at a small CPU cost;
        // the filter, and so the response and timing, are the same.
        runtime.log2_min_dft_size = 8
        runtime.log2_large_dft_size = 10
        var error: soxr_error_t? = nil
        let s = soxr_create(inRate, outRate, UInt32(channels), &error, &io, &quality, &runtime)
        if let error {
            if let s { soxr_delete(s) }
            throw RateConverterError(message: "libsoxr refused \(inRate) → \(outRate) Hz: " + String(cString: error))
        }
        guard let s else { throw RateConverterError(message: "libsoxr could not create a resampler") }
        return s
    }

    /// The exact number of output frames `frames` input frames become over a whole stream:
    /// `round(frames × outputRate / inputRate)`, halves rounded up; computed in integers when
    /// both rates are whole numbers.
    /// Thread safety: reads only immutable state; any thread.
    public func outputFrames(forInputFrames frames: Int) -> Int {
        if let (i, o) = integralRates {
            let (num, overflow) = frames.multipliedReportingOverflow(by: 2 * o)
            if !overflow, num <= Int.max - i { return (num + i) / (2 * i) }
        }
        return Int((Double(frames) * outputRate / inputRate).rounded(.toNearestOrAwayFromZero))
    }

    /// A safe capacity to preallocate for one ``process(input:frames:output:capacity:)`` call of
    /// `inputFrames` frames: `ceil(inputFrames × outputRate / inputRate) + 2`. Giving each call
    /// at least this keeps the converter's internal backlog bounded; for the end of the stream
    /// size the flush buffer with ``pendingOutputFrames``.
    /// Thread safety: pure function; any thread.
    public static func maximumOutputFrames(inputFrames: Int, inputRate: Double, outputRate: Double) -> Int {
        guard inputFrames > 0 else { return 2 }
        return Int((Double(inputFrames) * outputRate / inputRate).rounded(.up)) + 2
    }

    /// Converts the next `frames` frames of the stream.
    ///
    /// - Parameters:
    ///   - input: ``channelCount`` pointers, each to `frames` floats; all are consumed.
    ///   - output: ``channelCount`` pointers, each to at least `capacity` writable floats.
    /// - Returns: frames written to the start of each output plane (≤ `capacity`).
    /// Thread safety: the owning control or worker thread only; never the render thread.
    /// - Precondition: the stream has not been flushed since it started (call ``reset()``).
    public func process(
        input: UnsafePointer<UnsafePointer<Float>>, frames: Int,
        output: UnsafePointer<UnsafeMutablePointer<Float>>, capacity: Int
    ) -> Int {
        precondition(!flushing, "RateConverter.process after flush: call reset() to start a new stream")
        precondition(frames >= 0 && capacity >= 0, "frames and capacity must not be negative")
        inputFramesProcessed += frames
        let written: Int
        if let soxr {
            for c in 0..<channelCount { planes[c] = output[c] }
            var done = 0
            let error = soxr_process(
                soxr, UnsafeRawPointer(input), frames, nil, UnsafeMutableRawPointer(planes), capacity, &done)
            if let error { fatalError("libsoxr failed: " + String(cString: error)) }
            written = done
        } else {
            written = passThrough(input: input, frames: frames, output: output, capacity: capacity)
        }
        outputFramesDelivered += written
        assert(pendingOutputFrames >= 0, "resampler ran ahead of its input")
        return written
    }

    /// Ends the stream: delivers the frames still inside the filter, then pads or trims so that
    /// the stream's total is exactly ``outputFrames(forInputFrames:)`` of its input.
    ///
    /// Call until it returns 0 (or size `capacity` by ``pendingOutputFrames`` and call once).
    /// After a flush, ``process(input:frames:output:capacity:)`` needs a ``reset()`` first.
    /// - Parameter output: ``channelCount`` pointers, each to at least `capacity` writable floats.
    /// - Returns: frames written to the start of each output plane; 0 once the stream is complete.
    /// Thread safety: the owning control or worker thread only; never the render thread.
    public func flush(output: UnsafePointer<UnsafeMutablePointer<Float>>, capacity: Int) -> Int {
        precondition(capacity >= 0, "capacity must not be negative")
        flushing = true
        let wanted = min(capacity, pendingOutputFrames)
        guard wanted > 0 else {
            if pendingOutputFrames == 0 { discardTail() }
            return 0
        }
        var written = 0
        if let soxr {
            while written < wanted && !soxrDrained {
                for c in 0..<channelCount { planes[c] = output[c] + written }
                var done = 0
                let error = soxr_process(
                    soxr, nil, 0, nil, UnsafeMutableRawPointer(planes), wanted - written, &done)
                if let error { fatalError("libsoxr failed: " + String(cString: error)) }
                if done == 0 { soxrDrained = true }
                written += done
            }
        } else {
            written = drainBacklog(into: output, at: 0, capacity: wanted)
        }
        if written < wanted {
            for c in 0..<channelCount { (output[c] + written).update(repeating: 0, count: wanted - written) }
            flushPadding += wanted - written
            written = wanted
        }
        outputFramesDelivered += written
        if pendingOutputFrames == 0 { discardTail() }
        return written
    }

    /// Counts (into ``flushTrimmed``) and drops whatever libsoxr still holds once the stream has
    /// its exact length.
    private func discardTail() {
        guard let soxr, !soxrDrained else { return }
        let scratchFrames = 64
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: scratchFrames * channelCount)
        defer { scratch.deallocate() }
        for c in 0..<channelCount { planes[c] = scratch + c * scratchFrames }
        while true {
            var done = 0
            let error = soxr_process(soxr, nil, 0, nil, UnsafeMutableRawPointer(planes), scratchFrames, &done)
            if error != nil || done == 0 { break }
            flushTrimmed += done
        }
        soxrDrained = true
    }

    /// Starts a new stream (after a flush, or to drop the current one, e.g. at a discontiguous
    /// start time): forgets all input, held output and counts; the next input frame is frame 0.
    /// Thread safety: the owning control or worker thread only (allocates).
    public func reset() {
        if let old = soxr {
            soxr_delete(old)
            soxr = try? Self.makeSoxr(inputRate, outputRate, channelCount)
            precondition(soxr != nil, "libsoxr could not recreate a resampler it made before")
        }
        for c in 0..<channelCount { backlog[c].removeAll(keepingCapacity: true) }
        inputFramesProcessed = 0
        outputFramesDelivered = 0
        flushPadding = 0
        flushTrimmed = 0
        flushing = false
        soxrDrained = false
    }

    // MARK: Pass-through

    private func passThrough(
        input: UnsafePointer<UnsafePointer<Float>>, frames: Int,
        output: UnsafePointer<UnsafeMutablePointer<Float>>, capacity: Int
    ) -> Int {
        var written = drainBacklog(into: output, at: 0, capacity: capacity)
        let direct = min(frames, capacity - written)
        for c in 0..<channelCount {
            (output[c] + written).update(from: input[c], count: direct)
            if direct < frames {
                backlog[c].append(contentsOf: UnsafeBufferPointer(start: input[c] + direct, count: frames - direct))
            }
        }
        written += direct
        return written
    }

    private func drainBacklog(
        into output: UnsafePointer<UnsafeMutablePointer<Float>>, at offset: Int, capacity: Int
    ) -> Int {
        let n = min(backlog[0].count, capacity - offset)
        guard n > 0 else { return 0 }
        for c in 0..<channelCount {
            backlog[c].withUnsafeBufferPointer { (output[c] + offset).update(from: $0.baseAddress!, count: n) }
            backlog[c].removeFirst(n)
        }
        return n
    }
}
