import AQSession
import AQTesting
import Foundation
import Testing

/// `aqsync render`'s code path (OfflineRenderer + SessionPlayer) with compressed tracks: the
/// rendered WAV equals ffmpeg's decode of the file, with the same length.
@Suite struct SessionCodecTests {
    func render(_ fx: CodecFixtures, file: String, rate: Int, extra: String = "") throws -> WAVFile {
        let toml = """
            [session]
            sample_rate = \(rate)
            [output]
            channels = 2
            [[track]]
            file = "\((file as NSString).lastPathComponent)"
            \(extra)
            """
        let url = URL(fileURLWithPath: fx.path("s.toml"))
        try toml.write(to: url, atomically: true, encoding: .utf8)
        let session = try SessionLoader.load(url)
        let out = URL(fileURLWithPath: fx.path("out.wav"))
        try OfflineRenderer.render(session: session, to: out, cycleFrames: 256)
        return try WAVReader.read(out)
    }

    // (AAC in CAF: ffmpeg 5.1's CAF muxer refuses AAC, so there is no fixture for it.)
    @Test(arguments: ["mp3", "aac", "alac"]) func renderMatchesFFmpeg(kind: String) throws {
        let fx = try CodecFixtures()
        let file: String
        switch kind {
        case "mp3": file = try CodecPlaybackTests.encode(fx, "t.mp3", codec: ["-c:a", "libmp3lame", "-b:a", "192k"])
        case "aac": file = try CodecPlaybackTests.encode(fx, "t.aac", codec: ["-c:a", "aac", "-b:a", "160k", "-f", "adts"])
        default: file = try CodecPlaybackTests.encode(fx, "t.caf", codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        }
        let reference = try fx.ffmpegDecode(file, channels: 2)
        let wav = try render(fx, file: file, rate: 44100)
        #expect(wav.frameCount == reference[0].count, "same length as ffmpeg's decode")
        let n = min(wav.frameCount, reference[0].count)
        let d = maxDifference(wav.channels, reference, frames: n)
        #expect(d <= 1e-4, "max difference \(d)")
    }

    /// trim_start on a compressed track counts from the first real frame (after priming).
    @Test func trimStartOnMP3() throws {
        let fx = try CodecFixtures()
        let file = try CodecPlaybackTests.encode(fx, "t.mp3", codec: ["-c:a", "libmp3lame", "-b:a", "192k"])
        let reference = try fx.ffmpegDecode(file, channels: 2)
        let wav = try render(fx, file: file, rate: 44100, extra: "trim_start = 1000\ntrim_end = 500")
        #expect(wav.frameCount == reference[0].count - 1500)
        let shifted = reference.map { Array($0[1000...]) }
        let d = maxDifference(wav.channels, shifted, frames: wav.frameCount)
        #expect(d <= 1e-4, "max difference \(d)")
    }
}

/// `aqsync render` run as users run it, on a session whose ALAC file has a damaged packet in
/// the middle: it renders to the end, at the original length, and reports the damage.
@Suite struct DamagedFileCommandTests {
    @Test func renderReportsTheDamagedPacket() throws {
        let fx = try CodecFixtures()
        let f = try CodecPlaybackTests.encode(fx, "t.caf", codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        var bytes = cafWithPacketTableFirst([UInt8](try Data(contentsOf: URL(fileURLWithPath: f))))
        let clean = try parseFile(bytes)
        let k = clean.packets.count / 2
        let offset = Int(clean.dataOffset) + clean.packets[..<k].reduce(0) { $0 + $1.bytes.count }
        for i in 0..<clean.packets[k].bytes.count { bytes[offset + i] = 0xFF }
        try Data(bytes).write(to: URL(fileURLWithPath: fx.path("damaged.caf")))
        let reference = try fx.ffmpegDecode(f, channels: 2)
        try """
            [session]
            sample_rate = 44100
            [[track]]
            file = "damaged.caf"
            """.write(to: URL(fileURLWithPath: fx.path("s.toml")), atomically: true, encoding: .utf8)

        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var exe = dir.appendingPathComponent("aqsync")
        if !FileManager.default.isExecutableFile(atPath: exe.path) {
            exe = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/debug/aqsync")
        }
        let p = Process()
        p.executableURL = exe
        p.arguments = ["render", fx.path("s.toml"), "-o", fx.path("out.wav")]
        let outPath = fx.path("stdout.txt")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: outPath)
        p.standardError = FileHandle(forWritingAtPath: outPath)
        try p.run()
        p.waitUntilExit()
        let text = try String(contentsOfFile: outPath, encoding: .utf8)
        #expect(p.terminationStatus == 0, "\(text)")
        #expect(text.contains("1 damaged packet"), "\(text)")
        let wav = try WAVReader.read(URL(fileURLWithPath: fx.path("out.wav")))
        #expect(wav.frameCount == reference[0].count, "plays to the end at the original length")
    }
}
