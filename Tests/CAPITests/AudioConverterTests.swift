import AQTesting
import Foundation
import Testing

/// Audio Converter Services through C (issue 23): a file's packets decoded by
/// AudioConverterFillComplexBuffer through an input procedure (`audioconverter.c`, which also
/// answers "no data yet" every third call and checks the result codes) give exactly ffmpeg's
/// untrimmed decoding (`-flags2 +skip_manual`: a converter leaves priming to its caller). No
/// server.
@Suite struct CAPIAudioConverterTests {
    @Test(arguments: [
        ("adts.aac", "-c:a aac -b:a 128k -f adts"), ("t.mp3", "-c:a libmp3lame -b:a 128k"), ("alac.caf", "-c:a alac -f caf"),
        ("t.flac", "-c:a flac"), ("s24.wav", "-c:a pcm_s24le"), ("t.mp2", "-c:a mp2 -b:a 192k"),
        ("twolame.mp2", "-c:a libtwolame -b:a 160k -ar 48000"), ("lsf.mp2", "-c:a mp2 -b:a 64k -ar 24000"),
        ("ima4.caf", "-c:a adpcm_ima_qt -f caf"),
    ])
    func decodesWhatFFmpegDecodes(name: String, encoder: String) throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audioconverter")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent(name).path
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=1 -ac 2 \(encoder) '\(file)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/audioconverter.c", name: "audioconverter-\(name)")
        // Bit for bit ffmpeg's decoding: MP3 through ffmpeg's decoder too (libmpg123's, the
        // default, differs by rounding; MPG123DecoderTests compares it; docs/codecs.md).
        let r = try CAPI.run(exe, [file, file + ".ours.f32"], environment: ["AQSYNC_MP3_DECODER": "libavcodec"], timeout: 120)
        #expect(r.status == 0, "\(r.output.suffix(2000))")
        #expect(r.output.contains(" 0 failed"), "\(r.output.suffix(2000))")
        let d = try CAPI.shell("ffmpeg -loglevel error -y -flags2 +skip_manual -i '\(file)' -f f32le '\(file).ffmpeg.f32'")
        try #require(d.status == 0, "\(d.output)")
        let a = try Data(contentsOf: URL(fileURLWithPath: file + ".ours.f32")), b = try Data(contentsOf: URL(fileURLWithPath: file + ".ffmpeg.f32"))
        // A Bool: Swift Testing would diff two differing Data values byte by byte (minutes).
        let same = a == b
        #expect(!a.isEmpty && same, "\(name): \(a.count / 8) frames decoded, ffmpeg \(b.count / 8); equal: \(same)")
    }
}

/// Rate and channel conversion of linear PCM through the C API (issue 23): `audioconverter_rate.c`
/// converts a 44.1 kHz stereo sine to 48 kHz with the default channel map and with
/// kAudioConverterChannelMap, and checks frame counts, levels, frequency, properties,
/// AudioConverterConvertBuffer and AudioConverterConvertComplexBuffer. No server.
@Suite struct CAPIAudioConverterRateTests {
    @Test func convertsRatesAndChannels() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/audioconverter_rate.c", flags: "-lm")
        let r = try CAPI.run(exe, [], timeout: 60)
        #expect(r.status == 0, "\(r.output.suffix(3000))")
        #expect(r.output.contains(" 0 failed"), "\(r.output.suffix(3000))")
    }
}

/// Encoding through the C API (issue 23): `audioconverter_encode.c` encodes a 2 s 44.1 kHz
/// stereo tone (16-bit, right at half the left's level) to AAC at 44.1 and 48 kHz and to ALAC
/// with AudioConverterFillComplexBuffer, writes the packets, cookie and packet table into CAFs
/// with Audio File Services and reads them back through ExtAudioFile (its own checks: exact
/// lengths, ALAC exact, the result codes). Here ffmpeg decodes the files: ALAC to the input's
/// samples exactly, AAC to the tone's level (within 2 %) and frequency (1 kHz within 1 Hz) with
/// the encoder's 1024 priming frames and a last packet's padding, which ffmpeg does not trim
/// from a CAF (between 1024 and 2047 frames more than fed). No server.
@Suite struct CAPIAudioConverterEncodeTests {
    @Test func encodedPacketsDecodeInFFmpeg() throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audioconverter-encode")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let exe = try CAPI.build("Tests/CAPIPrograms/audioconverter_encode.c")
        let r = try CAPI.run(exe, [dir.path], timeout: 120)
        #expect(r.status == 0 && r.output.contains(" 0 failed"), "\(r.output.suffix(3000))")
        func decoded(_ name: String) throws -> [Int16] {
            let file = dir.appendingPathComponent(name).path
            let d = try CAPI.shell("ffmpeg -loglevel error -y -i '\(file)' -f s16le '\(file).s16'")
            try #require(d.status == 0, "\(d.output)")
            let data = try Data(contentsOf: URL(fileURLWithPath: file + ".s16"))
            return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        }
        let frames = 88200
        var input: [Int16] = []
        for i in 0..<frames {
            let v = sin(2 * Double.pi * 1000 * Double(i) / 44100)
            input += [Int16((v * 16384).rounded()), Int16((v * 8192).rounded())]
        }
        let alac = try decoded("alac.caf")
        #expect(alac == input, "ALAC: \(alac.count / 2) frames decoded, equal to the input: \(alac == input)")
        for (name, rate, fed) in [("aac.caf", 44100.0, frames), ("aac48.caf", 48000.0, 96000)] {
            let x = try decoded(name)
            let n = x.count / 2
            #expect(n >= fed + 1024 && n < fed + 2048, "\(name): \(n) frames for \(fed) fed")
            for (ch, want) in [(0, 0.5 / 2.0.squareRoot()), (1, 0.25 / 2.0.squareRoot())] {
                let range = (n / 10)..<(n - n / 10)
                let rms = (range.reduce(0.0) { $0 + pow(Double(x[2 * $1 + ch]) / 32768, 2) } / Double(range.count)).squareRoot()
                let crossings = range.filter { x[2 * ($0 - 1) + ch] < 0 && x[2 * $0 + ch] >= 0 }.count
                let hz = Double(crossings) * rate / Double(range.count)
                #expect(abs(rms - want) < 0.02 * want && abs(hz - 1000) < 1, "\(name) channel \(ch): rms \(rms) (\(want)), \(hz) Hz")
            }
        }
    }
}
