import AQSession
import AQTesting
import Foundation
import Testing

// Issue 14: RF64, Wave64, FLAC and M4A (AAC, ALAC) tracks (and ffmpeg's mono ALAC CAF ending in silence) through
// `aqsync render`'s code and through the command itself.

/// How each container's fixture is made from a source (`-i` arguments included by the caller).
enum ContainerFixture: String, CaseIterable, Sendable {
    case rf64, wave64, flac16, flac24, alacMono, m4aAAC, m4aAACMoovAtEnd, m4aALAC, oggFLAC, opus, vorbis, mp4FLAC, mp4Opus
    // The containers read before issue 14, through the same command.
    case wav, aiff, au, cafPCM, mp3

    var fileName: String {
        switch self {
        case .rf64: "t.wav"
        case .wave64: "t.w64"
        case .flac16, .flac24: "t.flac"
        case .alacMono: "t.caf"
        case .m4aAAC, .m4aAACMoovAtEnd, .m4aALAC: "t.m4a"
        case .oggFLAC: "t.oga"
        case .opus: "t.opus"
        case .vorbis: "t.ogg"
        case .wav: "p.wav"
        case .aiff: "t.aiff"
        case .au: "t.au"
        case .cafPCM: "p.caf"
        case .mp3: "t.mp3"
        case .mp4FLAC, .mp4Opus: "t.mp4"
        }
    }

    /// Lossy: compared with a tolerance of ffmpeg's decode, impulses found as peaks.
    var isLossy: Bool { self == .m4aAAC || self == .m4aAACMoovAtEnd || self == .opus || self == .vorbis || self == .mp3 || self == .mp4Opus }

    var codec: [String] {
        switch self {
        case .rf64: ["-c:a", "pcm_f32le", "-rf64", "always"]
        case .wave64: ["-c:a", "pcm_s24le"]
        case .flac16: ["-c:a", "flac", "-sample_fmt", "s16"]
        case .flac24: ["-c:a", "flac", "-sample_fmt", "s32"]
        case .alacMono: ["-c:a", "alac", "-sample_fmt", "s16p"]
        case .m4aAAC: ["-c:a", "aac", "-b:a", "192k", "-movflags", "+faststart"]
        case .m4aAACMoovAtEnd: ["-c:a", "aac", "-b:a", "192k"]
        case .m4aALAC: ["-c:a", "alac", "-sample_fmt", "s16p"]
        case .oggFLAC: ["-c:a", "flac", "-sample_fmt", "s16"]
        case .opus: ["-c:a", "libopus", "-b:a", "160k"]
        case .vorbis: ["-c:a", "libvorbis", "-q:a", "8"]
        case .wav: ["-c:a", "pcm_s16le"]
        case .aiff: ["-c:a", "pcm_s24be"]
        case .au: ["-c:a", "pcm_s16be"]
        case .cafPCM: ["-c:a", "pcm_f32le"]
        case .mp3: ["-c:a", "libmp3lame", "-b:a", "320k"]
        case .mp4FLAC: ["-c:a", "flac", "-strict", "-2", "-sample_fmt", "s16"]  // moov last: read first
        case .mp4Opus: ["-c:a", "libopus", "-b:a", "160k"]
        }
    }
}

@Suite struct NewFormatRenderTests {
    /// The rendered WAV equals ffmpeg's decode of the file, at the source's length (ffmpeg's
    /// own length for all but AAC in MP4, where ffmpeg keeps the last packet's padding that the
    /// sample durations exclude). The mono ALAC file ends in half a second of silence and is
    /// short enough that its packets arrive with its header (this rendered too long before
    /// issue 14).
    @Test(arguments: ContainerFixture.allCases)
    func renderMatchesFFmpeg(container: ContainerFixture) throws {
        let fx = try CodecFixtures()
        let channels = container == .alacMono ? 1 : 2
        let file = fx.path(container.fileName)
        let rate = [.flac24, .opus, .mp4Opus].contains(container) ? 48000 : 44100
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=0.6:sample_rate=\(rate)", "-f", "lavfi", "-i",
                       "anoisesrc=d=0.6:a=0.2:seed=3:r=\(rate)", "-filter_complex",
                       container == .alacMono ? "amix=inputs=2,apad=pad_dur=0.5" : "amix=inputs=2",
                       "-ac", "\(channels)"] + container.codec + [file])
        let reference = try fx.ffmpegDecode(file, channels: channels)
        let wav = try SessionCodecTests().render(fx, file: file, rate: rate)
        let source = rate * 6 / 10 + (container == .alacMono ? rate / 2 : 0)
        #expect(wav.frameCount == source, "the source's length")
        if !container.isLossy { #expect(wav.frameCount == reference[0].count, "same length as ffmpeg's decode") }
        let n = min(wav.frameCount, reference[0].count)
        let d = maxDifference(Array(wav.channels.prefix(channels)), reference, frames: n)
        #expect(d <= 1e-4, "max difference \(d)")
    }

    /// An impulse at an awkward frame of the source lands exactly on that frame of
    /// `aqsync render`'s output (the executable, run as users run it), per container.
    @Test(arguments: ContainerFixture.allCases)
    func impulseLandsOnItsFrameThroughTheCommand(container: ContainerFixture) throws {
        let fx = try CodecFixtures()
        let frames = 30000
        let impulses = [4097, 12347, 29989]
        var samples = [Float](repeating: 0, count: frames)
        for k in impulses { samples[k] = 0.5 }
        let raw = fx.path("impulse.f32")
        try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
        let rate = 48000
        try fx.ffmpeg(["-f", "f32le", "-ar", "\(rate)", "-ac", "1", "-i", raw] + container.codec + [fx.path(container.fileName)])
        try """
            [session]
            sample_rate = \(rate)
            [output]
            channels = 1
            [[track]]
            file = "\(container.fileName)"
            start = 101
            """.write(to: URL(fileURLWithPath: fx.path("s.toml")), atomically: true, encoding: .utf8)
        let status = try runAQSync(["render", fx.path("s.toml"), "-o", fx.path("out.wav")], fx)
        #expect(status.code == 0, "\(status.output)")
        let wav = try WAVReader.read(URL(fileURLWithPath: fx.path("out.wav")))
        #expect(wav.frameCount == 101 + frames, "length")
        let out = wav.channels[0]
        if container.isLossy {
            // AAC smears an impulse: its largest sample must still be on the frame.
            for k in impulses {
                let window = (101 + k - 300)..<min(out.count, 101 + k + 300)
                let peak = window.max { abs(out[$0]) < abs(out[$1]) }
                #expect(peak == 101 + k, "\(container): impulse at \(k) peaks at \(String(describing: peak))")
            }
        } else {
            let peaks = out.indices.filter { abs(out[$0]) > 0.25 }
            #expect(peaks == impulses.map { 101 + $0 }, "\(container): impulses at \(peaks)")
        }
    }
}

/// Runs the built `aqsync` with stdout and stderr to a file; returns the status and the text.
func runAQSync(_ args: [String], _ fx: CodecFixtures) throws -> (code: Int32, output: String) {
    let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    var exe = dir.appendingPathComponent("aqsync")
    if !FileManager.default.isExecutableFile(atPath: exe.path) {
        exe = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/aqsync")
    }
    let p = Process()
    p.executableURL = exe
    p.arguments = args
    let outPath = fx.path("aqsync-\(UUID().uuidString).txt")
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    p.standardOutput = FileHandle(forWritingAtPath: outPath)
    p.standardError = FileHandle(forWritingAtPath: outPath)
    try p.run()
    p.waitUntilExit()
    return (p.terminationStatus, (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "")
}

/// A WAVE of 4 GiB + 4000 bytes (sparse: no disk used) whose data size wrapped around 2^32:
/// the session loader counts every frame to the end of the file, not the 1000 the size says.
@Suite struct WrappedWAVETests {
    @Test func sessionLoaderCountsToTheEnd() throws {
        let fx = try CodecFixtures()
        let path = fx.path("big.wav")
        try fx.ffmpeg(["-f", "lavfi", "-i", "sine=d=0.1:sample_rate=8000", "-ac", "2", "-c:a", "pcm_s16le", path])
        let url = URL(fileURLWithPath: path)
        var bytes = [UInt8](try Data(contentsOf: url))
        // ffmpeg writes fmt, LIST, then data: find data and pretend it holds 2^32 + 4000 bytes.
        var at = 12
        while Array(bytes[at..<(at + 4)]) != Array("data".utf8) {
            at += 8 + Int(UInt32(bytes[at + 4]) | UInt32(bytes[at + 5]) << 8 | UInt32(bytes[at + 6]) << 16 | UInt32(bytes[at + 7]) << 24)
        }
        bytes = Array(bytes[..<(at + 8)])
        bytes.replaceSubrange((at + 4)..<(at + 8), with: [0xA0, 0x0F, 0, 0])  // 4000
        try Data(bytes).write(to: url)
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(bytes.count) + (1 << 32) + 4000)
        try handle.close()
        let info = try AudioFileReader.probe(url)
        #expect(info.frameCount == ((1 << 32) + 4000) / 4)
    }
}
