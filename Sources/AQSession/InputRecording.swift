import AQEngine
import Foundation

/// What every recorder of device inputs into a file shares (``TakeRecorder``,
/// ``CaptureRecorder``): an input queue on the engine's capture ring, a few buffers cycling
/// between it and a writer thread, a ``TakeWriter``, and the rule that puts each buffer on its
/// file frame. The recorders only say where a buffer belongs (``begin(origin:place:)``) and
/// read the outcome (``snapshot()``).
///
/// **Placement.** A buffer's first frame reached the engine's inputs at device frame A (its
/// start time plus the capture latency the queue subtracted). The recorder's `place` maps A
/// (and the capture latency read with the buffer) to a device frame; minus `origin` that is
/// its file frame. Frames placed before what is already written are dropped; a hole before a
/// buffer is written as silence (before the first recorded frame: `leading`, later: `gaps`),
/// so every later frame keeps its place. The file ends at `length` frames: the last buffer is
/// cut there and the queue stopped at once.
///
/// **Threads and memory.** The input callback (the engine's events thread, or the thread of an
/// immediate stop) only hands the buffer over: a lock, an append to a list as long as the
/// buffers, a signal. The writer thread converts, writes and enqueues the buffer again. Memory
/// is fixed: `buffers` × `bufferFrames` float frames and the writer's conversion block.
///
/// **Lifetime.** The writer thread holds this core, not the recorder that owns it, so a
/// recorder nobody holds any more is deinitialised and closes the core (which blocks until the
/// file is closed).
///
/// **Errors.** A write error stops the recording: the file is closed valid with every frame
/// written before, ``Snapshot/error`` says why.
///
/// Thread safety: every member from any control thread (not the render thread, not from the
/// engine's callbacks); ``finish()`` and ``close()`` block until the file is closed.
final class InputRecording: @unchecked Sendable {
    /// Where a buffer's frames belong: the device frame (at the inputs) of its first frame, and
    /// the recorder's own capture latency read when the callback got it.
    struct Arrival {
        /// Device frame at which the buffer's first frame reached the engine's inputs.
        var frame: Int64
        /// The recorder's capture latency with this buffer (`ownCapture`, else the queue's).
        var capture: Int
    }

    /// The outcome so far (final once ``Snapshot/done``).
    struct Snapshot {
        /// Frames in the file.
        var framesInFile: Int64
        /// File frame of the first recorded (not silent) frame; nil: nothing recorded.
        var firstRecorded: Int64?
        /// Silence before the first recorded frame.
        var leading: Int64
        /// Silence after it: frames lost.
        var gaps: Int64
        /// The capture latency of the last buffer written (nil: none yet).
        var lastCapture: Int?
        /// The file is closed.
        var done: Bool
        /// The file has all its `length` frames, without error.
        var completed: Bool
        /// Why recording stopped early, if a write failed.
        var error: String?
        /// Frames the queue lost in all (also those no later buffer showed).
        var queueLost: Int64
    }

    let queue: AudioInputQueue
    let writer: any TakeWriter
    /// Interleaved float channels of the queue.
    let stride: Int
    /// The first of them the file takes.
    let offset: Int
    /// Frames the file gets at most.
    let length: Int64
    private let ownCapture: (@Sendable () -> Int)?

    private let cond = NSCondition()
    // Guarded by `cond`:
    private var work: [(buffer: AudioQueueBuffer, arrival: Arrival, bytes: Int)] = []
    private var origin: Int64?
    private var place: @Sendable (Arrival) -> Int64 = { $0.frame }
    private var state = Snapshot(framesInFile: 0, firstRecorded: nil, leading: 0, gaps: 0, lastCapture: nil, done: false, completed: false, error: nil, queueLost: 0)
    private var finishing = false
    private var quit = false
    private let writerDone = DispatchSemaphore(value: 0)
    // Writer thread only:
    private var written: Int64 = 0

    /// Makes the queue (float samples of device inputs `0 ..< stride` at the device's rate) and
    /// its buffers, and starts the writer thread (named `threadName`). Nothing is recorded
    /// before the queue starts; nothing written before ``begin(origin:place:)``. `label` and
    /// `path` name the recording in errors. On failure the writer is finished (the file left
    /// empty and valid).
    ///
    /// - Throws: ``SessionError`` `.playback` when the engine refuses the queue or a buffer.
    init(
        engine: AudioQueueEngine, writer: any TakeWriter, stride: Int, offset: Int, length: Int64,
        options: TakeRecorder.Options, ownCapture: (@Sendable () -> Int)?, label: String, path: String, threadName: String
    ) throws(SessionError) {
        self.writer = writer
        self.stride = stride
        self.offset = offset
        self.length = length
        self.ownCapture = ownCapture
        let format = AudioStreamBasicDescription.linearPCM(sampleRate: engine.device.sampleRate, channels: UInt32(stride), bits: 32, isFloat: true)
        let box = WeakBox()
        do {
            queue = try engine.newInput(format: format) { _, buffer, time, _ in
                box.core?.filled(buffer, time: time)
            }
        } catch {
            try? writer.finish()
            throw SessionError(.playback, file: path, "\(label): the engine refused the input queue: \(error.message)")
        }
        let buffers = max(2, options.buffers)
        do throws(AudioQueueError) {
            for _ in 0..<buffers {
                try queue.enqueue(try queue.allocateBuffer(capacity: options.bufferFrames * stride * 4))
            }
        } catch {
            try? queue.dispose(immediately: true)
            try? writer.finish()
            throw SessionError(.playback, file: path, "\(label): \(error.message)")
        }
        work.reserveCapacity(buffers + 1)
        box.core = self
        let thread = Thread { [self] in writerLoop() }
        thread.name = threadName
        thread.start()
    }

    final class WeakBox: @unchecked Sendable {
        weak var core: InputRecording?
    }

    /// Says where buffers belong: file frame = `place(arrival)` − `origin`. Call before the
    /// queue starts (buffers that arrive earlier wait). Any control thread; does not block.
    func begin(origin: Int64, place: @escaping @Sendable (Arrival) -> Int64) {
        cond.lock()
        self.origin = origin
        self.place = place
        cond.broadcast()
        cond.unlock()
    }

    /// Stops the queue at once — every frame captured so far goes to the file —, waits until
    /// the writer has written them, fixed up the header and closed the file. Blocks until
    /// then; a second call returns at once.
    func finish() {
        cond.lock()
        let wasDone = state.done
        cond.unlock()
        if !wasDone { try? queue.stop(immediately: true) }  // hands the buffer in progress to `filled`
        cond.lock()
        finishing = true
        cond.broadcast()
        while !state.done { cond.wait() }
        cond.unlock()
    }

    /// Finishes if needed, stops the writer thread and disposes of the queue. Blocks until
    /// then; a second call returns at once.
    func close() {
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

    /// Waits until the file is closed (at most `timeout` seconds); returns whether it is.
    func waitUntilDone(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        cond.lock()
        defer { cond.unlock() }
        while !state.done { if !cond.wait(until: deadline) { break } }
        return state.done
    }

    /// The outcome so far. Does not block beyond a short lock.
    func snapshot() -> Snapshot {
        let lost = queue.lostFrames
        cond.lock()
        defer { cond.unlock() }
        var s = state
        s.queueLost = lost
        return s
    }

    // MARK: - Writer

    /// Input callback: hand over.
    private func filled(_ buffer: AudioQueueBuffer, time: AudioTimeStamp) {
        let queueCapture = buffer.captureLatency
        let capture = ownCapture?() ?? queueCapture
        let arrival = Arrival(frame: Int64(time.sampleTime.rounded(.down)) + Int64(queueCapture), capture: capture)
        cond.lock()
        if !state.done && !quit {
            work.append((buffer, arrival, buffer.audioDataByteSize))
            cond.broadcast()
        }
        cond.unlock()
    }

    private func writerLoop() {
        while true {
            cond.lock()
            while (work.isEmpty || origin == nil) && !quit && !(finishing && !state.done) { cond.wait() }
            if work.isEmpty {
                if finishing && !state.done {
                    cond.unlock()
                    close(completed: false, error: nil)
                    continue
                }
                cond.unlock()
                break
            }
            let item = work.removeFirst()
            let skip = state.done
            let placed = place(item.arrival)
            let position = placed - (origin ?? placed)  // no origin (finished before it began): in turn
            if !skip { state.lastCapture = item.arrival.capture }
            cond.unlock()
            if skip { continue }
            write(item.buffer, position: position, bytes: item.bytes)
        }
        writerDone.signal()
    }

    /// Writes one buffer whose first frame is file frame `position`; enqueues it again unless
    /// the file is complete. Writer thread.
    private func write(_ buffer: AudioQueueBuffer, position: Int64, bytes: Int) {
        let frames = bytes / (stride * 4)
        var failure: String?
        if frames > 0 {
            var drop = 0
            do throws(SessionError) {
                if position > written {
                    let gap = min(position, length) - written
                    if gap > 0 {
                        try writer.writeSilence(frames: Int(gap))
                        cond.lock()
                        if state.firstRecorded == nil { state.leading += gap } else { state.gaps += gap }
                        cond.unlock()
                        written += gap
                    }
                } else if position < written {
                    drop = Int(min(Int64(frames), written - position))
                }
                let n = Int(min(Int64(frames - drop), length - written))
                if n > 0 {
                    cond.lock()
                    if state.firstRecorded == nil { state.firstRecorded = written }
                    cond.unlock()
                    let samples = buffer.audioData.assumingMemoryBound(to: Float.self)
                    try writer.write(samples + drop * stride, frames: n, stride: stride, offset: offset)
                    written += Int64(n)
                }
            } catch {
                failure = error.message
                written = writer.framesWritten
            }
        }
        let inFile = writer.framesWritten
        cond.lock()
        state.framesInFile = inFile
        cond.unlock()
        if failure != nil || written >= length {
            try? queue.stop(immediately: true)
            close(completed: failure == nil, error: failure)
            return
        }
        try? queue.enqueue(buffer)
    }

    /// Fixes up the header, closes the file, marks the recording done. Writer thread.
    private func close(completed ok: Bool, error failure: String?) {
        var failure = failure
        do { try writer.finish() } catch { failure = failure ?? error.message }
        let inFile = writer.framesWritten
        cond.lock()
        state.framesInFile = inFile
        state.done = true
        state.completed = ok && failure == nil
        state.error = failure
        work.removeAll(keepingCapacity: true)
        cond.broadcast()
        cond.unlock()
    }
}
