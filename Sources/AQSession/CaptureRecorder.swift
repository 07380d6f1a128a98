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
/// **Threads and memory.** As every recorder of inputs (``InputRecording``): the input
/// callback only hands the buffer over, the writer thread writes it and enqueues it again.
/// Memory is fixed: `buffers` × `bufferFrames` float frames and the writer's block. A
/// recorder nobody holds any more closes its file (its `deinit` blocks until then).
///
/// **Errors.** A write error (disk full, a file size limit, WAV's 4 GiB) stops the recording:
/// the file is closed valid with the frames written before, ``Report/error`` says why.
///
/// Thread safety: every public member from any control thread (not the render thread, not
/// from the engine's callbacks); ``finish()`` blocks until the file is closed.
package final class CaptureRecorder: @unchecked Sendable {
    /// The file written.
    package let url: URL
    /// Device inputs recorded: `0 ..< channels`.
    package let channels: Int

    let core: InputRecording
    private let cond = NSCondition()
    // Guarded by `cond`: the device frame of file frame 0, once started.
    private var startFrame: Int64?

    /// Makes the queue (float samples of device inputs `0 ..< channels` at the device's rate),
    /// its buffers and the file (created now), and starts the writer thread. Nothing is
    /// recorded before ``start()``. Any control thread; does not block.
    ///
    /// - Throws: ``SessionError``: `.output` when the file cannot be created; `.playback` when
    ///   the engine refuses the queue.
    package init(url: URL, engine: AudioQueueEngine, channels: Int, options: TakeRecorder.Options = TakeRecorder.Options()) throws(SessionError) {
        self.url = url
        self.channels = max(1, channels)
        let writer = try PCMTakeWriter(
            url: url, format: TakeFormat(container: .wav, sample: .float32), sampleRate: Int(engine.device.sampleRate.rounded()), channels: self.channels)
        core = try InputRecording(
            engine: engine, writer: writer, stride: self.channels, offset: 0, length: .max, options: options,
            ownCapture: nil, label: "capture", path: url.path, threadName: "aqsync-capture")
    }

    deinit { core.close() }

    /// Starts recording from the next cycle's first frame; returns that device frame (file
    /// frame 0). Any control thread; does not block.
    ///
    /// - Throws: ``SessionError`` `.playback` when the queue cannot start.
    @discardableResult
    package func start() throws(SessionError) -> Int64 {
        // The writer waits for the origin before it writes the first buffer.
        let frame: Int64
        do {
            frame = try core.queue.start()
        } catch {
            throw SessionError(.playback, file: url.path, "the capture cannot start: \(error.message)")
        }
        core.begin(origin: frame) { $0.frame }  // raw: where the frames reached the inputs
        cond.lock()
        startFrame = frame
        cond.unlock()
        return frame
    }

    /// Stops the queue at once — every frame captured so far goes to the file —, waits until
    /// the writer has written them, fixes up the header and closes the file. Blocks until then;
    /// a second call returns at once.
    package func finish() { core.finish() }

    /// Finishes if needed, stops the writer thread and disposes of the queue. Blocks until
    /// then.
    package func close() { core.close() }

    /// What became of the recording so far (final once ``finish()`` returned). Does not block
    /// beyond a short lock.
    package func report() -> Report {
        let s = core.snapshot()
        cond.lock()
        let start = startFrame
        cond.unlock()
        // Frames the queue lost at the end show in no later buffer: its own count then.
        return Report(file: url, channels: channels, frames: s.framesInFile, startFrame: start, lostFrames: max(s.queueLost, s.leading + s.gaps), error: s.error)
    }
}
