import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// The direct pipeline: reading the renderer's capture ring into the queue's buffers at the device's rate.
extension AudioInputQueue {
    /// Records what the ring holds now. Called by the engine on the events thread (or the
    /// thread in `deliverPendingEvents`), with its consumer lock held.
    /// Reads again after delivering while buffers came back (the callback re-enqueues them), so
    /// that frames are lost only when no buffer is left.
    func pump() {
        callbackLock.lock()
        defer { callbackLock.unlock() }
        while true {
            var handed: [(AudioQueueBuffer, Double)] = []
            var stopped = false
            do {
                lock.lock()
                defer { lock.unlock() }
                guard !disposed, state != .stopped else { return }
                let end = hub.core.pointee.captureWindow.end
                handed = pumpLocked(until: state == .paused ? min(end, pauseFrame) : end)
                if stopAfterBuffer && !handed.isEmpty {
                    handed += takeAllLocked()
                    discardStreamLocked()
                    // The take ends with the last whole packet handed back: nothing padded.
                    lastRemainder = 0
                    state = .stopped
                    stopAfterBuffer = false
                    stopped = true
                }
            }
            deliver(handed)
            if stopped { setRunning(false) }
            if handed.isEmpty || stopped { return }
        }
    }

    /// Copies captured frames from ``readPosition`` up to `end` into the enqueued buffers; returns
    /// the buffers filled (each with the device frame of its first frame). Frames with no buffer
    /// to go to, or gone from the ring, are lost and counted. Queue lock held.
    func pumpLocked(until end: Int64) -> [(AudioQueueBuffer, Double)] {
        var handed: [(AudioQueueBuffer, Double)] = []
        if encoder != nil {
            pumpEncodedLocked(until: end, handed: &handed)
            return handed
        }
        if converter != nil {
            pumpConvertedLocked(until: end, handed: &handed)
            return handed
        }
        let core = hub.core.pointee
        while readPosition < end {
            guard let head = pending.first else {
                // Buffers handed back in this pass may come back from the callback: the caller
                // delivers them and reads again.
                if !handed.isEmpty { break }
                // Nowhere to record: the frames are lost (a discontinuity on the queue's time line).
                lost += end - readPosition
                discontinuities += 1
                readPosition = end
                break
            }
            let room = head.audioDataBytesCapacity / bytesPerFrame - filled
            let want = Int(min(Int64(min(room, scratchFrames)), end - readPosition))
            let r = core.readCapture(from: readPosition, maxFrames: want, into: scratchChannels, channels: channels,
                                     sources: UnsafePointer(inputSources))
            if r.first > readPosition {
                // Gone from the ring (or never captured): lost; the buffer in progress ends here.
                lost += r.first - readPosition
                discontinuities += 1
                readPosition = r.first
                if filled > 0 { handed.append(completeHead()); continue }
            }
            if r.frames == 0 { break }
            if filled == 0 { headStart = r.first }
            encode(r.frames, into: head.audioData + filled * bytesPerFrame)
            if meteringEnabled { meter(r.frames) }
            filled += r.frames
            readPosition += Int64(r.frames)
            if filled * bytesPerFrame + bytesPerFrame > head.audioDataBytesCapacity {
                handed.append(completeHead())
                if stopAfterBuffer { break }
            }
        }
        return handed
    }

    /// ``pumpLocked(until:)`` for a queue at another rate than the device's: the frames read
    /// from the ring go through the converter (a stream that starts at the device frame
    /// ``streamStart``: its output frame k is at device time `streamStart + k × ratio`), then
    /// into the buffers. Queue lock held.
    /// A converting or encoding queue's read of the capture ring into the scratch planes: up to
    /// a scratch's worth of frames from ``readPosition`` (not past `end`). Frames the ring no
    /// longer has are lost and end the stream (the next frames start a new one). Returns what
    /// ``RenderCore/readCapture(from:maxFrames:into:channels:)`` returned. Queue lock held.
    func readStreamLocked(_ core: RenderCore, until end: Int64, handed: inout [(AudioQueueBuffer, Double)]) -> (first: Int64, frames: Int) {
        let want = Int(min(Int64(scratchFrames), end - readPosition))
        let r = core.readCapture(from: readPosition, maxFrames: want, into: scratchChannels, channels: channels,
                                     sources: UnsafePointer(inputSources))
        if r.first > readPosition {
            lost += r.first - readPosition
            discontinuities += 1
            endStreamLocked(&handed)
            readPosition = r.first
        }
        return r
    }

    /// Converts `frames` frames of the scratch planes to the queue's rate and gives `body` the
    /// result: one plane per channel and the frames in each. Queue lock held (the converter's
    /// stream is the queue's).
    func convertScratch(_ converter: RateConverter, frames: Int, _ body: (UnsafePointer<UnsafeMutablePointer<Float>>, Int) -> Void) {
        let capacity = RateConverter.maximumOutputFrames(inputFrames: frames, inputRate: converter.inputRate, outputRate: converter.outputRate) + 64
        let out = UnsafeMutablePointer<Float>.allocate(capacity: capacity * channels)
        defer { out.deallocate() }
        let outs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
        defer { outs.deallocate() }
        for c in 0..<channels { outs[c] = out + c * capacity }
        let ins = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
        defer { ins.deallocate() }
        for c in 0..<channels { ins[c] = UnsafePointer(scratchChannels[c]) }
        let k = converter.process(input: ins, frames: frames, output: outs, capacity: capacity)
        body(UnsafePointer(outs), k)
    }

}
