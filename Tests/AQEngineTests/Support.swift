import AQCore
import AQEngine
import AQTypes
import Foundation
import Synchronization

/// Delivers the events reported so far on this thread, then evaluates `condition`: no
/// polling, no sleeping (the hand-driven device rendered before the call).
func delivered(_ engine: AudioQueueEngine, _ condition: () -> Bool) -> Bool {
    engine.deliverPendingEvents()
    return condition()
}

/// A thread-safe list for callbacks to record into. (A pthread mutex, not
/// Synchronization.Mutex: the thread sanitizer on Linux misreports the latter.)
final class Recorder<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [T] = []
    func append(_ v: T) { lock.lock(); list.append(v); lock.unlock() }
    var values: [T] { lock.lock(); defer { lock.unlock() }; return list }
}

let int16Stereo48k = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 2, bits: 16)
let int16Mono48k = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 1, bits: 16)

/// Fills a mono int16 buffer with zeros and `value` at each of `impulses`.
func fillMono16(_ b: AudioQueueBuffer, frames: Int, impulses: [Int], value: Int16 = 16384) {
    let p = b.audioData.bindMemory(to: Int16.self, capacity: frames)
    p.initialize(repeating: 0, count: frames)
    for i in impulses { p[i] = value }
    b.audioDataByteSize = frames * 2
}

func nonZero(_ x: [Float]) -> [Int] { x.indices.filter { x[$0] != 0 } }

/// An engine on a hand-driven device.
func manualEngine(channels: Int = 2, rate: Double = 48000, capacities: RenderCapacities = RenderCapacities(queues: 64, buffersPerQueue: 16, commands: 1024, outputChannels: 8)) throws -> (AudioQueueEngine, ManualDevice) {
    let device = ManualDevice(sampleRate: rate, channels: channels)
    let engine = try AudioQueueEngine(device: device, capacities: capacities)
    return (engine, device)
}

/// A counter or flag that closures on other threads can share.
final class Counter: Sendable {
    private let a = Atomic<Int>(0)
    func add(_ n: Int = 1) { a.wrappingAdd(n, ordering: .relaxed) }
    func set(_ n: Int) { a.store(n, ordering: .relaxed) }
    var value: Int { a.load(ordering: .relaxed) }
}


/// Runs `body` on a new thread and reports whether it returned within `seconds`. For tests
/// whose failure is a hang: the wait detects the failure, it does not synchronise anything
/// (a passing run returns as soon as `body` does).
func finishes(within seconds: Double = 10, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let t = Thread {
        body()
        done.signal()
    }
    t.start()
    return done.wait(timeout: .now() + seconds) == .success
}

/// A one-shot gate a callback can wait on until the test opens it.
final class Gate: @unchecked Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)
    /// Called by the blocked side: says it arrived, then waits until ``open()``.
    func arriveAndWait() { entered.signal(); opened.wait() }
    /// Waits until the blocked side arrived.
    func waitForArrival() { entered.wait() }
    func open() { opened.signal() }
}
