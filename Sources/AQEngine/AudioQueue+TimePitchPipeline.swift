import AQConvert
import AQCore
import AQTypes

/// The enqueue pipeline's time/pitch step: on the enqueuing thread under the queue's lock,
/// deinterleaved (or decoded) audio at the queue's rate runs through ``TimePitchStage`` (when
/// enabled and not bypassed), then the rate converter (when the queue's rate is not the
/// device's), into the buffer's render storage, which grows here when the stretched audio
/// needs more room. The render thread only plays what it is handed.
extension AudioQueue {
    /// Whether buffers take the counted path (device frames counted apart from queue frames):
    /// a rate converter, or time/pitch enabled (bypassed or not). Lock held.
    var countsDeviceFrames: Bool { converter != nil || timePitch.enabled }

    /// Before a buffer at queue frame `q` on the counted path: a discontiguous start, or a
    /// change between routed and bypassed, ends the stream (`flush` schedules its tails) and
    /// places the new one where ``QueueTimeMap`` puts `q`; the map takes the play rate in
    /// force from `q`. Lock held.
    func openStream(at q: Int64, flush: () -> Void) {
        if q != queueTime.nextQueueFrame || !queueTime.streamOpen || timePitch.routed != streamRouted {
            if queueTime.streamOpen { flush() }
            converter?.reset()
            timePitch.reset()
            queueTime.nextDeviceFrame = Int64(queueTime.map.deviceFrame(Double(q)).rounded())
            queueTime.streamOpen = true
            streamRouted = timePitch.routed
        }
        queueTime.map.setSlope(ratio / timePitch.effectiveRate, from: Double(q))
    }

    /// Device frames `n` frames at the queue's rate can become in one converter call.
    func deviceRoom(_ n: Int) -> Int {
        converter == nil ? n : RateConverter.maximumOutputFrames(inputFrames: n, inputRate: format.sampleRate, outputRate: hub.device.sampleRate)
    }

    /// `frames` planar frames from `ins` at the queue's rate, through time/pitch when routed,
    /// as arrays (copied when not routed), through a PostEffects tap after time/pitch; they
    /// start at queue frame `q`. Lock held.
    func stretched(_ ins: UnsafePointer<UnsafePointer<Float>>, frames: Int, at q: Int64) -> [[Float]] {
        if timePitch.routed {
            var planes = timePitch.process(ins, channels: channels, frames: frames, sampleRate: format.sampleRate)
            tapAfterEffects(&planes, at: q, queueFrames: frames)
            return planes
        }
        return (0..<channels).map { Array(UnsafeBufferPointer(start: ins[$0], count: frames)) }
    }

    /// Puts `planes` (queue rate) through the rate converter, or copies them, into `output`
    /// (room for ``deviceRoom(_:)`` of their frames); returns the device frames written.
    func place(_ planes: [[Float]], into output: UnsafePointer<UnsafeMutablePointer<Float>>, capacity: Int) -> Int {
        let n = planes.first?.count ?? 0
        guard n > 0 else { return 0 }
        let ins = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
        defer { ins.deallocate() }
        var arrays = planes
        return withPlanePointers(&arrays, into: ins) {
            if let converter { return converter.process(input: ins, frames: n, output: output, capacity: capacity) }
            let m = min(n, capacity)
            for c in 0..<channels { output[c].update(from: ins[c], count: m) }
            return m
        }
    }

    /// `body` with `ins[c]` pointing at `arrays[c]`'s storage.
    private func withPlanePointers(_ arrays: inout [[Float]], into ins: UnsafeMutablePointer<UnsafePointer<Float>>, _ body: () -> Int) -> Int {
        func nest(_ c: Int) -> Int {
            guard c < arrays.count else { return body() }
            return arrays[c].withUnsafeBufferPointer { p in
                ins[c] = p.baseAddress!
                return nest(c + 1)
            }
        }
        return nest(0)
    }

    /// Time/pitch and rate conversion of `frames` frames from `ins` into `buffer`'s render
    /// storage (grown to fit); `ins` start at queue frame `q`. Returns the device frames it now
    /// holds. Lock held.
    func stretch(_ ins: UnsafePointer<UnsafePointer<Float>>, frames: Int, at q: Int64, into buffer: AudioQueueBuffer) -> Int {
        let planes = stretched(ins, frames: frames, at: q)
        buffer.growRender(frames: deviceRoom(planes.first?.count ?? 0))
        return place(planes, into: buffer.renderChannels, capacity: buffer.renderCapacity)
    }

    /// Schedules `planes` (queue rate, after time/pitch) as a tail right after the stream so
    /// far, through the rate converter when there is one. A tail too small is replaced by a
    /// larger one (it is not in flight). Lock held.
    func scheduleStretchedTail(_ planes: [[Float]]) {
        let n = planes.first?.count ?? 0
        guard n > 0 else { return }
        guard let i = tails.firstIndex(where: { !$0.inFlight }) else {
            droppedTailFrames += n
            return
        }
        if tails[i].capacity < deviceRoom(n) { tails[i] = TailChunk(channels: channels, capacity: deviceRoom(n)) }
        let m = place(planes, into: tails[i].channels, capacity: tails[i].capacity)
        guard m > 0 else { return }
        if sendTail(i, frames: m, start: queueTime.nextDeviceFrame) { queueTime.nextDeviceFrame += Int64(m) }
    }

    /// Schedules what SoundTouch still holds (exactly what the stream owes) after the stream
    /// so far. Lock held.
    func flushStretchTail() {
        guard timePitch.isOpen else { return }
        var planes = timePitch.flush(channels: channels)
        tapAfterEffects(&planes, at: queueTime.nextQueueFrame, queueFrames: 0)
        scheduleStretchedTail(planes)
    }

    /// Three tails (decoder, time/pitch, rate converter) for a queue with time/pitch. Lock held.
    func ensureTimePitchTails() {
        let capacity = RateConverter.maximumOutputFrames(inputFrames: 8192, inputRate: format.sampleRate, outputRate: hub.device.sampleRate)
        while tails.count < 3 { tails.append(TailChunk(channels: channels, capacity: capacity)) }
    }
}
