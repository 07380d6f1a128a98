// A complete program on the engine: two seconds of a 440 Hz tone through JACK, then a clean end.
import AQEngine
import AQJack
import Foundation

/// The tone and how much of it is left. The output callback runs on the engine's events
/// thread; before `start()` this program calls it itself (priming), so one thread at a time.
final class Tone: @unchecked Sendable {
    let format = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 2, bits: 16)
    var framesLeft = 2 * 48000
    var phase = 0.0

    /// Fills `buffer` and enqueues it; after the last one, stops the queue once it has played.
    func fill(_ queue: AudioQueue, _ buffer: AudioQueueBuffer) {
        let frames = min(buffer.audioDataBytesCapacity / 4, framesLeft)
        guard frames > 0 else { return }
        let samples = buffer.audioData.bindMemory(to: Int16.self, capacity: frames * 2)
        for i in 0..<frames {
            let v = Int16(8000 * sin(phase))
            samples[2 * i] = v
            samples[2 * i + 1] = v
            phase += 2 * Double.pi * 440 / format.sampleRate
        }
        buffer.audioDataByteSize = frames * 4
        framesLeft -= frames
        do { try queue.enqueue(buffer) } catch { print("enqueue: \(error)") }
        if framesLeft == 0 { try? queue.stop(immediately: false) }  // after the queued buffers
    }
}

do {
    let engine = try AudioQueueEngine(device: JackDevice(options: JackDeviceOptions(clientName: "example")))
    let tone = Tone()
    let queue = try engine.newOutput(format: tone.format) { queue, buffer in tone.fill(queue, buffer) }
    // The end: IsRunning turns false when the last buffer has played.
    let finished = DispatchSemaphore(value: 0)
    queue.addPropertyListener(.isRunning) { queue, _ in if !queue.isRunning { finished.signal() } }
    for _ in 0..<3 { tone.fill(queue, try queue.allocateBuffer(capacity: 4800 * 4)) }  // 0.1 s each
    try queue.start()
    finished.wait()
    try queue.dispose(immediately: true)
    engine.close()
} catch {
    print("example: \(error)")
    exit(1)
}
