import AQCore
import CJACK
import Synchronization

/// The render-side half of a capture: the device's input ports and a ring of interleaved
/// float frames. Filled by the process callback, drained by ``JackCapture/read(into:maxFrames:)``.
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

/// What a ``JackDevice`` sent, taken back through its own JACK input ports: input `i` is
/// connected to output `i` and the process callback copies the inputs into a preallocated
/// ring (4 s) that ``read(into:maxFrames:)`` drains. The device module only keeps the frames;
/// writing them somewhere (aqsync's `--capture` WAV file: `CaptureFileWriter` in AQSession) is
/// the caller's. Start it with ``JackDevice/startCapture()``.
///
/// Thread safety: any control thread; ``read(into:maxFrames:)`` from one thread at a time.
/// Nothing blocks except ``stop()`` (until a cycle has begun without the ring: about one).
public final class JackCapture: @unchecked Sendable {
    /// Channels taken (the device's outputs).
    public let channels: Int
    /// The server's rate when the capture started.
    public let sampleRate: Int
    let storage: UnsafeMutablePointer<JackCaptureStorage>
    private let state = Mutex<(stopped: Bool, detach: (@Sendable () -> Bool)?, kept: Bool)>((false, nil, false))

    /// Rings kept instead of freed, process-wide: their ``stop()`` saw no cycle let go of them
    /// (the server stopped calling back), so freeing them could have pulled memory from under
    /// a cycle. Any thread.
    public static var ringsKept: Int { kept.load(ordering: .relaxed) }
    private static let kept = Atomic<Int>(0)

    init(ports: [OpaquePointer?], sampleRate: Int, seconds: Double = 4) {
        self.channels = ports.count
        self.sampleRate = sampleRate
        storage = .allocate(capacity: 1)
        storage.initialize(to: JackCaptureStorage(ports: ports, capacity: max(Int(seconds * Double(sampleRate)), 4096)))
    }

    deinit {
        stop()
        if state.withLock({ $0.kept }) { return }
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    func setDetach(_ f: @escaping @Sendable () -> Bool) { state.withLock { $0.detach = f } }

    /// Moves up to `maxFrames` frames out of the ring, de-interleaved: `planes[c]` receives
    /// channel `c` (``channels`` planes). Returns the frames moved (0 when none are waiting).
    /// Frames keep arriving until ``stop()``; after it, what is left can still be read.
    /// Never blocks.
    public func read(into planes: UnsafePointer<UnsafeMutablePointer<Float>>, maxFrames: Int) -> Int {
        let st = storage
        let w = st.pointee.written.load(ordering: .acquiring)
        let r = st.pointee.read.load(ordering: .relaxed)
        let n = min(w - r, maxFrames)
        if n <= 0 { return 0 }
        let ch = st.pointee.channels, cap = st.pointee.capacity
        for i in 0..<n {
            let slot = (r + i) % cap
            for c in 0..<ch { planes[c][i] = st.pointee.ring[slot * ch + c] }
        }
        st.pointee.read.store(r + n, ordering: .releasing)
        return n
    }

    /// Frames moved out by ``read(into:maxFrames:)`` so far.
    public var framesRead: Int { storage.pointee.read.load(ordering: .relaxed) }
    /// Frames lost because the reader fell behind (the ring holds 4 s).
    public var droppedFrames: Int { storage.pointee.dropped.load(ordering: .relaxed) }

    /// The process callback stops taking frames; returns once no cycle can still be copying
    /// (a cycle has begun without the ring: about one). If none comes within 2 s the ring is
    /// kept rather than freed (``ringsKept``). Idempotent. Control thread.
    public func stop() {
        let detach: (@Sendable () -> Bool)? = state.withLock { s in
            if s.stopped { return nil }
            s.stopped = true
            return s.detach ?? { true }
        }
        guard let detach else { return }
        if !detach() {
            state.withLock { $0.kept = true }
            Self.kept.wrappingAdd(1, ordering: .relaxed)
        }
    }
}
