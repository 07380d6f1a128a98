// a440: a 440 Hz sine through an audio queue, as in the talk "Audio Queue Services" — 44.1 kHz
// int16 stereo, three half-second buffers primed by calling the callback, stopped
// asynchronously with an IsRunning listener. Usage: a440 [--seconds N]
import AQEngine
import AQJack
import Foundation

let seconds = CommandLine.arguments.firstIndex(of: "--seconds").flatMap { i in
    CommandLine.arguments.indices.contains(i + 1) ? Double(CommandLine.arguments[i + 1]) : nil } ?? 2

/// The sine generator and the callback's state; touched only on the events thread (and here
/// before the start).
final class Player: @unchecked Sendable {
    let format = AudioStreamBasicDescription.linearPCM(sampleRate: 44100, channels: 2, bits: 16)
    var phase: Float = 0
    lazy var increment = Float(440 * 2 * Double.pi / format.sampleRate)
    var framesLeft: Int
    var stopping = false
    init(seconds: Double) { framesLeft = Int(seconds * 44100) }

    func fill(_ queue: AudioQueue, _ buffer: AudioQueueBuffer) {
        if stopping { return }
        let samples = buffer.audioData.bindMemory(to: Int16.self, capacity: buffer.audioDataBytesCapacity / 2)
        let frames = min(buffer.audioDataBytesCapacity / Int(format.bytesPerFrame), framesLeft)
        for i in 0..<frames {
            let v = Int16(Float(Int16.max) * sinf(phase)) / 4  // a quarter of full scale
            samples[2 * i] = v
            samples[2 * i + 1] = v
            phase += increment
            if phase > 2 * .pi { phase -= 2 * .pi }
        }
        framesLeft -= frames
        buffer.audioDataByteSize = frames * Int(format.bytesPerFrame)
        if frames > 0 {
            do { try queue.enqueue(buffer) } catch { print("a440: enqueue: \(error)") }
        }
        if framesLeft == 0 {
            stopping = true
            try? queue.stop(immediately: false)  // asynchronous: queued buffers still play
        }
    }
}

do {
    let engine = try AudioQueueEngine(device: JackDevice(options: JackDeviceOptions(clientName: "a440")))
    let player = Player(seconds: seconds)
    let queue = try engine.newOutput(format: player.format) { q, b in player.fill(q, b) }
    let done = DispatchSemaphore(value: 0)
    queue.addPropertyListener(.isRunning) { q, _ in if !q.isRunning { done.signal() } }
    let buffers = try (0..<3).map { _ in try queue.allocateBuffer(capacity: Int(player.format.sampleRate / 2) * 4) }
    for b in buffers { player.fill(queue, b) }  // prime by calling the callback
    try queue.start()
    print("a440: playing 440 Hz for \(seconds) s on \(queue.currentDevice)")
    done.wait()
    if let error = queue.error { print("a440: stopped: \(error.message)") }
    try queue.dispose(immediately: true)
    engine.close()
} catch {
    FileHandle.standardError.write(Data("a440: \(error)\n".utf8))
    exit(1)
}
