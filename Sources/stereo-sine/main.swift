// stereo-sine: 150 Hz left, 250 Hz right, 48 kHz int16 stereo, two 1/16-second buffers, as in
// the tutorial "Getting Started with Audio Queues". Usage: stereo-sine [--seconds N]
import AQEngine
import AQJack
import Foundation

let seconds = CommandLine.arguments.firstIndex(of: "--seconds").flatMap { i in
    CommandLine.arguments.indices.contains(i + 1) ? Double(CommandLine.arguments[i + 1]) : nil } ?? 2

/// The tutorial's SoundState; touched only by the callback (events thread) and before start.
final class SoundState: @unchecked Sendable {
    var framesBuffered: Float = 0
    let sampleRate: Float = 48000
    let volume: Float = 0.1
    let leftFrequency: Float = 150
    let rightFrequency: Float = 250
    let bytesPerFrame = 4
}

func streamCallback(_ state: SoundState, _ queue: AudioQueue, _ buffer: AudioQueueBuffer) {
    let frames = buffer.audioDataBytesCapacity / state.bytesPerFrame
    let samples = buffer.audioData.bindMemory(to: Int16.self, capacity: frames * 2)
    for i in 0..<frames {
        let t = state.framesBuffered / state.sampleRate
        samples[2 * i] = Int16(32767 * state.volume * sinf(2 * .pi * t * state.leftFrequency))
        samples[2 * i + 1] = Int16(32767 * state.volume * sinf(2 * .pi * t * state.rightFrequency))
        state.framesBuffered += 1
    }
    buffer.audioDataByteSize = frames * state.bytesPerFrame
    _ = try? queue.enqueue(buffer)
}

do {
    let format = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 2, bits: 16)
    let engine = try AudioQueueEngine(device: JackDevice(options: JackDeviceOptions(clientName: "stereo-sine")))
    let state = SoundState()
    let queue = try engine.newOutput(format: format) { q, b in streamCallback(state, q, b) }
    let bufferSize = Int(format.bytesPerFrame) * Int(format.sampleRate / 16)  // 1/16 s
    let buffers = try (0..<2).map { _ in try queue.allocateBuffer(capacity: bufferSize) }
    for b in buffers { streamCallback(state, queue, b) }
    try queue.start()
    print("stereo-sine: 150 Hz left, 250 Hz right for \(seconds) s on \(queue.currentDevice)")
    Thread.sleep(forTimeInterval: seconds)
    try queue.dispose(immediately: true)  // destroy immediately
    engine.close()
} catch {
    FileHandle.standardError.write(Data("stereo-sine: \(error)\n".utf8))
    exit(1)
}
