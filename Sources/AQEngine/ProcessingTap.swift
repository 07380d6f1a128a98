import AQCore
import AQTypes
import Foundation
import Synchronization

/// `AudioQueueProcessingTapFlags`, with Apple's bit values (AudioQueue.h).
///
/// Thread safety: a plain value; any thread.
public struct AudioQueueProcessingTapFlags: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `kAudioQueueProcessingTap_PreEffects` (0x01): the tap sees the audio before time/pitch.
    public static let preEffects = AudioQueueProcessingTapFlags(rawValue: 1 << 0)
    /// `kAudioQueueProcessingTap_PostEffects` (0x02): the tap sees the audio after time/pitch.
    public static let postEffects = AudioQueueProcessingTapFlags(rawValue: 1 << 1)
    /// `kAudioQueueProcessingTap_Siphon` (0x04): the tap is given the audio and may not change it.
    public static let siphon = AudioQueueProcessingTapFlags(rawValue: 1 << 2)
    /// `kAudioQueueProcessingTap_StartOfStream` (0x100): the audio starts a continuous stream.
    public static let startOfStream = AudioQueueProcessingTapFlags(rawValue: 1 << 8)
    /// `kAudioQueueProcessingTap_EndOfStream` (0x200): never set here (docs/c-api.md,
    /// "Processing taps").
    public static let endOfStream = AudioQueueProcessingTapFlags(rawValue: 1 << 9)
    /// The flags `AudioQueueProcessingTapNew` accepts.
    public static let creationFlags: AudioQueueProcessingTapFlags = [.preEffects, .postEffects, .siphon]
}

/// A playback queue's processing tap (`AudioQueueProcessingTapRef`): a callback that sees, and
/// unless it is a siphon replaces, the queue's audio as canonical planar `Float` at the queue's
/// rate, in chunks of at most ``maxFrames`` frames.
///
/// **Where it runs.** On the thread that enqueues a buffer (or flushes the queue, or stops or
/// disposes of it asynchronously: what ends a stream), under the queue's lock, while the buffer is converted; never
/// on the render thread. Its latency is thus nothing at render: the tap's output is what the
/// buffer plays. Apple's queues call the tap on their render thread instead, paced by the device.
///
/// Thread safety: the stream state is touched only by the thread that holds the queue's lock
/// (the callback's thread); ``getSourceAudio(frames:into:)`` and ``queueTime()`` check that they
/// are called from inside the callback, on its thread.
public final class AudioQueueProcessingTap: @unchecked Sendable {
    /// The tap's processing: `frames` frames are wanted; `timeStamp` is a continuous sample
    /// time (the queue frame of the stream's first frame, plus the frames given since); `flags`
    /// holds the creation flags and `.startOfStream` after a discontinuity. A siphon is given
    /// the audio in `data` (one pointer per channel, `frames` frames; not to be written) and its
    /// result is ignored. Any other tap finds `data` nil, pulls its source with
    /// ``AudioQueueProcessingTap/getSourceAudio(frames:into:)``, sets `data` to its output (its
    /// own memory, or the source's, valid until it returns) and returns the frames it made
    /// (fewer than `frames`: the rest plays as silence).
    public typealias Callback = (
        _ tap: AudioQueueProcessingTap, _ frames: Int, _ timeStamp: inout AudioTimeStamp,
        _ flags: inout AudioQueueProcessingTapFlags, _ data: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>?>
    ) -> Int

    /// The flags it was made with (`.preEffects` or `.postEffects`, maybe `.siphon`).
    public let flags: AudioQueueProcessingTapFlags
    /// The most frames one callback is asked for: the power of two nearest to 50 ms at the
    /// queue's rate (2048 at 44.1 and 48 kHz, 4096 at 96 kHz), at least 256.
    public let maxFrames: Int
    /// Channels of the processing format (the queue's).
    public let channels: Int
    /// The processing format: native `Float32`, non-interleaved, at the queue's rate.
    public let processingFormat: AudioStreamBasicDescription
    let callback: Callback
    /// The queue it belongs to, until it is disposed of.
    weak var queue: AudioQueue?

    // Stream state: queue lock held (the callback's thread).
    private var expectedQueueFrame: Int64?
    private var epoch: UInt32 = 0
    private var streamTime: Double = 0
    private var chunkQueueTime: Double = 0
    private var chunkQueueFrames = 0
    private var chunkStarts = false
    private var source: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private var sourceFrames = 0
    private var sourceTaken = 0
    /// The thread running the callback (`pthread_self()`), 0 outside it: read by any thread.
    private let callingThread = Atomic<UInt>(0)
    private let io: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>

    /// A tap for a queue of `channels` channels at `sampleRate`. Any thread; does not block.
    public init(channels: Int, sampleRate: Double, flags: AudioQueueProcessingTapFlags, callback: @escaping Callback) {
        self.flags = flags
        self.channels = channels
        self.callback = callback
        let fifty = max(sampleRate * 0.05, 256)
        maxFrames = 1 << Int(log2(fifty).rounded())
        processingFormat = AudioStreamBasicDescription(
            sampleRate: sampleRate, formatID: AudioFormatID.linearPCM, formatFlags: [.isFloat, .isPacked, .isNonInterleaved],
            bytesPerPacket: 4, framesPerPacket: 1, bytesPerFrame: 4, channelsPerFrame: UInt32(channels), bitsPerChannel: 32)
        source = .allocate(capacity: max(channels, 1))
        io = .allocate(capacity: max(channels, 1))
        io.initialize(repeating: nil, count: max(channels, 1))
    }

    deinit {
        source.deallocate()
        io.deallocate()
    }

    var isSiphon: Bool { flags.contains(.siphon) }

    /// Runs `frames` frames of `planes` through the tap, in place, in chunks of at most
    /// ``maxFrames``. They stand for `queueFrames` queue frames from queue frame `q` (the same
    /// count before time/pitch; after it, the buffer's frames at the queue's rate); a `q` that
    /// does not follow the previous call's, or a new `epoch` (a stop or reset), starts a stream.
    /// The enqueuing thread, queue lock held.
    func process(_ planes: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int, at q: Int64, queueFrames: Int, epoch e: UInt32) {
        guard frames > 0 else {
            expectedQueueFrame = q + Int64(queueFrames)
            return
        }
        if q != expectedQueueFrame || e != epoch {
            chunkStarts = true
            streamTime = Double(q)
        }
        epoch = e
        expectedQueueFrame = q + Int64(queueFrames)
        var done = 0
        while done < frames {
            let n = min(maxFrames, frames - done)
            for c in 0..<channels { source[c] = planes[c] + done }
            chunkQueueTime = Double(q) + Double(queueFrames) * Double(done) / Double(frames)
            chunkQueueFrames = Int((Double(queueFrames) * Double(done + n) / Double(frames)).rounded())
                - Int((Double(queueFrames) * Double(done) / Double(frames)).rounded())
            runChunk(n)
            streamTime += Double(n)
            chunkStarts = false
            done += n
        }
    }

    /// One callback over `n` frames at `source`.
    private func runChunk(_ n: Int) {
        var fl = flags
        if chunkStarts { fl.insert(.startOfStream) }
        var ts = AudioTimeStamp(sampleTime: streamTime, flags: .sampleTimeValid)
        let data = UnsafeMutableBufferPointer(start: io, count: channels)
        for c in 0..<channels { io[c] = isSiphon ? source[c] : nil }
        sourceFrames = n
        sourceTaken = 0
        callingThread.store(UInt(pthread_self()), ordering: .releasing)
        let made = callback(self, n, &ts, &fl, data)
        callingThread.store(0, ordering: .releasing)
        sourceFrames = 0
        guard !isSiphon else { return }
        let m = min(max(made, 0), n)
        for c in 0..<channels {
            if let out = io[c], m > 0 {
                if UnsafePointer(out) != UnsafePointer(source[c]) { source[c].update(from: out, count: m) }
            } else {
                source[c].update(repeating: 0, count: m)
            }
            (source[c] + m).update(repeating: 0, count: n - m)
        }
    }

    /// Whether this thread is inside the tap's callback. Any thread; does not block.
    public var isCallingBack: Bool {
        let t = callingThread.load(ordering: .acquiring)
        return t != 0 && pthread_equal(pthread_t(t), pthread_self()) != 0
    }

    /// Throws `.invalidTapContext` unless called from this tap's callback, on its thread. Any
    /// thread; does not block.
    public func checkCallbackContext() throws(AudioQueueError) { try checkContext() }

    private func checkContext() throws(AudioQueueError) {
        guard isCallingBack else {
            throw AudioQueueError(.invalidTapContext, "only the tap's callback may call this, while it runs")
        }
    }

    /// `AudioQueueProcessingTapGetSourceAudio`: up to `frames` frames of the chunk's source
    /// audio not yet taken: copied into `data`'s pointers that are set, or (nil pointers) handed
    /// as pointers into the queue's memory, valid until the callback returns. Returns the frames
    /// given, `.startOfStream` on the first pull of a stream, and the sample time of the first
    /// frame given. Only from the callback of a tap that is not a siphon; does not block.
    /// - Throws: `.invalidTapContext` outside the callback, on another thread, or for a siphon.
    public func getSourceAudio(
        frames: Int, into data: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>?>
    ) throws(AudioQueueError) -> (frames: Int, flags: AudioQueueProcessingTapFlags, timeStamp: AudioTimeStamp) {
        try checkContext()
        if isSiphon { throw AudioQueueError(.invalidTapContext, "a siphon is given its audio: it does not call GetSourceAudio") }
        let k = max(0, min(frames, sourceFrames - sourceTaken, data.count >= channels ? Int.max : 0))
        for c in 0..<min(channels, data.count) {
            if let d = data[c] { d.update(from: source[c] + sourceTaken, count: k) } else { data[c] = source[c] + sourceTaken }
        }
        let fl: AudioQueueProcessingTapFlags = chunkStarts && sourceTaken == 0 ? .startOfStream : []
        let ts = AudioTimeStamp(sampleTime: streamTime + Double(sourceTaken), flags: .sampleTimeValid)
        sourceTaken += k
        return (k, fl, ts)
    }

    /// `AudioQueueProcessingTapGetQueueTime`: the queue time of the chunk being processed (its
    /// first frame, in queue frames: where it will play, not what plays now) and the queue
    /// frames it stands for (its frame count before time/pitch; 0 for a time/pitch tail). Only
    /// from the tap's callback; does not block.
    /// - Throws: `.invalidTapContext` outside the callback or on another thread.
    public func queueTime() throws(AudioQueueError) -> (sampleTime: Double, frameCount: Int) {
        try checkContext()
        return (chunkQueueTime, chunkQueueFrames)
    }
}
