import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24: the transport follower driven by hand, cycle by cycle, as a device calls it (the
/// transport's state and frame given each cycle): every frame it plays is the offline render's
/// frame at transport frame − offset, from the first rolling cycle after each locate; nothing
/// while stopped or starting; slow-sync answered "ready" only once primed.
@Suite("Transport follower, by hand")
struct TransportFollowerTests {
    static let offset: Int64 = 1000
    static let period = 256

    /// Calls the follower's process function for one cycle at transport frame `frame`; returns
    /// what it added to 4 zeroed outputs.
    static func cycle(_ cb: TransportCallbacks, rolling: Bool, frame: Int64, frames: Int = period) -> [[Float]] {
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: 4 * frames)
        storage.initialize(repeating: 0, count: 4 * frames)
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 4)
        defer { storage.deallocate(); planes.deallocate() }
        for c in 0..<4 { planes[c] = storage + c * frames }
        cb.process(cb.context, rolling ? 1 : 0, frame, UInt32(frames), UnsafePointer(planes), 4)
        return (0..<4).map { Array(UnsafeBufferPointer(start: planes[$0], count: frames)) }
    }

    /// The reference at transport frame `f`: the render's frame f − offset, or silence
    /// outside the session.
    static func expected(_ full: WAVFile, _ c: Int, _ f: Int64) -> Float {
        let s = f - offset
        return s >= 0 && s < Int64(full.frameCount) ? full.channels[c][Int(s)] : 0
    }

    /// Plays `count` rolling cycles from transport frame `from`; returns the first frame that
    /// differs from the reference (nil: all exact) and whether anything played.
    static func roll(_ cb: TransportCallbacks, _ full: WAVFile, from: Int64, cycles count: Int) -> (diff: String?, heard: Bool) {
        var heard = false
        for k in 0..<count {
            let f0 = from + Int64(k * period)
            let out = cycle(cb, rolling: true, frame: f0)
            for c in 0..<4 {
                for i in 0..<period {
                    if out[c][i] != 0 { heard = true }
                    let want = expected(full, c, f0 + Int64(i))
                    if out[c][i] != want { return ("output \(c + 1) transport frame \(f0 + Int64(i)): \(out[c][i]) vs \(want)", heard) }
                }
            }
        }
        return (nil, heard)
    }

    @Test func followsLocatesExactly() throws {
        let fx = try LoopRenderTests.make(loop: "")
        let session = try SessionLoader.load(fx.url)
        let refURL = fx.dir.file("ref.wav")
        try OfflineRenderer.render(session: session, to: refURL)
        let full = try WAVReader.read(refURL)
        let follower = try TransportFollower(session: session, deviceRate: 48000, outputs: 4, offset: Self.offset, lead: 9000)
        defer { follower.close() }
        let cb = follower.callbacks

        // Stopped at transport frame 0 (session frame −1000): silent; the follower primes there.
        #expect(Self.cycle(cb, rolling: false, frame: 0).allSatisfy { $0.allSatisfy { $0 == 0 } })
        #expect(follower.waitUntilPrimed(at: -Self.offset, timeout: 10), "\(follower.error ?? "")")
        #expect(cb.sync(cb.context, 0) == 1)
        // Rolls from 0: silence for 1000 frames, then the session, exact, for 40 cycles.
        var r = Self.roll(cb, full, from: 0, cycles: 40)
        #expect(r.diff == nil && r.heard, "\(r.diff ?? "nothing heard")")
        // A cycle this client was not called for (an xrun): it plays on where the transport
        // is, the frames in between dropped.
        r = Self.roll(cb, full, from: Int64(41 * Self.period), cycles: 10)
        #expect(r.diff == nil, "after a skipped cycle: \(r.diff ?? "")")
        #expect(follower.counters.skippedFrames == UInt64(Self.period) && follower.counters.missedCycles == 0, "\(follower.counters)")

        // A locate while rolling to an odd frame inside every track: "not yet" until primed,
        // silent while starting, then exact from the first rolling cycle.
        for target: Int64 in [50_007 + Self.offset, 23_999 + Self.offset, 96_100 + Self.offset, 71_999] {
            #expect(cb.sync(cb.context, target) == 0)
            #expect(Self.cycle(cb, rolling: false, frame: target).allSatisfy { $0.allSatisfy { $0 == 0 } })
            #expect(follower.waitUntilPrimed(at: target - Self.offset, timeout: 10), "target \(target): \(follower.error ?? "")")
            #expect(cb.sync(cb.context, target) == 1)
            r = Self.roll(cb, full, from: target, cycles: 20)
            #expect(r.diff == nil, "after the locate to \(target): \(r.diff ?? "")")
        }

        // Stopped: nothing plays, wherever the transport stands.
        let before = follower.counters
        #expect(Self.cycle(cb, rolling: false, frame: 30_000).allSatisfy { $0.allSatisfy { $0 == 0 } })
        #expect(follower.counters.playedCycles == before.playedCycles)

        // Rolling where it was never asked (no sync): silent, then it joins on the first cycle
        // at least `lead` frames on (9000 → 36 cycles of 256: 9216), on the exact frame.
        let x: Int64 = 10_000
        let join = x + 9216
        let missedBefore = follower.counters.missedCycles
        #expect(Self.cycle(cb, rolling: true, frame: x).allSatisfy { $0.allSatisfy { $0 == 0 } })
        #expect(follower.counters.missedCycles == missedBefore + 1)
        #expect(follower.waitUntilPrimed(at: join - Self.offset, timeout: 10))
        var f = x + Int64(Self.period)
        while f < join {
            #expect(Self.cycle(cb, rolling: true, frame: f).allSatisfy { $0.allSatisfy { $0 == 0 } })
            f += Int64(Self.period)
        }
        r = Self.roll(cb, full, from: join, cycles: 10)
        #expect(r.diff == nil && r.heard, "\(r.diff ?? "nothing heard")")

        // Past the session's end: silence, and still ready.
        let past: Int64 = 200_000
        #expect(cb.sync(cb.context, past) == 0)
        #expect(follower.waitUntilPrimed(at: past - Self.offset, timeout: 10))
        r = Self.roll(cb, full, from: past, cycles: 4)
        #expect(r.diff == nil && !r.heard)
        #expect(follower.error == nil)
    }
}
