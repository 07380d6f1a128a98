import AQFileStream
import AQTypes
import Foundation
import Testing

/// Issue 23: MPEG Layer II streams and AAC streams taken for HE-AAC go through the split
/// verifier (any split gives the same properties and packets; with AQFS_FUZZ_CORPUS they seed
/// `make fuzz`), with their data format, file type and format list checked.
@Suite struct MPEGLayerAndHEAACStreamTests {
    @Test(arguments: [
        ("t.mp2", ["-ar", "44100", "-ac", "2", "-c:a", "mp2", "-b:a", "192k"], 44100.0, 2),
        ("lsf.mp2", ["-ar", "24000", "-ac", "2", "-c:a", "mp2", "-b:a", "64k"], 24000.0, 2),
        ("mono.mp2", ["-ar", "48000", "-ac", "1", "-c:a", "libtwolame", "-b:a", "96k"], 48000.0, 1),
    ])
    func layerII(name: String, args: [String], rate: Double, channels: Int) throws {
        let fx = try Fixtures()
        let p = fx.path(name)
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=1000:d=1"] + args + ["-f", "mp2", p])
        let bytes = try fx.read(p)
        verifySplits(bytes)
        let r = parse(bytes)
        #expect(r.format?.formatID == AudioFormatID.mpegLayer2)
        #expect(r.format?.framesPerPacket == 1152 && r.format?.sampleRate == rate && r.format?.channelsPerFrame == UInt32(channels))
        #expect(r.uint32(.fileFormat) == AudioFileTypeID.mp2.rawValue)
        #expect(r.packetCount > 0 && r.sizes.allSatisfy { $0 <= 1729 })
        // The same with the file type hint, and a Layer III hint does not change what is found.
        #expect(parse(bytes, hint: AudioFileTypeID.mp2).format == r.format)
        #expect(parse(bytes, hint: AudioFileTypeID.mp3).format == r.format)
    }

    @Test func adtsAndM4AWithSBR() throws {
        let fx = try Fixtures()
        let adts = fx.path("he.aac"), m4a = fx.path("he.m4a")
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=1000:d=1", "-ar", "22050", "-ac", "1", "-c:a", "aac", "-f", "adts", adts])
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=1000:d=1", "-ar", "22050", "-ac", "2", "-c:a", "aac", "-movflags", "+faststart", m4a])
        let a = try fx.read(adts)
        verifySplits(a)
        let pa = parse(a)
        guard case .formatList(let la)? = pa.values[.formatList] else { Issue.record("no format list"); return }
        #expect(la.map(\.format.formatID) == [AudioFormatID.mpeg4AAC_HE_V2, AudioFormatID.mpeg4AAC_HE, AudioFormatID.mpeg4AAC])
        var m = try fx.read(m4a)
        // Signal SBR explicitly in ffmpeg's 5-byte AudioSpecificConfig (see HEAACTests).
        let asc: [UInt8] = [0x13, 0x90, 0x56, 0xE5, 0x00]
        let at = try #require((0..<(m.count - 5)).first { Array(m[$0..<($0 + 5)]) == asc })
        m[at + 4] = 0xA0
        verifySplits(m)
        let pm = parse(m)
        guard case .formatList(let lm)? = pm.values[.formatList] else { Issue.record("no format list"); return }
        #expect(lm.map(\.format.formatID) == [AudioFormatID.mpeg4AAC_HE, AudioFormatID.mpeg4AAC])
        #expect(pm.format?.sampleRate == 22050)
        #expect(pm.frames.dropLast().allSatisfy { $0 == 1024 }, "sample durations in the core's frames")
    }
}
