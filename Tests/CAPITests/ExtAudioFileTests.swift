import AQTesting
import Foundation
import Testing

/// Extended Audio File Services through C (issue 23): a file read through as 32-bit floats gives
/// exactly the samples `ffmpeg -f f32le` decodes, and every read after a seek gives exactly the
/// frames read through (`extaudiofile_read.c`, which also checks a 16-bit non-interleaved client
/// format, a wrapped AudioFileID and the result codes). No server.
@Suite struct CAPIExtAudioFileTests {
    /// The files: name and encoder. ffmpeg's and this library's lengths differ where their
    /// trimming does (an M4A's remainder, which ffmpeg keeps; an Ogg file's end, which the parser
    /// does not read): the samples both give are compared.
    static let fixtures: [(String, String)] = [
        ("s16.wav", "-c:a pcm_s16le"), ("s24.aiff", "-c:a pcm_s24be"), ("adts.aac", "-c:a aac -b:a 128k -f adts"),
        ("aac.m4a", "-c:a aac -b:a 128k"), ("t.mp3", "-c:a libmp3lame -b:a 128k"), ("alac.caf", "-c:a alac -f caf"),
        ("alac.m4a", "-c:a alac"), ("t.flac", "-c:a flac"), ("t.opus", "-c:a libopus -ar 48000"),
        ("t.mp2", "-c:a mp2 -b:a 192k"), ("ima4.aiff", "-c:a adpcm_ima_qt"),
    ]

    @Test(arguments: fixtures)
    func readsWhatFFmpegDecodesAndSeeksExactly(name: String, encoder: String) throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("extaudiofile")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent(name).path
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=3 -ac 2 \(encoder) '\(file)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/extaudiofile_read.c", name: "extaudiofile_read-\(name)")
        let ours = file + ".ours.f32", theirs = file + ".ffmpeg.f32"
        // Bit for bit ffmpeg's decoding: MP3 through ffmpeg's decoder too (libmpg123's, the
        // default, differs by rounding; MPG123DecoderTests compares it; docs/codecs.md).
        let r = try CAPI.run(exe, [file, ours], environment: ["AQSYNC_MP3_DECODER": "libavcodec"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        let d = try CAPI.shell("ffmpeg -loglevel error -y -i '\(file)' -f f32le '\(theirs)'")
        try #require(d.status == 0, "\(d.output)")
        let a = try Data(contentsOf: URL(fileURLWithPath: ours)), b = try Data(contentsOf: URL(fileURLWithPath: theirs))
        let n = min(a.count, b.count)
        #expect(n > 0 && Double(n) >= 0.97 * Double(max(a.count, b.count)), "\(name): \(a.count / 8) frames read, ffmpeg \(b.count / 8)")
        // A Bool: Swift Testing would diff two differing Data values byte by byte (minutes).
        let same = a.prefix(n) == b.prefix(n)
        #expect(same, "\(name): the samples differ from ffmpeg's at byte \(zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")
    }

    /// Writing (`extaudiofile_write.c`): a second of a tone from a float client into a 16-bit
    /// WAVE, ALAC and AAC in CAF and in M4A, and a 16-bit non-interleaved client's ramps into a 24-bit AIFF,
    /// each read back by the program. Here ffmpeg decodes them: the WAVE and the ALAC to the
    /// same 44,100 frames (both the tone at 16 bits by one rule), the AIFF to the ramps exactly,
    /// the AAC to 44,100 frames and the encoder's priming and remainder (ffmpeg does not apply
    /// a CAF's packet table).
    @Test func writesWhatFFmpegDecodes() throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("extaudiofile-written")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let exe = try CAPI.build("Tests/CAPIPrograms/extaudiofile_write.c")
        let r = try CAPI.run(exe, [dir.path])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        func decoded(_ name: String) throws -> Data {
            let file = dir.appendingPathComponent(name).path
            let d = try CAPI.shell("ffmpeg -loglevel error -y -i '\(file)' -f f32le '\(file).f32'")
            try #require(d.status == 0, "\(d.output)")
            return try Data(contentsOf: URL(fileURLWithPath: file + ".f32"))
        }
        let wav = try decoded("tone.wav"), alac = try decoded("tone-alac.caf"), aac = try decoded("tone-aac.caf"), aiff = try decoded("tone.aiff")
        #expect(wav.count == 44100 * 8 && alac == wav, "WAVE \(wav.count / 8) frames, ALAC \(alac.count / 8), equal: \(alac == wav)")
        #expect(aac.count >= 44100 * 8 && aac.count <= (44100 + 3072) * 8, "AAC: \(aac.count / 8) frames")
        // M4A: ALAC as the WAVE; AAC with its priming left out by ffmpeg (the edit list), the
        // same samples as the CAF's after them.
        let alacM4A = try decoded("tone-alac.m4a"), aacM4A = try decoded("tone-aac.m4a")
        #expect(alacM4A == wav, "ALAC in M4A: \(alacM4A.count / 8) frames")
        let priming = aac.count - aacM4A.count
        #expect(aacM4A.count >= 44100 * 8 && priming > 0 && aac.subdata(in: priming..<aac.count) == aacM4A,
                "AAC in M4A: \(aacM4A.count / 8) frames, the CAF's \(aac.count / 8)")
        var ramps = Data()
        for i in 0..<44100 {
            for v in [Int16(truncatingIfNeeded: i * 7), Int16(truncatingIfNeeded: -i * 5)] {
                withUnsafeBytes(of: (Float(v) / 32768).bitPattern.littleEndian) { ramps.append(contentsOf: $0) }
            }
        }
        #expect(aiff == ramps, "the AIFF decodes to the ramps written (\(aiff.count / 8) frames)")
    }
}

/// ExtAudioFile reading into a client format with another channel count (issue 23):
/// `extaudiofile_channels.c` reads stereo files (PCM and MP3) as mono (the left channel) and as
/// 3 channels (left, right, silence), also after a seek, against the stereo read. No server.
@Suite struct CAPIExtAudioFileChannelTests {
    @Test(arguments: [("s16.wav", "-c:a pcm_s16le"), ("t.mp3", "-c:a libmp3lame -b:a 128k")])
    func clientChannelsDifferFromTheFile(name: String, encoder: String) throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("extaudiofile-channels")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent(name).path
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=2 -af 'pan=stereo|c0=c0|c1=0.5*c0' \(encoder) '\(file)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/extaudiofile_channels.c", name: "extaudiofile_channels-\(name)")
        let r = try CAPI.run(exe, [file])
        #expect(r.status == 0 && r.output.contains(" 0 failed"), "\(r.output)")
    }
}

/// ExtAudioFile with a client format at another rate than the file's (issue 23):
/// `extaudiofile_rate.c` reads a stereo tone at the client's rate (exactly round(L × client /
/// file) frames, levels and frequency kept), checks seeks and Tell in file frames, and writes
/// the read-through back through a client at that rate into a WAVE and an ALAC CAF at the
/// file's rate. Here the read-through is compared with ffmpeg's libsoxr resampling of the same
/// file (`aresample=resampler=soxr:precision=20`): the same number of frames, and samples within
/// 1e-5 over the middle 80 % (4e-7 measured). ADTS rather than M4A: ffmpeg keeps an M4A's
/// remainder frames, which ExtAudioFile leaves out. No server.
@Suite struct CAPIExtAudioFileRateTests {
    @Test(arguments: [
        ("s16.wav", "-c:a pcm_s16le", 48000), ("t.mp3", "-c:a libmp3lame -b:a 192k", 48000),
        ("adts.aac", "-c:a aac -b:a 192k -f adts", 22050), ("s16-48k.wav", "-c:a pcm_s16le -ar 48000", 44100),
    ])
    func readsAndWritesAtTheClientsRate(name: String, encoder: String, rate: Int) throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("extaudiofile-rate-\(name)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent(name).path
        let tone = "aevalsrc=0.5*sin(2*PI*1000*t)|0.25*sin(2*PI*1000*t):s=44100:d=3"
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i '\(tone)' \(encoder) '\(file)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/extaudiofile_rate.c", name: "extaudiofile_rate-\(name)")
        let ours = file + ".ours.f32", theirs = file + ".ffmpeg.f32"
        let r = try CAPI.run(exe, [file, String(rate), ours, dir.path], timeout: 120)
        #expect(r.status == 0 && r.output.contains(" 0 failed"), "\(r.output.suffix(3000))")
        let d = try CAPI.shell("ffmpeg -loglevel error -y -i '\(file)' -af aresample=resampler=soxr:precision=20 -ar \(rate) -f f32le '\(theirs)'")
        try #require(d.status == 0, "\(d.output)")
        let a = try Data(contentsOf: URL(fileURLWithPath: ours)), b = try Data(contentsOf: URL(fileURLWithPath: theirs))
        #expect(a.count == b.count, "\(name) at \(rate) Hz: \(a.count / 8) frames, ffmpeg \(b.count / 8)")
        let n = min(a.count, b.count) / 4
        let worst = a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                (n / 10..<n - n / 10).reduce(Float(0)) { m, i in
                    max(m, abs(x.loadUnaligned(fromByteOffset: 4 * i, as: Float.self) - y.loadUnaligned(fromByteOffset: 4 * i, as: Float.self)))
                }
            }
        }
        #expect(n > 0 && worst < 1e-5, "\(name) at \(rate) Hz: \(worst) from ffmpeg's resampling")
    }
}
