@testable import AQBench
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
            "c_ns_per_cycle", "c_ns_per_source_frame", "ratio", "ratio_rounds", "timer_overhead_ns", "period_us",
            "late_frames",
        ] {
            #expect(json[key] != nil, "missing key \(key)")
        }
        #expect(json["mode"] as? String == "offline")
        #expect(json["queues"] as? Int == 8)
        #expect(json["frames"] as? Int == 64)
        for key in ["ns_per_cycle", "c_ns_per_cycle"] {
            let p = try #require(json[key] as? [String: Any], "\(key) is not an object")
            let p50 = try #require(p["p50"] as? Double), p99 = try #require(p["p99"] as? Double)
            #expect(p50 > 0 && p50 <= p99, "\(key): p50 \(p50), p99 \(p99)")
        }
        #expect((json["cycles"] as? Int ?? 0) > 0)
        #expect(samples.count == json["cycles"] as? Int)
        let perFrame = try #require(json["ns_per_source_frame"] as? Double)
        #expect(perFrame > 0 && perFrame < 1e6)
        #expect((json["ratio"] as? Double ?? 0) > 0)
        let rounds = try #require(json["ratio_rounds"] as? [Double])
        #expect(rounds.count == 3 && rounds.allSatisfy { $0 > 0 })
        #expect(rounds.sorted()[1] == json["ratio"] as? Double, "the ratio is the rounds' median")
        #expect(abs((json["period_us"] as? Double ?? 0) - 64.0 / 48000 * 1e6) < 1e-6)
        // The workload never ran dry: every buffer was re-enqueued in time.
        #expect(json["late_frames"] as? Int == 0)
        #expect((json["buffers_refilled"] as? Int ?? 0) > 0)
    }

    /// The C reference mixes what the renderer mixes: the same data at the same gains gives the
    /// same output, cycle for cycle, once both are at the same place in the buffers.
    @Test func referenceMixesWhatTheRendererMixes() {
        let w = MixWorkload(queues: 5, frames: 100)
        let c = ReferenceMixer(sharing: w)
        // Bring the reference to the renderer's position (it starts half the buffers away).
        c.position = 0
        for cycle in 0..<200 {  // 20000 frames: past every buffer boundary and the loop's end
            w.cycle()
            // The reference writes into the same two outputs: keep the renderer's first.
            let e0 = Array(UnsafeBufferPointer(start: w.outputChannels.0, count: 100))
            let e1 = Array(UnsafeBufferPointer(start: w.outputChannels.1, count: 100))
            c.cycle()
            let (r0, r1) = c.outputs
            let worst = (0..<100).map { max(abs(e0[$0] - r0[$0]), abs(e1[$0] - r1[$0])) }.max() ?? 0
            #expect(worst < 1e-5, "cycle \(cycle): differs by \(worst)")
            if worst >= 1e-5 { break }
        }
        #expect(w.outputChecksum != 0)
    }

    /// A short grid: one result per point, in order, with sane ratios.
    @Test func gridHasEveryPoint() {
        let results = runOfflineGrid(queues: [1, 4], frames: [32, 256], seconds: 0.06, rounds: 3)
        #expect(results.map { "\($0.queues)x\($0.frames)" } == ["1x32", "1x256", "4x32", "4x256"])
        #expect(results.allSatisfy { $0.ratio > 0 && $0.lateFrames == 0 })
        let table = describeGrid(results)
        #expect(table.split(separator: "\n").count == 2 + 4)
    }
}
