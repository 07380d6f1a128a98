import AQConvert

/// Values of `kAudioQueueProperty_TimePitchAlgorithm` (Apple's four-character codes), and the
/// SoundTouch settings each one runs as (``TimePitchStage``; docs/c-api.md, "Time and pitch").
public enum AudioQueueTimePitchAlgorithm: UInt32, Sendable, CaseIterable {
    /// `kAudioQueueTimePitchAlgorithm_Spectral` ('spec'), the default: SoundTouch's tempo
    /// (overlap-add with a full search of the overlap position, automatic sequence and seek
    /// window) and its pitch shift (a rate transposer with its anti-alias filter).
    /// `kAudioQueueParam_Pitch` applies with this algorithm only, as on Apple's systems.
    case spectral = 0x7370_6563
    /// `kAudioQueueTimePitchAlgorithm_TimeDomain` ('tido'): SoundTouch's tempo with its quick
    /// (coarse) seek of the overlap position; the pitch is not shifted.
    case timeDomain = 0x7469_646F
    /// `kAudioQueueTimePitchAlgorithm_Varispeed` ('vspd'): SoundTouch's rate (a resampler):
    /// the pitch follows the play rate (rate 2: an octave up, half the length).
    case varispeed = 0x7673_7064
    /// `kAudioQueueTimePitchAlgorithm_LowQualityZeroLatency` ('lqzl', deprecated on Apple's
    /// systems): SoundTouch's tempo with quick seek, no anti-alias filter and short sequences
    /// (40 ms, a 15 ms seek window, 8 ms overlap). Its latency is not zero (docs/c-api.md).
    case lowQualityZeroLatency = 0x6C71_7A6C
}

/// A playback queue's time/pitch unit (`kAudioQueueProperty_EnableTimePitch`): its settings,
/// and the SoundTouch stream (``TimePitch``) the queue's enqueued audio runs through on the
/// enqueuing thread when it is enabled and not bypassed. Never used by the render thread.
///
/// **Exact length.** SoundTouch holds a few thousand frames and releases its output in
/// sequences, so the stage counts: every frame given at play rate r owes 1 / r output frames
/// (Varispeed: the same); output beyond what is owed so far is dropped (counted in
/// ``droppedFrames``; 0 in the tests), and ``flush(channels:)`` delivers exactly what is still
/// owed, from SoundTouch's tail, padded with silence when the tail is short. A stream of N
/// frames at rate r is thus round(N / r) frames long, whatever SoundTouch does inside.
///
/// Thread safety: a value guarded by its queue's lock.
struct TimePitchStage {
    /// `kAudioQueueProperty_EnableTimePitch`.
    var enabled = false
    /// `kAudioQueueProperty_TimePitchAlgorithm`.
    var algorithm: AudioQueueTimePitchAlgorithm = .spectral
    /// `kAudioQueueProperty_TimePitchBypass`.
    var bypassed = false
    /// `kAudioQueueParam_PlayRate` as last set (0.5…2).
    var playRate: Float = 1
    /// `kAudioQueueParam_Pitch` as last set (−2400…2400 cents).
    var pitchCents: Float = 0
    /// Frames SoundTouch gave beyond what was owed, dropped (diagnostics).
    private(set) var droppedFrames = 0

    private var processor: TimePitch?
    private var processorAlgorithm: AudioQueueTimePitchAlgorithm?
    /// Output frames owed for the stream's input so far, and delivered.
    private var owed = 0.0
    private var delivered = 0
    /// True once the stream took a frame (SoundTouch may hold some).
    private(set) var isOpen = false

    /// Audio runs through SoundTouch: enabled and not bypassed.
    var routed: Bool { enabled && !bypassed }

    /// Queue frames per output frame for audio enqueued now: the play rate when routed, else 1.
    var effectiveRate: Double { routed ? Double(playRate) : 1 }

    /// Runs `frames` frames of `channels` planes at `sampleRate` through SoundTouch at the
    /// settings in force; returns what is ready (at most what is owed so far).
    mutating func process(
        _ ins: UnsafePointer<UnsafePointer<Float>>, channels: Int, frames: Int, sampleRate: Double
    ) -> [[Float]] {
        guard frames > 0, let tp = prepared(channels: channels, sampleRate: sampleRate) else {
            return Array(repeating: [], count: channels)
        }
        let planes = (0..<channels).map { Array(UnsafeBufferPointer(start: ins[$0], count: frames)) }
        owed += Double(frames) / Double(playRate)
        isOpen = true
        var out = tp.process(planes)
        let allowed = max(0, Int(owed.rounded(.down)) - delivered)
        if let n = out.first?.count, n > allowed {
            droppedFrames += n - allowed
            out = out.map { Array($0.prefix(allowed)) }
        }
        delivered += out.first?.count ?? 0
        return out
    }

    /// Ends the stream: what SoundTouch still holds, cut or padded to exactly what is owed.
    mutating func flush(channels: Int) -> [[Float]] {
        defer { restartCounts() }
        guard isOpen, let tp = processor else { return Array(repeating: [], count: channels) }
        let want = max(0, Int(owed.rounded()) - delivered)
        return tp.flush().map { plane in
            plane.count >= want ? Array(plane.prefix(want)) : plane + [Float](repeating: 0, count: want - plane.count)
        }
    }

    /// Forgets the stream (a stop, a reset, a discontinuity): nothing held comes out.
    mutating func reset() {
        processor?.clear()
        restartCounts()
    }

    private mutating func restartCounts() {
        owed = 0
        delivered = 0
        isOpen = false
    }

    /// The processor, made for the algorithm in force, set to the play rate and pitch in force.
    private mutating func prepared(channels: Int, sampleRate: Double) -> TimePitch? {
        if processor == nil || processorAlgorithm != algorithm {
            guard let tp = try? TimePitch(channels: channels, sampleRate: sampleRate) else { return nil }
            switch algorithm {
            case .spectral, .varispeed: tp.tune(quickSeek: false, antiAlias: true)
            case .timeDomain: tp.tune(quickSeek: true, antiAlias: true)
            case .lowQualityZeroLatency: tp.tune(quickSeek: true, antiAlias: false, sequenceMs: 40, seekWindowMs: 15, overlapMs: 8)
            }
            processor = tp
            processorAlgorithm = algorithm
        }
        guard let tp = processor else { return nil }
        // The values were checked when set (0.5…2, ±2400), so these do not throw.
        if algorithm == .varispeed {
            if tp.varispeed != playRate { try? tp.setVarispeed(playRate) }
            if tp.playRate != 1 { try? tp.setPlayRate(1) }
            if tp.pitchCents != 0 { try? tp.setPitch(cents: 0) }
        } else {
            if tp.varispeed != 1 { try? tp.setVarispeed(1) }
            if tp.playRate != playRate { try? tp.setPlayRate(playRate) }
            let cents = algorithm == .spectral ? pitchCents : 0
            if tp.pitchCents != cents { try? tp.setPitch(cents: cents) }
        }
        return tp
    }
}
