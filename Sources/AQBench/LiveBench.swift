import AQCore
import AQEngine
import AQJack
import AQJackServer
import AQTypes
import Foundation
import Synchronization

/// What `aqsync bench` measures on a JACK server.
///
/// Thread safety: plain values.
public struct LiveBenchOptions: Sendable {
    /// Output queues, stereo float at the device rate, three 4096-frame buffers each.
    public var queues: Int
    /// Frames per period asked of a server aqsync starts (nil: 256). An existing server's
    /// period is used as it is, and reported.
    public var frames: Int?
    /// Seconds to measure, after a half-second warm-up.
    public var seconds: Double
    /// The server to use; nil: `JACK_DEFAULT_SERVER` or `default`. When it is not reachable, a
    /// private server is started (dummy backend, `-R` when allowed).
    public var server: String?
    /// Sample rate of a server aqsync starts.
    public var sampleRate: Int

    public init(queues: Int = 64, frames: Int? = nil, seconds: Double = 10, server: String? = nil, sampleRate: Int = 48000) {
        self.queues = queues
        self.frames = frames
        self.seconds = seconds
        self.server = server
        self.sampleRate = sampleRate
    }
}

/// The figures of one live run. JSON keys are the snake_case names in `CodingKeys`.
public struct LiveBenchFigures: Sendable, Codable {
    public var mode = "live"
    public var queues: Int
    /// The server's period, frames.
    public var frames: Int
    public var seconds: Double
    public var sampleRate: Double
    /// The period, µs: the callback's deadline.
    public var periodUs: Double
    /// Process callback duration (entry to exit, renderer included), µs.
    public var callbackUs: Percentiles
    /// How much later than its earliest the process callback was entered, µs: for each cycle,
    /// entry − the cycle's start as JACK reports it, minus the smallest such value of the run
    /// (cycles next to an xrun left out). Never negative. Why not the plain difference: jackd2
    /// reports as "cycle start" its delay-locked loop's *prediction* of the driver's wake-up
    /// (`fCurrentWakeup`), not the wake-up itself, so entry − start is off by the filter's
    /// error (it read −65.8 µs once) and its absolute value means little; its spread does.
    /// The plain difference is ``wakeupVersusJackUs``.
    public var wakeupUs: Percentiles
    /// Callback entry − the cycle's start as JACK reports it, µs, signed (see ``wakeupUs``). On
    /// PipeWire the reported start is the driver's own time, so there it is the wake-up itself.
    public var wakeupVersusJackUs: Percentiles
    /// |host time the timeline predicted for the cycle's first frame from the previous cycle's
    /// anchor − the cycle start JACK reports|, µs.
    public var translateErrorUs: Percentiles
    /// Xruns JACK reported during the measurement. Cycle pairs with an xrun between them are
    /// left out of the translation error (the time line broke there, as the clock reports).
    public var xruns: UInt64
    /// Discontinuities the device clock noted during the measurement (xruns, time jumps, ...).
    public var discontinuities: UInt64
    /// JACK's DSP load, percent, averaged over the run (sampled every 100 ms).
    public var dspLoad: Double
    /// Allocations made on JACK's process thread during the measurement; -1 when this process
    /// cannot count them (see docs/benchmarking.md).
    public var renderAllocations: Int
    /// Cycles measured, and cycles the probe's ring lost.
    public var cycles: Int
    public var droppedCycles: UInt64
    /// Frames the renderer found late (a queue ran dry): must be 0.
    public var lateFrames: UInt64
    /// The server: its name, whether aqsync started it; whether the client's process thread
    /// runs with a realtime policy (SCHED_FIFO/RR).
    public var server: String
    public var privateServer: Bool
    public var realtime: Bool
    /// The clock JACK's times are on, as ``JackDevice`` identified it (wake-up and
    /// translation figures depend on converting it to CLOCK_MONOTONIC).
    public var jackClock: String

    enum CodingKeys: String, CodingKey {
        case mode, queues, frames, seconds, xruns, discontinuities, cycles, server, realtime
        case sampleRate = "sample_rate"
        case periodUs = "period_us"
        case callbackUs = "callback_us"
        case wakeupUs = "wakeup_us"
        case wakeupVersusJackUs = "wakeup_vs_jack_us"
        case translateErrorUs = "translate_error_us"
        case dspLoad = "dsp_load"
        case renderAllocations = "render_allocations"
        case droppedCycles = "dropped_cycles"
        case lateFrames = "late_frames"
        case privateServer = "private_server"
        case jackClock = "jack_clock"
    }

    /// Pretty, key-sorted JSON. Control thread.
    public var json: String { encodeJSON(self) }
}

/// A live run's figures and its raw callback durations (µs), for the histogram.
public struct LiveBenchResult: Sendable {
    public var result: LiveBenchFigures
    public var callbackUs: [Double]
}

/// Why a benchmark could not run, for people.
public struct BenchError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}

/// Counts allocations made on one thread, when the process can (see `aqsync`'s allocation
/// counter). `watch` starts counting on a thread, `count` reads, `stop` stops. Any thread.
public struct AllocationCounter: Sendable {
    public var watch: @Sendable (pthread_t) -> Void
    public var count: @Sendable () -> Int
    public var stop: @Sendable () -> Void
    public init(watch: @escaping @Sendable (pthread_t) -> Void, count: @escaping @Sendable () -> Int, stop: @escaping @Sendable () -> Void) {
        self.watch = watch
        self.count = count
        self.stop = stop
    }
}

/// Runs the live benchmark: opens a JACK device (starting a private server when none is
/// reachable), plays `queues` stereo float queues kept fed from their output callbacks, and
/// reads the device's cycle probe every 100 ms. Control thread; blocks for about
/// `seconds + 1` s.
///
/// The server a benchmark runs on: the one `o.server` names when reachable, else a private
/// dummy jackd at `o.sampleRate` and `o.frames` (the caller stops it). Control thread; blocks
/// while a private server starts.
func benchServer(_ o: LiveBenchOptions, log: (String) -> Void) throws -> (name: String, started: JackServer?) {
    if JackDevice.isServerReachable(o.server) {
        let name = JackDevice.resolveServerName(o.server)
        log("using JACK server “\(name)” (its own period; --frames is not applied to a server aqsync did not start)")
        return (name, nil)
    }
    do {
        let s = try JackServer.startPrivate(
            name: "aqbench-\(getpid())", backend: .dummy, sampleRate: o.sampleRate, period: o.frames ?? 256)
        log("started a \(s.summary)")
        return (s.name, s)
    } catch {
        throw BenchError("no JACK server reachable and none could be started: \(error)")
    }
}

/// - Parameters:
///   - allocations: counts allocations on JACK's process thread; nil reports -1.
///   - log: progress lines for people.
public func runLiveBench(
    _ o: LiveBenchOptions, allocations: AllocationCounter? = nil, log: (String) -> Void = { _ in }
) throws -> LiveBenchResult {
    let (serverName, privateServer) = try benchServer(o, log: log)
    defer { privateServer?.stop() }

    let device: JackDevice
    do {
        device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsync-bench", serverName: serverName, outputChannels: 2, outputConnections: .none))
    } catch {
        throw BenchError("cannot open a JACK client: \(error)")
    }
    let probe = device.installCycleProbe(capacity: 1 << 16)
    let rate = device.sampleRate
    let frames = device.framesPerCycle
    let caps = RenderCapacities(
        queues: max(o.queues, 1), buffersPerQueue: 8, commands: max(8192, o.queues * 8), outputChannels: 2)
    let engine: AudioQueueEngine
    do {
        engine = try AudioQueueEngine(device: device, capacities: caps)
    } catch {
        throw BenchError("cannot start the engine: \(error)")
    }
    defer { engine.close() }

    // The workload: N stereo float queues, three 4096-frame buffers each, re-enqueued from the
    // output callback (on the engine's events thread) as soon as each has played.
    let format = AudioStreamBasicDescription.linearPCM(sampleRate: rate, channels: 2, bits: 32, isFloat: true)
    let refillErrors = Atomic<Int>(0)
    var queues: [AudioQueue] = []
    for q in 0..<o.queues {
        let queue: AudioQueue
        do {
            queue = try engine.newOutput(format: format) { queue, buffer in
                do { _ = try queue.enqueue(buffer) } catch { refillErrors.wrappingAdd(1, ordering: .relaxed) }
            }
            try queue.setParameter(.volume, 0.25 + Float(q % 7) / 16)
            for b in 0..<3 {
                let buffer = try queue.allocateBuffer(capacity: 4096 * 8)
                let p = buffer.audioData.bindMemory(to: Float.self, capacity: 4096 * 2)
                for i in 0..<(4096 * 2) { p[i] = Float(((q * 3 + b) * 8192 + i) &* 2_654_435_761 % 2001) / 1000 - 1 }
                buffer.audioDataByteSize = 4096 * 8
                _ = try queue.enqueue(buffer)
            }
        } catch {
            throw BenchError("cannot set up queue \(q): \(error)")
        }
        queues.append(queue)
    }
    do {
        _ = try engine.start(queues)
    } catch {
        throw BenchError("cannot start the queues: \(error)")
    }
    log("\(o.queues) queues playing on \(device.uid), \(frames) frames at \(Int(rate)) Hz; measuring for \(o.seconds) s")

    // Warm-up: half a second, then forget what was recorded.
    Thread.sleep(forTimeInterval: 0.5)
    var scratch: [JackCycleMeasurement] = []
    scratch.reserveCapacity(probe.capacity)
    probe.drain(into: &scratch)
    scratch.removeAll(keepingCapacity: true)

    let expected = Int(o.seconds * rate / Double(max(frames, 1)) * 1.2) + 1024
    var records: [JackCycleMeasurement] = []
    records.reserveCapacity(expected)
    let xruns0 = device.xrunCount
    let epoch0 = engine.discontinuity.epoch
    let late0 = engine.statistics.lateFrames
    let dropped0 = probe.droppedCount
    if let allocations, let t = device.processThread { allocations.watch(t) }
    let realtime = isRealtimeThread(device)
    var loads: [Double] = []
    let start = Date()
    while Date().timeIntervalSince(start) < o.seconds {
        Thread.sleep(forTimeInterval: 0.1)
        probe.drain(into: &records)
        loads.append(device.dspLoad)
    }
    probe.drain(into: &records)
    let renderAllocations = allocations?.count() ?? -1
    allocations?.stop()
    let xruns = device.xrunCount - xruns0
    let discontinuities = engine.discontinuity.epoch - epoch0
    let lateFrames = engine.statistics.lateFrames - late0
    let dropped = probe.droppedCount - dropped0
    for q in queues { try? q.stop(immediately: true) }

    // Statistics, off the render thread.
    var callback: [Double] = [], wakeup: [Double] = [], translate: [Double] = []
    var steady = Double.infinity  // the smallest entry − start of cycles not next to an xrun
    callback.reserveCapacity(records.count)
    wakeup.reserveCapacity(records.count)
    translate.reserveCapacity(records.count)
    for (i, m) in records.enumerated() {
        callback.append(Double(m.exitNs &- m.entryNs) / 1000)
        let late = (Double(m.entryNs) - Double(m.cycle.hostTimeNs)) / 1000
        wakeup.append(late)
        if i > 0 {
            let prev = records[i - 1].cycle
            if prev.frame + Int64(prev.frames) == m.cycle.frame && records[i - 1].xruns == m.xruns {
                steady = min(steady, late)
                // What the timeline (the engine's own translation) predicted from the previous
                // anchor for this cycle's first frame, against what JACK reports for it.
                let tb = DeviceTimebase(cycle: prev, nominalRate: rate)
                let predicted = tb.hostTime(forSampleTime: Double(m.cycle.frame))
                translate.append(abs(Double(predicted) - Double(m.cycle.hostTimeNs)) / 1000)
            }
        }
    }
    let figures = LiveBenchFigures(
        queues: o.queues, frames: frames, seconds: o.seconds, sampleRate: rate,
        periodUs: Double(frames) / rate * 1e6, callbackUs: Percentiles(callback),
        wakeupUs: Percentiles(steady.isFinite ? wakeup.map { max(0, $0 - steady) } : []),
        wakeupVersusJackUs: Percentiles(wakeup),
        translateErrorUs: Percentiles(translate), xruns: xruns, discontinuities: discontinuities,
        dspLoad: loads.isEmpty ? 0 : loads.reduce(0, +) / Double(loads.count), renderAllocations: renderAllocations,
        cycles: records.count, droppedCycles: dropped, lateFrames: lateFrames, server: serverName,
        privateServer: privateServer != nil, realtime: realtime, jackClock: device.clockSource.description)
    if refillErrors.load(ordering: .relaxed) > 0 {
        log("warning: \(refillErrors.load(ordering: .relaxed)) re-enqueues failed")
    }
    return LiveBenchResult(result: figures, callbackUs: callback)
}

/// Whether JACK's process thread (in this client) runs with a realtime policy.
private func isRealtimeThread(_ device: JackDevice) -> Bool {
    guard let t = device.processThread else { return false }
    var policy: Int32 = 0
    var param = sched_param()
    guard pthread_getschedparam(t, &policy, &param) == 0 else { return false }
    return policy == SCHED_FIFO || policy == SCHED_RR
}

/// The live result as a terminal table and histogram. Control thread.
public func describe(_ r: LiveBenchFigures, samples: [Double]) -> String {
    var s = "aqsync bench: \(r.queues) queues, stereo float, on JACK server “\(r.server)”"
    s += r.privateServer ? " (private)" : ""
    s += "; process thread \(r.realtime ? "realtime (SCHED_FIFO/RR)" : "not realtime"); JACK clock \(r.jackClock)\n"
    s += "period \(r.frames) frames at \(Int(r.sampleRate)) Hz = \(fmt(r.periodUs)) µs; \(r.cycles) cycles in \(r.seconds) s\n\n"
    s += "                        p50        p99      p99.9        max\n"
    func row(_ name: String, _ p: Percentiles) -> String {
        name.padding(toLength: 16, withPad: " ", startingAt: 0)
            + [p.p50, p.p99, p.p999, p.max].map { fmt($0).leftPad(11) }.joined() + "  µs\n"
    }
    s += row("callback", r.callbackUs)
    s += row("wake-up", r.wakeupUs)
    s += row("  vs JACK start", r.wakeupVersusJackUs)
    s += row("translation err", r.translateErrorUs)
    s += "(wake-up: beyond the run's earliest entry; jackd2's reported start is a smoothed estimate)\n"
    s += "\ncallback p99.9 = \(fmt(r.callbackUs.p999 / r.periodUs * 100)) % of the period\n"
    s += "xruns \(r.xruns), discontinuities \(r.discontinuities), DSP load \(fmt(r.dspLoad)) %, "
    s += "render-thread allocations \(r.renderAllocations < 0 ? "not counted" : String(r.renderAllocations)), "
    s += "late frames \(r.lateFrames), cycles lost by the probe \(r.droppedCycles)\n\n"
    s += "callback duration:\n" + textHistogram(samples, unit: "µs")
    return s
}
