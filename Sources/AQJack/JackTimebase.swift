import AQCore
import CJACK

/// A tempo for JACK's transport: what the timebase master publishes as bar, beat and tick
/// (``JackDevice/setTimebaseMaster(_:)``). Bar 1, beat 1, tick 0 is transport frame `offset`
/// (before it: bar 1, beat 1, tick 0); 1920 ticks a beat.
///
/// Thread safety: a plain value; any thread.
public struct JackTimebase: Sendable, Equatable {
    /// Beats per minute.
    public var bpm: Double
    /// The meter: beats per bar and the beat's note value.
    public var beatsPerBar: Int32
    public var beatType: Int32
    /// The transport frame of bar 1, beat 1.
    public var offset: Int64
    /// Ticks per beat (1920).
    public static let ticksPerBeat = 1920.0

    /// A tempo.
    public init(bpm: Double, beatsPerBar: Int32 = 4, beatType: Int32 = 4, offset: Int64 = 0) {
        self.bpm = bpm
        self.beatsPerBar = beatsPerBar
        self.beatType = beatType
        self.offset = offset
    }

    /// Bar, beat (both from 1) and tick at transport frame `frame` on a server at `rate`.
    /// Pure function; any thread, the render thread included.
    @_noLocks
    public func position(frame: Int64, rate: Double) -> (bar: Int32, beat: Int32, tick: Int32) {
        let s = max(0, frame - offset)
        let beats = Double(s) * bpm / (60 * rate)
        // beats ≥ 0: truncation is the floor.
        let w = Int64(beats)
        let tick = Int32((beats - Double(w)) * Self.ticksPerBeat)
        let bpb = Int64(max(1, beatsPerBar))
        return (Int32(w / bpb + 1), Int32(w % bpb + 1), tick)
    }
}

/// JACK's timebase callback: fills the cycle's bar, beat and tick from its frame. Process
/// thread; realtime-safe.
@_noLocks
func jackTimebase(
    _ state: jack_transport_state_t, _ nframes: jack_nframes_t, _ pos: UnsafeMutablePointer<jack_position_t>?, _ newPos: Int32,
    _ arg: UnsafeMutableRawPointer?
) {
    guard let arg, let pos else { return }
    let st = arg.assumingMemoryBound(to: JackCallbackState.self)
    guard let tb = st.pointee.timebase.load(ordering: .acquiring) else { return }
    let t = tb.pointee
    let rate = pos.pointee.frame_rate > 0 ? Double(pos.pointee.frame_rate) : 48000
    let p = t.position(frame: Int64(pos.pointee.frame), rate: rate)
    pos.pointee.valid = JackPositionBBT
    pos.pointee.bar = p.bar
    pos.pointee.beat = p.beat
    pos.pointee.tick = p.tick
    pos.pointee.beats_per_bar = Float(t.beatsPerBar)
    pos.pointee.beat_type = Float(t.beatType)
    pos.pointee.ticks_per_beat = JackTimebase.ticksPerBeat
    pos.pointee.beats_per_minute = t.bpm
    pos.pointee.bar_start_tick = Double(p.bar - 1) * Double(t.beatsPerBar) * JackTimebase.ticksPerBeat
}

extension JackDevice {
    /// Makes this client JACK's timebase master (`jack_set_timebase_callback`, unconditionally):
    /// every cycle it publishes `timebase`'s bar, beat and tick for the transport's frame, for
    /// other clients (a sequencer, a click) to read from `jack_position_t`. Once per device.
    /// Not registered again after the server goes away and comes back.
    ///
    /// Control thread; blocks briefly (the device's control lock).
    ///
    /// - Throws: ``DeviceError`` when already set, the client is closed, or JACK refuses.
    public func setTimebaseMaster(_ timebase: JackTimebase) throws(DeviceError) {
        let st = callbackState
        let r: Result<Void, DeviceError> = withClient { client in
            guard st.pointee.timebase.load(ordering: .acquiring) == nil else {
                return .failure(DeviceError("JACK device \(uid): the timebase is already set"))
            }
            guard let client else { return .failure(DeviceError("JACK device \(uid): no client to be timebase master")) }
            let p = UnsafeMutablePointer<JackTimebase>.allocate(capacity: 1)
            p.initialize(to: timebase)
            st.pointee.timebase.store(p, ordering: .releasing)
            guard jack_set_timebase_callback(client, 0, jackTimebase, UnsafeMutableRawPointer(st)) == 0 else {
                return .failure(DeviceError("JACK device \(uid): the server refused this client as timebase master"))
            }
            return .success(())
        }
        try r.get()
    }
}
