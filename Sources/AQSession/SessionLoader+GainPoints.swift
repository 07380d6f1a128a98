import Foundation
import TOMLKit

extension SessionLoader {
    /// A track's `gain` (docs/session-format.md, "Gain points"): an array of `[time, dB]`
    /// pairs, times as `fade_in`'s lengths (a number is seconds; `"frames:N"`, `"1.5s"`,
    /// `"0:01.5"`) from the track's first frame, in non-decreasing order and within the track
    /// (`trackFrames` at `rate`), gains finite and at most +24 dB, or `-inf`. Empty when absent.
    static func parseGainPoints(
        _ t: TOMLTable, loc: Locator, sec: Locator.Section, what tl: String, trackFrames: Int64, rate: Double
    ) throws(SessionError) -> [SessionGainPoint] {
        guard let v = t["gain"] else { return [] }
        let shape = "\(tl): gain must be an array of [time, dB] pairs, e.g. gain = [[0, 0], [\"2s\", -6], [\"3s\", -inf]]"
        guard let list = v.array, !list.isEmpty else { throw loc.error(.invalidValue, key: "gain", section: sec, shape) }
        var points: [SessionGainPoint] = []
        var lastFrames: Int64 = -1
        for (i, item) in list.enumerated() {
            let label = "\(tl): gain point \(i + 1)"
            guard let pair = item.array, pair.count == 2 else { throw loc.error(.invalidValue, key: "gain", section: sec, shape) }
            let time: SessionTime
            if let n = pair[0].double ?? pair[0].int.map(Double.init) {
                guard n.isFinite, n >= 0 else { throw loc.error(.invalidValue, key: "gain", section: sec, "\(label): time \(n) is negative") }
                time = .seconds(n)
            } else if let str = pair[0].string, !str.trimmingCharacters(in: .whitespaces).hasPrefix("-"), !str.hasPrefix("frames:-"),
                      let parsed = SessionTime.parsePosition(str) {
                time = parsed
            } else {
                throw loc.error(.invalidValue, key: "gain", section: sec,
                    "\(label): the time must be seconds (a number) or a string such as \"frames:4800\", \"1.5s\" or \"0:01.5\" (not negative)")
            }
            guard let db = pair[1].double ?? pair[1].int.map(Double.init), !db.isNaN, db == -.infinity || (db.isFinite && db <= 24) else {
                throw loc.error(.invalidValue, key: "gain", section: sec, "\(label): the gain must be decibels, at most +24, or -inf")
            }
            let frames = time.deviceFrames(sessionRate: rate, deviceRate: rate)
            guard frames <= trackFrames else {
                throw loc.error(.invalidValue, key: "gain", section: sec,
                    "\(label) at frame \(frames) is past the track's end (\(trackFrames) frames at \(Int(rate)) Hz)")
            }
            guard frames >= lastFrames else {
                throw loc.error(.invalidValue, key: "gain", section: sec, "\(label) at frame \(frames) is before the point before it (frame \(lastFrames)): points go in time order")
            }
            lastFrames = frames
            points.append(SessionGainPoint(time: time, decibels: db))
        }
        return points
    }
}
