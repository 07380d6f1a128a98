import AQEngine
import Synchronization

/// One track's frames for the transport follower: a single-producer single-consumer ring of
/// interleaved Float32 frames at the device's rate (the feeder writes, the render thread
/// reads), with where each channel goes and the track's gain.
///
/// Thread safety: the feeder thread writes ``written`` and the samples past it; the render
/// thread reads up to it and writes ``read``. While ``TransportRenderState/head`` is
/// ``TransportRenderState/feederOwns`` (and two cycles have passed) the render thread touches
/// nothing here and the feeder may reset both counts.
struct TransportTrackRing {
    /// `capacity × channels` samples.
    let samples: UnsafeMutablePointer<Float>
    /// Frames the ring holds.
    let capacity: Int
    let channels: Int
    /// Pairs (source channel, device output), `routeCount` of them.
    let routes: UnsafeMutablePointer<Int32>
    let routeCount: Int
    /// The track's linear gain (`gain_db`, or ``TransportFollower/setGain(track:decibels:)``),
    /// as the bits of a Float: read once per cycle.
    let gain: UnsafeMutablePointer<Atomic<UInt32>>
    /// Frames read since the last reset (render thread).
    let read: UnsafeMutablePointer<Atomic<Int64>>
    /// Frames written since the last reset (feeder thread).
    let written: UnsafeMutablePointer<Atomic<Int64>>
}

/// Everything the render thread touches when following the transport, allocated once by
/// ``TransportFollower``: no Swift object, no reference count.
///
/// Thread safety: the atomics from any thread; the rings as ``TransportTrackRing`` says.
struct TransportRenderState {
    /// ``head`` while the feeder owns the rings (repositioning).
    static let feederOwns = Int64.min
    /// ``requested`` when nothing is requested.
    static let none = Int64.min

    let tracks: UnsafeMutablePointer<TransportTrackRing>
    let trackCount: Int
    /// Session frame = transport frame − offset.
    let offset: Int64
    /// How far ahead of a rolling transport the follower primes when it was not ready.
    let lead: Int64
    /// Frames behind each ring's read position the feeder leaves alone
    /// (``TransportFollower/keptFrames``): a call that reads a transport frame the follower
    /// has just played (a late client's second call on jackd2) plays them again.
    let kept: Int64
    /// The session frame of the frame at every ring's read position, or ``feederOwns``.
    let head: UnsafeMutablePointer<Atomic<Int64>>
    /// The session frame the render thread wants the rings primed at, or ``none``.
    let requested: UnsafeMutablePointer<Atomic<Int64>>
    /// Counters (render thread writes, anyone reads): process calls, cycles played, cycles
    /// rolling but not ready (silent), sync calls answered "ready" / "not yet".
    let cycles: UnsafeMutablePointer<Atomic<UInt64>>
    let playedCycles: UnsafeMutablePointer<Atomic<UInt64>>
    let missedCycles: UnsafeMutablePointer<Atomic<UInt64>>
    let readyAnswers: UnsafeMutablePointer<Atomic<UInt64>>
    let waitAnswers: UnsafeMutablePointer<Atomic<UInt64>>
    /// Frames the transport moved past while this client was not called (dropped from the
    /// rings so that it plays on where the transport is).
    let skippedFrames: UnsafeMutablePointer<Atomic<UInt64>>
    /// Frames played again because a call read a transport frame already played.
    let repeatedFrames: UnsafeMutablePointer<Atomic<UInt64>>
    /// The transport frame of the latest cycle and whether it rolled (1) or not (0).
    let lastFrame: UnsafeMutablePointer<Atomic<Int64>>
    let lastRolling: UnsafeMutablePointer<Atomic<Int32>>
}

/// The follower's per-cycle function (``TransportCallbacks/Process``). Render thread:
/// realtime-safe. Session frame S = transport frame − offset, read this cycle; what plays is
/// always S's frames. Rolling with every ring primed at S: each track's next `frames` frames
/// are added to its outputs and the head moves on. Rolling ahead of the rings by less than they
/// hold (cycles this client missed): the frames in between are dropped and it plays S. Rolling
/// behind the head by at most ``TransportRenderState/kept`` frames (a call reading a transport
/// frame already played: jackd2 calls a late client twice back to back, both calls reading the
/// position current when they run, docs/transport.md): it plays S again from the frames the
/// rings keep behind their read position, and the head moves on only past what was played
/// before. Otherwise silence (nothing added); where the rings are not at S a priming is
/// requested — at S while the transport is stopped or starting (a locate), at S + lead (rounded
/// up to whole cycles) while it rolls (it rolled without waiting for this follower).
@_noLocks
func transportFollowerProcess(
    _ context: UnsafeMutableRawPointer?, _ rolling: Int32, _ frame: Int64, _ frames: UInt32,
    _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>?, _ channels: Int
) {
    guard let context, let outputs else { return }
    let st = context.assumingMemoryBound(to: TransportRenderState.self)
    let s = frame - st.pointee.offset
    let n = Int(frames)
    st.pointee.lastFrame.pointee.store(frame, ordering: .relaxed)
    st.pointee.lastRolling.pointee.store(rolling, ordering: .relaxed)
    defer { st.pointee.cycles.pointee.wrappingAdd(1, ordering: .releasing) }
    let h = st.pointee.head.pointee.load(ordering: .acquiring)
    let requested = st.pointee.requested.pointee.load(ordering: .relaxed)
    if rolling == 0 {
        if h != s && requested != s { st.pointee.requested.pointee.store(s, ordering: .relaxed) }
        return
    }
    // d: where S lies against the rings' read position. Ahead (d > 0: cycles this client was
    // not called for, an xrun): the frames in between are dropped, and it plays on where the
    // transport is. Behind by what the rings keep (d < 0: a call reading a transport frame
    // already played, jackd2's second call of a late client): those frames play again.
    let owned = h == TransportRenderState.feederOwns
    let d = owned ? 0 : s - h
    var ready = !owned && d >= -st.pointee.kept
    if ready {
        for t in 0..<st.pointee.trackCount {
            let ring = st.pointee.tracks[t]
            let r = ring.read.pointee.load(ordering: .relaxed)
            let avail = ring.written.pointee.load(ordering: .acquiring) - r
            if avail < d + Int64(n) || r + d < 0 { ready = false }
        }
    }
    guard ready else {
        st.pointee.missedCycles.pointee.wrappingAdd(1, ordering: .relaxed)
        // Join a whole number of cycles ahead (the transport moves by whole cycles), unless a
        // priming ahead on this cycle grid is already asked for.
        let step = Int64(n)
        let ahead = (st.pointee.lead + step - 1) / step * step
        let pending = requested != TransportRenderState.none && requested > s && requested <= s + ahead && (requested - s) % step == 0
        if h != s && !pending { st.pointee.requested.pointee.store(s + ahead, ordering: .relaxed) }
        return
    }
    // The head (and each read position) moves to the end of what plays, never back: frames
    // played again leave it where it was.
    let newHead = max(h, s + Int64(n))
    for t in 0..<st.pointee.trackCount {
        let ring = st.pointee.tracks[t]
        let read = ring.read.pointee.load(ordering: .relaxed)
        let r = read + d
        let ch = ring.channels
        let gain = Float(bitPattern: ring.gain.pointee.load(ordering: .relaxed))
        for k in 0..<ring.routeCount {
            let src = Int(ring.routes[2 * k])
            let out = Int(ring.routes[2 * k + 1])
            guard out < channels else { continue }
            let dst = outputs[out]
            var i = 0
            var slot = Int(r % Int64(ring.capacity))
            while i < n {
                let run = min(n - i, ring.capacity - slot)
                let base = ring.samples + slot * ch + src
                for j in 0..<run { dst[i + j] += base[j * ch] * gain }
                i += run
                slot = 0
            }
        }
        ring.read.pointee.store(read + (newHead - h), ordering: .releasing)
    }
    _ = st.pointee.head.pointee.compareExchange(expected: h, desired: newHead, ordering: .acquiringAndReleasing)
    st.pointee.playedCycles.pointee.wrappingAdd(1, ordering: .relaxed)
    if d > 0 { st.pointee.skippedFrames.pointee.wrappingAdd(UInt64(d), ordering: .relaxed) }
    if d < 0 { st.pointee.repeatedFrames.pointee.wrappingAdd(UInt64(min(-d, Int64(n))), ordering: .relaxed) }
}

/// The follower's readiness (``TransportCallbacks/Sync``): ready when every ring is primed at
/// session frame `frame` − offset; otherwise that priming is requested and the answer is "not
/// yet". Render (process) thread: realtime-safe.
@_noLocks
func transportFollowerSync(_ context: UnsafeMutableRawPointer?, _ frame: Int64) -> Int32 {
    guard let context else { return 1 }
    let st = context.assumingMemoryBound(to: TransportRenderState.self)
    let s = frame - st.pointee.offset
    if st.pointee.head.pointee.load(ordering: .acquiring) == s {
        st.pointee.readyAnswers.pointee.wrappingAdd(1, ordering: .relaxed)
        return 1
    }
    if st.pointee.requested.pointee.load(ordering: .relaxed) != s { st.pointee.requested.pointee.store(s, ordering: .relaxed) }
    st.pointee.waitAnswers.pointee.wrappingAdd(1, ordering: .relaxed)
    return 0
}
