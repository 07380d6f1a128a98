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
        ("t.flac", "-c:a flac"), ("s24.wav", "-c:a pcm_s24le"),
    ])
    func decodesWhatFFmpegDecodes(name: String, encoder: String) throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audioconverter")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent(name).path
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=1 -ac 2 \(encoder) '\(file)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/audioconverter.c", name: "audioconverter-\(name)")
        let r = try CAPI.run(exe, [file, file + ".ours.f32"], timeout: 120)
        #expect(r.status == 0, "\(r.output.suffix(2000))")
        #expect(r.output.contains(" 0 failed"), "\(r.output.suffix(2000))")
        let d = try CAPI.shell("ffmpeg -loglevel error -y -flags2 +skip_manual -i '\(file)' -f f32le '\(file).ffmpeg.f32'")
        try #require(d.status == 0, "\(d.output)")
        let a = try Data(contentsOf: URL(fileURLWithPath: file + ".ours.f32")), b = try Data(contentsOf: URL(fileURLWithPath: file + ".ffmpeg.f32"))
        #expect(!a.isEmpty && a == b, "\(name): \(a.count / 8) frames decoded, ffmpeg \(b.count / 8); equal: \(a == b)")
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
