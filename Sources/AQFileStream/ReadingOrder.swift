import AQTypes

/// The order in which to feed a *file* (random access, unlike a stream) to an
/// ``AudioFileStream`` so that the parser knows what it needs before the audio data.
///
/// A push parser must know a CAF file's packet sizes (`pakt`) before its packets; ffmpeg
/// writes `pakt` after `data`. For such a file the plan feeds the file header, every chunk
/// but `data` in file order, then `data`, so the parser sees the packet table first. The
/// file is not changed (the pieces are read where they are). Every other file is fed whole,
/// in order. Used by `aqsync info` and the session readers.
///
/// Thread safety: a plain value; ``make(fileSize:read:)`` is pure apart from calling `read`.
public struct AudioFileReadingOrder: Sendable, Equatable {
    /// One piece of the file: `length` bytes at file offset `offset`.
    public struct Segment: Sendable, Equatable {
        /// Offset in the file.
        public var offset: Int64
        /// Bytes to feed from there.
        public var length: Int64
        /// Makes a segment.
        public init(offset: Int64, length: Int64) {
            self.offset = offset
            self.length = length
        }
    }

    /// The pieces to feed, in order.
    public var segments: [Segment]
    /// True when the pieces are not the file in its own order.
    public var isReordered: Bool { segments.count > 1 }

    /// Looks at a file's chunk headers (through `read(offset, count)`, which returns the bytes
    /// there, fewer at the end of the file) and plans the order. At most 4096 chunk headers are
    /// read; anything unexpected falls back to the whole file in order.
    public static func make(fileSize: Int64, read: (Int64, Int) -> [UInt8]) -> AudioFileReadingOrder {
        let whole = AudioFileReadingOrder(segments: [Segment(offset: 0, length: fileSize)])
        let head = read(0, 8)
        guard head.count == 8, head[0..<4] == [0x63, 0x61, 0x66, 0x66] else { return whole }
        var chunks: [(type: [UInt8], offset: Int64, length: Int64)] = []
        var at: Int64 = 8
        while at + 12 <= fileSize, chunks.count < 4096 {
            let h = read(at, 12)
            guard h.count == 12 else { break }
            var n: Int64 = 0
            for k in 0..<8 { n = n << 8 | Int64(h[4 + k]) }
            let total = n < 0 || n > fileSize ? fileSize - at : min(12 + n, fileSize - at)
            chunks.append((Array(h[0..<4]), at, total))
            at += total
        }
        guard let d = chunks.firstIndex(where: { $0.type == [0x64, 0x61, 0x74, 0x61] }), d < chunks.count - 1 else {
            return whole
        }
        var out = [Segment(offset: 0, length: 8)]
        for (i, c) in chunks.enumerated() where i != d { out.append(Segment(offset: c.offset, length: c.length)) }
        out.append(Segment(offset: chunks[d].offset, length: chunks[d].length))
        return AudioFileReadingOrder(segments: out)
    }
}
