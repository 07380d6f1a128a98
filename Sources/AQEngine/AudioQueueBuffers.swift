import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// Buffers and the two enqueue pipelines (linear PCM: deinterleave, rate-convert; compressed:
/// decode, trim, rate-convert), both on the calling thread under the queue's lock, and the
/// converter tails handed to the render thread when a stream ends.
extension AudioQueue {
    // MARK: - Buffers

    /// Allocates a buffer of `capacity` bytes (`AudioQueueAllocateBuffer`), with room for
    /// `packetDescriptions` packet descriptions (`AudioQueueAllocateBufferWithPacketDescriptions`).
    /// Its render-side storage is allocated here too, so enqueueing never allocates on the
    /// render side: for PCM, `capacity` bytes of frames; for compressed queues,
    /// `packetDescriptions` × the format's most frames per packet (at least the whole packets
    /// `capacity` holds, for a format of constant-size packets such as Apple IMA4) (× the rate
    /// ratio when the queue's rate differs from the device's).
    ///
    /// Any thread but the render thread.
    /// - Throws: `.invalidParameter` for a capacity out of range, or a compressed queue's
    ///   buffer without packet descriptions (compressed buffers carry them, but for formats of
    ///   constant-size packets, Apple IMA4, whose buffers need none);
    ///   `.disposalPending`.
    public func allocateBuffer(capacity: Int, packetDescriptions: Int = 0) throws(AudioQueueError) -> AudioQueueBuffer {
        guard capacity > 0, capacity <= 1 << 30 else {
            throw AudioQueueError(.invalidParameter, "buffer capacity \(capacity) bytes is out of range (1 byte to 1 GiB)")
        }
        guard packetDescriptions >= 0, packetDescriptions <= 1 << 20 else {
            throw AudioQueueError(.invalidParameter, "\(packetDescriptions) packet descriptions is out of range (0 to 2^20)")
        }
        if isCompressed && packetDescriptions == 0 && constantPacketBytes == 0 {
            throw AudioQueueError(.invalidParameter, "a \(format.formatID) queue's buffers need packet descriptions (allocateBuffer(capacity:packetDescriptions:))")
        }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        let frames: Int
        if isCompressed {
            frames = max(packetDescriptions, constantPacketBytes > 0 ? capacity / constantPacketBytes : 0) * maximumFramesPerPacket
            _ = codec.scratch(channels: channels, frames: frames)
        } else {
            frames = capacity / max(bytesPerFrame, 1)
        }
        let renderFrames = converter == nil ? frames
            : RateConverter.maximumOutputFrames(inputFrames: frames, inputRate: format.sampleRate, outputRate: hub.device.sampleRate)
        return ledger.add { token in
            AudioQueueBuffer(
                queue: self, token: token, capacity: capacity, packetDescriptions: packetDescriptions, channels: channels,
                renderCapacity: max(renderFrames, 1))
        }
    }

    /// Grows the packet-description room of `buffer` to at least `count` (contents not kept), for
    /// callers that hand a compressed buffer more descriptions than it was allocated with (the
    /// C API's `AudioQueueAllocateBuffer` buffers, whose room is hidden). The decode room grows
    /// with it when the buffer is enqueued. Any thread but the render thread; does not block.
    /// - Throws: `.invalidBuffer` (another queue's), `.bufferEnqueuedTwice` (enqueued: its
    ///   descriptions are in use), `.invalidParameter` over 2^20, `.invalidQueue`.
    public func growPacketDescriptions(_ buffer: AudioQueueBuffer, to count: Int) throws(AudioQueueError) {
        guard count <= 1 << 20 else { throw AudioQueueError(.invalidParameter, "\(count) packet descriptions is over 2^20") }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        guard buffer.queue === self, ledger.owns(buffer) else {
            throw AudioQueueError(.invalidBuffer, "the buffer does not belong to this queue")
        }
        if buffer.isEnqueued { throw AudioQueueError(.bufferEnqueuedTwice, "the buffer is enqueued") }
        buffer.growDescriptions(to: count)
    }

    /// Frees a buffer (`AudioQueueFreeBuffer`). Refused while it is enqueued. Any thread but
    /// the render thread; does not block.
    public func freeBuffer(_ buffer: AudioQueueBuffer) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        if disposed { throw AudioQueueError(.invalidQueue, "the queue was disposed of (its buffers with it)") }
        guard buffer.queue === self, ledger.owns(buffer) else {
            throw AudioQueueError(.invalidBuffer, "the buffer does not belong to this queue")
        }
        if buffer.isEnqueued { throw AudioQueueError(.bufferInQueue, "the buffer is enqueued; it can be freed once it comes back") }
        ledger.remove(buffer)
    }

    /// Enqueues a buffer to play right after the previous one (`AudioQueueEnqueueBuffer`).
    @discardableResult
    public func enqueue(_ buffer: AudioQueueBuffer) throws(AudioQueueError) -> AudioTimeStamp {
        try enqueue(buffer, trimFramesAtStart: 0, trimFramesAtEnd: 0, parameterEvents: [], startTime: nil)
    }

    /// Enqueues a buffer with parameters (`AudioQueueEnqueueBufferWithParameters`).
    ///
    /// - Parameters:
    ///   - trimFramesAtStart: frames at the buffer's start not played.
    ///   - trimFramesAtEnd: frames at its end not played.
    ///   - parameterEvents: values that take effect on the buffer's first played frame, exactly:
    ///     Volume, and PlayRate and Pitch (which stay in force for the buffers after it; with
    ///     time/pitch enabled they act from this buffer's first frame). Refused events change
    ///     nothing.
    ///   - startTime: when its first played frame plays, in queue frames (the sample time; a
    ///     time stamp without one is refused); nil for right after the previous buffer. Start
    ///     times must not go back: a time before the end of the previous buffer is refused
    ///     with `.invalidParameter`.
    /// - Returns: the queue time at which the buffer's first played frame will play.
    /// - Throws: `.invalidBuffer` (another queue's), `.bufferEnqueuedTwice` (already enqueued),
    ///   `.enqueueDuringReset` (from the callbacks of an immediate stop or a reset), `.bufferEmpty`,
    ///   `.invalidParameter`, `.disposalPending`, `.capacityExceeded`.
    @discardableResult
    public func enqueue(
        _ buffer: AudioQueueBuffer, trimFramesAtStart: Int = 0, trimFramesAtEnd: Int = 0,
        parameterEvents: [AudioQueueParameterEvent] = [], startTime: AudioTimeStamp? = nil
    ) throws(AudioQueueError) -> AudioTimeStamp {
        lock.lock()
        defer { lock.unlock() }
        let at = try enqueueLocked(
            buffer, trimFramesAtStart: trimFramesAtStart, trimFramesAtEnd: trimFramesAtEnd,
            parameterEvents: parameterEvents, startTime: startTime)
        logPrestart(PrestartLog.Record(
            buffer: buffer, trimFramesAtStart: trimFramesAtStart, trimFramesAtEnd: trimFramesAtEnd,
            parameterEvents: parameterEvents, startTime: startTime))
        return at
    }

    /// ``enqueue(_:trimFramesAtStart:trimFramesAtEnd:parameterEvents:startTime:)`` with the
    /// lock held.
    func enqueueLocked(
        _ buffer: AudioQueueBuffer, trimFramesAtStart: Int, trimFramesAtEnd: Int,
        parameterEvents: [AudioQueueParameterEvent], startTime: AudioTimeStamp?
    ) throws(AudioQueueError) -> AudioTimeStamp {
        try checkLive()
        try hub.checkUsableLocking()
        guard buffer.queue === self, ledger.owns(buffer) else {
            throw AudioQueueError(.invalidBuffer, "the buffer does not belong to this queue")
        }
        if buffer.isEnqueued { throw AudioQueueError(.bufferEnqueuedTwice, "the buffer is already enqueued (it has not come back through the callback)") }
        if handingBack {
            throw AudioQueueError(.enqueueDuringReset, "an immediate stop or a reset is handing the queue's buffers back: enqueue after it returns")
        }
        guard buffer.audioDataByteSize > 0 else { throw AudioQueueError(.bufferEmpty, "the buffer holds no audio (audioDataByteSize is 0)") }
        guard buffer.audioDataByteSize <= buffer.audioDataBytesCapacity else {
            throw AudioQueueError(.invalidBuffer, "audioDataByteSize \(buffer.audioDataByteSize) exceeds the capacity \(buffer.audioDataBytesCapacity)")
        }
        guard trimFramesAtStart >= 0, trimFramesAtEnd >= 0 else {
            throw AudioQueueError(.invalidParameter, "trim frames must not be negative")
        }
        if isCompressed {
            return try enqueueCompressed(
                buffer, trimFramesAtStart: trimFramesAtStart, trimFramesAtEnd: trimFramesAtEnd,
                parameterEvents: parameterEvents, startTime: startTime)
        }
        guard let deinterleaver else { throw AudioQueueError(.unsupportedDataFormat, "no converter for \(format.formatID)") }
        let frames = buffer.audioDataByteSize / bytesPerFrame
        let played = frames - trimFramesAtStart - trimFramesAtEnd
        guard played > 0 else {
            throw AudioQueueError(.bufferEmpty, "trims of \(trimFramesAtStart)+\(trimFramesAtEnd) frames leave nothing of \(frames) frames")
        }
        let q = try startQueueFrame(startTime)
        try checkRoomToEnqueue()
        // Last of the checks: it applies PlayRate and Pitch events, so nothing after it throws
        // before the buffer is scheduled (the ring's room was checked).
        let volume = try volumeEvent(parameterEvents)
        let source = UnsafeRawPointer(buffer.audioData + trimFramesAtStart * bytesPerFrame)
        let start: Int64
        let deviceFrames: Int
        if countsDeviceFrames {
            openStream(at: q) { flushTail() }
            if scratch.count < played * channels { scratch = [Float](repeating: 0, count: played * channels) }
            deviceFrames = scratch.withUnsafeMutableBufferPointer { s in
                let base = s.baseAddress!
                let outs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
                let ins = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
                defer { outs.deallocate(); ins.deallocate() }
                for c in 0..<channels { outs[c] = base + c * played; ins[c] = UnsafePointer(base + c * played) }
                deinterleaver.convert(source, frames: played, into: outs, offset: 0)
                tapBeforeEffects(outs, frames: played, at: q)
                if timePitch.enabled { return stretch(ins, frames: played, at: q, into: buffer) }
                return converter!.process(input: ins, frames: played, output: buffer.renderChannels, capacity: buffer.renderCapacity)
            }
            start = queueTime.nextDeviceFrame
            queueTime.nextDeviceFrame += Int64(deviceFrames)
        } else {
            deinterleaver.convert(source, frames: played, into: buffer.renderChannels, offset: 0)
            tapBeforeEffects(buffer.renderChannels, frames: played, at: q)
            start = q
            deviceFrames = played
        }
        return try schedule(
            buffer, queueFrame: q, played: played, start: start, deviceFrames: deviceFrames, volume: volume,
            flexible: startTime == nil)
    }

    /// Hands a converted buffer to the render thread: `deviceFrames` frames of its render
    /// storage at queue device frame `start`; queue time moves on by `played` frames from `q`.
    /// Engine lock held.
    private func schedule(
        _ buffer: AudioQueueBuffer, queueFrame q: Int64, played: Int, start: Int64, deviceFrames: Int, volume: Float,
        flexible: Bool
    ) throws(AudioQueueError) -> AudioTimeStamp {
        let serial = ledger.nextSerial()
        let scheduled = ScheduledBuffer(
            token: buffer.token, data: buffer.render, stride: Int32(buffer.renderCapacity), frames: Int32(deviceFrames),
            start: start, volume: volume, serial: serial, epoch: queueTime.epoch, flexible: flexible)
        try hub.send(.enqueue(slot: slot, buffer: scheduled))
        queueTime.nextQueueFrame = q + Int64(played)
        buffer.isEnqueued = true
        buffer.preparedFrames = played
        ledger.sent(buffer.token, serial: serial)
        return AudioTimeStamp(sampleTime: Double(q))
    }

    /// Bytes of every packet of a compressed format of constant-size packets (Apple IMA4,
    /// whose buffers need no packet descriptions), else 0.
    var constantPacketBytes: Int {
        isCompressed && format.framesPerPacket > 0 ? Int(format.bytesPerPacket) : 0
    }

    /// The most frames a packet of this queue's format decodes to.
    var maximumFramesPerPacket: Int {
        max(codec.decoder?.maximumFramesPerPacket ?? 0, PacketDecoder.maximumFramesPerPacket(format))
    }

    /// Checks parameter events; returns the volume event's value or NaN. `PlayRate` and `Pitch`
    /// events are applied here, before the buffer is processed, so they act from its first
    /// frame exactly (they stay in force for the buffers after it). Lock held.
    func volumeEvent(_ parameterEvents: [AudioQueueParameterEvent]) throws(AudioQueueError) -> Float {
        for e in parameterEvents {
            guard let id = AudioQueueParameterID(rawValue: e.parameter) else {
                throw AudioQueueError(.invalidParameter, "unknown parameter ID \(e.parameter)")
            }
            switch id {
            case .volume:
                guard e.value.isFinite, e.value >= 0, e.value <= maximumVolume else {
                    throw AudioQueueError(.invalidParameter, "volume \(e.value) is outside 0…\(maximumVolume) (kAudioQueueParam_Volume)")
                }
            case .playRate, .pitch: try checkTimePitchValue(id, e.value)
            case .volumeRampTime, .pan:
                throw AudioQueueError(.invalidParameter, "only Volume, PlayRate and Pitch can be a buffer's parameter events (set \(id) with AudioQueueSetParameter)")
            }
        }
        var volume = Float.nan
        for e in parameterEvents {
            switch AudioQueueParameterID(rawValue: e.parameter) {
            case .playRate: timePitch.playRate = e.value
            case .pitch: timePitch.pitchCents = e.value
            default:
                volume = e.value
                volumeChanged = true
            }
        }
        return volume
    }

    /// Throws `.capacityExceeded` unless one more buffer (and a converter tail after it) fits
    /// in the queue's schedule and the command ring. Lock held.
    func checkRoomToEnqueue() throws(AudioQueueError) {
        guard enqueuedCount < hub.capacities.buffersPerQueue - 1 else {
            throw AudioQueueError(.capacityExceeded, "\(enqueuedCount) buffers are enqueued, the most a queue holds is \(hub.capacities.buffersPerQueue - 1)")
        }
        guard hub.core.pointee.commands.freeCount >= 2 else {
            throw AudioQueueError(.capacityExceeded, "the command ring is full")
        }
    }

    /// The queue frame a buffer starts at: `startTime`'s sample time, or right after the
    /// previous buffer. Lock held.
    func startQueueFrame(_ startTime: AudioTimeStamp?) throws(AudioQueueError) -> Int64 {
        guard let st = startTime else { return queueTime.nextQueueFrame }
        guard st.flags.contains(.sampleTimeValid), st.sampleTime.isFinite else {
            throw AudioQueueError(.invalidParameter, "a buffer's start time needs a sample time (queue frames)")
        }
        let want = Int64(st.sampleTime.rounded())
        guard want >= queueTime.nextQueueFrame else {
            throw AudioQueueError(.invalidParameter, "start time \(want) is before the end of the previous buffer (\(queueTime.nextQueueFrame)): start times must ascend")
        }
        return want
    }

    /// The compressed half of ``enqueue(_:trimFramesAtStart:trimFramesAtEnd:parameterEvents:startTime:)``:
    /// decodes every packet of the buffer on the calling thread, trims (gapless, then the
    /// caller's trims), converts the rate, and schedules the result. A buffer of a format of
    /// constant-size packets (Apple IMA4) given no descriptions holds whole packets one after
    /// another (bytes after the last whole one are ignored). Lock held.
    func enqueueCompressed(
        _ buffer: AudioQueueBuffer, trimFramesAtStart: Int, trimFramesAtEnd: Int,
        parameterEvents: [AudioQueueParameterEvent], startTime: AudioTimeStamp?
    ) throws(AudioQueueError) -> AudioTimeStamp {
        guard let decoder = codec.decoder else {
            throw AudioQueueError(.invalidProperty, "a \(format.formatID) queue needs its magic cookie (setMagicCookie) before the first buffer is enqueued")
        }
        let described = buffer.packetDescriptions != nil && buffer.packetDescriptionCount > 0
        let count = described ? buffer.packetDescriptionCount
            : constantPacketBytes > 0 ? buffer.audioDataByteSize / constantPacketBytes : 0
        guard count > 0 else {
            throw AudioQueueError(.bufferEmpty, constantPacketBytes > 0
                ? "the buffer holds no whole packet (\(buffer.audioDataByteSize) bytes; packets are \(constantPacketBytes))"
                : "the buffer has no packet descriptions (packetDescriptionCount is 0)")
        }
        guard !described || count <= buffer.packetDescriptionCapacity else {
            throw AudioQueueError(.invalidBuffer, "packetDescriptionCount \(count) exceeds the capacity \(buffer.packetDescriptionCapacity)")
        }
        let descs = buffer.packetDescriptions
        /// Packet `i`: its description, or the `i`th constant-size packet.
        func packet(_ i: Int) -> AudioStreamPacketDescription {
            described ? descs![i]
                : AudioStreamPacketDescription(startOffset: Int64(i * constantPacketBytes), variableFramesInPacket: 0, dataByteSize: UInt32(constantPacketBytes))
        }
        for i in 0..<count where described {
            let d = packet(i)
            guard d.startOffset >= 0, d.startOffset + Int64(d.dataByteSize) <= Int64(buffer.audioDataByteSize) else {
                throw AudioQueueError(.invalidParameter, "packet \(i) (\(d.startOffset) + \(d.dataByteSize) bytes) lies outside the buffer's \(buffer.audioDataByteSize) bytes")
            }
        }
        let q = try startQueueFrame(startTime)
        try checkRoomToEnqueue()
        // Last of the checks: it applies PlayRate and Pitch events, so nothing after it throws
        // before the buffer is scheduled (the ring's room was checked).
        let volume = try volumeEvent(parameterEvents)
        let needed = count * maximumFramesPerPacket
        let scratch = codec.scratch(channels: channels, frames: max(needed, decodeBufferFrames))
        // The buffer's render storage holds what its packets can decode to (it grows here, on
        // the enqueuing thread, for a buffer given more packets than it was allocated for).
        buffer.growRender(frames: converter == nil ? needed
            : RateConverter.maximumOutputFrames(inputFrames: needed, inputRate: format.sampleRate, outputRate: hub.device.sampleRate))
        // Decode: every packet, in order; corrupt ones become silence of their length.
        var decoded = 0
        for i in 0..<count {
            let d = packet(i)
            let expected = d.variableFramesInPacket > 0 ? Int(d.variableFramesInPacket)
                : format.framesPerPacket > 0 ? Int(format.framesPerPacket) : maximumFramesPerPacket
            let bytes = UnsafeRawBufferPointer(start: buffer.audioData + Int(d.startOffset), count: Int(d.dataByteSize))
            decoded += decoder.decode(bytes, framesIfCorrupt: expected, into: scratch.channels, offset: decoded, capacity: scratch.capacity)
        }
        codec.isOpen = true
        let (from, to) = codec.keptRange(decoded: decoded, trimStart: trimFramesAtStart, trimEnd: trimFramesAtEnd)
        let played = to - from
        tapBeforeEffects(scratch.channels, offset: from, frames: played, at: q)
        let start: Int64
        let deviceFrames: Int
        if countsDeviceFrames {
            openStream(at: q) { flushStretchTail(); flushRateTail() }
            if timePitch.enabled {
                let ins = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
                defer { ins.deallocate() }
                for c in 0..<channels { ins[c] = UnsafePointer(scratch.channels[c] + from) }
                deviceFrames = played == 0 ? 0 : stretch(ins, frames: played, at: q, into: buffer)
            } else {
                deviceFrames = played == 0 ? 0 : process(converter!, scratch, from: from, frames: played, into: buffer.renderChannels, capacity: buffer.renderCapacity)
            }
            start = queueTime.nextDeviceFrame
            queueTime.nextDeviceFrame += Int64(deviceFrames)
        } else {
            let n = min(played, buffer.renderCapacity)
            for c in 0..<channels where n > 0 { buffer.renderChannels[c].update(from: scratch.channels[c] + from, count: n) }
            start = q
            deviceFrames = n
        }
        return try schedule(
            buffer, queueFrame: q, played: played, start: start, deviceFrames: deviceFrames, volume: volume,
            flexible: startTime == nil)
    }

    /// Runs `frames` planar frames of `src` from `from` through the rate converter.
    func process(
        _ converter: RateConverter, _ src: TailChunk, from: Int, frames: Int,
        into output: UnsafePointer<UnsafeMutablePointer<Float>>, capacity: Int
    ) -> Int {
        let ins = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
        defer { ins.deallocate() }
        for c in 0..<channels { ins[c] = UnsafePointer(src.channels[c] + from) }
        return converter.process(input: ins, frames: frames, output: output, capacity: capacity)
    }

    /// Ends the decoder's stream: drains it, schedules what it still held (after trimming)
    /// right after the last buffer, and resets it and the gapless window. Lock held.
    func flushDecoder() {
        guard let decoder = codec.decoder, codec.isOpen else { return }
        defer { codec.end() }
        guard let scratch = codec.scratch else { return }
        let drained = decoder.drain(into: scratch.channels, offset: 0, capacity: scratch.capacity)
        let (from, to) = codec.keptRange(decoded: drained, trimStart: 0, trimEnd: 0)
        guard to > from else { return }
        tapBeforeEffects(scratch.channels, offset: from, frames: to - from, at: queueTime.nextQueueFrame)
        if timePitch.enabled {
            if !queueTime.streamOpen { openStream(at: queueTime.nextQueueFrame) {} }
            let ins = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
            defer { ins.deallocate() }
            for c in 0..<channels { ins[c] = UnsafePointer(scratch.channels[c] + from) }
            let q = queueTime.nextQueueFrame
            queueTime.nextQueueFrame += Int64(to - from)
            scheduleStretchedTail(stretched(ins, frames: to - from, at: q))
            return
        }
        guard let i = tails.firstIndex(where: { !$0.inFlight }) else { return }
        let tail = tails[i]
        var n = 0
        let start: Int64
        if let converter {
            if !queueTime.streamOpen { converter.reset(); queueTime.nextDeviceFrame = Int64((Double(queueTime.nextQueueFrame) * ratio).rounded()); queueTime.streamOpen = true }
            n = process(converter, scratch, from: from, frames: min(to - from, 8192), into: tail.channels, capacity: tail.capacity)
            start = queueTime.nextDeviceFrame
        } else {
            n = min(to - from, tail.capacity)
            for c in 0..<channels { tail.channels[c].update(from: scratch.channels[c] + from, count: n) }
            start = queueTime.nextQueueFrame
        }
        queueTime.nextQueueFrame += Int64(to - from)
        guard n > 0 else { return }
        if sendTail(i, frames: n, start: start), converter != nil { queueTime.nextDeviceFrame += Int64(n) }
    }

    /// Ends the stream: the decoder's remaining frames, then time/pitch's, then the rate
    /// converter's. Lock held.
    func flushTail() {
        flushDecoder()
        flushStretchTail()
        flushRateTail()
    }

    /// Schedules what the rate converter still holds, right after the stream so far, and ends
    /// the stream. Lock held.
    func flushRateTail() {
        guard queueTime.streamOpen else { return }
        queueTime.streamOpen = false
        guard let converter else { return }
        guard let i = tails.firstIndex(where: { !$0.inFlight }) else {
            droppedTailFrames += 1
            return
        }
        let tail = tails[i]
        let n = converter.flush(output: tail.channels, capacity: tail.capacity)
        guard n > 0 else { return }
        if sendTail(i, frames: n, start: queueTime.nextDeviceFrame) { queueTime.nextDeviceFrame += Int64(n) }
    }

    /// Hands tail `i` (`frames` frames at queue device frame `start`) to the render thread;
    /// false (and the tail's frames dropped, counted) when the rings are full. Lock held.
    func sendTail(_ i: Int, frames n: Int, start: Int64) -> Bool {
        let tail = tails[i]
        let serial = ledger.nextSerial()
        let scheduled = ScheduledBuffer(
            token: AudioQueue.tailTokenBit | UInt32(i), data: tail.storage, stride: Int32(tail.capacity), frames: Int32(n),
            start: start, serial: serial, epoch: queueTime.epoch, flexible: true)
        do {
            try hub.send(.enqueue(slot: slot, buffer: scheduled))
        } catch {
            droppedTailFrames += n
            return false
        }
        tail.inFlight = true
        ledger.sent(scheduled.token, serial: serial)
        return true
    }
}
