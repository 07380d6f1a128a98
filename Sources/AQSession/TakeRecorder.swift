import AQEngine
import Foundation

/// Records one take (`[[record]]`) while a session plays: an input queue on the engine, a few
/// buffers cycling between it and the take's writer thread, and a ``TakeWriter``.
///
/// **Placement.** File frame 0 is exactly session frame `start`. A buffer whose frames reached
/// the engine's inputs from device frame A on (its start time T plus the capture latency the
/// queue subtracted, ``AudioQueueBuffer/captureLatency``) holds the frames placed at device
/// frame A − C − P (`compensate`, the default: where the performer heard the session when
/// playing them) or A (raw: where they reached the engine), minus the session start frame.
/// C is the take's capture latency: the largest of its own ports `in_(offset+1)…` (the queue
/// records the inputs before them too, and subtracts the largest of all it records; the take
/// puts its own back). P is the playback latency of what the performer heard: the largest of
/// the outputs the session's tracks play on (all outputs' largest when it has no tracks).
/// docs/recording.md, "Latency", has the rule and the arithmetic. The queue starts early
/// enough (C + P before the take's start); frames placed before `start` are dropped, and a
/// take that could not begin in time (a start already past) begins with silence up to its
/// first frame. The take has exactly `length` frames: the last buffer is cut there and the
/// queue stopped at once.
///
/// **Threads and memory.** As every recorder of inputs (``InputRecording``): the input
/// callback only hands the buffer to the writer thread, which converts, writes and enqueues
/// it again. Memory is fixed: `buffers` × `bufferFrames` of float samples and the writer's
/// conversion block; the take may run for hours. When the writer is slower than the input for
/// longer than the buffers hold, frames are lost: counted (``Report/lostFrames``) and written
/// as silence, so the take keeps its place on the timeline. A recorder nobody holds any more
/// closes its take (its `deinit` blocks until the file is closed).
///
/// **Errors.** A write error (disk full, a file size limit, WAV/AIFF's 4 GiB) stops the take:
/// its file is closed valid with every frame written before, and ``Report/error`` says why.
///
/// Thread safety: every public member from any control thread (not the render thread, not
/// from the engine's callbacks); ``finish()`` blocks until the file is closed.
package final class TakeRecorder: @unchecked Sendable {
    /// Buffering.
    ///
    /// Thread safety: a plain value; any thread.
    package struct Options: Sendable {
        /// Device frames per buffer.
        package var bufferFrames: Int
        /// Buffers cycling between the queue and the writer.
        package var buffers: Int
        /// Makes options; defaults: 8 buffers of 4096 frames (0.68 s at 48 kHz).
        package init(bufferFrames: Int = 4096, buffers: Int = 8) {
            self.bufferFrames = bufferFrames
            self.buffers = buffers
        }
    }

    /// What became of a take.
    ///
    /// Thread safety: a plain value; any thread.
    package struct Report: Sendable, Equatable {
        /// The take's file.
        package var file: URL
        /// Frames in the file.
        package var frames: Int64
        /// The session frame (device frames from the session start) of file frame 0: the
        /// take's `start`.
        package var sessionFrame: Int64
        /// The session frame the first recorded frame was placed at (nil: nothing recorded).
        package var firstRecordedSessionFrame: Int64?
        /// Frames of silence at the file's start because recording began after `start`.
        package var leadingSilence: Int64
        /// The latencies the take was placed by: `capture`, the largest capture latency of the
        /// take's own inputs (``captureInputs``; read with each buffer, the latest used);
        /// `playback`, the largest playback latency of ``playbackOutputs`` (read when the take
        /// started).
        package var latency: DeviceLatency
        /// The device inputs (0-based) the take records: its capture latency is theirs.
        package var captureInputs: Range<Int>
        /// The device outputs (0-based) the session's tracks play on, whose playback latency
        /// the take compensates; nil: the session has no tracks, the largest of all outputs.
        package var playbackOutputs: [Int]?
        /// True: placed by capture + playback latency; false: raw.
        package var compensated: Bool
        /// Frames lost (the input queue had no buffer, or read too late): silence in the file.
        package var lostFrames: Int64
        /// True when the take has all its `length` frames.
        package var completed: Bool
        /// Why the take stopped early, if something went wrong.
        package var error: String?

        /// `take vocals.wav: 480000 frames from session frame 0 (compensated: capture 300 +
        /// playback 256 frames), capture latency of in_2, playback latency of out_1…out_2`, with
        /// what was lost or went wrong. The latencies are the take's own: those of its ports
        /// and of the outputs its tracks play on (the largest of each).
        package var summary: String {
            var s = "take \(file.lastPathComponent): \(frames) frames from session frame \(sessionFrame) "
            s += compensated
                ? "(compensated: capture \(latency.capture) + playback \(latency.playback) frames)"
                : "(raw: capture latency \(latency.capture) frames added back, playback \(latency.playback) not compensated)"
            s += ", \(portsText)"
            if leadingSilence > 0 { s += "; began \(leadingSilence) frames late (silence before)" }
            if lostFrames > 0 { s += "; \(lostFrames) frames lost (silence in their place)" }
            if !completed && error == nil { s += "; stopped early" }
            if let error { s += "; error: \(error)" }
            return s
        }

        /// `capture latency of in_2…in_3, playback latency of out_1`: whose latencies these are
        /// (JACK's port names, 1-based; several ports: the largest of theirs).
        var portsText: String {
            let outs = playbackOutputs.map { Self.ports("out_", $0) } ?? "all outputs"
            return "capture latency of \(Self.ports("in_", Array(captureInputs))), playback latency of \(outs)"
        }

        /// `in_1`, `in_1…in_3` (consecutive), `out_1, out_3`; `none` for none.
        static func ports(_ prefix: String, _ channels: [Int]) -> String {
            guard let first = channels.first, let last = channels.last else { return "none" }
            if channels == Array(first...last) {
                return first == last ? "\(prefix)\(first + 1)" : "\(prefix)\(first + 1)…\(prefix)\(last + 1)"
            }
            return channels.map { "\(prefix)\($0 + 1)" }.joined(separator: ", ")
        }
    }

    /// The take.
    package let take: SessionTake
    /// The engine recorded on.
    package let engine: AudioQueueEngine
    /// The first device capture port (0-based) of the take's channels.
    package let inputOffset: Int
    /// Device frames from the session start to the take's file frame 0.
    package let startOffset: Int64
    /// Frames the take records (device frames).
    package let length: Int64
    /// The device inputs (0-based) the take records, whose capture latency it is placed by:
    /// `inputOffset ..< inputOffset + channels`.
    package let captureInputs: Range<Int>
    /// The device outputs (0-based) the session's tracks play on, whose playback latency a
    /// compensated take subtracts (the largest of them); nil: the session has no tracks, the
    /// largest playback latency of all outputs (``AudioQueueEngine/latency``).
    package let playbackOutputs: [Int]?

    let core: InputRecording
    let cond = NSCondition()
    // Guarded by `cond`: the latencies read when the take started.
    private var startLatency = DeviceLatency()

    /// Makes the take's queue (float samples of device inputs `0 ..< inputOffset + channels`,
    /// at the device's rate), its buffers and its file (created now, header written), and
    /// starts the writer thread. Nothing is recorded before ``start(sessionStart:)``.
    ///
    /// - Throws: ``SessionError``: `.invalidValue` when the take has no length (it starts at
    ///   or after the last track's end and gives none); `.unwritableFile` when the file cannot
    ///   be created, WAV/AIFF would pass 4 GiB, or the disk has not room for the whole take;
    ///   `.playback` when the engine refuses the queue.
    package init(
        take: SessionTake, session: Session, engine: AudioQueueEngine, inputOffset: Int, options: Options = Options()
    ) throws(SessionError) {
        self.take = take
        self.engine = engine
        self.inputOffset = inputOffset
        let rate = engine.device.sampleRate
        startOffset = session.startOffset(of: take, deviceRate: rate)
        length = session.deviceLength(of: take, deviceRate: rate)
        captureInputs = inputOffset..<(inputOffset + take.channels)
        playbackOutputs = session.tracks.isEmpty ? nil : session.trackOutputs(deviceOutputs: engine.device.outputChannelCount)
        let label = "take '\(take.name)'"
        guard length > 0 else {
            throw SessionError(.invalidValue, file: session.url.path, "\(label) starts at or after the end of the last track: give it a length")
        }
        // Room for the whole take, before anything plays.
        let bytes = length * Int64(take.channels * max(1, take.format.sample.bytesPerSample))
        if take.format.container != .caf && bytes > Int64(UInt32.max) - 4096 {
            throw SessionError(.unwritableFile, file: take.file.path, "\(label): \(length) frames of \(take.format) need \(bytes >> 20) MiB, past the 4 GiB a \(take.format.container == .wav ? "WAV" : "AIFF") file holds: record to .caf")
        }
        var fs = statvfs()
        if statvfs(take.file.deletingLastPathComponent().path, &fs) == 0 {
            let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
            if free < bytes + (1 << 20) {
                throw SessionError(.unwritableFile, file: take.file.path, "\(label): the disk has \(free >> 20) MiB free, the take needs \(bytes >> 20) MiB")
            }
        }
        let maker: TakeWriterMaker
        do throws(TakeFormatUnavailable) { maker = try take.format.writerMaker() } catch {
            throw SessionError(.invalidValue, file: session.url.path, "\(label): \(error.message)")
        }
        let writer: any TakeWriter
        do {
            writer = try maker(take.file, Int(rate.rounded()), take.channels)
        } catch {
            var e = error
            e.kind = .unwritableFile
            throw e
        }
        let inputs = captureInputs
        core = try InputRecording(
            engine: engine, writer: writer, stride: inputOffset + take.channels, offset: inputOffset, length: length,
            options: options, ownCapture: { engine.captureLatency(ofInputs: inputs) }, label: label, path: take.file.path,
            threadName: "aqsync-take")
    }

    deinit { core.close() }

    /// The take's latencies now: the largest capture latency of ``captureInputs``, the largest
    /// playback latency of ``playbackOutputs`` (of all outputs when nil). Any control thread;
    /// does not block.
    package var currentLatency: DeviceLatency {
        DeviceLatency(
            capture: engine.captureLatency(ofInputs: captureInputs),
            playback: playbackOutputs.map { engine.playbackLatency(ofOutputs: $0) } ?? engine.latency.playback)
    }

    /// Starts recording for a session that starts at device frame `sessionStart`: the queue
    /// starts the take's capture + playback latency (``currentLatency``) before the take's start
    /// (frames placed before it are dropped). Any control thread; does not block.
    ///
    /// - Throws: ``SessionError`` `.playback` when the queue cannot start.
    package func start(sessionStart: Int64) throws(SessionError) {
        let lat = currentLatency
        cond.lock()
        startLatency = lat
        cond.unlock()
        let playback = Int64(lat.playback)
        let compensate = take.compensate
        // File frame = placed device frame − the take's first device frame.
        core.begin(origin: sessionStart + startOffset) { a in compensate ? a.frame - Int64(a.capture) - playback : a.frame }
        let at = sessionStart + startOffset - Int64(max(0, lat.capture) + max(0, lat.playback))
        do {
            _ = try core.queue.start(at: AudioTimeStamp(sampleTime: Double(at)))
        } catch {
            throw SessionError(.playback, file: take.file.path, "take '\(take.name)' cannot start: \(error.message)")
        }
    }

    /// Finishes the take now (Ctrl-C, the session stopped): stops the queue at once — every
    /// frame captured so far goes to the file —, waits until the writer has written them and
    /// fixed up the header, and closes the file. Blocks until then; a second call returns at
    /// once.
    package func finish() { core.finish() }

    /// Finishes the take if needed, stops the writer thread and disposes of the queue.
    package func close() { core.close() }

    /// True once the take has all its frames, failed, or was finished.
    package var isFinished: Bool { core.snapshot().done }

    /// Waits until ``isFinished`` (at most `timeout` seconds). Returns ``isFinished``. On a
    /// hand-driven device the take progresses only while someone delivers the engine's events
    /// (`deliverPendingEvents()`), so a caller there delivers instead of waiting.
    @discardableResult
    package func waitUntilFinished(timeout: Double) -> Bool { core.waitUntilDone(timeout: timeout) }

    /// What became of the take so far (final once ``isFinished``).
    package func report() -> Report {
        let s = core.snapshot()
        cond.lock()
        var latency = startLatency
        cond.unlock()
        if let capture = s.lastCapture { latency.capture = capture }
        return Report(
            file: take.file, frames: s.framesInFile, sessionFrame: startOffset,
            firstRecordedSessionFrame: s.firstRecorded.map { startOffset + $0 }, leadingSilence: s.leading, latency: latency,
            captureInputs: captureInputs, playbackOutputs: playbackOutputs,
            // A complete take: the gaps inside it (frames the queue lost outside the take, in
            // the early start's margin or after its end, do not count). One stopped early: also
            // what the queue lost at the end, which no later buffer showed.
            compensated: take.compensate, lostFrames: s.completed ? s.gaps : max(s.queueLost, s.gaps), completed: s.completed, error: s.error)
    }
}
