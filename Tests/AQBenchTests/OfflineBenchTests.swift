import AQBench
import Foundation
import Testing

/// The JSON of `aqsync bench --offline --json` has every key with sane values on a short run.
/// Checks shape and sanity only: speed targets are benchmark figures, never test conditions.
@Suite struct OfflineBenchTests {
    @Test func jsonHasEveryKeyWithSaneValues() throws {
        let (r, samples) = runOfflineBench(OfflineBenchOptions(queues: 8, frames: 64, seconds: 0.2))
        let object = try JSONSerialization.jsonObject(with: Data(r.json.utf8)) as? [String: Any]
        let json = try #require(object)
        for key in [
            "mode", "queues", "frames", "seconds", "sample_rate", "cycles", "ns_per_cycle", "ns_per_source_frame",
            "plain_ns_per_cycle", "plain_ns_per_source_frame", "ratio", "period_us", "late_frames",
        ] {
            #expect(json[key] != nil, "missing key \(key)")
        }
        #expect(json["mode"] as? String == "offline")
        #expect(json["queues"] as? Int == 8)
        #expect(json["frames"] as? Int == 64)
        for key in ["ns_per_cycle", "plain_ns_per_cycle"] {
            let p = try #require(json[key] as? [String: Any], "\(key) is not an object")
            let p50 = try #require(p["p50"] as? Double), p99 = try #require(p["p99"] as? Double)
            #expect(p50 > 0 && p50 <= p99, "\(key): p50 \(p50), p99 \(p99)")
        }
        #expect((json["cycles"] as? Int ?? 0) > 0)
        #expect(samples.count == json["cycles"] as? Int)
        let perFrame = try #require(json["ns_per_source_frame"] as? Double)
        #expect(perFrame > 0 && perFrame < 1e6)
        #expect((json["ratio"] as? Double ?? 0) > 0)
        #expect(abs((json["period_us"] as? Double ?? 0) - 64.0 / 48000 * 1e6) < 1e-6)
        // The workload never ran dry: every buffer was re-enqueued in time.
        #expect(json["late_frames"] as? Int == 0)
        #expect((json["buffers_refilled"] as? Int ?? 0) > 0)
    }
}
