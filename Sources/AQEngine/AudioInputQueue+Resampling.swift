import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// The resampling pipeline: the capture ring through the rate converter into the buffers; ending and forgetting a stream (every converting or encoding queue).
extension AudioInputQueue {
    func pumpConvertedLocked(until end: Int64, handed: inout [(AudioQueueBuffer, Double)]) {
        guard let converter else { return }
        let core = hub.core.pointee
        // At the start of a pass nothing was handed back yet: with no buffer, frames are lost.
        drainFifoLocked(&handed, allowLoss: true)
        while readPosition < end && (fifo.isEmpty || !pending.isEmpty) {
            let r = readStreamLocked(core, until: end, handed: &handed)
            if r.frames == 0 { break }
            if streamStart < 0 {
                streamStart = r.first
                fifoFrame = 0
            }
            if meteringEnabled { meter(r.frames) }
            convertScratch(converter, frames: r.frames) { outs, k in
                fifo.append(frames: k) { UnsafePointer(outs[$0]) }
            }
            readPosition += Int64(r.frames)
            drainFifoLocked(&handed, allowLoss: handed.isEmpty)
            if stopAfterBuffer && !handed.isEmpty { break }
        }
    }

    /// Moves converted frames into the enqueued buffers; with no buffer left, loses them
    /// (counted in device frames) when `allowLoss`, keeps them otherwise. Queue lock held.
    func drainFifoLocked(_ handed: inout [(AudioQueueBuffer, Double)], allowLoss: Bool) {
        while !fifo.isEmpty {
            guard let head = pending.first else {
                if allowLoss {
                    lost += Int64((Double(fifo.count) * ratio).rounded())
                    discontinuities += 1
                    fifoFrame += fifo.count
                    fifo.removeAll()
                }
                return
            }
            let room = head.audioDataBytesCapacity / bytesPerFrame - filled
            let k = min(room, fifo.count)
            if filled == 0 { headQueueFrame = fifoFrame }
            do {
                // A copy that shares the storage, gone before the FIFO is changed (no copy of it).
                let planes = fifo
                encode(k, into: head.audioData + filled * bytesPerFrame) { c, i in planes.sample(c, i) }
            }
            fifo.removeFirst(k)
            fifoFrame += k
            filled += k
            if filled * bytesPerFrame + bytesPerFrame > head.audioDataBytesCapacity {
                handed.append(completeHead())
            }
        }
    }

    /// Ends the stream (converting and compressed queues): the converter's last frames (the
    /// filter's tail) and the encoder's last packets (the last one padded with silence) go into
    /// the buffers, the buffer in progress is handed back, and the next frames read start a new
    /// stream. Queue lock held.
    func endStreamLocked(_ handed: inout [(AudioQueueBuffer, Double)]) {
        guard converter != nil || encoder != nil, streamStart >= 0 else { return }
        if let converter {
            let pendingOut = converter.pendingOutputFrames
            if pendingOut > 0 {
                let out = UnsafeMutablePointer<Float>.allocate(capacity: pendingOut * channels)
                defer { out.deallocate() }
                let outs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
                defer { outs.deallocate() }
                var got = 0
                while got < pendingOut {
                    for c in 0..<channels { outs[c] = out + c * pendingOut + got }
                    let k = converter.flush(output: outs, capacity: pendingOut - got)
                    if k == 0 { break }
                    got += k
                }
                if let encoder {
                    var packets: [[UInt8]] = []
                    encoder.encode(frames: got, into: &packets) { c, i in out[c * pendingOut + i] }
                    packetFifo += packets
                } else {
                    fifo.append(frames: got) { UnsafePointer(out + $0 * pendingOut) }
                }
            }
        }
        if let encoder {
            var packets: [[UInt8]] = []
            lastRemainder = encoder.finish(into: &packets)
            packetFifo += packets
            drainPacketsLocked(&handed, allowLoss: true)
        } else {
            drainFifoLocked(&handed, allowLoss: true)
        }
        if filled > 0 { handed.append(completeHead()) }
        discardStreamLocked()
    }

    /// Forgets the stream (converter and encoder state, frames and packets not yet in a buffer):
    /// the next frames read start a new one. Queue lock held.
    func discardStreamLocked() {
        converter?.reset()
        encoder?.reset()
        if converter != nil { fifo.removeAll() }
        packetFifo.removeAll()
        if encoder != nil { headDescriptions.removeAll() }
        streamStart = -1
    }

}
