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
    /// True when, after the segments, the reader must call `seek(toPacket: 0)` and feed the
    /// file from the offset it returns (with `.discontinuity`): an MP4 whose `moov` follows
    /// its `mdat` is fed the boxes before `mdat`, then `moov`, then its samples where they are.
    public var resumeAtFirstPacket = false
    /// When set, feed these bytes in place of the file's first `replacementHeader.count` bytes
    /// (the segments still start at offset 0 and include them: skip that many bytes of the
    /// file). Used for a plain RIFF WAVE over 4 GiB whose data size wrapped around 2^32 (as
    /// ffmpeg writes one without `-rf64`): the copy says "to the end of the file" instead.
    public var replacementHeader: [UInt8]?

    /// True when the pieces are not the file in its own order.
    public var isReordered: Bool { segments.count > 1 || resumeAtFirstPacket || replacementHeader != nil }

    /// Where in the file the byte lies that the parser was fed at `streamOffset` (counting the
    /// bytes of ``segments`` in their order): the parser's offsets (its data offset) are in
    /// the order it was fed, so a CAF whose chunks after `data` were fed first has its audio
    /// data that many bytes earlier in the file than the parser says. Offsets past the
    /// segments, and every offset of a plan that resumes at the first packet (an MP4, whose
    /// parser takes its samples' offsets from its own tables), are returned as they are.
    public func fileOffset(ofStreamOffset streamOffset: Int64) -> Int64 {
        guard !resumeAtFirstPacket else { return streamOffset }
        var fed: Int64 = 0
        for segment in segments {
            if streamOffset < fed + segment.length { return segment.offset + (streamOffset - fed) }
            fed += segment.length
        }
        return streamOffset
    }

    /// Looks at a file's chunk headers (through `read(offset, count)`, which returns the bytes
    /// there, fewer at the end of the file) and plans the order. At most 4096 chunk headers are
    /// read; anything unexpected falls back to the whole file in order.
    public static func make(fileSize: Int64, read: (Int64, Int) -> [UInt8]) -> AudioFileReadingOrder {
        let whole = AudioFileReadingOrder(segments: [Segment(offset: 0, length: fileSize)])
        let head = read(0, 8)
        if head.count == 8, head[4..<8] == [0x66, 0x74, 0x79, 0x70] { return mp4(fileSize: fileSize, read: read) ?? whole }
        if head.count == 8, head[0..<4] == [0x52, 0x49, 0x46, 0x46], fileSize > 0xFFFF_FFFF {
            var order = whole
            order.replacementHeader = wrappedWAVEHeader(fileSize: fileSize, read: read)
            return order
        }
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

    /// An MP4's top-level boxes: when `moov` comes after the first `mdat`, feed what precedes
    /// `mdat`, then `moov`, then resume at the first sample. Nil: feed the whole file.
    static func mp4(fileSize: Int64, read: (Int64, Int) -> [UInt8]) -> AudioFileReadingOrder? {
        var at: Int64 = 0
        var mdat: Int64?
        var count = 0
        while at + 8 <= fileSize, count < 4096 {
            let h = read(at, 16)
            guard h.count >= 8 else { return nil }
            var size = Int64(h[0]) << 24 | Int64(h[1]) << 16 | Int64(h[2]) << 8 | Int64(h[3])
            if size == 1 {
                guard h.count == 16 else { return nil }
                size = 0
                for k in 8..<16 { size = size << 8 | Int64(h[k]) }
            } else if size == 0 {
                size = fileSize - at
            }
            guard size >= 8 else { return nil }
            let type = Array(h[4..<8])
            if type == [0x6D, 0x64, 0x61, 0x74], mdat == nil { mdat = at }  // mdat
            if type == [0x6D, 0x6F, 0x6F, 0x76] {  // moov
                guard let m = mdat else { return nil }  // moov first: the file as it is
                var order = AudioFileReadingOrder(segments: [
                    Segment(offset: 0, length: m), Segment(offset: at, length: min(size, fileSize - at)),
                ])
                order.resumeAtFirstPacket = true
                return order
            }
            at += size
            count += 1
        }
        return nil
    }

    /// A plain RIFF WAVE file larger than 4 GiB whose `data` chunk size is the real size modulo
    /// 2^32 (nothing follows the data): the header up to the data chunk's payload with the
    /// size set to 0xFFFFFFFF ("to the end"). Nil when the file is not like that.
    static func wrappedWAVEHeader(fileSize: Int64, read: (Int64, Int) -> [UInt8]) -> [UInt8]? {
        let riff = read(0, 12)
        guard riff.count == 12, riff[8..<12] == [0x57, 0x41, 0x56, 0x45] else { return nil }
        var at: Int64 = 12
        for _ in 0..<64 {
            let h = read(at, 8)
            guard h.count == 8 else { return nil }
            let size = Int64(h[4]) | Int64(h[5]) << 8 | Int64(h[6]) << 16 | Int64(h[7]) << 24
            if h[0..<4] == [0x64, 0x61, 0x74, 0x61] {  // data
                let actual = fileSize - at - 8
                guard actual > 0xFFFF_FFFF, size != 0xFFFF_FFFF, actual & 0xFFFF_FFFF == size else { return nil }
                var header = read(0, Int(at + 8))
                guard header.count == Int(at + 8) else { return nil }
                for k in 4..<8 { header[Int(at) + k] = 0xFF }
                return header
            }
            at += 8 + size + (size & 1)
            guard at < fileSize else { return nil }
        }
        return nil
    }
}
