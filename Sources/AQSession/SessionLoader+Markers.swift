import Foundation
import TOMLKit

/// `[[marker]]` and `[session] loop`: read after the tracks, so that every position can be
/// checked against the session's end (docs/session-format.md, "Markers and loops").
extension SessionLoader {
    static let markerKeys: Set<String> = ["name", "at"]
    static let loopKeys: Set<String> = ["from", "to", "count"]

    /// The rate positions are checked at while loading: the session's, else the first
    /// track's file rate (the player checks again at the device's rate).
    static func checkRate(_ session: Session) -> Double {
        session.sampleRate ?? session.tracks.first?.audio.format.sampleRate ?? 48000
    }

    /// `frame F at R Hz, m:ss.sss`, for messages.
    static func describeFrame(_ f: Int64, rate: Double) -> String {
        "frame \(f) at \(Int(rate)) Hz, \(SessionPlayer.formatClock(Double(f) / rate))"
    }

    /// `[[marker]]`: each with a name (unique, not a position) and a time inside the session
    /// (at most its end).
    static func parseMarkers(_ root: TOMLTable, loc: Locator, session: Session) throws(SessionError) -> [SessionMarker] {
        guard let v = root["marker"] else { return [] }
        guard let list = v.array else {
            throw loc.error(.invalidValue, key: "marker", section: nil, "'marker' must be an array of tables: write [[marker]]")
        }
        let rate = checkRate(session)
        let end = session.deviceLength(deviceRate: rate)
        var markers: [SessionMarker] = []
        for (i, item) in list.enumerated() {
            let sec = Locator.Section.marker(i)
            let label = "marker \(i + 1)"
            guard let t = item.table else { throw loc.error(.invalidValue, key: "marker", section: nil, "\(label) must be a table: write [[marker]]") }
            for key in t.keys where !markerKeys.contains(key) {
                throw loc.error(.unknownKey, key: key, section: sec, "unknown key '\(key)' in \(label) (expected: at, name)")
            }
            guard let n = t["name"] else { throw loc.error(.invalidValue, key: nil, section: sec, "\(label) has no name: add name = \"verse\"") }
            guard let name = n.string, !name.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw loc.error(.invalidValue, key: "name", section: sec, "\(label): name must be a non-empty string")
            }
            if SessionTime.parsePosition(name) != nil {
                throw loc.error(.invalidValue, key: "name", section: sec,
                    "marker '\(name)': the name reads as a position (as --from would take it); give it a name with a letter in it")
            }
            if let other = markers.firstIndex(where: { $0.name == name }) {
                throw loc.error(.invalidValue, key: "name", section: sec, "marker '\(name)': marker \(other + 1) has the same name; marker names are unique")
            }
            guard let a = t["at"] else { throw loc.error(.invalidValue, key: nil, section: sec, "marker '\(name)' has no time: add at = \"1:30\" (or frames)") }
            let at: SessionTime
            if let n = a.int, n >= 0 {
                at = .frames(Int64(n))
            } else if let str = a.string, !str.trimmingCharacters(in: .whitespaces).hasPrefix("-"), let p = SessionTime.parsePosition(str) {
                at = p
            } else {
                let shown = a.int.map(String.init) ?? a.string.map { "\"\($0)\"" } ?? a.type.description
                throw loc.error(.invalidValue, key: "at", section: sec,
                    "marker '\(name)': at \(shown) is not a position in the session (write frames as an integer, or \"1.5s\", \"1:30\", \"frames:N\")")
            }
            let f = at.deviceFrames(sessionRate: rate, deviceRate: rate)
            if f > end {
                throw loc.error(.invalidValue, key: "at", section: sec,
                    "marker '\(name)' at \(describeFrame(f, rate: rate)) is past the session's end (\(describeFrame(end, rate: rate)))")
            }
            markers.append(SessionMarker(name: name, at: at))
        }
        return markers
    }

    /// `[session] loop = { from = …, to = …, count = N }`: times or marker names, from < to ≤
    /// the session's end, count ≥ 1 (absent: until released).
    static func parseLoop(_ root: TOMLTable, loc: Locator, session: Session) throws(SessionError) -> SessionLoop? {
        guard let v = root["session"]?.table?["loop"] else { return nil }
        let sec = Locator.Section.table("session")
        guard let t = v.table else {
            throw loc.error(.invalidValue, key: "loop", section: sec, "[session] loop must be a table: loop = { from = \"0:04\", to = \"0:08\", count = 4 }")
        }
        for key in t.keys where !loopKeys.contains(key) {
            throw loc.error(.unknownKey, key: "loop", section: sec, "unknown key '\(key)' in [session] loop (expected: count, from, to)")
        }
        let names = session.markers.isEmpty ? "the session has no markers" : "markers: " + session.markers.map(\.name).joined(separator: ", ")
        func end(_ key: String) throws(SessionError) -> SessionTime {
            guard let e = t[key] else {
                throw loc.error(.invalidValue, key: "loop", section: sec, "[session] loop has no \(key): give a time or a marker name")
            }
            if let n = e.int {
                guard n >= 0 else { throw loc.error(.invalidValue, key: "loop", section: sec, "[session] loop \(key) \(n) is negative") }
                return .frames(Int64(n))
            }
            guard let s = e.string else {
                throw loc.error(.invalidValue, key: "loop", section: sec, "[session] loop \(key) must be frames (an integer), a time string or a marker name")
            }
            if let m = session.marker(named: s) { return m.at }
            if s.trimmingCharacters(in: .whitespaces).hasPrefix("-") {
                throw loc.error(.invalidValue, key: "loop", section: sec, "[session] loop \(key) \"\(s)\" is negative")
            }
            if let p = SessionTime.parsePosition(s) { return p }
            throw loc.error(.invalidValue, key: "loop", section: sec,
                "[session] loop \(key) \"\(s)\" is neither a marker (\(names)) nor a time (\"1.5s\", \"1:30\", \"frames:N\")")
        }
        let from = try end("from")
        let to = try end("to")
        var count: Int?
        if let c = t["count"] {
            guard let n = c.int, n >= 1 else {
                throw loc.error(.invalidValue, key: "loop", section: sec, "[session] loop count must be an integer of at least 1 (the passes in all), not \(c.int.map(String.init) ?? c.type.description)")
            }
            count = n
        }
        let rate = checkRate(session)
        let a = from.deviceFrames(sessionRate: rate, deviceRate: rate)
        let b = to.deviceFrames(sessionRate: rate, deviceRate: rate)
        let last = session.deviceLength(deviceRate: rate)
        if b <= a {
            throw loc.error(.invalidValue, key: "loop", section: sec,
                "[session] loop to (\(describeFrame(b, rate: rate))) is not after from (\(describeFrame(a, rate: rate))): a loop lasts at least one frame")
        }
        if b > last {
            throw loc.error(.invalidValue, key: "loop", section: sec,
                "[session] loop to (\(describeFrame(b, rate: rate))) is past the session's end (\(describeFrame(last, rate: rate)))")
        }
        return SessionLoop(from: from, to: to, count: count)
    }

    /// `[session] bpm = 120`, `meter = "3/4"` (default "4/4"; a meter needs a bpm).
    static func parseTempo(_ root: TOMLTable, loc: Locator) throws(SessionError) -> SessionTempo? {
        guard let t = root["session"]?.table else { return nil }
        let sec = Locator.Section.table("session")
        guard let b = t["bpm"] else {
            if t["meter"] != nil { throw loc.error(.invalidValue, key: "meter", section: sec, "[session] meter needs a bpm: add bpm = 120") }
            return nil
        }
        guard let bpm = b.double ?? b.int.map(Double.init), bpm.isFinite, bpm >= 1, bpm <= 999 else {
            throw loc.error(.invalidValue, key: "bpm", section: sec, "[session] bpm must be a number of beats per minute from 1 to 999")
        }
        var tempo = SessionTempo(bpm: bpm)
        if let m = t["meter"] {
            let parts = m.string?.split(separator: "/").map { Int($0.trimmingCharacters(in: .whitespaces)) } ?? []
            guard parts.count == 2, let n = parts[0], let d = parts[1], (1...32).contains(n), [1, 2, 4, 8, 16, 32].contains(d) else {
                throw loc.error(.invalidValue, key: "meter", section: sec, "[session] meter must be a string \"N/D\" (N from 1 to 32 beats, D 1, 2, 4, 8, 16 or 32), e.g. \"3/4\"")
            }
            tempo.beatsPerBar = n
            tempo.beatType = d
        }
        return tempo
    }

    /// `[session] gap`: seconds (a number), or a string as for `start` or `"frames:N"`.
    static func parseGap(_ root: TOMLTable, loc: Locator) throws(SessionError) -> SessionTime? {
        guard let g = root["session"]?.table?["gap"] else { return nil }
        let sec = Locator.Section.table("session")
        if let n = g.double ?? g.int.map(Double.init) {
            guard n.isFinite, n >= 0 else { throw loc.error(.invalidValue, key: "gap", section: sec, "[session] gap \(n) is negative") }
            return .seconds(n)
        }
        if let str = g.string, !str.trimmingCharacters(in: .whitespaces).hasPrefix("-"), let p = SessionTime.parsePosition(str) { return p }
        throw loc.error(.invalidValue, key: "gap", section: sec, "[session] gap must be seconds (a number) or a string such as \"frames:4800\" or \"1.5s\"")
    }
}
