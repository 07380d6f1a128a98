import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// A seeded generator (SplitMix64): the same operations on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What the callbacks and listeners of every queue reported, in order (a pthread mutex:
/// TSan understands it).
final class Log: @unchecked Sendable {
    enum Entry { case returned(queue: Int, buffer: ObjectIdentifier), running(queue: Int, value: Bool) }
    private let lock = NSLock()
    private var entries: [Entry] = []
    func add(_ e: Entry) { lock.lock(); entries.append(e); lock.unlock() }
    func take() -> [Entry] {
        lock.lock()
        defer { lock.unlock() }
        let e = entries
        entries.removeAll()
        return e
    }
}

/// Random sequences of every queue call against a simple model of the reference's
/// semantics, on the hand-driven device. Checked: every enqueued buffer comes back exactly
/// once (zero lost, zero twice), an immediate stop or reset hands every buffer back before it
/// returns, a disposed queue's handle is refused with `.invalidQueue` and none of its
/// callbacks or listeners runs afterwards, `isRunning` listeners alternate, a queue the model
/// says is stopped renders silence on its output and no queue renders more than its level,
/// and no event is dropped.
@Suite struct ModelTests {
    /// A queue as the model sees it.
    struct Model {
        var queue: AudioQueue
        var id: Int
        var output: Int
        var buffers: [AudioQueueBuffer] = []
        /// Enqueues not yet handed back, per buffer.
        var outstanding: [ObjectIdentifier: Int] = [:]
        /// Disposed of (immediately, or asynchronously asked).
        var gone = false
        var asyncDispose = false
        /// Started since the last immediate stop: it may make sound.
        var mayPlay = false
        var lastRunning: Bool?
        var history: [String] = []
        var inFlight: Int { outstanding.values.reduce(0, +) }
    }

    static var operations: Int {
        Int(ProcessInfo.processInfo.environment["AQ_MODEL_OPERATIONS"] ?? "") ?? 100_000
    }

    @Test func randomOperationsAgainstTheModel() throws {
        let outputs = 4
        let bpq = 6
        let device = ManualDevice(sampleRate: 48000, channels: outputs)
        let engine = try AudioQueueEngine(
            device: device,
            capacities: RenderCapacities(queues: outputs, buffersPerQueue: bpq, commands: 64, outputChannels: outputs))
        defer { engine.close() }
        var rng = SeededGenerator(state: UInt64(ProcessInfo.processInfo.environment["AQ_MODEL_SEED"] ?? "") ?? 15)
        let log = Log()
        var models: [Model] = []  // the queues not disposed of yet (some being disposed of)
        var goneIDs: Set<Int> = []
        var lastGone: AudioQueue?
        var issues = 0
        var counts: [String: Int] = [:]
        var nextID = 0
        func fail(_ what: String) {
            issues += 1
            if issues < 20 { Issue.record("\(what)") }
        }
        func slotOutput() -> Int? {
            let used = Set(models.filter { !$0.gone }.map(\.output))
            return (0..<outputs).first { !used.contains($0) }
        }
        func level(_ output: Int) -> Float { Float(output + 1) / 16 }
        /// Applies the log to the model.
        func absorb() {
            for e in log.take() {
                switch e {
                case .returned(let id, let b):
                    if goneIDs.contains(id) { fail("queue \(id): a callback after its disposal"); continue }
                    guard let k = models.firstIndex(where: { $0.id == id }) else { continue }
                    if models[k].gone || models[k].asyncDispose { fail("queue \(id): a callback after its disposal") }
                    let n = models[k].outstanding[b, default: 0]
                    if n <= 0 { fail("queue \(id): a buffer came back that was not enqueued") }
                    models[k].outstanding[b] = n - 1
                case .running(let id, let v):
                    if goneIDs.contains(id) { fail("queue \(id): a listener after its disposal"); continue }
                    guard let k = models.firstIndex(where: { $0.id == id }) else { continue }
                    if models[k].gone || models[k].asyncDispose { fail("queue \(id): a listener after its disposal") }
                    if models[k].lastRunning == v { fail("queue \(id): isRunning listener twice with \(v)") }
                    models[k].lastRunning = v
                }
            }
        }
        func code(_ body: () throws -> Void) -> AudioQueueError.Code? {
            do { try body(); return nil } catch let e as AudioQueueError { return e.code } catch { return nil }
        }

        let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: outputs)
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: outputs * 64)
        defer { planes.deallocate(); storage.deallocate() }
        for c in 0..<outputs { planes[c] = storage + c * 64 }

        /// Forgets the queues that are gone (the model keeps their IDs and the latest handle).
        func sweep() {
            for m in models where m.gone {
                goneIDs.insert(m.id)
                lastGone = m.queue
            }
            models.removeAll { $0.gone }
        }
        for _ in 0..<Self.operations {
            sweep()
            let live = Array(models.indices)
            let pick = Int.random(in: 0..<100, using: &rng)

            if live.isEmpty || pick < 3 {
                // Make a queue.
                guard let out = slotOutput() else { continue }
                let id = nextID
                nextID += 1
                let q = try engine.newOutput(format: int16Mono48k) { _, b in log.add(.returned(queue: id, buffer: ObjectIdentifier(b))) }
                q.addPropertyListener(.isRunning) { q, _ in log.add(.running(queue: id, value: q.isRunning)) }
                try q.setOutputChannels([out])
                var m = Model(queue: q, id: id, output: out)
                for _ in 0..<3 { m.buffers.append(try q.allocateBuffer(capacity: 256)) }
                models.append(m)
                counts["new", default: 0] += 1
                continue
            }
            let k = live.randomElement(using: &rng)!
            let q = models[k].queue
            if pick < 80, ProcessInfo.processInfo.environment["AQ_MODEL_TRACE"] != nil {
                models[k].history.append("op \(pick) t=\(device.currentFrame) inflight \(models[k].inFlight)")
                if models[k].history.count > 40 { models[k].history.removeFirst() }
            }
            if models[k].asyncDispose {
                // The disposal completes on the events thread once the drain played.
                let c = code { try q.pause() }
                if c == .invalidQueue { models[k].gone = true; continue }
                if c != .disposalPending { fail("a queue being disposed of answered \(String(describing: c))") }
            }
            switch pick {
            case 3..<40:  // enqueue a free buffer, with or without a start time
                guard let b = models[k].buffers.randomElement(using: &rng) else { continue }
                let frames = Int.random(in: 1...128, using: &rng)
                fillMono16(b, frames: frames, impulses: Array(0..<frames), value: Int16(level(models[k].output) * 32768))
                let wasEnqueued = b.isEnqueued
                let c = code { try q.enqueue(b) }
                if c == nil {
                    if wasEnqueued { fail("an enqueued buffer was enqueued again") }
                    models[k].outstanding[ObjectIdentifier(b), default: 0] += 1
                } else if c == .bufferEnqueuedTwice {
                    if !wasEnqueued { fail("a free buffer refused as enqueued twice") }
                } else if c != .capacityExceeded && !(c == .disposalPending && models[k].asyncDispose) {
                    fail("enqueue: unexpected \(String(describing: c))")
                }
                counts["enqueue", default: 0] += 1
            case 40..<52:
                if code({ try q.start() }) == nil { models[k].mayPlay = true }
                counts["start", default: 0] += 1
            case 52..<56:
                _ = code { try q.pause() }
                counts["pause", default: 0] += 1
            case 56..<62:
                let c = code { try q.stop(immediately: true) }
                if c == nil {
                    absorb()
                    if models[k].inFlight != 0 { fail("queue \(models[k].id): \(models[k].inFlight) buffers still out after an immediate stop") }
                    if q.isRunning { fail("running after an immediate stop") }
                    models[k].mayPlay = false
                } else if !(c == .disposalPending && models[k].asyncDispose) && c != .capacityExceeded {
                    fail("stop: unexpected \(String(describing: c))")
                }
                if c != nil { models[k].history.append("stop failed \(String(describing: c))") }
                counts["stopNow", default: 0] += 1
            case 62..<66:
                _ = code { try q.stop(immediately: false) }
                counts["stopLater", default: 0] += 1
            case 66..<70:
                let rc = code { try q.reset() }
                if rc != nil { models[k].history.append("reset failed \(String(describing: rc))") }
                if rc == nil {
                    absorb()
                    if models[k].inFlight != 0 { fail("buffers still out after a reset") }
                }
                counts["reset", default: 0] += 1
            case 70..<74:
                _ = code { try q.setParameter(.volume, [0, 0.5, 1].randomElement(using: &rng)!) }
                counts["volume", default: 0] += 1
            case 74..<76:
                let immediately = Bool.random(using: &rng)
                let c = code { try q.dispose(immediately: immediately) }
                if c == nil {
                    absorb()
                    if immediately || code({ try q.pause() }) == .invalidQueue {
                        models[k].gone = true
                    } else {
                        models[k].asyncDispose = true
                    }
                } else if !(c == .disposalPending && models[k].asyncDispose) && c != .capacityExceeded {
                    fail("dispose: unexpected \(String(describing: c))")
                }
                counts["dispose", default: 0] += 1
            case 76..<80:
                // Free a buffer that is not enqueued, then allocate a new one.
                if let i = models[k].buffers.indices.randomElement(using: &rng) {
                    let b = models[k].buffers[i]
                    let c = code { try q.freeBuffer(b) }
                    if c == nil {
                        if models[k].outstanding[ObjectIdentifier(b), default: 0] != 0 && !b.isEnqueued {
                            // Handed back but the callback not absorbed yet: fine.
                        }
                        models[k].buffers.remove(at: i)
                        if let nb = try? q.allocateBuffer(capacity: 256) { models[k].buffers.append(nb) }
                    } else if c == .bufferInQueue {
                        if !b.isEnqueued { fail("a free buffer refused as in queue") }
                    }
                }
                counts["free", default: 0] += 1
            default:  // render a cycle and deliver
                let n = Int.random(in: 1...64, using: &rng)
                device.render(frames: n, into: planes)
                engine.deliverPendingEvents()
                absorb()
                let silent = (0..<outputs).filter { o in !models.contains { !$0.gone && $0.output == o && $0.mayPlay } }
                for o in 0..<outputs {
                    for i in 0..<n {
                        let v = planes[o][i]
                        if v < 0 || v > level(o) + 1e-6 {
                            let on = models.filter { $0.output == o }.map { "\($0.id) gone \($0.gone) async \($0.asyncDispose) \($0.history.joined(separator: "\n"))" }
                            fail("output \(o) frame \(i): \(v) exceeds its queue's level; queues there: \(on)")
                            break
                        }
                        if v != 0 && silent.contains(o) && !models.contains(where: { $0.output == o && $0.asyncDispose && !$0.gone }) {
                            fail("output \(o): sound from a stopped queue"); break
                        }
                    }
                }
                counts["render", default: 0] += 1
            }
            // Stale handles: every call refused, nothing changes.
            if let dead = lastGone, Int.random(in: 0..<20, using: &rng) == 0 {
                let c = code { try dead.setOutputChannels([0]) }
                if c != .invalidQueue && c != .invalidDevice { fail("a stale handle answered \(String(describing: c))") }
                if dead.isRunning { fail("a stale handle reads running") }
                if dead.currentTime().time.sampleTime != 0 { fail("a stale handle reads a time") }
                counts["stale", default: 0] += 1
            }
        }
        // Every buffer comes back: stop what is live, let the asynchronous disposals drain.
        for _ in 0..<64 {
            device.render(frames: 64, into: planes)
            engine.deliverPendingEvents()
        }
        absorb()
        for k in models.indices where !models[k].gone {
            if models[k].asyncDispose {
                if code({ try models[k].queue.pause() }) != .invalidQueue { fail("an asynchronous disposal never completed") }
                continue
            }
            try models[k].queue.stop(immediately: true)
            absorb()
            if models[k].inFlight != 0 { fail("queue \(models[k].id): \(models[k].inFlight) buffers lost") }
        }
        #expect(engine.statistics.droppedEvents == 0)
        #expect(issues == 0, "\(issues) issues; operations: \(counts)")
        #expect(counts.values.reduce(0, +) >= Self.operations / 2)
    }
}
