import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// Completing buffers, their time stamps, and handing them to the callback.
extension AudioInputQueue {
    /// The buffer in progress, done: its size set, taken off the queue. Queue lock held.
    func completeHead() -> (AudioQueueBuffer, Double) {
        let b = pending.removeFirst()
        b.isEnqueued = false
        if encoder != nil {
            b.audioDataByteSize = filled
            let d = headDescriptions
            if let out = b.packetDescriptions {
                let n = min(d.count, b.packetDescriptionCapacity)
                d.withUnsafeBufferPointer { out.update(from: $0.baseAddress!, count: n) }
                b.packetDescriptionCount = n
            }
            handedDescriptions[b.token] = d
            headDescriptions.removeAll()
            filled = 0
            let first = headPacket * Int64(framesPerPacket) - Int64(priming)
            return (b, Double(streamStart) + Double(first) * ratio)
        }
        b.audioDataByteSize = filled * bytesPerFrame
        let start = converter == nil ? Double(headStart) : Double(streamStart) + Double(headQueueFrame) * ratio
        filled = 0
        return (b, start)
    }

    /// Converts `n` planar scratch frames to the queue's interleaved format at `dst`.
    func encode(_ n: Int, into dst: UnsafeMutableRawPointer) {
        encode(n, into: dst) { c, i in scratchChannels[c][i] }
    }

    /// Converts `n` frames of `sample(channel, frame)` to the queue's interleaved format at `dst`
    /// (integers by the project's one rule, ``PCMInterleaver``).
    func encode(_ n: Int, into dst: UnsafeMutableRawPointer, _ sample: (Int, Int) -> Float) {
        if !isFloat {
            PCMInterleaver(bits: sampleBytes * 8, bigEndian: bigEndian).interleave(frames: n, channels: channels, into: dst, sample)
            return
        }
        var p = dst
        for i in 0..<n {
            for c in 0..<channels {
                let bits = sample(c, i).bitPattern
                p.storeBytes(of: bigEndian ? bits.bigEndian : bits.littleEndian, as: UInt32.self)
                p += sampleBytes
            }
        }
    }

    func meter(_ n: Int) {
        for c in 0..<channels {
            var peak: Float = 0
            var sum: Double = 0
            for i in 0..<n {
                let v = scratchChannels[c][i]
                peak = max(peak, abs(v))
                sum += Double(v) * Double(v)
            }
            meterValues[c] = AudioQueueLevelMeterState(averagePower: Float((sum / Double(max(n, 1))).squareRoot()), peakPower: peak)
        }
    }

    /// The capture latency this queue's time stamps subtract now, in device frames: the
    /// largest capture latency of the device inputs it records — `0 ..< channels`, or those
    /// ``setChannelAssignments(_:)`` assigned (``AudioQueueEngine/captureLatency(ofInputs:)``). One time axis for all the queue's
    /// channels: a channel whose port has a smaller latency is stamped that much too early
    /// (docs/recording.md, "Latency"). Read once per buffer, when the callback gets it
    /// (``AudioQueueBuffer/captureLatency`` says which value that buffer got). Any thread but
    /// the render thread; does not block.
    public var captureLatency: Int {
        hub.device.captureLatency(ofInputs: locked { (0..<channels).map { inputSources[$0] } })
    }

    /// The time stamp of the frame that reached the device's inputs at device sample time
    /// `arrival` (fractional for converting queues): the time it was captured, `arrival` minus
    /// `latency`, the queue's capture latency (``captureLatency``, read once per buffer, when
    /// the buffer is handed to the callback; docs/recording.md, "Latency"). Sample time and host
    /// time, both flags set.
    func timeStamp(ofSampleTime arrival: Double, latency: Int) -> AudioTimeStamp {
        let sample = arrival - Double(latency)
        if let manual = hub.device.handDriven {
            let whole = sample.rounded(.down)
            let host = manual.hostTime(ofFrame: Int64(whole)) &+ UInt64(((sample - whole) * 1e9 / hub.device.sampleRate).rounded())
            return AudioTimeStamp(
                sampleTime: sample, hostTime: host, rateScalar: 1,
                flags: [.sampleTimeValid, .hostTimeValid, .rateScalarValid])
        }
        if let tb = hub.timebase { return tb.timeStamp(forSampleTime: sample) }
        return AudioTimeStamp(sampleTime: sample)
    }

    /// ``timeStamp(ofSampleTime:latency:)``, also for a time before device frame 0 (a compressed
    /// stream's first packet starts its priming before the stream): the time stamp of frame 0
    /// moved back by `-sample` frames, the host time at the nominal rate (saturating at 0).
    func startTimeStamp(_ sample: Double, latency: Int) -> AudioTimeStamp {
        guard sample < 0 else { return timeStamp(ofSampleTime: sample, latency: latency) }
        var t = timeStamp(ofSampleTime: 0, latency: latency)
        let back = UInt64((-sample * 1e9 / hub.device.sampleRate).rounded())
        t.sampleTime += sample
        t.hostTime = t.hostTime >= back ? t.hostTime - back : 0
        return t
    }

    /// Runs the callback for each buffer handed back, in order, under the callback lock.
    /// No queue lock held.
    func deliver(_ handed: [(AudioQueueBuffer, Double)]) {
        guard !handed.isEmpty else { return }
        callbackLock.lock()
        defer { callbackLock.unlock() }
        for (b, frame) in handed {
            let (gone, descriptions) = locked { (disposed, handedDescriptions.removeValue(forKey: b.token) ?? []) }
            if gone { return }
            let latency = captureLatency
            b.captureLatency = latency
            callback(self, b, startTimeStamp(frame, latency: latency), descriptions)
        }
    }

    func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    func setRunning(_ on: Bool) {
        runningFlag.store(on, ordering: .releasing)
        callbackLock.lock()
        defer { callbackLock.unlock() }
        let ls = locked { disposed ? [] : listeners.listeners(for: .isRunning) }
        for l in ls { l(self, .isRunning) }
    }

}
