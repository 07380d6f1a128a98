import Foundation
import Synchronization

/// Writes frames that some source keeps handing out (aqsync's `--capture`: a `JackCapture`,
/// what the device played taken back through its own inputs) to a 32-bit float WAV file, on a
/// thread of its own, in constant memory. The source is a closure so that this module needs no
/// device: `read(planes, maxFrames)` moves up to `maxFrames` frames into `planes` (one per
/// channel) and returns how many, without blocking.
///
/// Thread safety: `finish()` from any one thread; the source is called only on the writer's
/// thread.
public final class CaptureFileWriter: @unchecked Sendable {
    /// The file written.
    public let url: URL
    private let writer: WAVWriter
    private let channels: Int
    private let read: @Sendable (UnsafePointer<UnsafeMutablePointer<Float>>, Int) -> Int
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let failure = Mutex<SessionError?>(nil)
    private let finished = Mutex<Bool>(false)

    /// Creates the file and starts the writer thread, which drains the source every 20 ms.
    ///
    /// - Throws: ``SessionError`` `.output` when the file cannot be created.
    public init(
        url: URL, sampleRate: Int, channels: Int,
        read: @escaping @Sendable (UnsafePointer<UnsafeMutablePointer<Float>>, Int) -> Int
    ) throws(SessionError) {
        self.url = url
        self.channels = max(channels, 1)
        self.read = read
        writer = try WAVWriter(url: url, sampleRate: sampleRate, channels: self.channels, format: .f32)
        let t = Thread { [self] in loop() }
        t.name = "aqsync-capture"
        t.start()
    }

    private func loop() {
        let chunk = 4096
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
        for c in 0..<channels { planes[c] = .allocate(capacity: chunk) }
        defer {
            for c in 0..<channels { planes[c].deallocate() }
            planes.deallocate()
        }
        var failed = false
        while true {
            let last = stopping.load(ordering: .acquiring)
            while true {
                let n = read(UnsafePointer(planes), chunk)
                if n == 0 { break }
                if failed { continue }  // keep draining the source; the error is reported
                do throws(SessionError) { try writer.write(planar: UnsafePointer(planes), frames: n) } catch {
                    failure.withLock { $0 = error }
                    failed = true
                }
            }
            if last { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        done.signal()
    }

    /// Writes what the source still has (call it after the source stopped producing), completes
    /// the header and closes the file; returns the frames written. Blocks until the writer
    /// thread is done. A second call returns the same count.
    ///
    /// - Throws: the first write error (``SessionError`` `.output`): the file then holds the
    ///   frames before it, with a valid header when the disk allowed it.
    @discardableResult
    public func finish() throws(SessionError) -> Int64 {
        let first = finished.withLock { f in
            defer { f = true }
            return !f
        }
        if first {
            stopping.store(true, ordering: .releasing)
            done.wait()
            if let e = failure.withLock({ $0 }) {
                try? writer.finish()
                throw e
            }
            try writer.finish()
        }
        return writer.framesWritten
    }
}
