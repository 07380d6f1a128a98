import AQSession
import AQTesting
import Foundation
import Synchronization
import Testing

@Suite("Capture file writer")
struct CaptureFileWriterTests {
    /// Every frame the source hands out is in the file, in order, per channel, whatever the
    /// chunking; the header is complete after finish().
    @Test func writesEveryFrameTheSourceGives() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("aqsync-capwriter-\(getpid()).wav")
        defer { try? FileManager.default.removeItem(at: url) }
        let total = 50_000
        // The source gives frames in irregular chunks (7, 1000, 1, 7 …) until `total`; 0 means
        // "nothing waiting", so only once it is empty.
        let next = Atomic<Int>(0), calls = Atomic<Int>(0)
        let w = try CaptureFileWriter(url: url, sampleRate: 44100, channels: 2) { planes, max in
            let sizes = [7, 1000, 1]
            let want = sizes[calls.wrappingAdd(1, ordering: .relaxed).oldValue % 3]
            let start = next.load(ordering: .relaxed)
            let n = min(want, max, total - start)
            for i in 0..<n {
                planes[0][i] = Float(start + i) / Float(total)
                planes[1][i] = -Float(start + i) / Float(total)
            }
            next.store(start + n, ordering: .relaxed)
            return n
        }
        // finish() drains what the source still has before closing.
        let frames = try w.finish()
        #expect(frames == Int64(total))
        #expect(try w.finish() == Int64(total))
        let wav = try WAVReader.read(url)
        #expect(wav.isFloat && wav.sampleRate == 44100 && wav.frameCount == total)
        let inOrder = wav.channels[0] == (0..<total).map { Float($0) / Float(total) }
            && wav.channels[1] == (0..<total).map { -Float($0) / Float(total) }
        #expect(inOrder, "the file's samples are not the source's, in order")
    }

    /// A path that cannot be written is an error naming it, before anything is taken.
    @Test func unwritablePathIsAnError() {
        let url = URL(fileURLWithPath: "/nonexistent-dir-aqsync/capture.wav")
        #expect(throws: SessionError.self) {
            _ = try CaptureFileWriter(url: url, sampleRate: 48000, channels: 2) { _, _ in 0 }
        }
    }
}
