import AQEngine
import Foundation

/// Records every device input into one 32-bit float WAV file for as long as it runs (aqsync's
/// `--capture`): an input queue on the engine's capture ring — the mechanism takes use —, a few
/// buffers cycling between it and a writer thread of its own, and a ``PCMTakeWriter``.
///
/// **Placement: raw.** File frame k is device frame `startFrame` + k *at the inputs*: nothing
/// is compensated (no capture or playback latency is subtracted), unlike a compensated take.
/// Frames the queue lost (no buffer free, or read after the ring overwrote them) are written as
/// silence and counted (``Report/lostFrames``), so every later frame keeps its place.
///
/// **Threads and memory.** The input callback (the engine's events thread) only hands the
/// buffer over (a lock, an append, a signal); the writer thread writes it and enqueues it
/// again. Memory is fixed: `buffers` × `bufferFrames` float frames and the writer's block.
///
/// **Errors.** A write error (disk full, a file size limit, WAV's 4 GiB) stops the recording:
/// the file is closed valid with the frames written before, ``Report/error`` says why.
///
/// Thread safety: every public member from any control thread (not the render thread, not
/// from the engine's callbacks); ``finish()`` blocks until the file is closed.
public final class CaptureRecorder: @unchecked Sendable {
    /// The file written.
    public let url: URL
    /// Device inputs recorded: `0 ..< channels`.
    public let channels: Int

    let queue: AudioInputQueue
    let writer: PCMTakeWriter
    let cond = NSCondition()
    // Guarded by `cond`:
    /// Buffer, start time (device frame, capture latency subtracted), bytes, the capture
    /// latency the queue subtracted.
    private var work: [(AudioQueueBuffer, Int64, Int, Int)] = []
    private var startFrame: Int64?
    private var finishing = false
    private var done = false
    private var quit = false
    private var error: String?
    private var gapFrames: Int64 = 0
    private var framesInFile: Int64 = 0
    private let writerDone = DispatchSemaphore(value: 0)
    // Writer thread only:
    private var written: Int64 = 0

    /// Makes the queue (float samples of device inputs `0 ..< channels` at the device's rate),
    /// its buffers and the file (created now), and starts the writer thread. Nothing is
    /// recorded before ``start()``. Any control thread; does not block.
    ///
    /// - Throws: ``SessionError``: `.output` when the file cannot be created; `.playback` when
    ///   the engine refuses the queue.
    public init(url: URL, engine: AudioQueueEngine, channels: Int, options: TakeRecorder.Options = TakeRecorder.Options()) throws(SessionError) {
        self.url = url
        self.channels = max(1, channels)
        let rate = engine.device.sampleRate
        writer = try PCMTakeWriter(url: url, format: TakeFormat(container: .wav, sample: .float32), sampleRate: Int(rate.rounded()), channels: self.channels)
        let format = AudioStreamBasicDescription.linearPCM(sampleRate: rate, channels: UInt32(self.channels), bits: 32, isFloat: true)
        let box = WeakBox()
        do {
            queue = try engine.newInput(format: format) { _, buffer, time, _ in
                box.recorder?.filled(buffer, time: time)
            }
        } catch {
            try? writer.finish()
            throw SessionError(.playback, file: url.path, "the engine refused the capture's input queue: \(error.message)")
        }
        do throws(AudioQueueError) {
            for _ in 0..<max(2, options.buffers) {
                try queue.enqueue(try queue.allocateBuffer(capacity: options.bufferFrames * self.channels * 4))
            }
        } catch {
            try? queue.dispose(immediately: true)
            try? writer.finish()
            throw SessionError(.playback, file: url.path, "capture: \(error.message)")
        }
        work.reserveCapacity(max(2, options.buffers) + 1)
        box.recorder = self
        let thread = Thread { [self] in writerLoop() }
        thread.name = "aqsync-capture"
        thread.start()
    }

    final class WeakBox: @unchecked Sendable {
        weak var recorder: CaptureRecorder?
    }

    deinit { close() }

    /// Starts recording from the next cycle's first frame; returns that device frame (file
    /// frame 0). Any control thread; does not block.
    ///
    /// - Throws: ``SessionError`` `.playback` when the queue cannot start.
    @discardableResult
    public func start() throws(SessionError) -> Int64 {
        // The writer waits for the origin before it writes the first buffer.
        let frame: Int64
        do {
            frame = try queue.start()
        } catch {
            throw SessionError(.playback, file: url.path, "the capture cannot start: \(error.message)")
        }
        cond.lock()
        startFrame = frame
        cond.broadcast()
        cond.unlock()
        return frame
    }

    /// Stops the queue at once — every frame captured so far goes to the file —, waits until
    /// the writer has written them, fixes up the header and closes the file. Blocks until then;
    /// a second call returns at once.
    public func finish() {
        cond.lock()
        let wasDone = done
        cond.unlock()
        if !wasDone { try? queue.stop(immediately: true) }  // hands the buffer in progress to `filled`
        cond.lock()
        finishing = true
        cond.broadcast()
        while !done { cond.wait() }
        cond.unlock()
    }

    /// Finishes if needed, stops the writer thread and disposes of the queue. Blocks until
    /// then.
    public func close() {
        finish()
        cond.lock()
        let wasQuit = quit
        quit = true
        cond.broadcast()
        cond.unlock()
        if wasQuit { return }
        writerDone.wait()
        try? queue.dispose(immediately: true)
    }

    /// What became of the recording so far (final once ``finish()`` returned). Does not block
    /// beyond a short lock.
    public func report() -> Report {
        let lost = queue.lostFrames
        cond.lock()
        defer { cond.unlock() }
        // Frames the queue lost at the end show in no later buffer: its own count then.
        return Report(file: url, channels: channels, frames: framesInFile, startFrame: startFrame, lostFrames: max(lost, gapFrames), error: error)
    }

    // MARK: - Writer

    /// Input callback (events thread, or the thread of an immediate stop): hand over.
    private func filled(_ buffer: AudioQueueBuffer, time: AudioTimeStamp) {
        cond.lock()
        if !done && !quit {
            work.append((buffer, Int64(time.sampleTime.rounded(.down)), buffer.audioDataByteSize, buffer.captureLatency))
            cond.broadcast()
        }
        cond.unlock()
    }

    private func writerLoop() {
        while true {
            cond.lock()
            while (work.isEmpty || startFrame == nil) && !quit && !(finishing && !done) { cond.wait() }
            if work.isEmpty {
                if finishing && !done {
                    cond.unlock()
                    close(error: nil)
                    continue
                }
                cond.unlock()
                break
            }
            let (buffer, time, bytes, latency) = work.removeFirst()
            let skip = done
            let origin = startFrame ?? time + Int64(latency)
            cond.unlock()
            if skip { continue }
            write(buffer, position: time + Int64(latency) - origin, bytes: bytes)
        }
        writerDone.signal()
    }

    /// Writes one buffer whose first frame is file frame `position` (silence before it for the
    /// frames lost), and enqueues it again. Writer thread.
    private func write(_ buffer: AudioQueueBuffer, position: Int64, bytes: Int) {
        let frames = bytes / (channels * 4)
        var failure: String?
        do throws(SessionError) {
            var drop = 0
            if position > written {
                let gap = position - written
                try writer.writeSilence(frames: Int(gap))
                cond.lock()
                gapFrames += gap
                cond.unlock()
                written += gap
            } else if position < written {
                drop = Int(min(Int64(frames), written - position))
            }
            if frames > drop {
                let samples = buffer.audioData.assumingMemoryBound(to: Float.self)
                try writer.write(samples + drop * channels, frames: frames - drop, stride: channels, offset: 0)
                written += Int64(frames - drop)
            }
        } catch {
            failure = error.message
        }
        let inFile = writer.framesWritten
        cond.lock()
        framesInFile = inFile
        cond.unlock()
        if let failure {
            try? queue.stop(immediately: true)
            close(error: failure)
            return
        }
        try? queue.enqueue(buffer)
    }

    /// Fixes up the header, closes the file, marks the recording done. Writer thread.
    private func close(error failure: String?) {
        var failure = failure
        do { try writer.finish() } catch { failure = failure ?? error.message }
        let inFile = writer.framesWritten
        cond.lock()
        framesInFile = inFile
        done = true
        error = failure
        work.removeAll(keepingCapacity: true)
        cond.broadcast()
        cond.unlock()
    }
}
