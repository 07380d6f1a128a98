// record-tone: records N seconds from the default input into a file, as Apple's "Recording
// Audio" tutorial (aqrecord) does — an input queue, three half-second buffers, the callback
// writing each full buffer to the file and enqueueing it again. 16-bit WAV, or 32-bit float
// CAF/AIFF by the file's extension (AQSession's take writers).
// Usage: record-tone FILE.wav [--seconds N] [--connect PORT]   (default: system:capture_1)
import AQEngine
import AQJack
import AQSession
import Foundation

let args = CommandLine.arguments
func option(_ name: String) -> String? { args.firstIndex(of: name).flatMap { args.indices.contains($0 + 1) ? args[$0 + 1] : nil } }
guard args.count > 1, !args[1].hasPrefix("--"), let container = TakeFormat.Container(extension: URL(fileURLWithPath: args[1]).pathExtension) else {
    FileHandle.standardError.write(Data("usage: record-tone FILE.wav|.caf|.aiff [--seconds N] [--connect PORT]\n".utf8))
    exit(2)
}
let seconds = option("--seconds").flatMap(Double.init) ?? 5
let input: JackConnections = option("--connect").map { .ports([$0]) } ?? .physical

/// The file and how much is left; the callback's state (one thread at a time: the lock).
final class Recorder: @unchecked Sendable {
    let file: PCMTakeWriter, total: Int64, lock = NSLock(), done = DispatchSemaphore(value: 0)
    init(file: PCMTakeWriter, total: Int64) { self.file = file; self.total = total }
    func write(_ queue: AudioInputQueue, _ buffer: AudioQueueBuffer) {
        lock.lock(); defer { lock.unlock() }
        let frames = Int(min(Int64(buffer.audioDataByteSize / 4), total - file.framesWritten))
        if frames <= 0 { return }
        do { try file.write(buffer.audioData.assumingMemoryBound(to: Float.self), frames: frames, stride: 1, offset: 0) } catch { print("record-tone: \(error)"); done.signal(); return }
        if file.framesWritten < total { try? queue.enqueue(buffer) } else { done.signal() }
    }
}

do {
    let device = try JackDevice(options: JackDeviceOptions(clientName: "record-tone", outputChannels: 0, inputChannels: 1, inputConnections: input))
    let engine = try AudioQueueEngine(device: device)
    let rate = device.sampleRate, total = Int64(seconds * rate)
    let recorder = try Recorder(file: PCMTakeWriter(url: URL(fileURLWithPath: args[1]), format: TakeFormat(container: container, sample: container == .wav ? .int(bits: 16) : .float32), sampleRate: Int(rate), channels: 1), total: total)
    let format = AudioStreamBasicDescription.linearPCM(sampleRate: rate, channels: 1, bits: 32, isFloat: true)
    let queue = try engine.newInput(format: format) { q, buffer, _, _ in recorder.write(q, buffer) }  // the events thread
    for _ in 0..<3 { try queue.enqueue(try queue.allocateBuffer(capacity: Int(rate / 2) * 4)) }
    try queue.start()
    print("record-tone: recording \(seconds) s from \(device.inputPortNames[0]) into \(args[1])")
    recorder.done.wait()
    try queue.stop(immediately: true)
    let file = recorder.file
    try file.finish()
    try queue.dispose(immediately: true)
    engine.close()
    print("record-tone: \(file.framesWritten) frames, \(queue.lostFrames) lost")
    exit(queue.lostFrames == 0 && file.framesWritten == total ? 0 : 3)  // audio lost: not a success
} catch {
    FileHandle.standardError.write(Data("record-tone: \(error)\n".utf8))
    exit(1)
}
