import AQCore
import AQEngine
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Feeding (issue 25)
//
// Feeders read and decode each track's next buffer as the engine hands the previous one back.
// There is one per core (never more than the tracks), so decoding many compressed tracks uses
// the whole machine, and each runs SCHED_FIFO below the render thread and the events thread
// when the device renders on a realtime thread (``AudioQueueEngine/feederPriority``), so a
// busy machine cannot starve the feed. One track is fed by one feeder at a time, in the order
// its buffers came back (its queue times follow each other). A seek, a pause or a stop waits
// for the buffers being fed and keeps the feeders out until it is done (``beginExclusive()``).
extension SessionPlayer {
    /// Output callback (events thread): hand the buffer to the feeders, nothing else.
    func returned(track: Int, buffer: AudioQueueBuffer) {
        cond.lock()
        if !stopping && !seeking && !tracks[track].fed {
            work.append((track, buffer))
            cond.broadcast()
        }
        cond.unlock()
    }

    /// Starts the feeder threads: one per active core (or ``Options/feederThreads``), at most
    /// `tracks`, at least one. Init thread, once.
    func startFeeders(tracks count: Int) {
        let n = max(1, min(options.feederThreads ?? ProcessInfo.processInfo.activeProcessorCount, count))
        let priority = engine.feederPriority
        cond.lock()
        feederCount = n
        feederPriority = (priority, 0)
        cond.unlock()
        for k in 0..<n {
            let thread = Thread { [self] in
                // Foundation's `Thread.name` does not reach the system's thread name here.
                setCurrentThreadName("aqsync-feeder-\(k)")
                if let priority, ServicePriority.makeCurrentThreadRealtime(priority: priority) {
                    cond.lock()
                    feederPriority.granted += 1
                    cond.unlock()
                }
                feederLoop()
            }
            thread.start()
        }
    }

    /// The feeder threads: how many, the SCHED_FIFO priority they asked for (nil: ordinary
    /// threads, the render thread not being realtime) and how many got it (the others run as
    /// ordinary threads: the system refused). Any control thread; a short lock.
    package var feeders: (threads: Int, priority: Int32?, realtime: Int) {
        cond.lock()
        defer { cond.unlock() }
        return (feederCount, feederPriority.asked, feederPriority.granted)
    }

    /// Waits until no buffer is being fed and keeps the feeders out until
    /// ``endExclusive()``; exclusive sections (seeks, pauses, stops from several threads) run
    /// one after another. Control thread; blocks while one buffer per feeder is read.
    func beginExclusive() {
        cond.lock()
        while exclusive { cond.wait() }
        exclusive = true
        while feedsInFlight > 0 { cond.wait() }
        cond.unlock()
    }

    /// Ends ``beginExclusive()``'s section: the feeders go on.
    func endExclusive() {
        cond.lock()
        exclusive = false
        cond.broadcast()
        cond.unlock()
    }

    /// One feeder thread: takes the oldest returned buffer whose track no other feeder is
    /// feeding, and feeds it.
    private func feederLoop() {
        cond.lock()
        while true {
            var pick: Int?
            if !exclusive {
                pick = work.firstIndex { !tracks[$0.0].feeding }
            }
            guard let k = pick else {
                if quit { break }
                cond.wait()
                continue
            }
            if quit { break }
            let (i, b) = work.remove(at: k)
            let t = tracks[i]
            t.feeding = true
            feedsInFlight += 1
            cond.unlock()
            feed(t, b)
            cond.lock()
            t.feeding = false
            feedsInFlight -= 1
            cond.broadcast()
        }
        cond.unlock()
        feedersDone.signal()
    }

    /// Slots over which the tracks' first buffers are staggered (``firstBufferFrames(track:bufferFrames:)``).
    package static let staggerSlots = 64

    /// The frames of track `index`'s first buffer (after the start and after every seek):
    /// `bufferFrames` less `index mod 64` sixty-fourths of it, so that the tracks' buffers end on
    /// different cycles. With every track starting together and every buffer of one size, every
    /// queue would change buffers on the same cycle, and that cycle would carry every queue's
    /// completion and every refill: at 576 WAV tracks and a period of 64 frames a cycle of
    /// 440–600 µs every 8192 frames against a median of 44 µs (docs/benchmarking.md, "Buffer
    /// boundaries staggered"). Each buffer still carries its queue time, so where a frame plays
    /// does not depend on it. Pure.
    package static func firstBufferFrames(track index: Int, bufferFrames: Int) -> Int {
        let step = bufferFrames / staggerSlots
        guard step > 0 else { return bufferFrames }
        return bufferFrames - (index % staggerSlots) * step
    }

    /// Reads the next frames of `t` into `b` and enqueues it; after the last, flushes and
    /// stops the queue once drained. Init thread or a feeder thread; never two threads for one track at once.
    func feed(_ t: Track, _ b: AudioQueueBuffer) {
        cond.lock()
        let skip = stopping || t.fed || t.error != nil
        let gain = t.gain
        cond.unlock()
        if skip { return }
        var failure: String?
        var end = false
        do {
            let source = t.source!
            let frames = t.first ? Self.firstBufferFrames(track: t.index, bufferFrames: options.bufferFrames) : options.bufferFrames
            let n = try source.read(into: b.audioData.assumingMemoryBound(to: Float.self), maxFrames: frames)
            b.audioDataByteSize = n * source.channels * 4
            if n > 0 {
                do {
                    // Every buffer at its own queue time, right after the one before: a buffer that
                    // reaches the queue after its time has passed (the feeder starved under load)
                    // has its late frames skipped and counted, and the track keeps its place. A
                    // buffer with no start time would play whole, as soon as possible, moving the
                    // rest of the track later by the gap without a word (measured in the soak:
                    // tracks drifting apart by periods, 0 late frames reported; issue 21).
                    let at = AudioTimeStamp(sampleTime: Double(t.queuedFrames))
                    if t.first {
                        t.first = false
                        try t.queue.enqueue(
                            b, parameterEvents: [AudioQueueParameterEvent(.volume, gain)], startTime: at)
                    } else {
                        try t.queue.enqueue(b, startTime: at)
                    }
                    t.queuedFrames += Int64(n)
                } catch {
                    failure = "enqueue refused: \(error.message)"
                }
            }
            end = source.isAtEnd || n == 0
        } catch {
            failure = error.description
        }
        if failure == nil && end {
            do {
                try t.queue.flush()
                try t.queue.stop(immediately: false)
            } catch {
                failure = "cannot finish: \(error.message)"
            }
        }
        let enqueued = t.queue.enqueuedDeviceFrames
        let damaged = t.source?.corruptPackets ?? 0
        cond.lock()
        t.damagedPackets = damaged
        t.enqueuedEnd = max(t.enqueuedEnd, enqueued)
        if let failure, !stopping {
            t.error = failure
            t.fed = true
        }
        if end { t.fed = true }
        cond.broadcast()
        cond.unlock()
    }
}
