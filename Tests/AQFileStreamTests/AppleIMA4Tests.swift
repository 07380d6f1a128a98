import AQFileStream
import AQTypes
import Foundation
import Testing

// Issue 23: Apple IMA4 ('ima4') in AIFC and CAF, as ffmpeg's adpcm_ima_qt encoder writes them:
// Core Audio's description (34 × channels bytes and 64 frames a packet, no bits a channel) and
// constant-size packets, whatever the split.

@Suite struct AppleIMA4ParsingTests {
    /// The description, the packet and byte counts and the audio bytes against ffprobe's packets
    /// (ffmpeg's demuxers group blocks into larger packets: their sums are compared) and the
    /// file's own bytes.
    @Test(arguments: [("t.aiff", 2, 44100), ("t.caf", 2, 44100), ("m.caf", 1, 22050), ("m.aiff", 1, 8000)])
    func matchesFFprobe(name: String, channels: Int, rate: Int) throws {
        let fx = try Fixtures()
        let file = fx.path(name)
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=1.3:sample_rate=\(rate)", "-ac", "\(channels)", "-c:a", "adpcm_ima_qt", file])
        let bytes = try fx.read(file)
        let probe = try ffprobePackets(fx, file)
        let probeFrames = probe.reduce(0) { $0 + $1.frames }, probeBytes = probe.reduce(0) { $0 + $1.bytes }
        let packetBytes = 34 * channels
        for split in [Split.whole, .bytewise, .random(7)] {
            let r = parse(bytes, split: split)
            #expect(r.error == nil, "\(split): \(String(describing: r.error))")
            #expect(r.format == .appleIMA4(sampleRate: Double(rate), channels: UInt32(channels)), "\(split): \(String(describing: r.format))")
            let packets = try #require(r.uint64(.audioDataPacketCount), "\(split): no packet count")
            #expect(Int(packets) * 64 == probeFrames, "\(split): \(packets) packets, ffprobe \(probeFrames) frames")
            #expect(r.packetCount == Int(packets) && r.sizes.isEmpty, "\(split): \(r.packetCount) packets delivered")
            #expect(r.data.count == probeBytes && r.data.count == Int(packets) * packetBytes, "\(split): \(r.data.count) bytes, ffprobe \(probeBytes)")
            let offset = try #require(r.int64(.dataOffset))
            #expect(Array(bytes[Int(offset)..<(Int(offset) + r.data.count)]) == r.data, "\(split): the packets are the file's bytes")
            #expect(r.uint32(.maximumPacketSize) == UInt32(packetBytes), "\(split)")
        }
    }

    /// A CAF description of IMA4 with another packet shape is refused ('dta?', not read as
    /// packets a decoder would misread).
    @Test func cafWithAnotherPacketShapeIsRefused() throws {
        let fx = try Fixtures()
        let file = fx.path("t.caf")
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=d=0.2", "-c:a", "adpcm_ima_qt", file])
        var bytes = try fx.read(file)
        // desc: 8-byte file header, 12-byte chunk header, rate (8), ID (4), flags (4), then
        // bytes per packet.
        #expect(bytes[28..<32] == [0x69, 0x6D, 0x61, 0x34])
        bytes[39] = 33
        let r = parse(bytes)
        #expect(r.error != nil && r.error?.detail.contains("ima4") == true, "\(String(describing: r.error))")
    }
}
