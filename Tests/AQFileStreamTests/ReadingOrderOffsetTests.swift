import AQFileStream
import AQTypes
import Foundation
import Testing

/// A CAF with chunks after its `data` is fed those chunks first (``AudioFileReadingOrder``), so
/// the parser's data offset counts them; ``AudioFileReadingOrder/fileOffset(ofStreamOffset:)``
/// gives the file's (issue 23: Audio File Services read the wrong bytes of such a PCM file).
@Suite struct ReadingOrderOffsetTests {
    static func be32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
    static func be64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }

    /// `caff`, a `desc` of 16-bit mono PCM, `data` (edit count and `audio`), then `trailing`.
    static func caf(audio: [UInt8], trailing: [(String, [UInt8])]) -> (bytes: [UInt8], audioAt: Int) {
        var b = Array("caff".utf8) + [0, 1, 0, 0]
        b += Array("desc".utf8) + be64(32)
        b += be64(48000.0.bitPattern) + Array("lpcm".utf8) + be32(2) + be32(2) + be32(1) + be32(1) + be32(16)
        b += Array("data".utf8) + be64(UInt64(4 + audio.count)) + be32(0)
        let at = b.count
        b += audio
        for (type, body) in trailing { b += Array(type.utf8) + be64(UInt64(body.count)) + body }
        return (b, at)
    }

    @Test func dataOffsetOfACAFWithChunksAfterItsData() throws {
        let audio = (0..<200).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
        let (file, audioAt) = Self.caf(audio: audio, trailing: [("LIST", Array("first".utf8)), ("bext", Array("hello!".utf8))])
        let order = AudioFileReadingOrder.make(fileSize: Int64(file.count)) { offset, count in
            Array(file[Int(offset)..<min(file.count, Int(offset) + count)])
        }
        #expect(order.isReordered)
        let stream = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        for s in order.segments { try stream.parse(Array(file[Int(s.offset)..<Int(s.offset + s.length)])) }
        let parsed = try #require(stream.dataOffset)
        // The parser saw the 17 + 18 bytes of the two chunks before the audio.
        #expect(parsed == Int64(audioAt + 17 + 18), "the parser's offset \(parsed)")
        #expect(order.fileOffset(ofStreamOffset: parsed) == Int64(audioAt))
        // A file in its own order maps to itself.
        let plain = Self.caf(audio: audio, trailing: [])
        let same = AudioFileReadingOrder.make(fileSize: Int64(plain.bytes.count)) { offset, count in
            Array(plain.bytes[Int(offset)..<min(plain.bytes.count, Int(offset) + count)])
        }
        #expect(!same.isReordered)
        #expect(same.fileOffset(ofStreamOffset: Int64(plain.audioAt)) == Int64(plain.audioAt))
    }
}
