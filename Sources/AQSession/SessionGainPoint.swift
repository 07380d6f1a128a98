import Foundation

/// One point of a track's gain envelope (`gain = [[time, dB], …]`, docs/session-format.md,
/// "Gain points"): at `time` from the track's first frame the gain is `decibels`.
///
/// Thread safety: a plain value; any thread.
package struct SessionGainPoint: Sendable, Equatable {
    /// From the track's first frame (a length, as `fade_in`'s).
    package var time: SessionTime
    /// The gain there, in dB: finite and at most +24, or −∞ (silence).
    package var decibels: Double

    /// A point.
    package init(time: SessionTime, decibels: Double) {
        self.time = time
        self.decibels = decibels
    }

    /// The linear gain: 10^(dB/20), 0 for −∞.
    package var linear: Double { decibels == -.infinity ? 0 : pow(10, decibels / 20) }
}

/// A gain envelope in device frames of a track: the gain of frame i is the first point's
/// before it, the last point's after it, and between two points linear in amplitude (as the
/// engine's volume ramps), so −∞ fades to silence and two points at one frame make a step (the
/// later one applies from that frame).
///
/// Thread safety: a plain value; any thread.
struct GainEnvelope: Sendable, Equatable {
    /// Frames (non-decreasing) and linear gains.
    let frames: [Int64]
    let gains: [Double]

    /// The envelope of `points` on a device at `deviceRate` for a session at `sessionRate`;
    /// nil when there are none.
    init?(_ points: [SessionGainPoint], sessionRate: Double, deviceRate: Double) {
        guard !points.isEmpty else { return nil }
        frames = points.map { $0.time.deviceFrames(sessionRate: sessionRate, deviceRate: deviceRate) }
        gains = points.map(\.linear)
    }

    /// The gain of frame `i`.
    func gain(_ i: Int64) -> Double {
        if i < frames[0] { return gains[0] }
        // The last point at or before i (binary search: points are few, frames many).
        var lo = 0, hi = frames.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if frames[mid] <= i { lo = mid } else { hi = mid - 1 }
        }
        guard lo + 1 < frames.count else { return gains[lo] }
        let a = frames[lo], b = frames[lo + 1]
        let x = Double(i - a) / Double(b - a)
        return gains[lo] + (gains[lo + 1] - gains[lo]) * x
    }

    /// True when every gain is 1 (the envelope changes nothing).
    var isUnity: Bool { gains.allSatisfy { $0 == 1 } }
}
