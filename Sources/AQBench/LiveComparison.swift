import AQJack
import AQJackServer
import CMixReference
import Foundation

/// The figures of `aqsync bench --versus-c`: the engine and a plain C JACK client doing the
/// same mix (CMixReference's `aq_ref_jack_*`) on the same server, alternating. JSON keys are
/// the snake_case names in `CodingKeys`.
///
/// Thread safety: a plain value.
public struct LiveComparisonResult: Sendable, Codable {
    public var mode = "live-versus-c"
    public var queues: Int
    public var frames: Int
    public var sampleRate: Double
    public var periodUs: Double
    /// Alternations: each round measures the engine, then the C client, `seconds / rounds` each.
    public var rounds: Int
    public var seconds: Double
    /// The engine's process callback (entry to exit, through its cycle probe), µs.
    public var engineCallbackUs: Percentiles
    /// The C client's process callback (entry to exit, CLOCK_MONOTONIC), µs.
    public var cCallbackUs: Percentiles
    /// engine / C for p50, p99, p99.9 of the callback duration.
    public var ratioP50: Double
    public var ratioP99: Double
    public var ratioP999: Double
    /// Each round's p50 ratio.
    public var ratioP50Rounds: [Double]
    /// Xruns JACK reported while each was measured.
    public var engineXruns: UInt64
    public var cXruns: UInt64
    /// Allocations on JACK's process thread while the engine was measured (must be 0; -1 when
    /// this process cannot count them). The C client's callback calls no allocator by
    /// construction (it only mixes and stores a duration).
    public var engineAllocations: Int
    /// Cycles measured, each.
    public var engineCycles: Int
    public var cCycles: Int
    public var server: String
    public var privateServer: Bool

    enum CodingKeys: String, CodingKey {
        case mode, queues, frames, rounds, seconds, server
        case sampleRate = "sample_rate"
        case periodUs = "period_us"
        case engineCallbackUs = "engine_callback_us"
        case cCallbackUs = "c_callback_us"
        case ratioP50 = "ratio_p50"
        case ratioP99 = "ratio_p99"
        case ratioP999 = "ratio_p999"
        case ratioP50Rounds = "ratio_p50_rounds"
        case engineXruns = "engine_xruns"
        case cXruns = "c_xruns"
        case engineAllocations = "engine_allocations"
        case engineCycles = "engine_cycles"
        case cCycles = "c_cycles"
        case privateServer = "private_server"
    }

    /// Pretty, key-sorted JSON. Control thread.
    public var json: String { encodeJSON(self) }
}

/// Runs the engine's live benchmark and a plain C JACK client doing the same mix on one
/// server (started privately, as ``runLiveBench(_:allocations:log:)`` does, when none is
/// reachable), alternating: each of `rounds` rounds measures the engine for
/// `o.seconds / rounds` (its own half-second warm-up first), then the C client for as long
/// (after a half-second warm-up). Only one of them is active at a time. Control thread;
/// blocks for about `o.seconds × 2 + rounds × 2` s.
public func runLiveComparison(
    _ o: LiveBenchOptions, rounds: Int = 3, allocations: AllocationCounter? = nil, log: (String) -> Void = { _ in }
) throws -> LiveComparisonResult {
    let (serverName, privateServer) = try benchServer(o, log: log)
    defer { privateServer?.stop() }
    let rounds = max(1, rounds)
    let each = o.seconds / Double(rounds)
    let capacity = Int(each * Double(o.sampleRate) / 16) + 4096
    guard let c = aq_ref_jack_open(serverName, "aqsync-bench-c", Int32(o.queues), Int32(capacity)) else {
        throw BenchError("cannot open the C reference client on “\(serverName)”")
    }
    defer { aq_ref_jack_close(c) }
    var scratch = [UInt64](repeating: 0, count: capacity)
    var engine: [Double] = [], cTimes: [Double] = []
    var engineXruns: UInt64 = 0, cXruns: UInt64 = 0, engineAllocations = 0, counted = true
    var frames = 0, rate = Double(o.sampleRate), p50Ratios: [Double] = []
    for round in 0..<rounds {
        var eo = o
        eo.server = serverName
        eo.seconds = each
        let r = try runLiveBench(eo, allocations: allocations)
        engine += r.callbackUs
        engineXruns += r.result.xruns
        if r.result.renderAllocations < 0 { counted = false } else { engineAllocations += r.result.renderAllocations }
        frames = r.result.frames
        rate = r.result.sampleRate
        guard aq_ref_jack_activate(c) == 0 else { throw BenchError("cannot activate the C reference client") }
        Thread.sleep(forTimeInterval: 0.5)
        _ = aq_ref_jack_deactivate(c)
        _ = scratch.withUnsafeMutableBufferPointer { aq_ref_jack_take(c, $0.baseAddress, Int32(capacity)) }
        let x0 = aq_ref_jack_xruns(c)
        guard aq_ref_jack_activate(c) == 0 else { throw BenchError("cannot activate the C reference client") }
        Thread.sleep(forTimeInterval: each)
        _ = aq_ref_jack_deactivate(c)
        cXruns += aq_ref_jack_xruns(c) - x0
        let n = scratch.withUnsafeMutableBufferPointer { Int(aq_ref_jack_take(c, $0.baseAddress, Int32(capacity))) }
        let roundC = scratch[0..<n].map { Double($0) / 1000 }
        cTimes += roundC
        let ep = Percentiles(r.callbackUs).p50, cp = Percentiles(roundC).p50
        p50Ratios.append(cp > 0 ? ep / cp : 0)
        log("round \(round + 1): engine p50 \(fmt(ep)) µs, C p50 \(fmt(cp)) µs")
    }
    let ep = Percentiles(engine), cp = Percentiles(cTimes)
    return LiveComparisonResult(
        queues: o.queues, frames: frames, sampleRate: rate, periodUs: Double(frames) / rate * 1e6, rounds: rounds,
        seconds: o.seconds, engineCallbackUs: ep, cCallbackUs: cp,
        ratioP50: cp.p50 > 0 ? ep.p50 / cp.p50 : 0, ratioP99: cp.p99 > 0 ? ep.p99 / cp.p99 : 0,
        ratioP999: cp.p999 > 0 ? ep.p999 / cp.p999 : 0, ratioP50Rounds: p50Ratios,
        engineXruns: engineXruns, cXruns: cXruns, engineAllocations: counted ? engineAllocations : -1,
        engineCycles: engine.count, cCycles: cTimes.count, server: serverName, privateServer: privateServer != nil)
}

/// The comparison as a terminal table. Control thread.
public func describe(_ r: LiveComparisonResult) -> String {
    var s = "aqsync bench --versus-c: \(r.queues) queues × \(r.frames) frames at \(Int(r.sampleRate)) Hz on “\(r.server)”"
    s += r.privateServer ? " (private)\n" : "\n"
    s += "engine and a plain C JACK client doing the same mix, alternating: \(r.rounds) rounds of "
    s += "\(fmt(r.seconds / Double(max(r.rounds, 1)))) s each for each\n\n"
    s += "                      p50        p99      p99.9        max   xruns  cycles\n"
    func row(_ name: String, _ p: Percentiles, _ x: UInt64, _ n: Int) -> String {
        name.padding(toLength: 14, withPad: " ", startingAt: 0)
            + [p.p50, p.p99, p.p999, p.max].map { fmt($0).leftPad(11) }.joined() + String(x).leftPad(8)
            + String(n).leftPad(8) + "  µs\n"
    }
    s += row("engine", r.engineCallbackUs, r.engineXruns, r.engineCycles)
    s += row("C client", r.cCallbackUs, r.cXruns, r.cCycles)
    s += "ratio".padding(toLength: 14, withPad: " ", startingAt: 0)
        + [r.ratioP50, r.ratioP99, r.ratioP999].map { fmt($0).leftPad(11) }.joined() + "\n"
    s += "p50 ratio per round: \(r.ratioP50Rounds.map { fmt($0) }.joined(separator: ", "))\n"
    s += "engine render-thread allocations: \(r.engineAllocations < 0 ? "not counted" : String(r.engineAllocations))\n"
    return s
}
