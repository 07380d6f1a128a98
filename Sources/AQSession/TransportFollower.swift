import AQCore
import AQEngine
import Foundation
import Synchronization

/// Plays a ``Session`` by following a transport (JACK's): session frame = transport frame −
/// `offset`, read every cycle from the transport (``TransportCallbacks``: the device reads it,
/// this follower keeps no count of its own), silent while the transport is stopped, and ready
/// to roll (slow-sync) only once every track is primed at the transport's new frame, so the
/// first rolling cycle after a start or a locate is already exact.
///
/// How: one ring per track (``TransportTrackRing``, Float32 at the device's rate, fades
/// applied: the same ``TrackSource`` chain as ``SessionPlayer``), filled by the follower's
/// feeder thread from the session frame the rings are primed at (``primedFrame``). The render
/// thread (``transportFollowerProcess``) plays the rings when the transport rolls at exactly
/// that frame, and otherwise asks for a priming at the frame it needs; the feeder takes the
/// rings over (the render thread stays off them for two cycles), positions every track on its
/// exact frame (PCM seeks, compressed files parsed and decoded from a pre-roll, as `--from`),
/// fills the rings and hands them back. Loops (``Session/loop``) are not applied: the
/// transport says which frame plays.
///
/// Threads: the public members from any control thread (not the render thread); ``callbacks``'
/// functions run on the device's render thread. Memory is fixed: ``ringFrames`` per track plus
/// the track's source.
package final class TransportFollower: @unchecked Sendable {
    /// What the render thread has counted so far.
    ///
    /// Thread safety: a plain value; any thread.
    package struct Counters: Sendable, Equatable {
        /// Cycles seen.
        package var cycles: UInt64
        /// Cycles played (the transport rolled and every track was primed at its frame).
        package var playedCycles: UInt64
        /// Cycles the transport rolled at a frame the tracks were not primed at (silent).
        package var missedCycles: UInt64
        /// Sync calls answered "ready" and "not yet".
        package var readyAnswers: UInt64
        package var waitAnswers: UInt64
        /// Frames the transport moved past while the follower was not called (an xrun):
        /// dropped, so that it plays on where the transport is.
        package var skippedFrames: UInt64
        /// Frames played again: calls that read a transport frame already played (jackd2's
        /// second call of a late client reads the position the first already read).
        package var repeatedFrames: UInt64
        /// Primings done by the feeder (the first, and one per locate).
        package var primings: Int
    }

    /// The session followed.
    package let session: Session
    /// Session frame = transport frame − offset.
    package let offset: Int64
    /// Frames each track's ring holds.
    package let ringFrames: Int
    /// The device's rate.
    package let deviceRate: Double
    /// Frames behind each ring's read position that the feeder does not overwrite, so that a
    /// call reading a transport frame already played (jackd2 calls a late client twice back to
    /// back, both calls reading the position current when they run) can play it again: the
    /// largest period JACK runs.
    package static let keptFrames: Int64 = 8192

    private let state: UnsafeMutablePointer<TransportRenderState>
    private let specs: [SessionTrack]
    private let end: Int64
    private let chunk: Int
    private let scratch: UnsafeMutablePointer<Float>
    private let cond = NSCondition()
    // Guarded by `cond`:
    private var quit = false
    private var primed: Int64?
    private var primings = 0
    private var failure: String?
    // Feeder thread only:
    private var feeds: [TrackFeed?] = []
    private var silence: [Int64] = []
    private let feederDone = DispatchSemaphore(value: 0)

    /// Makes the rings and starts the feeder thread. Nothing plays until a device calls
    /// ``callbacks`` and the transport rolls.
    ///
    /// - Parameters:
    ///   - outputs: the device's output channels (a track's `outputs` past them are dropped).
    ///   - offset: session frame 0 is transport frame `offset` (`--transport-offset`).
    ///   - lead: device frames ahead of a transport that rolls without waiting (it did not ask
    ///     this follower, or the feeder fell behind) at which the follower primes and joins.
    ///   - feederPriority: the SCHED_FIFO priority the feeder thread takes
    ///     (``AudioQueueEngine/feederPriority``; nil: an ordinary thread). Where the system
    ///     refuses, it stays ordinary.
    /// - Throws: ``SessionError`` `.invalidValue` for a bad ring size.
    package init(
        session: Session, deviceRate: Double, outputs: Int, offset: Int64 = 0, ringFrames: Int = 65536, lead: Int64? = nil,
        feederPriority: Int32? = nil
    ) throws(SessionError) {
        guard ringFrames >= 16384 else { throw SessionError(.invalidValue, file: session.url.path, "the transport follower's rings hold at least 16384 frames") }
        self.session = session
        self.offset = offset
        self.ringFrames = ringFrames
        self.deviceRate = deviceRate
        specs = session.tracks
        end = session.deviceLength(deviceRate: deviceRate)
        chunk = 4096
        let maxChannels = specs.map { Int($0.audio.format.channelsPerFrame) }.max() ?? 1
        scratch = .allocate(capacity: chunk * maxChannels)
        let tracks = UnsafeMutablePointer<TransportTrackRing>.allocate(capacity: max(1, specs.count))
        for (i, t) in specs.enumerated() {
            let ch = Int(t.audio.format.channelsPerFrame)
            var routes: [Int32] = []
            for c in 0..<ch {
                if let o = t.outputs {
                    if o[c] - 1 < outputs { routes += [Int32(c), Int32(o[c] - 1)] }
                } else if ch == 1 {
                    for out in 0..<outputs { routes += [0, Int32(out)] }
                } else if c < outputs {
                    routes += [Int32(c), Int32(c)]
                }
            }
            let r = UnsafeMutablePointer<Int32>.allocate(capacity: max(1, routes.count))
            r.initialize(from: routes, count: routes.count)
            let samples = UnsafeMutablePointer<Float>.allocate(capacity: ringFrames * ch)
            samples.initialize(repeating: 0, count: ringFrames * ch)
            (tracks + i).initialize(to: TransportTrackRing(
                samples: samples, capacity: ringFrames, channels: ch, routes: r, routeCount: routes.count / 2,
                gain: Self.atomic(t.linearGain.bitPattern), read: Self.atomic(Int64(0)), written: Self.atomic(Int64(0))))
        }
        state = .allocate(capacity: 1)
        state.initialize(to: TransportRenderState(
            tracks: tracks, trackCount: specs.count, offset: offset, lead: lead ?? Int64(deviceRate / 2), kept: Self.keptFrames,
            head: Self.atomic(TransportRenderState.feederOwns), requested: Self.atomic(TransportRenderState.none),
            cycles: Self.atomic(UInt64(0)), playedCycles: Self.atomic(UInt64(0)), missedCycles: Self.atomic(UInt64(0)),
            readyAnswers: Self.atomic(UInt64(0)), waitAnswers: Self.atomic(UInt64(0)), skippedFrames: Self.atomic(UInt64(0)),
            repeatedFrames: Self.atomic(UInt64(0)),
            lastFrame: Self.atomic(Int64(0)), lastRolling: Self.atomic(Int32(0))))
        feeds = Array(repeating: nil, count: specs.count)
        silence = Array(repeating: 0, count: specs.count)
        let thread = Thread { [self] in
            setCurrentThreadName("aqsync-transport-feeder")
            if let feederPriority { ServicePriority.makeCurrentThreadRealtime(priority: feederPriority) }
            feederLoop()
        }
        thread.start()
    }

    private static func atomic<T: AtomicRepresentable>(_ v: T) -> UnsafeMutablePointer<Atomic<T>> {
        let p = UnsafeMutablePointer<Atomic<T>>.allocate(capacity: 1)
        p.initialize(to: Atomic(v))
        return p
    }

    deinit {
        close()
        let st = state.pointee
        for i in 0..<st.trackCount {
            let r = st.tracks[i]
            r.samples.deallocate()
            r.routes.deallocate()
            r.gain.deinitialize(count: 1)
            r.gain.deallocate()
            r.read.deinitialize(count: 1)
            r.read.deallocate()
            r.written.deinitialize(count: 1)
            r.written.deallocate()
        }
        st.tracks.deallocate()
        for p in [st.head, st.requested, st.lastFrame] { p.deinitialize(count: 1); p.deallocate() }
        for p in [st.cycles, st.playedCycles, st.missedCycles, st.readyAnswers, st.waitAnswers, st.skippedFrames, st.repeatedFrames] { p.deinitialize(count: 1); p.deallocate() }
        st.lastRolling.deinitialize(count: 1)
        st.lastRolling.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
        scratch.deallocate()
    }

    /// The functions a device calls on its render thread (``JackDevice/setTransportFollower(_:)``
    /// in AQJack). Valid until this follower is released: remove them from the device (stop
    /// it) first.
    package var callbacks: TransportCallbacks {
        TransportCallbacks(context: UnsafeMutableRawPointer(state), process: transportFollowerProcess, sync: transportFollowerSync)
    }

    /// Stops the feeder thread (nothing is primed any more). Blocks until it has stopped. The
    /// device must not call ``callbacks`` after the follower is released.
    package func close() {
        cond.lock()
        let was = quit
        quit = true
        cond.broadcast()
        cond.unlock()
        if !was { feederDone.wait() }
    }

    /// The session frame every track is primed at now (the next frame a rolling transport
    /// plays, when it rolls there), or nil while the feeder is repositioning.
    package var primedFrame: Int64? {
        let h = state.pointee.head.pointee.load(ordering: .acquiring)
        return h == TransportRenderState.feederOwns ? nil : h
    }

    /// The session frame the latest priming was done at (it stays so while the rings play on
    /// from there), or nil while the feeder is repositioning.
    package var lastPriming: Int64? {
        cond.lock()
        defer { cond.unlock() }
        return primed
    }

    /// The transport frame of the latest cycle and whether the transport rolled then.
    package var lastTransport: (frame: Int64, rolling: Bool) {
        (state.pointee.lastFrame.pointee.load(ordering: .relaxed), state.pointee.lastRolling.pointee.load(ordering: .relaxed) != 0)
    }

    /// What the render thread counted, and the primings done.
    package var counters: Counters {
        let st = state.pointee
        cond.lock()
        let p = primings
        cond.unlock()
        return Counters(
            cycles: st.cycles.pointee.load(ordering: .relaxed), playedCycles: st.playedCycles.pointee.load(ordering: .relaxed),
            missedCycles: st.missedCycles.pointee.load(ordering: .relaxed), readyAnswers: st.readyAnswers.pointee.load(ordering: .relaxed),
            waitAnswers: st.waitAnswers.pointee.load(ordering: .relaxed), skippedFrames: st.skippedFrames.pointee.load(ordering: .relaxed),
            repeatedFrames: st.repeatedFrames.pointee.load(ordering: .relaxed), primings: p)
    }

    /// Why the feeder stopped (a file that could no longer be read), or nil.
    package var error: String? {
        cond.lock()
        defer { cond.unlock() }
        return failure
    }

    /// Sets track `track`'s gain (0-based, session order) to `decibels` (at most +24): the
    /// render thread reads it at the start of each cycle, so it applies from the first cycle
    /// that starts after this returns, without a ramp. Returns false for a track or a value
    /// out of range. Any control thread; does not block.
    @discardableResult
    package func setGain(track: Int, decibels: Double) -> Bool {
        guard track >= 0 && track < specs.count, decibels.isFinite, decibels <= 24 else { return false }
        state.pointee.tracks[track].gain.pointee.store(Float(pow(10, decibels / 20)).bitPattern, ordering: .relaxed)
        return true
    }

    /// Asks for the rings to be primed at session frame `frame` (as a locate would), from a
    /// control thread. Returns at once; ``waitUntilPrimed(at:timeout:)`` waits for it.
    package func prime(at frame: Int64) {
        state.pointee.requested.pointee.store(frame, ordering: .relaxed)
    }

    /// Blocks until every track is primed at session frame `frame` (or `timeout` seconds
    /// passed, or the feeder failed). Returns whether it is. Control thread.
    @discardableResult
    package func waitUntilPrimed(at frame: Int64, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        cond.lock()
        defer { cond.unlock() }
        while primed != frame && failure == nil && !quit {
            if !cond.wait(until: deadline) { break }
        }
        return primed == frame && state.pointee.head.pointee.load(ordering: .acquiring) == frame
    }

    /// Blocks until the feeder has filled every ring as far as it fills them (or `timeout`
    /// seconds passed, or the feeder failed): for a caller driving the render functions by hand
    /// that wants the frames it consumed topped up. Returns whether they are. Control thread.
    @discardableResult
    package func waitUntilFilled(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        cond.lock()
        defer { cond.unlock() }
        while !ringsFull() && failure == nil && !quit {
            if !cond.wait(until: deadline) { break }
        }
        return ringsFull()
    }

    /// Whether every ring is primed and holds all the frames the feeder puts in it. Any thread.
    private func ringsFull() -> Bool {
        let st = state.pointee
        guard st.head.pointee.load(ordering: .acquiring) != TransportRenderState.feederOwns else { return false }
        for i in 0..<st.trackCount {
            let ring = st.tracks[i]
            let held = ring.written.pointee.load(ordering: .acquiring) - ring.read.pointee.load(ordering: .acquiring)
            if Int64(ring.capacity) - Self.keptFrames - held >= Int64(chunk) { return false }
        }
        return true
    }

    // MARK: - Feeder thread

    private func feederLoop() {
        defer { feederDone.signal() }
        var current: Int64?
        var wasFull = false
        while true {
            cond.lock()
            if quit { cond.unlock(); return }
            let failed = failure != nil
            cond.unlock()
            let want = state.pointee.requested.pointee.load(ordering: .relaxed)
            if !failed && want != TransportRenderState.none && want != current {
                current = want
                do throws(SessionError) {
                    try reposition(to: want)
                } catch {
                    cond.lock()
                    failure = error.description
                    cond.broadcast()
                    cond.unlock()
                }
            } else if !failed && current != nil {
                do throws(SessionError) { try topUp(all: false) } catch {
                    cond.lock()
                    failure = error.description
                    cond.unlock()
                }
            }
            // waitUntilFilled: told when the rings become full.
            let full = ringsFull()
            if full && !wasFull {
                cond.lock()
                cond.broadcast()
                cond.unlock()
            }
            wasFull = full
            // Nothing to wait on but the render thread's consumption: a short nap between
            // top-ups (a ring holds far more than one nap's frames).
            usleep(1000)
        }
    }

    /// Takes the rings from the render thread, positions every track at session frame
    /// `frame` (negative: silence until the session starts), fills the rings, hands them back.
    private func reposition(to frame: Int64) throws(SessionError) {
        let st = state.pointee
        cond.lock()
        primed = nil
        cond.unlock()
        st.head.pointee.store(TransportRenderState.feederOwns, ordering: .releasing)
        // The render thread may be inside a cycle that saw the old head: after two more
        // cycles it is off the rings (or it is not running at all: no cycle in 200 ms).
        let c0 = st.cycles.pointee.load(ordering: .acquiring)
        let deadline = Date().addingTimeInterval(0.2)
        while st.cycles.pointee.load(ordering: .acquiring) < c0 + 2 && Date() < deadline { usleep(500) }
        let position = max(0, frame)
        let timeline = PlayTimeline(position: min(position, end), end: end, loop: nil, count: nil)
        for (i, spec) in specs.enumerated() {
            st.tracks[i].read.pointee.store(0, ordering: .relaxed)
            st.tracks[i].written.pointee.store(0, ordering: .relaxed)
            silence[i] = max(0, -frame)
            feeds[i] = nil
            if position < end {
                feeds[i] = try SessionPlayer.makeFeed(
                    for: spec, in: session, deviceRate: deviceRate, timeline: timeline, bufferFrames: 8192)
            }
            if let f = feeds[i] { silence[i] += f.startOffset }
        }
        try topUp(all: true)
        st.head.pointee.store(frame, ordering: .releasing)
        cond.lock()
        primed = frame
        primings += 1
        cond.broadcast()
        cond.unlock()
    }

    /// Fills every ring: to the brim (`all`) or by whole chunks while there is room.
    private func topUp(all: Bool) throws(SessionError) {
        let st = state.pointee
        for i in 0..<st.trackCount {
            let ring = st.tracks[i]
            while true {
                let w = ring.written.pointee.load(ordering: .relaxed)
                // The frames just behind the read position stay (keptFrames): the render
                // thread may play them again.
                let free = Int64(ring.capacity) - Self.keptFrames - (w - ring.read.pointee.load(ordering: .acquiring))
                if free < Int64(chunk) { break }
                let n = try produce(track: i, channels: ring.channels, frames: chunk)
                var slot = Int(w % Int64(ring.capacity))
                var done = 0
                while done < n {
                    let run = min(n - done, ring.capacity - slot)
                    (ring.samples + slot * ring.channels).update(from: scratch + done * ring.channels, count: run * ring.channels)
                    done += run
                    slot = 0
                }
                ring.written.pointee.store(w + Int64(n), ordering: .releasing)
                if !all { break }
            }
        }
    }

    /// The track's next `frames` frames into the scratch: leading silence, then its feed,
    /// then silence after its end.
    private func produce(track i: Int, channels: Int, frames: Int) throws(SessionError) -> Int {
        var done = 0
        let quiet = Int(min(Int64(frames), silence[i]))
        if quiet > 0 {
            scratch.update(repeating: 0, count: quiet * channels)
            silence[i] -= Int64(quiet)
            done = quiet
        }
        if done < frames, let f = feeds[i], !f.isAtEnd {
            done += try f.read(into: scratch + done * channels, maxFrames: frames - done)
        }
        if done < frames { (scratch + done * channels).update(repeating: 0, count: (frames - done) * channels) }
        return frames
    }
}
