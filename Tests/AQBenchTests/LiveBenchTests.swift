import AQBench
import Foundation
import Testing

/// A short live run on a private jackd (started by the bench itself, since the named server
/// does not exist): the JSON has every key the issue lists, with sane values. Shape and
/// sanity only: the speed targets are benchmark figures, never test conditions.
@Suite("Live bench on a private JACK server") struct LiveBenchOnJACKTests {
    @Test func jsonHasEveryKeyWithSaneValues() throws {
        let options = LiveBenchOptions(
            queues: 4, frames: 256, seconds: 1, server: "aqsync-no-such-server-\(getpid())", sampleRate: 48000)
        let r = try runLiveBench(options)
        let object = try JSONSerialization.jsonObject(with: Data(r.result.json.utf8)) as? [String: Any]
        let json = try #require(object)
        for key in [
            "callback_us", "wakeup_us", "translate_error_us", "period_us", "sample_rate", "frames", "queues", "seconds",
            "xruns", "discontinuities", "render_allocations", "dsp_load", "cycles", "wakeup_vs_jack_us",
        ] {
            #expect(json[key] != nil, "missing key \(key)")
        }
        for key in ["callback_us", "wakeup_us", "translate_error_us"] {
            let p = try #require(json[key] as? [String: Any], "\(key) is not an object")
            for k in ["p50", "p99", "p999", "max"] { #expect(p[k] is Double || p[k] is Int, "\(key).\(k) missing") }
            let p50 = p["p50"] as? Double ?? -1, max = p["max"] as? Double ?? -1
            #expect(p50 >= 0 && p50 <= max, "\(key): p50 \(p50), max \(max)")
        }
        #expect(json["queues"] as? Int == 4)
        #expect(json["frames"] as? Int == 256)
        #expect(json["sample_rate"] as? Double == 48000)
        #expect(abs((json["period_us"] as? Double ?? 0) - 256.0 / 48000 * 1e6) < 1e-6)
        // One second at 187.5 cycles a second: most of them were measured.
        let cycles = json["cycles"] as? Int ?? 0
        #expect(cycles > 100 && cycles < 400, "cycles \(cycles)")
        let callback = try #require(json["callback_us"] as? [String: Any])
        #expect((callback["p50"] as? Double ?? 0) > 0, "the callback takes some time")
        #expect((json["render_allocations"] as? Int ?? -2) >= -1)
        #expect((json["xruns"] as? Int ?? -1) >= 0)
        #expect(r.callbackUs.count == cycles)
        // The wake-up is measured from the run's earliest entry: its best cycle reads 0, none
        // reads below (the signed figure against JACK's smoothed start is wakeup_vs_jack_us).
        let wakeup = try #require(json["wakeup_us"] as? [String: Any])
        #expect((wakeup["p50"] as? Double ?? -1) >= 0)
    }

    /// `--versus-c`: the engine and the C client alternate on one private server; both are
    /// measured in every round and the JSON has every key with sane values.
    @Test func comparisonWithTheCClientMeasuresBoth() throws {
        let options = LiveBenchOptions(
            queues: 4, frames: 256, seconds: 1.5, server: "aqsync-no-such-server-c-\(getpid())", sampleRate: 48000)
        let r = try runLiveComparison(options, rounds: 3)
        let object = try JSONSerialization.jsonObject(with: Data(r.json.utf8)) as? [String: Any]
        let json = try #require(object)
        for key in [
            "engine_callback_us", "c_callback_us", "ratio_p50", "ratio_p99", "ratio_p999", "ratio_p50_rounds",
            "engine_xruns", "c_xruns", "engine_allocations", "engine_cycles", "c_cycles", "period_us",
        ] {
            #expect(json[key] != nil, "missing key \(key)")
        }
        #expect(r.privateServer)
        #expect(r.frames == 256)
        #expect(r.ratioP50Rounds.count == 3 && r.ratioP50Rounds.allSatisfy { $0 > 0 })
        // 0.5 s per mixer and round at 187.5 cycles a second: about 94 each round.
        #expect(r.engineCycles > 150 && r.engineCycles < 400, "engine cycles \(r.engineCycles)")
        #expect(r.cCycles > 150 && r.cCycles < 400, "C cycles \(r.cCycles)")
        #expect(r.engineCallbackUs.p50 > 0 && r.cCallbackUs.p50 > 0)
        #expect(r.ratioP50 > 0 && r.ratioP999 > 0)
        #expect(r.engineAllocations >= -1)
    }
}
