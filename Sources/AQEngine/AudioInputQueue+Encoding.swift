import AQConvert
import AQCore
import AQTypes
import Foundation
import Synchronization

/// The encoding pipeline: the capture ring (through the converter at another rate) into the packet encoder, its packets into the buffers.
extension AudioInputQueue {
    /// ``pumpLocked(until:)`` for a compressed queue: the frames read from the ring (through the
    /// converter at another rate) go into the encoder; its packets into the buffers. The stream
    /// starts at device frame ``streamStart``; its packet p decodes to stream frames from
    /// p × framesPerPacket − priming on, at device time `streamStart + that × ratio`. Queue lock
    /// held.
    func pumpEncodedLocked(until end: Int64, handed: inout [(AudioQueueBuffer, Double)]) {
        guard let encoder else { return }
        let core = hub.core.pointee
        drainPacketsLocked(&handed, allowLoss: true)
        while readPosition < end && (packetFifo.isEmpty || !pending.isEmpty) {
            let r = readStreamLocked(core, until: end, handed: &handed)
            if r.frames == 0 { break }
            if streamStart < 0 {
                streamStart = r.first
                fifoPacket = 0
            }
            if meteringEnabled { meter(r.frames) }
            var packets: [[UInt8]] = []
            if let converter {
                convertScratch(converter, frames: r.frames) { outs, k in
                    encoder.encode(frames: k, into: &packets) { c, i in outs[c][i] }
                }
            } else {
                encoder.encode(frames: r.frames, into: &packets) { c, i in scratchChannels[c][i] }
            }
            packetFifo += packets
            readPosition += Int64(r.frames)
            drainPacketsLocked(&handed, allowLoss: handed.isEmpty)
            if stopAfterBuffer && !handed.isEmpty { break }
        }
    }

    /// Moves encoded packets into the enqueued buffers, whole packets only: a buffer is handed
    /// back when the next packet does not fit in it (or its packet descriptions are used up).
    /// With no buffer left, loses the packets (counted in device frames) when `allowLoss`, keeps
    /// them otherwise. Queue lock held.
    func drainPacketsLocked(_ handed: inout [(AudioQueueBuffer, Double)], allowLoss: Bool) {
        var taken = 0
        defer { packetFifo.removeFirst(taken) }
        while taken < packetFifo.count {
            guard let head = pending.first else {
                if allowLoss {
                    let n = packetFifo.count - taken
                    lost += Int64((Double(n * framesPerPacket) * ratio).rounded())
                    discontinuities += 1
                    fifoPacket += Int64(n)
                    taken = packetFifo.count
                }
                return
            }
            let p = packetFifo[taken]
            let descriptionRoom = head.packetDescriptionCapacity == 0 || headDescriptions.count < head.packetDescriptionCapacity
            if filled + p.count > head.audioDataBytesCapacity || !descriptionRoom {
                if headDescriptions.isEmpty {
                    // Larger than a whole buffer (allocateBuffer refuses such buffers): lost.
                    lost += Int64((Double(framesPerPacket) * ratio).rounded())
                    discontinuities += 1
                    fifoPacket += 1
                    taken += 1
                } else {
                    handed.append(completeHead())
                }
                continue
            }
            if headDescriptions.isEmpty { headPacket = fifoPacket }
            p.withUnsafeBytes { (head.audioData + filled).copyMemory(from: $0.baseAddress!, byteCount: p.count) }
            headDescriptions.append(AudioStreamPacketDescription(startOffset: Int64(filled), variableFramesInPacket: 0, dataByteSize: UInt32(p.count)))
            filled += p.count
            fifoPacket += 1
            taken += 1
            if head.packetDescriptionCapacity > 0 && headDescriptions.count == head.packetDescriptionCapacity {
                handed.append(completeHead())
            }
        }
    }

}
