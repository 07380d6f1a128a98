import Foundation

/// `[[marker]]`: a named session position, shown in the display and usable as a `--from`
/// position and as a loop's `from`/`to` (docs/session-format.md, "Markers and loops").
///
/// Thread safety: a plain value; any thread.
package struct SessionMarker: Sendable, Equatable {
    /// `name`: unique in the session; never a text that reads as a position (`"90"`, `"1:30"`).
    package var name: String
    /// `at`: the session position (frames at the session rate, or seconds).
    package var at: SessionTime

    /// A marker named `name` at `at`.
    package init(name: String, at: SessionTime) {
        self.name = name
        self.at = at
    }
}

/// `[session] loop = { from, to, count }`: a region of the session played `count` times in
/// all (nil: until released, ``SessionPlayer/releaseLoop()``), every track wrapping from `to`
/// back to `from` on the exact frame.
///
/// Thread safety: a plain value; any thread.
package struct SessionLoop: Sendable, Equatable {
    /// The loop's first session position (a marker's position when given by name).
    package var from: SessionTime
    /// The position just past the loop's last frame: playback wraps here.
    package var to: SessionTime
    /// Passes over the region in all (at least 1); nil: until released.
    package var count: Int?

    /// A loop over `from ..< to`, `count` passes.
    package init(from: SessionTime, to: SessionTime, count: Int?) {
        self.from = from
        self.to = to
        self.count = count
    }

    /// The region in device frames at `deviceRate` (`sessionRate`: the rate of frame counts).
    package func deviceRange(sessionRate: Double, deviceRate: Double) -> Range<Int64> {
        let a = from.deviceFrames(sessionRate: sessionRate, deviceRate: deviceRate)
        let b = to.deviceFrames(sessionRate: sessionRate, deviceRate: deviceRate)
        return a..<max(a, b)
    }
}

/// `[session] bpm` and `meter`: the session's tempo, published as bar/beat/tick when aqsync
/// leads JACK's transport (docs/transport.md).
///
/// Thread safety: a plain value; any thread.
package struct SessionTempo: Sendable, Equatable {
    /// Beats per minute (`bpm`).
    package var bpm: Double
    /// The meter's numerator (`meter = "3/4"`: 3); default 4.
    package var beatsPerBar: Int
    /// The meter's denominator (`"3/4"`: 4); default 4.
    package var beatType: Int

    /// A tempo.
    package init(bpm: Double, beatsPerBar: Int = 4, beatType: Int = 4) {
        self.bpm = bpm
        self.beatsPerBar = beatsPerBar
        self.beatType = beatType
    }
}

extension Session {
    /// The marker named `name` (exact, case-sensitive), or nil.
    ///
    /// Thread safety: any thread.
    package func marker(named name: String) -> SessionMarker? { markers.first { $0.name == name } }

    /// A play position (`--from`): a marker's name, else ``SessionTime/parsePosition(_:)``.
    /// Nil when `text` is neither.
    ///
    /// Thread safety: any thread.
    package func position(_ text: String) -> SessionTime? {
        marker(named: text)?.at ?? SessionTime.parsePosition(text)
    }

    /// The last marker at or before session frame `frame` (device frames at `deviceRate`),
    /// for the display; nil before the first.
    ///
    /// Thread safety: any thread.
    package func marker(at frame: Int64, deviceRate: Double) -> SessionMarker? {
        let rate = sampleRate ?? deviceRate
        var best: (SessionMarker, Int64)?
        for m in markers {
            let f = m.at.deviceFrames(sessionRate: rate, deviceRate: deviceRate)
            if f <= frame, best == nil || f >= best!.1 { best = (m, f) }
        }
        return best?.0
    }
}
