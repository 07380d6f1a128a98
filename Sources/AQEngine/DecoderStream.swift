import AQConvert
import AQTypes

/// A compressed queue's decoding state: the decoder (replaced when a new magic cookie is set),
/// the stream it is in (the position gapless trimming counts in, the gapless window), the
/// scratch it decodes into, and the corrupt packets counted by decoders it replaced.
///
/// Thread safety: a value guarded by its queue's lock.
struct DecoderStream {
    /// The decoder; nil until the magic cookie is set for formats that need one.
    var decoder: PacketDecoder?
    /// The magic cookie last set (empty until then).
    var cookie: [UInt8] = []
    /// Corrupt packets counted by decoders replaced since the queue was made.
    private var corruptBefore = 0
    /// Decoded planar frames at the queue's rate, before trimming and rate conversion.
    var scratch: AudioQueue.TailChunk?
    /// Frames decoded since the stream started.
    private var position: Int64 = 0
    /// True once a packet was decoded since the stream started (the decoder holds state).
    var isOpen = false
    /// Priming/remainder frames to trim from the current stream.
    private(set) var gapless: AudioFilePacketTableInfo?

    init(decoder: PacketDecoder?) { self.decoder = decoder }

    /// Corrupt packets counted since the queue was made.
    var corruptPackets: Int { corruptBefore + (decoder?.corruptPackets ?? 0) }

    /// A new decoder for a new magic cookie; the stream restarts.
    mutating func replace(with d: PacketDecoder, cookie: [UInt8]) {
        corruptBefore += decoder?.corruptPackets ?? 0
        decoder = d
        isOpen = false
        self.cookie = cookie
    }

    /// Scratch for at least `frames` frames of `channels` channels.
    mutating func scratch(channels: Int, frames: Int) -> AudioQueue.TailChunk {
        if let s = scratch, s.capacity >= frames { return s }
        let s = AudioQueue.TailChunk(channels: channels, capacity: frames)
        scratch = s
        return s
    }

    /// Sets the stream's gapless window; frames are counted from the next one decoded.
    mutating func setGapless(_ info: AudioFilePacketTableInfo?) {
        gapless = info
        position = 0
    }

    /// The stream ends: the decoder forgets its state, the position and the gapless window go.
    mutating func end() {
        decoder?.reset()
        isOpen = false
        position = 0
        gapless = nil
    }

    /// Of `decoded` frames just decoded at the stream's position, the range to play: the
    /// caller's trims, then the gapless priming/valid window. Advances the position.
    mutating func keptRange(decoded: Int, trimStart: Int, trimEnd: Int) -> (Int, Int) {
        let s = position
        position += Int64(decoded)
        var from = Int64(min(trimStart, decoded))
        var to = Int64(max(decoded - trimEnd, 0))
        if let g = gapless {
            from = max(from, Int64(g.primingFrames) - s)
            if g.numberValidFrames > 0 { to = min(to, Int64(g.primingFrames) + g.numberValidFrames - s) }
        }
        from = min(max(from, 0), Int64(decoded))
        to = max(min(to, Int64(decoded)), from)
        return (Int(from), Int(to))
    }
}
