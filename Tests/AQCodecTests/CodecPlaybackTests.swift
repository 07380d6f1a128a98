import AQConvert
import AQCore
import AQEngine
import AQFileStream
import AQTypes
import Foundation
import Testing

/// Compressed queues (issue 6): files written by ffmpeg, parsed by AQFileStream, decoded at
/// enqueue, rendered on the hand-driven device, compared with ffmpeg's own decode.
@Suite struct CodecPlaybackTests {
    /// A 2.5 s stereo test signal (two sines and noise) at `rate`, encoded with `codec`.
    static func encode(_ fx: CodecFixtures, _ name: String, rate: Int = 44100, codec: [String]) throws -> String {
        let out = fx.path(name)
        try fx.ffmpeg([
            "-f", "lavfi", "-i", "sine=f=440:d=2.5:sample_rate=\(rate)",
            "-f", "lavfi", "-i", "anoisesrc=d=2.5:a=0.1:sample_rate=\(rate):seed=7",
            "-filter_complex", "[0][1]amerge=inputs=2[a]", "-map", "[a]", "-ac", "2",
        ] + codec + [out])
        return out
    }

    func check(_ file: String, hint: FourCharCode? = nil, expectGapless: Bool, _ fx: CodecFixtures) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        if file.hasSuffix(".caf") { bytes = cafWithPacketTableFirst(bytes) }
        let parsed = try parseFile(bytes, hint: hint)
        let channels = Int(parsed.format.channelsPerFrame)
        let reference = try fx.ffmpegDecode(file, channels: channels)
        let n = reference[0].count
        let r = try renderOffline(parsed)
        #expect((parsed.packetTable != nil) == expectGapless)
        if let pt = parsed.packetTable, pt.numberValidFrames > 0 {
            // MP3: the LAME tag's length is the source's, and ffmpeg trims to it too. ffmpeg's
            // ALAC CAF records whole packets as valid (docs/file-stream.md) while its last packet
            // is short: the decoder's own count is the length there.
            #expect(Int(pt.numberValidFrames) >= n)
            if parsed.format.formatID == AudioFormatID.mpegLayer3 { #expect(Int(pt.numberValidFrames) == n) }
        }
        #expect(r.frames == n, "same length as ffmpeg's decode")
        let d = maxDifference(r.output, reference, frames: n)
        #expect(d <= 1e-4, "max difference \(d)")
        // Nothing after the end.
        #expect(r.output.allSatisfy { $0[n...].allSatisfy { $0 == 0 } })
        #expect(r.corruptPackets == 0)
    }

    @Test func mp3MatchesFFmpegDecodeWithGaplessTrim() throws {
        let fx = try CodecFixtures()
        let f = try Self.encode(fx, "t.mp3", codec: ["-c:a", "libmp3lame", "-b:a", "192k"])
        try check(f, expectGapless: true, fx)
    }

    @Test func adtsAACMatchesFFmpegDecode() throws {
        let fx = try CodecFixtures()
        let f = try Self.encode(fx, "t.aac", codec: ["-c:a", "aac", "-b:a", "160k", "-f", "adts"])
        try check(f, hint: AudioFileTypeID.aacADTS, expectGapless: false, fx)
    }

    @Test func cafALACMatchesFFmpegDecode() throws {
        let fx = try CodecFixtures()
        let f = try Self.encode(fx, "t.caf", codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        try check(f, expectGapless: true, fx)
    }

    @Test func cafALAC24BitMatchesFFmpegDecode() throws {
        let fx = try CodecFixtures()
        let f = try Self.encode(fx, "t24.caf", rate: 48000, codec: ["-c:a", "alac", "-sample_fmt", "s32p"])
        try check(f, expectGapless: true, fx)
    }

    /// Time/pitch on a compressed queue (issue 22): the decoded (gapless-trimmed) frames go
    /// through SoundTouch, then the rate converter. 2.5 s of ALAC at 44.1 kHz at PlayRate 2 on
    /// a 48 kHz device: round(round(110250 / 2) × 48000 / 44100) = 60000 device frames; at
    /// PlayRate 0.5: 240000; the 440 Hz tone stays 440 Hz.
    @Test(arguments: [(Float(2), Int64(60_000)), (0.5, 240_000)])
    func alacAtAPlayRate(playRate: Float, expected: Int64) throws {
        let fx = try CodecFixtures()
        let f = try Self.encode(fx, "tp.caf", codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        let parsed = try parseFile(cafWithPacketTableFirst([UInt8](try Data(contentsOf: URL(fileURLWithPath: f)))))
        let r = try renderOffline(parsed, deviceRate: 48000) { q in
            try q.setTimePitchEnabled(true)
            try q.setParameter(.playRate, playRate)
        }
        #expect(r.deviceFrames == expected, "scheduled \(r.deviceFrames) device frames")
        // The tone (channel 0 carries sine + noise; zero crossings of its middle half).
        let x = r.output[0].prefix(Int(expected))
        let a = x.count / 4, b = 3 * x.count / 4
        var crossings: [Int] = []
        for i in (a + 1)..<b where x[i - 1] < 0 && x[i] >= 0 { crossings.append(i) }
        let hz = Double(crossings.count - 1) * 48000 / Double(crossings.last! - crossings.first!)
        print("CodecPlaybackTests: ALAC at PlayRate \(playRate): \(r.deviceFrames) device frames, \(hz) Hz by zero crossings")
        #expect(abs(hz - 440) < 0.005 * 440, "\(hz) Hz")
    }

    /// One packet per buffer and odd buffer sizes give the same audio (trims apply across buffers).
    @Test func bufferSizesDoNotChangeTheAudio() throws {
        let fx = try CodecFixtures()
        let f = try Self.encode(fx, "t.mp3", codec: ["-c:a", "libmp3lame", "-b:a", "128k"])
        let parsed = try parseFile([UInt8](try Data(contentsOf: URL(fileURLWithPath: f))))
        let a = try renderOffline(parsed, packetsPerBuffer: 1)
        let b = try renderOffline(parsed, packetsPerBuffer: 7)
        #expect(a.frames == b.frames)
        #expect(maxDifference(a.output, b.output, frames: a.output[0].count) == 0)
    }

    /// An impulse at a known frame of the source plays exactly that many frames after the
    /// queue's start (the priming frames are gone), at the file's rate and on a 48 kHz device.
    @Test(arguments: [44100.0, 48000.0]) func mp3ImpulseLandsOnItsFrame(deviceRate: Double) throws {
        let fx = try CodecFixtures()
        let k = 20_000
        // A mono 44.1 kHz float WAV: silence with one full-scale-ish impulse at frame k.
        let frames = 44100
        var samples = [Float](repeating: 0, count: frames)
        samples[k] = 0.9
        let raw = fx.path("impulse.f32")
        try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
        let mp3 = fx.path("impulse.mp3")
        try fx.ffmpeg(["-f", "f32le", "-ar", "44100", "-ac", "1", "-i", raw, "-c:a", "libmp3lame", "-b:a", "320k", mp3])
        let parsed = try parseFile([UInt8](try Data(contentsOf: URL(fileURLWithPath: mp3))))
        #expect(parsed.packetTable?.numberValidFrames == Int64(frames))
        let r = try renderOffline(parsed, deviceRate: deviceRate)
        let out = r.output[0]
        let peak = out.indices.max { abs(out[$0]) < abs(out[$1]) }!
        let want = Int((Double(k) * deviceRate / 44100).rounded())
        if deviceRate == 44100 {
            #expect(peak == k, "impulse at \(peak), encoded at \(k)")
        } else {
            #expect(abs(peak - want) <= 1, "impulse at \(peak), expected \(want) ± 1")
        }
        #expect(r.frames == Int((Double(frames) * deviceRate / 44100).rounded()), "the original length at the device rate")
    }

    /// 44.1 kHz MP3 on a 48 kHz device goes through the same libsoxr path as PCM: the result
    /// equals a float PCM queue fed ffmpeg's decode, sample for sample.
    @Test func mp3OnA48kDeviceMatchesThePCMPath() throws {
        let fx = try CodecFixtures()
        let f = try Self.encode(fx, "t.mp3", codec: ["-c:a", "libmp3lame", "-b:a", "192k"])
        let parsed = try parseFile([UInt8](try Data(contentsOf: URL(fileURLWithPath: f))))
        let reference = try fx.ffmpegDecode(f, channels: 2)
        let n = reference[0].count
        let r = try renderOffline(parsed, deviceRate: 48000)

        let device = ManualDevice(sampleRate: 48000, channels: 2)
        let engine = try AudioQueueEngine(device: device, capacities: RenderCapacities(queues: 4, buffersPerQueue: 64, commands: 256, outputChannels: 8))
        defer { engine.close() }
        let pcm = AudioStreamBasicDescription.linearPCM(sampleRate: 44100, channels: 2, bits: 32, isFloat: true)
        let q = try engine.newOutput(format: pcm) { _, _ in }
        var i = 0
        while i < n {
            let m = min(4096, n - i)
            let b = try q.allocateBuffer(capacity: 4096 * 8)
            let p = b.audioData.assumingMemoryBound(to: Float.self)
            for j in 0..<m { p[2 * j] = reference[0][i + j]; p[2 * j + 1] = reference[1][i + j] }
            b.audioDataByteSize = m * 8
            try q.enqueue(b)
            i += m
        }
        try q.flush()
        _ = try engine.start([q], at: AudioTimeStamp(sampleTime: 0))
        let expected = device.render(frames: r.output[0].count, cycle: 256)
        let outN = Int((Double(n) * 48000 / 44100).rounded())
        #expect(r.frames == outN)
        let d = maxDifference(r.output, expected, frames: outN + 100)
        #expect(d <= 1e-4, "max difference \(d)")
    }
}

/// A damaged packet in the middle of a stream (issue 6, errors).
@Suite struct CorruptPacketTests {
    /// An ALAC CAF whose middle packet is overwritten in the file: the track plays to its end,
    /// the damaged packet's frames are silence, every other frame equals ffmpeg's decode of
    /// the undamaged file at its own place, and the damage is counted.
    @Test func damagedALACPacketIsSilentAndLaterAudioKeepsItsPlace() throws {
        let fx = try CodecFixtures()
        let f = try CodecPlaybackTests.encode(fx, "t.caf", codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        var bytes = cafWithPacketTableFirst([UInt8](try Data(contentsOf: URL(fileURLWithPath: f))))
        let clean = try parseFile(bytes)
        let reference = try fx.ffmpegDecode(f, channels: 2)
        let k = clean.packets.count / 2
        // Damage packet k in the file itself: its bytes follow the data chunk's 4-byte edit count.
        let offset = Int(clean.dataOffset) + clean.packets[..<k].reduce(0) { $0 + $1.bytes.count }
        #expect(Array(bytes[offset..<(offset + 8)]) == Array(clean.packets[k].bytes.prefix(8)))
        for i in 0..<clean.packets[k].bytes.count { bytes[offset + i] = 0xFF }
        let damaged = try parseFile(bytes)
        #expect(damaged.packets.count == clean.packets.count)
        let r = try renderOffline(damaged)
        #expect(r.corruptPackets == 1)
        let n = reference[0].count
        #expect(r.frames == n, "plays to the end, same length")
        let spf = Int(clean.format.framesPerPacket)
        let hole = (k * spf)..<((k + 1) * spf)
        var worst: Float = 0
        for c in 0..<2 {
            for i in 0..<n where !hole.contains(i) { worst = max(worst, abs(r.output[c][i] - reference[c][i])) }
            #expect(r.output[c][hole].allSatisfy { $0 == 0 }, "the damaged packet plays as silence")
        }
        #expect(worst <= 1e-4, "every other frame in its place: max difference \(worst)")
    }

    /// An MP3 packet zeroed at enqueue (its header gone): silence for its 1152 frames, counted,
    /// the queue keeps playing and later frames keep their place.
    @Test func zeroedMP3PacketIsSkippedInSync() throws {
        let fx = try CodecFixtures()
        let f = try CodecPlaybackTests.encode(fx, "t.mp3", codec: ["-c:a", "libmp3lame", "-b:a", "128k"])
        let parsed = try parseFile([UInt8](try Data(contentsOf: URL(fileURLWithPath: f))))
        let clean = try renderOffline(parsed)
        let k = parsed.packets.count / 2
        let r = try renderOffline(parsed, replace: [k: [UInt8](repeating: 0, count: parsed.packets[k].bytes.count)])
        #expect(r.corruptPackets == 1)
        #expect(r.frames == clean.frames)
        // Decoded frame positions: packet k covers [k·1152, (k+1)·1152) before priming is cut;
        // the bit reservoir (main data reaching back into earlier frames) and the overlap spoil
        // the next few packets too (measured: up to 900 frames into packet k + 3). Everything
        // from packet k + 4 on is identical: nothing moved.
        let priming = Int(parsed.packetTable!.primingFrames)
        let holeStart = k * 1152 - priming
        let resume = (k + 4) * 1152 - priming
        #expect(r.output[0][holeStart..<(holeStart + 1152)].allSatisfy { $0 == 0 })
        #expect(maxDifference([Array(r.output[0][..<holeStart])], [Array(clean.output[0][..<holeStart])], frames: holeStart) == 0)
        let tailN = clean.frames - resume
        let d = maxDifference(
            [Array(r.output[0][resume...]), Array(r.output[1][resume...])],
            [Array(clean.output[0][resume...]), Array(clean.output[1][resume...])], frames: tailN)
        let bad = (resume..<clean.frames).filter { abs(r.output[0][$0] - clean.output[0][$0]) > 1e-4 }
        #expect(d <= 1e-4, "later audio in its place: max difference \(d), first bad \(bad.first ?? -1) last \(bad.last ?? -1) count \(bad.count), resume \(resume)")
    }
}

/// Result codes of the compressed-queue API.
@Suite struct CodecResultCodeTests {
    @Test func cookieAndDescriptionCodes() throws {
        let device = ManualDevice(sampleRate: 48000, channels: 2)
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let alac = AudioStreamBasicDescription(
            sampleRate: 44100, formatID: AudioFormatID.appleLossless, formatFlags: [], bytesPerPacket: 0,
            framesPerPacket: 4096, bytesPerFrame: 0, channelsPerFrame: 2, bitsPerChannel: 0)
        let q = try engine.newOutput(format: alac) { _, _ in }
        func code(_ f: () throws -> Void) -> AudioQueueError.Code? {
            do { try f(); return nil } catch { return (error as? AudioQueueError)?.code }
        }
        #expect(code { _ = try q.allocateBuffer(capacity: 1024) } == .invalidParameter)
        let b = try q.allocateBuffer(capacity: 1024, packetDescriptions: 2)
        b.audioDataByteSize = 10
        b.packetDescriptions![0] = AudioStreamPacketDescription(startOffset: 0, variableFramesInPacket: 0, dataByteSize: 10)
        b.packetDescriptionCount = 1
        // No magic cookie yet: the reference says it must be set before enqueuing.
        #expect(code { try q.enqueue(b) } == .invalidProperty)
        #expect(code { try q.setMagicCookie([]) } == .invalidPropertySize)
        #expect(code { try q.setMagicCookie([1, 2, 3]) } == .unsupportedDataFormat)
        let pcm = try engine.newOutput(format: .linearPCM(sampleRate: 48000, channels: 2, bits: 16)) { _, _ in }
        #expect(code { try pcm.setMagicCookie([1]) } == .invalidProperty)
        #expect(code { try pcm.setGaplessInfo(nil) } == .invalidProperty)
        #expect(code { try q.setGaplessInfo(AudioFilePacketTableInfo(numberValidFrames: 0, primingFrames: -1, remainderFrames: 0)) } == .invalidParameter)
        #expect(q.corruptPacketCount == 0)
    }
}
