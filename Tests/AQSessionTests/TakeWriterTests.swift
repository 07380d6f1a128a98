import AQSession
import AQTesting
import Foundation
import Testing

/// The take writers: every container and sample format read back by ffmpeg (an independent
/// reader) and by the project's own parser, sample for sample. (A write error mid-take is
/// tested on the command, under a file size limit: `RecordOnJACKTests`.)
@Suite("Take writers")
struct TakeWriterTests {
    static let formats: [TakeFormat] = [.wav, .caf, .aiff].flatMap { c in
        [TakeFormat.Sample.int(bits: 16), .int(bits: 24), .int(bits: 32), .float32].map { TakeFormat(container: c, sample: $0) }
    }

    /// Reads a file with ffmpeg as interleaved float32 (sox, through libsndfile, misreads
    /// little-endian float CAF).
    static func read(_ url: URL) throws -> [Float] {
        let raw = url.appendingPathExtension("f32")
        let r = try runTool("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", url.path, "-f", "f32le", "-acodec", "pcm_f32le", raw.path])
        guard r.status == 0 else { throw ToolFailure(description: "ffmpeg: \(r.output)") }
        let data = try Data(contentsOf: raw)
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    @Test(arguments: 0..<formats.count)
    func roundTrip(index: Int) throws {
        let format = Self.formats[index]
        let dir = try TempDir()
        let url = dir.file("t." + (format.container == .aiff ? "aiff" : format.container.rawValue))
        // Three channels of a queue's five (offset 1), written in two calls plus silence.
        let frames = 1001, stride = 5
        var source = [Float](repeating: 0, count: frames * stride)
        for i in 0..<frames { for c in 0..<stride { source[i * stride + c] = Float((i * 7 + c * 13) % 200 - 100) / 128 } }
        let w = try PCMTakeWriter(url: url, format: format, sampleRate: 44100, channels: 3)
        try source.withUnsafeBufferPointer { p in
            try w.write(p.baseAddress!, frames: 600, stride: stride, offset: 1)
            try w.writeSilence(frames: 17)
            try w.write(p.baseAddress! + 600 * stride, frames: frames - 600, stride: stride, offset: 1)
        }
        try w.finish()
        #expect(w.framesWritten == Int64(frames + 17))
        let bits: Int = { if case .int(let b) = format.sample { return b }; return 32 }()
        let q = format.sample == .float32 ? Float(0) : 1 / Float(1 << (bits - 1))
        var expected: [Float] = []
        for i in 0..<(frames + 17) {
            for c in 0..<3 {
                let src = i < 600 ? i : i < 617 ? -1 : i - 17
                expected.append(src < 0 ? 0 : source[src * stride + 1 + c])
            }
        }
        let got = try Self.read(url)
        #expect(got.count == expected.count, "\(format): \(got.count) samples")
        let worst = zip(got, expected).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= q / 2 + 1e-7, "\(format): worst error \(worst)")
        // The project's parser agrees on the header.
        let info = try AudioFileReader.probe(url)
        #expect(info.frameCount == Int64(frames + 17) && info.format.channelsPerFrame == 3 && info.format.sampleRate == 44100, "\(format): \(info)")
    }
}
