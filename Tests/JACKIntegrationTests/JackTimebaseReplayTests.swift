import AQCore
@testable import AQJack
import CJACK
import Testing

/// Issue 24: the lead's timebase callback (``jackTimebase``) replayed through jackd2's
/// transport engine, cycle by cycle, without a server. jack2 keeps two positions: the
/// *current* one every client reads in a cycle (`jack_transport_query`) and the *pending* one
/// of the next cycle. At the start of each cycle the server makes the pending position
/// current and, while rolling, moves a copy of it on by one period to be the new pending
/// (`JackTransportEngine::CycleEnd`); the timebase master's callback runs at the end of the
/// master's cycle on the pending position (`JackClient::CallTimebaseCallbackAux`), so the
/// bar/beat/tick it writes there must be the one of the pending position's own frame — the
/// next cycle's. A master called after the server has begun the next cycle (late) writes the
/// cycle after that: the cycle in between is published with the previous bar/beat/tick, and
/// nothing the master can do changes a published position (docs/transport.md).
@Suite("JACK timebase master, jackd2's transport cycles replayed")
struct JackTimebaseReplayTests {
    /// jackd2's two positions and one rolling cycle's start.
    struct Engine {
        var current = jack_position_t()
        var pending = jack_position_t()
        let period: UInt32

        init(frame: UInt32, period: UInt32) {
            self.period = period
            current.frame = frame
            current.frame_rate = 48000
            pending = current
        }

        /// The start of a rolling cycle (`CycleEnd`): the pending position becomes current, a
        /// copy one period on becomes pending.
        mutating func nextRollingCycle() {
            current = pending
            pending = current
            pending.frame += period
        }
    }

    /// Ticks since bar 1 beat 1 as the witness client computes them from a position.
    static func ticks(_ p: jack_position_t) -> Double {
        guard p.valid.rawValue & JackPositionBBT.rawValue != 0 else { return -1 }
        return Double(p.bar - 1) * Double(p.beats_per_bar) * p.ticks_per_beat + Double(p.beat - 1) * p.ticks_per_beat + Double(p.tick)
    }

    /// What a cycle at `frame` must show.
    static func due(_ tb: JackTimebase, _ frame: UInt32) -> Double {
        let p = tb.position(frame: Int64(frame), rate: 48000)
        return Double(p.bar - 1) * Double(tb.beatsPerBar) * JackTimebase.ticksPerBeat + Double(p.beat - 1) * JackTimebase.ticksPerBeat + Double(p.tick)
    }

    @Test func barBeatTickIsThePendingPositionsAndALateMasterLeavesOneCycleBehind() {
        let tb = JackTimebase(bpm: 150, beatsPerBar: 3, beatType: 4, offset: 4800)
        let state = UnsafeMutablePointer<JackCallbackState>.allocate(capacity: 1)
        state.initialize(to: JackCallbackState(outputCount: 1))
        let tbp = UnsafeMutablePointer<JackTimebase>.allocate(capacity: 1)
        tbp.initialize(to: tb)
        state.pointee.timebase.store(tbp, ordering: .releasing)
        defer {
            state.pointee.timebase.store(nil, ordering: .releasing)
            state.deinitialize(count: 1)
            state.deallocate()
            tbp.deallocate()
        }
        let arg = UnsafeMutableRawPointer(state)
        var e = Engine(frame: 4800, period: 256)
        // The first rolling cycle: the callback was called once with new_pos on the located
        // position (the pending one, which becomes current at the start).
        jackTimebase(JackTransportStarting, 256, &e.pending, 1, arg)
        var seen: [(frame: UInt32, ticks: Double)] = []
        let late = 200  // the cycle the master is late for
        for k in 0..<400 {
            e.nextRollingCycle()
            // The master's cycle k: its callback on the pending position, after the witness
            // read the current one; late: only after the server began cycle k + 1.
            seen.append((e.current.frame, Self.ticks(e.current)))
            if k == late {
                e.nextRollingCycle()
                seen.append((e.current.frame, Self.ticks(e.current)))
                jackTimebase(JackTransportRolling, 256, &e.pending, 0, arg)
                continue
            }
            jackTimebase(JackTransportRolling, 256, &e.pending, 0, arg)
        }
        let wrong = seen.indices.filter { seen[$0].ticks != Self.due(tb, seen[$0].frame) }
        // On time, every cycle shows its own frame's bar/beat/tick; the cycle after the late
        // one shows the late cycle's (one period, 25.6 ticks at 150 bpm, behind).
        #expect(wrong == [late + 1], "\(wrong.map { "frame \(seen[$0].frame): \(seen[$0].ticks), not \(Self.due(tb, seen[$0].frame))" })")
        if let w = wrong.first {
            #expect(seen[w].ticks == Self.due(tb, seen[w].frame - 256))
        }
        #expect(seen.count == 401 && seen.first?.frame == 4800 && seen.first?.ticks == 0)
    }
}
