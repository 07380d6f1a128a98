import CSoundTouch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a ``TimePitch`` could not be made or set: a channel count, rate, play rate or pitch out
/// of range. The Audio Queue result code is `kAudioQueueErr_InvalidParameter` for the play
/// rate and pitch (their documented ranges) and `'fmt?'` for the format.
///
/// Thread safety: a plain value; use from any thread.
public struct TimePitchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, in words.
    public let message: String
    public var description: String { message }
}

/// Time stretching and pitch shifting of planar Float32 audio with SoundTouch (Debian's
/// libsoundtouch-dev, its C interface): the processing behind `kAudioQueueParam_PlayRate` and
/// `kAudioQueueParam_Pitch` with `kAudioQueueProperty_EnableTimePitch` (issue 22: a playback
/// queue's `TimePitchStage` runs enqueued audio through it; docs/c-api.md, "Time and pitch").
///
/// **What it does.** ``playRate`` (0.5…2, Apple's range for `kAudioQueueParam_PlayRate`) changes
/// the speed without changing the pitch (SoundTouch's tempo): N input frames become about
/// N / playRate output frames. ``pitchCents`` (−2400…2400, Apple's range for
/// `kAudioQueueParam_Pitch`) changes the pitch by 2^(cents/1200) without changing the length.
/// Both may change between calls; the change applies to the frames given after it (SoundTouch
/// holds a few thousand frames inside, which still come out as they were processed).
///
/// **Timing.** SoundTouch's output is not sample-exact: the stream's length comes out within a
/// few milliseconds of N / playRate (its overlap-add works in sequences of ≈ 40–80 ms), and
/// ``flush()`` pads the end with silence to push out what it holds. Callers that keep a
/// timeline (a queue's start times and current time) count input frames, not output frames.
///
/// Thread safety: **not thread-safe.** One control or worker thread at a time may use an
/// instance. Never call it from the render thread: it allocates, and SoundTouch's processing
/// time is unbounded per call.
public final class TimePitch {
    /// Channels (planes) of input and output. Any thread may read it.
    public let channelCount: Int
    /// Frames per second (the same in and out). Any thread may read it.
    public let sampleRate: Double
    private let handle: UnsafeMutableRawPointer
    /// Interleaved scratch for SoundTouch's input and output (it takes interleaved frames).
    private var interleaved: [Float] = []

    /// Speed, 0.5…2 (1: unchanged). Setting a value outside, or NaN, throws.
    public private(set) var playRate: Float = 1
    /// Pitch shift in cents, −2400…2400 (0: unchanged).
    public private(set) var pitchCents: Float = 0
    /// Varispeed, 0.5…2 (1: unchanged): speed and pitch together (SoundTouch's rate, a
    /// resampler), on top of ``playRate`` and ``pitchCents``.
    public private(set) var varispeed: Float = 1

    /// A processor for `channels` channels (1…16) at `sampleRate` (1…768 000).
    /// Control side only; allocates.
    public init(channels: Int, sampleRate: Double) throws(TimePitchError) {
        guard (1...16).contains(channels) else { throw TimePitchError(message: "\(channels) channels: 1 to 16 are handled") }
        guard sampleRate.isFinite, sampleRate >= 1, sampleRate <= 768_000 else {
            throw TimePitchError(message: "sample rate \(sampleRate) Hz is outside 1…768000")
        }
        guard let h = soundtouch_createInstance() else { throw TimePitchError(message: "SoundTouch could not make a processor") }
        handle = h
        channelCount = channels
        self.sampleRate = sampleRate
        _ = soundtouch_setChannels(h, UInt32(channels))
        _ = soundtouch_setSampleRate(h, UInt32(sampleRate.rounded()))
    }

    deinit { soundtouch_destroyInstance(handle) }

    /// Sets ``playRate`` (0.5…2) for the frames given from now on.
    public func setPlayRate(_ rate: Float) throws(TimePitchError) {
        guard rate.isFinite, rate >= 0.5, rate <= 2 else {
            throw TimePitchError(message: "play rate \(rate) is outside 0.5…2 (kAudioQueueParam_PlayRate)")
        }
        playRate = rate
        soundtouch_setTempo(handle, rate)
    }

    /// Sets ``pitchCents`` (−2400…2400) for the frames given from now on.
    public func setPitch(cents: Float) throws(TimePitchError) {
        guard cents.isFinite, cents >= -2400, cents <= 2400 else {
            throw TimePitchError(message: "pitch \(cents) cents is outside −2400…2400 (kAudioQueueParam_Pitch)")
        }
        pitchCents = cents
        soundtouch_setPitch(handle, Float(pow(2, Double(cents) / 1200)))
    }

    /// Sets ``varispeed`` (0.5…2) for the frames given from now on: N frames become about
    /// N / rate frames and every frequency is multiplied by the rate (a resampler).
    public func setVarispeed(_ rate: Float) throws(TimePitchError) {
        guard rate.isFinite, rate >= 0.5, rate <= 2 else {
            throw TimePitchError(message: "varispeed \(rate) is outside 0.5…2 (kAudioQueueParam_PlayRate)")
        }
        varispeed = rate
        soundtouch_setRate(handle, rate)
    }

    /// The overlap-add's tuning (SoundTouch's settings; call before the first frames):
    /// `quickSeek` searches the overlap position coarsely (cheaper, slightly rougher);
    /// `antiAlias` low-pass filters the rate transposer (pitch shifts and varispeed);
    /// `sequenceMs`, `seekWindowMs`, `overlapMs`: the processing sequence, the window searched
    /// for the best overlap and the cross-fade, in milliseconds (0: SoundTouch's automatic
    /// choice for the sequence and seek window).
    public func tune(quickSeek: Bool, antiAlias: Bool, sequenceMs: Int = 0, seekWindowMs: Int = 0, overlapMs: Int = 8) {
        _ = soundtouch_setSetting(handle, 2, quickSeek ? 1 : 0)  // SETTING_USE_QUICKSEEK
        _ = soundtouch_setSetting(handle, 0, antiAlias ? 1 : 0)  // SETTING_USE_AA_FILTER
        _ = soundtouch_setSetting(handle, 3, Int32(sequenceMs))  // SETTING_SEQUENCE_MS
        _ = soundtouch_setSetting(handle, 4, Int32(seekWindowMs))  // SETTING_SEEKWINDOW_MS
        _ = soundtouch_setSetting(handle, 5, Int32(overlapMs))  // SETTING_OVERLAP_MS
    }

    /// Forgets every frame held inside (nothing comes out); the next frame starts a new stream.
    public func clear() { soundtouch_clear(handle) }

    /// Processes `planes` (one array per channel, all of one length) and returns what SoundTouch
    /// has ready, one array per channel (possibly empty: it keeps up to a few thousand frames).
    public func process(_ planes: [[Float]]) -> [[Float]] {
        precondition(planes.count == channelCount, "TimePitch.process: \(planes.count) planes for \(channelCount) channels")
        let frames = planes.first?.count ?? 0
        if frames > 0 {
            interleaved.removeAll(keepingCapacity: true)
            interleaved.reserveCapacity(frames * channelCount)
            for i in 0..<frames { for c in 0..<channelCount { interleaved.append(planes[c][i]) } }
            interleaved.withUnsafeBufferPointer { _ = soundtouch_putSamples(handle, $0.baseAddress, UInt32(frames)) }
        }
        return receive()
    }

    /// Pushes out what SoundTouch still holds (padded with silence at the end) and returns it;
    /// the processor is then empty and may start a new stream.
    public func flush() -> [[Float]] {
        _ = soundtouch_flush(handle)
        let out = receive()
        soundtouch_clear(handle)
        return out
    }

    /// Everything ready, deinterleaved.
    private func receive() -> [[Float]] {
        var out = [[Float]](repeating: [], count: channelCount)
        let chunk = 4096
        if interleaved.count < chunk * channelCount { interleaved = [Float](repeating: 0, count: chunk * channelCount) }
        while true {
            let n = interleaved.withUnsafeMutableBufferPointer { Int(soundtouch_receiveSamples(handle, $0.baseAddress, UInt32(chunk))) }
            if n == 0 { break }
            for c in 0..<channelCount { for i in 0..<n { out[c].append(interleaved[i * channelCount + c]) } }
        }
        return out
    }
}
