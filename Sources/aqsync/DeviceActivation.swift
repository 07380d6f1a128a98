import AQEngine
import Foundation
import Synchronization

/// `aqsync play`'s device started (``AudioQueueEngine/startDevice()``: for JACK, the client's
/// `jack_activate` and its port connections) on a thread of its own, while the main thread makes
/// and primes the first session's player (issue 25, "time to the first frame"). The activation
/// is mostly the server's handshake and cycles, little work in this process: the player's
/// queues and first buffers are made meanwhile instead of after it. The render thread applies
/// their commands as they come, as it did when they were made after the activation.
///
/// Threads: made on the main thread, which it does not block; ``wait()`` blocks its caller until
/// the start has returned.
final class DeviceActivation: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let result = Mutex<AudioQueueError??>(nil)

    /// Starts `engine`'s device on a new thread.
    init(engine: AudioQueueEngine) {
        // A thread of its own, not a dispatch worker: the priming spreads its work over the
        // dispatch pool (`concurrentPerform`) meanwhile.
        let thread = Thread { [self] in
            var failure: AudioQueueError?
            do throws(AudioQueueError) { try engine.startDevice() } catch { failure = error }
            result.withLock { $0 = .some(failure) }
            done.signal()
        }
        thread.name = "aqsync-activation"
        thread.start()
    }

    /// Waits until the device's start has returned; its error, nil when it started. Any
    /// thread, any number of times.
    func wait() -> AudioQueueError? {
        while true {
            if let r = result.withLock({ $0 }) { return r }
            done.wait()
        }
    }
}
