import AQCore
import CJACK
import Foundation
import Synchronization

/// The render-side half of a capture: the device's input ports and a ring of interleaved
/// float frames. Filled by the process callback, drained by the capture's writer thread.
/// Memory owned by ``JackCapture``.
struct JackCaptureStorage: ~Copyable {
    let ports: UnsafeMutablePointer<OpaquePointer?>
    let channels: Int
    /// Interleaved samples; `capacity` frames.
    let ring: UnsafeMutablePointer<Float>
    let capacity: Int
    /// Frames written (render thread stores) and read (writer thread stores), ever.
    let written = Atomic<Int>(0)
    let read = Atomic<Int>(0)
    /// Frames the ring had no room for.
    let dropped = Atomic<Int>(0)

    init(ports: [OpaquePointer?], capacity: Int) {
        channels = ports.count
        self.ports = .allocate(capacity: max(ports.count, 1))
        for (i, p) in ports.enumerated() { self.ports[i] = p }
        self.capacity = capacity
        ring = .allocate(capacity: capacity * max(ports.count, 1))
        ring.initialize(repeating: 0, count: capacity * max(ports.count, 1))
    }

    deinit {
        ports.deallocate()
        ring.deallocate()
    }

    /// Copies this cycle's input buffers into the ring. Render thread.
    @_noLocks
    func record(frames: Int) {
        let w = written.load(ordering: .relaxed)
        let r = read.load(ordering: .acquiring)
        let room = capacity - (w - r)
        let n = min(frames, room)
        if n < frames { dropped.wrappingAdd(frames - n, ordering: .relaxed) }
        if n <= 0 { return }
        var c = 0
        while c < channels {
            // jack_port_get_buffer is realtime-safe (it returns the port's shared buffer).
            let port = ports[c]
            let raw = _unsafePerformance { jack_port_get_buffer(port, jack_nframes_t(frames)) }
            if let raw {
                let input = raw.assumingMemoryBound(to: Float.self)
                var i = 0
                var slot = w % capacity
                while i < n {
                    ring[slot * channels + c] = input[i]
                    i += 1
                    slot += 1
                    if slot == capacity { slot = 0 }
                }
            }
            c += 1
        }
        written.store(w + n, ordering: .releasing)
    }
}

/// Records what a ``JackDevice`` sent, through its own JACK input ports: input `i` is
/// connected to output `i`, the process callback copies the inputs into a preallocated ring,
/// and a writer thread writes them to a 32-bit float WAV file. Start it with
/// ``JackDevice/startCapture(to:)``.
///
/// Thread safety: any control thread.
public final class JackCapture: @unchecked Sendable {
    /// The WAV file being written.
    public let url: URL
    /// Channels recorded.
    public let channels: Int
    public let sampleRate: Int
    let storage: UnsafeMutablePointer<JackCaptureStorage>
    private let file: FileHandle
    private let done = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let framesOnDisk = Atomic<Int>(0)
    private let state = Mutex<(stopped: Bool, detach: (@Sendable () -> Void)?)>((false, nil))

    init(url: URL, ports: [OpaquePointer?], sampleRate: Int, seconds: Double = 4) throws(DeviceError) {
        self.url = url
        self.channels = ports.count
        self.sampleRate = sampleRate
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
              let fh = try? FileHandle(forWritingTo: url)
        else { throw DeviceError("cannot write the capture file \(url.path)") }
        file = fh
        storage = .allocate(capacity: 1)
        storage.initialize(to: JackCaptureStorage(ports: ports, capacity: max(Int(seconds * Double(sampleRate)), 4096)))
        fh.write(Self.header(channels: channels, sampleRate: sampleRate, frames: 0))
        let t = Thread { [self] in writerLoop() }
        t.name = "aqsync-capture"
        t.start()
    }

    deinit {
        _ = stop()
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    func setDetach(_ f: @escaping @Sendable () -> Void) { state.withLock { $0.detach = f } }

    private func writerLoop() {
        let st = storage
        let ch = st.pointee.channels
        var chunk = [Float](repeating: 0, count: 4096 * max(ch, 1))
        while true {
            let last = stopping.load(ordering: .acquiring)
            var w = st.pointee.written.load(ordering: .acquiring)
            var r = st.pointee.read.load(ordering: .relaxed)
            while r < w {
                let n = min(w - r, 4096)
                for i in 0..<n {
                    let slot = (r + i) % st.pointee.capacity
                    for c in 0..<ch { chunk[i * ch + c] = st.pointee.ring[slot * ch + c] }
                }
                chunk.withUnsafeBytes { file.write(Data($0.prefix(n * ch * 4))) }
                r += n
                st.pointee.read.store(r, ordering: .releasing)
                framesOnDisk.store(r, ordering: .relaxed)
                w = st.pointee.written.load(ordering: .acquiring)
            }
            if last { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        done.signal()
    }

    /// Frames written to the file so far.
    public var frames: Int { framesOnDisk.load(ordering: .relaxed) }
    /// Frames lost because the writer fell behind (the ring holds 4 s).
    public var droppedFrames: Int { storage.pointee.dropped.load(ordering: .relaxed) }

    /// Stops recording, writes what is left and completes the WAV header. Returns the frames
    /// written. Idempotent.
    @discardableResult
    public func stop() -> Int {
        let detach: (@Sendable () -> Void)? = state.withLock { s in
            if s.stopped { return nil }
            s.stopped = true
            return s.detach ?? {}
        }
        guard let detach else { return frames }
        detach()  // the process callback no longer records
        stopping.store(true, ordering: .releasing)
        done.wait()
        let total = frames
        try? file.seek(toOffset: 0)
        file.write(Self.header(channels: channels, sampleRate: sampleRate, frames: total))
        try? file.close()
        return total
    }

    /// A WAVE_FORMAT_IEEE_FLOAT header for `frames` frames: `fmt ` with its cbSize (18
    /// bytes) and the `fact` chunk that non-PCM WAVE files carry.
    static func header(channels: Int, sampleRate: Int, frames: Int) -> Data {
        var d = Data()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: v).littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(truncatingIfNeeded: v).littleEndian) { d.append(contentsOf: $0) } }
        let dataBytes = frames * channels * 4
        d.append(contentsOf: Array("RIFF".utf8)); u32(4 + (8 + 18) + (8 + 4) + (8 + dataBytes))
        d.append(contentsOf: Array("WAVE".utf8))
        d.append(contentsOf: Array("fmt ".utf8)); u32(18)
        u16(3); u16(channels); u32(sampleRate); u32(sampleRate * channels * 4); u16(channels * 4); u16(32); u16(0)
        d.append(contentsOf: Array("fact".utf8)); u32(4); u32(frames)
        d.append(contentsOf: Array("data".utf8)); u32(dataBytes)
        return d
    }
}
