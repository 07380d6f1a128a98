import AQConvert
import AQCore
import AQEngine
import AQFileStream
import AQSession
import AQTypes
import Foundation
import Testing

/// MPEG-1/2 Layer I and II (issue 23): parsed as `.mp1`/`.mp2` (`MPG1`/`MPG2` files), played
/// by a queue on the hand-driven device, compared with ffmpeg's own decoding.
@Suite struct MPEGLayerTests {
    @Test(arguments: [
        ("t.mp2", ["-c:a", "mp2", "-b:a", "192k"], 44100),
        ("twolame.mp2", ["-c:a", "libtwolame", "-b:a", "160k"], 48000),
        ("lsf.mp2", ["-c:a", "mp2", "-b:a", "64k"], 24000),
    ])
    func layerIIMatchesFFmpegDecode(name: String, codec: [String], rate: Int) throws {
        let fx = try CodecFixtures()
        let f = try CodecPlaybackTests.encode(fx, name, rate: rate, codec: codec + ["-f", "mp2"])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: f)))
        let parsed = try parseFile(bytes)
        #expect(parsed.format.formatID == AudioFormatID.mpegLayer2)
        #expect(parsed.format.framesPerPacket == 1152)
        #expect(parsed.format.sampleRate == Double(rate))
        var fileType: FourCharCode?
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        try s.parse(bytes)
        fileType = s.fileType
        #expect(fileType == AudioFileTypeID.mp2)
        #expect(try s.formatItems().count == 1)
        try CodecPlaybackTests().check(f, expectGapless: false, fx)
    }

    /// A session (the code of `aqsync render`) plays an MP2 track: ffmpeg's decode, its length.
    @Test func layerIISessionRenderMatchesFFmpeg() throws {
        let fx = try CodecFixtures()
        let f = try CodecPlaybackTests.encode(fx, "s.mp2", rate: 48000, codec: ["-c:a", "mp2", "-b:a", "256k"])
        let reference = try fx.ffmpegDecode(f, channels: 2)
        let wav = try SessionCodecTests().render(fx, file: f, rate: 48000)
        #expect(wav.frameCount == reference[0].count, "same length as ffmpeg's decode")
        let d = maxDifference(Array(wav.channels.prefix(2)), reference, frames: min(wav.frameCount, reference[0].count))
        #expect(d <= 1e-4, "max difference \(d)")
    }

    /// ffmpeg has no Layer I encoder: a stream of valid Layer I frames whose bit allocations
    /// are all zero (silence) is built by hand.
    @Test func layerIFramesParseAndDecode() throws {
        // MPEG-1 Layer I, no CRC, 384 kbit/s, 44.1 kHz, stereo: (12 × 384000 / 44100) × 4 = 416 bytes.
        var frame = [UInt8](repeating: 0, count: 416)
        frame[0] = 0xFF; frame[1] = 0xFF; frame[2] = 0xC0; frame[3] = 0x00
        let bytes = Array([[UInt8]](repeating: frame, count: 30).joined())
        let parsed = try parseFile(bytes)
        #expect(parsed.format.formatID == AudioFormatID.mpegLayer1)
        #expect(parsed.format.framesPerPacket == 384)
        #expect(parsed.packets.count == 30)
        let r = try renderOffline(parsed)
        #expect(r.corruptPackets == 0)
        #expect(r.frames == 30 * 384)
        #expect(r.output.allSatisfy { $0.allSatisfy { $0 == 0 } })
    }
}

extension AudioFileStream {
    /// The format list's items.
    func formatItems() throws -> [AudioFormatListItem] {
        guard case .formatList(let l) = try value(of: .formatList) else { return [] }
        return l
    }
}

/// HE-AAC (issue 23). ffmpeg 5.1 has no HE-AAC encoder here (its `aac` encoder is LC only and
/// libfdk_aac is not built in), so the fixtures are LC streams at 22.05 kHz: ADTS (implicit
/// signalling: taken for HE because the core runs at 24 kHz or less, as Apple's parser does) and
/// M4A whose AudioSpecificConfig is patched to signal SBR explicitly (ffmpeg's encoder writes the
/// sync extension with SBR marked absent; the patch sets the flag and the 44.1 kHz output rate in
/// the same 5 bytes). An HE decoder given such a stream upsamples the core (there is no SBR data
/// to add): the test checks the rates, frames per packet, the format list, that no packet counts
/// as corrupt, and the tone's frequency and level.
@Suite struct HEAACTests {
    static func tone(_ fx: CodecFixtures, _ name: String, channels: Int, extra: [String]) throws -> String {
        let out = fx.path(name)
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=1000:d=2:sample_rate=22050", "-ac", "\(channels)",
                       "-c:a", "aac", "-b:a", "64k"] + extra + [out])
        return out
    }

    /// Goertzel power at `f` relative to the signal's power (≈ 1 for a pure tone at f).
    static func toneShare(_ x: ArraySlice<Float>, rate: Double, f: Double) -> Double {
        let w = 2 * Double.pi * f / rate
        var s1 = 0.0, s2 = 0.0, energy = 0.0
        for v in x {
            let s = Double(v) + 2 * cos(w) * s1 - s2
            s2 = s1; s1 = s
            energy += Double(v) * Double(v)
        }
        let p = s1 * s1 + s2 * s2 - 2 * cos(w) * s1 * s2
        return energy > 0 ? 2 * p / (Double(x.count) * energy) : 0
    }

    static func rms(_ x: ArraySlice<Float>) -> Double {
        (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(x.count, 1))).squareRoot()
    }

    func playBothWays(_ parsed: ParsedFile, items: [AudioFormatListItem]) throws {
        // The LC core: plays at 22.05 kHz, nothing corrupt.
        let core = try renderOffline(parsed)
        #expect(core.corruptPackets == 0)
        #expect(core.frames == Int(parsed.packetTable?.numberValidFrames ?? Int64(parsed.packets.count * 1024)))
        // HE (the first item a player can decode): twice the rate, 2048 frames a packet.
        let he = items[0].format
        var p = parsed
        p.format = he
        p.packets = parsed.packets.map { ($0.bytes, 0) }
        // The parser's packet table counts the data format's (the core's) frames; an HE queue's
        // gapless window counts its own, twice as many.
        let r = try renderOffline(p, gapless: false) { q in
            if let pt = parsed.packetTable {
                try q.setGaplessInfo(AudioFilePacketTableInfo(
                    numberValidFrames: 2 * pt.numberValidFrames, primingFrames: 2 * pt.primingFrames, remainderFrames: 2 * pt.remainderFrames))
            }
        }
        #expect(r.corruptPackets == 0)
        #expect(r.frames == 2 * core.frames)
        #expect(r.output.count == Int(he.channelsPerFrame))
        for c in 0..<r.output.count {
            let mid = r.output[c][20000..<60000]
            let coreMid = core.output[min(c, core.output.count - 1)][10000..<30000]
            let share = Self.toneShare(mid, rate: he.sampleRate, f: 1000)
            #expect(share > 0.95, "channel \(c): 1 kHz holds \(share) of the power")
            let level = 20 * log10(Self.rms(mid) / Self.rms(coreMid))
            #expect(abs(level) < 1, "channel \(c): HE level vs core \(level) dB")
        }
    }

    @Test(arguments: [1, 2]) func adtsAt22kHzListsHEFirst(channels: Int) throws {
        let fx = try CodecFixtures()
        let f = try Self.tone(fx, "t\(channels).aac", channels: channels, extra: ["-f", "adts"])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: f)))
        let s = try AudioFileStream(fileTypeHint: AudioFileTypeID.aacADTS, propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        try s.parse(bytes)
        let items = try s.formatItems()
        let ids = items.map(\.format.formatID)
        if channels == 1 {
            #expect(ids == [AudioFormatID.mpeg4AAC_HE_V2, AudioFormatID.mpeg4AAC_HE, AudioFormatID.mpeg4AAC])
            #expect(items[0].format.channelsPerFrame == 2 && items[0].channelLayoutTag == AudioChannelLayoutTag.stereo)
            #expect(items[1].format.channelsPerFrame == 1)
        } else {
            #expect(ids == [AudioFormatID.mpeg4AAC_HE, AudioFormatID.mpeg4AAC])
        }
        for item in items.dropLast() {
            #expect(item.format.sampleRate == 44100 && item.format.framesPerPacket == 2048)
        }
        #expect(items.last!.format == s.dataFormat!)
        #expect(s.dataFormat!.sampleRate == 22050 && s.dataFormat!.framesPerPacket == 1024)
        let parsed = try parseFile(bytes, hint: AudioFileTypeID.aacADTS)
        try playBothWays(parsed, items: items)
        // The core decode is ffmpeg's (no SBR data: ffmpeg decodes at 22.05 kHz too).
        let reference = try fx.ffmpegDecode(f, channels: channels)
        let core = try renderOffline(parsed)
        #expect(maxDifference(core.output, reference, frames: reference[0].count) <= 1e-4)
    }

    @Test func adtsAt44kHzIsLCOnly() throws {
        let fx = try CodecFixtures()
        let out = fx.path("t44.aac")
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=1000:d=1:sample_rate=44100", "-c:a", "aac", "-f", "adts", out])
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        try s.parse([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))))
        #expect(try s.formatItems().map(\.format.formatID) == [AudioFormatID.mpeg4AAC])
    }

    @Test func m4aWithExplicitSBRListsHEFirstAndMatchesFFmpeg() throws {
        let fx = try CodecFixtures()
        let f = try Self.tone(fx, "t.m4a", channels: 2, extra: ["-movflags", "+faststart"])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: f)))
        // ffmpeg's AudioSpecificConfig: LC, 22.05 kHz (index 7), 2 channels, GA 000, then
        // 0x2B7, object type 5, SBR absent: 0x13 0x90 0x56 0xE5 0x00. Set SBR present, output
        // rate index 4 (44.1 kHz): the last byte becomes 1 0100 000.
        let asc: [UInt8] = [0x13, 0x90, 0x56, 0xE5, 0x00]
        var at: Int?
        for i in 0..<(bytes.count - 5) where Array(bytes[i..<(i + 5)]) == asc { at = i }
        let a = try #require(at, "ffmpeg's esds AudioSpecificConfig")
        bytes[a + 4] = 0xA0
        let patched = fx.path("he.m4a")
        try Data(bytes).write(to: URL(fileURLWithPath: patched))
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        try s.parse(bytes)
        let items = try s.formatItems()
        #expect(items.map(\.format.formatID) == [AudioFormatID.mpeg4AAC_HE, AudioFormatID.mpeg4AAC])
        #expect(items[0].format.sampleRate == 44100 && items[0].format.framesPerPacket == 2048)
        #expect(s.dataFormat!.sampleRate == 22050 && s.dataFormat!.formatID == AudioFormatID.mpeg4AAC)
        #expect(s.dataFormat!.formatFlags.rawValue == 2)
        let parsed = try parseFile(bytes)
        #expect(parsed.packets.allSatisfy { $0.frames == 1024 || $0.frames < 1024 }, "durations in the core's frames")
        try playBothWays(parsed, items: items)
        // ffmpeg decodes the patched file with SBR too, at 44.1 kHz: the same libavcodec path,
        // so the two agree sample for sample once aligned (ffmpeg trims the edit list's priming).
        let reference = try fx.ffmpegDecode(patched, channels: 2)
        var p = parsed
        p.format = items[0].format
        p.packets = parsed.packets.map { ($0.bytes, 0) }
        let ours = try renderOffline(p, gapless: false)
        var best = (lag: -1, diff: Float.infinity)
        for lag in 0...4096 {
            var d: Float = 0
            for i in 20000..<24000 {
                d = max(d, abs(ours.output[0][i + lag] - reference[0][i]))
                if d >= best.diff { break }
            }
            if d < best.diff { best = (lag, d) }
        }
        #expect(best.diff <= 1e-4, "best alignment: lag \(best.lag), max difference \(best.diff)")
        print("HE M4A vs ffmpeg: lag \(best.lag), max difference \(best.diff)")
    }

    /// CAF: the config is in the `kuki` esds. This project's encoder (ffmpeg's) signals SBR
    /// absent, so its 22.05 kHz AAC is LC only; the same file with SBR signalled lists HE first.
    @Test(arguments: [false, true]) func cafListsHEWhenItsCookieSignalsSBR(signalled: Bool) throws {
        let fx = try CodecFixtures()
        let format = AudioStreamBasicDescription(sampleRate: 22050, formatID: AudioFormatID.mpeg4AAC, formatFlags: AudioFormatFlags(rawValue: 2),
                                                 bytesPerPacket: 0, framesPerPacket: 1024, bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0)
        let e = try PacketEncoder(format: format)
        var packets: [[UInt8]] = []
        e.encode(frames: 22050, into: &packets) { _, i in Float(sin(2 * Double.pi * 1000 * Double(i) / 22050) * 0.5) }
        let remainder = e.finish(into: &packets)
        var cookie = e.magicCookie
        let asc: [UInt8] = [0x13, 0x90, 0x56, 0xE5, 0x00]
        let at = try #require((0..<(cookie.count - 5)).first { Array(cookie[$0..<($0 + 5)]) == asc }, "the encoder's config in its esds")
        if signalled { cookie[at + 4] = 0xA0 }
        let url = URL(fileURLWithPath: fx.path("t.caf"))
        let w = try CAFPacketWriter(url: url, format: e.format, magicCookie: cookie)
        var bytes: [UInt8] = []
        var descriptions: [AudioStreamPacketDescription] = []
        for p in packets {
            descriptions.append(AudioStreamPacketDescription(startOffset: Int64(bytes.count), variableFramesInPacket: 0, dataByteSize: UInt32(p.count)))
            bytes += p
        }
        try bytes.withUnsafeBytes { try w.write($0, descriptions: descriptions) }
        try w.finish(primingFrames: e.primingFrames, remainderFrames: remainder)
        let file = try CompressedFileReader(url: url)
        #expect(file.format.formatID == AudioFormatID.mpeg4AAC && file.format.sampleRate == 22050)
        var data = [UInt8](try Data(contentsOf: url))
        data = cafWithPacketTableFirst(data)
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        try s.parse(data)
        let ids = try s.formatItems().map(\.format.formatID)
        #expect(ids == (signalled ? [AudioFormatID.mpeg4AAC_HE, AudioFormatID.mpeg4AAC] : [AudioFormatID.mpeg4AAC]))
    }

    @Test func decoderConfigsNameTheLayers() throws {
        // Plain LC 22.05 kHz stereo (2 bytes, as ADTS gives it): not signalled.
        let c = try #require(AACStreamConfig(audioSpecificConfig: [0x13, 0x90]))
        #expect(c.sbr == nil && c.isHE && !c.isHEv2 && c.outputSampleRate == 44100)
        // Explicit hierarchical: object type 5, core 22.05 kHz, stereo, output 44.1 kHz, then LC.
        let e = try #require(AACStreamConfig(audioSpecificConfig: [0x2B, 0x92, 0x08, 0x00]))
        #expect(e.sbr == true && e.coreObjectType == 2 && e.coreSampleRate == 22050 && e.extensionSampleRate == 44100)
        // ffmpeg's 44.1 kHz LC with SBR signalled absent.
        let n = try #require(AACStreamConfig(audioSpecificConfig: [0x12, 0x10, 0x56, 0xE5, 0x00]))
        #expect(n.sbr == false && !n.isHE)
        // Rebuilt configs parse back to what they say.
        let he = try #require(c.decoderConfig(sbr: true, ps: true))
        let back = try #require(AACStreamConfig(audioSpecificConfig: he))
        #expect(back.sbr == true && back.ps == true && back.extensionSampleRate == 44100 && back.coreSampleRate == 22050)
        let lc = try #require(c.decoderConfig(sbr: false, ps: false))
        #expect(AACStreamConfig(audioSpecificConfig: lc)?.sbr == false)
        // A queue accepts the HE formats.
        let f = AudioStreamBasicDescription(sampleRate: 44100, formatID: AudioFormatID.mpeg4AAC_HE_V2, formatFlags: [],
                                            bytesPerPacket: 0, framesPerPacket: 2048, bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0)
        #expect(PacketDecoder.canDecode(f) && PacketDecoder.needsMagicCookie(f))
        let d = try PacketDecoder(format: f, magicCookie: [0x13, 0x88])  // mono core
        #expect(d.maximumFramesPerPacket == 2048 && d.channelCount == 2)
    }
}
