import Foundation
import TOMLKit

/// `part = "NAME"` on tracks and takes (issue 26): one session file shared by several
/// machines, each playing (and recording) its own part (`aqsync play --part NAME`).
extension SessionLoader {
    /// The `part` key of a track or take table: a non-empty string without surrounding
    /// spaces; nil when absent.
    static func parsePart(_ t: TOMLTable, loc: Locator, sec: Locator.Section, what: String) throws(SessionError) -> String? {
        guard let v = t["part"] else { return nil }
        guard let s = v.string else {
            throw loc.error(.invalidValue, key: "part", section: sec, "\(what): part must be a string (the part's name), not \(v.type)")
        }
        guard !s.isEmpty, s.trimmingCharacters(in: .whitespacesAndNewlines) == s else {
            throw loc.error(.invalidValue, key: "part", section: sec, "\(what): part must be a non-empty name without leading or trailing spaces, not \"\(s)\"")
        }
        return s
    }
}

extension Session {
    /// Every part a track or a take names, sorted.
    package var parts: [String] {
        Set(tracks.compactMap(\.part) + takes.compactMap(\.part)).sorted()
    }

    /// The session as `--part` plays it. nil: the whole session (every track and take, with a
    /// part or without). A name: only the tracks and takes of that part; tracks and takes
    /// without a part are left out (they play only when no part is chosen). Markers, the loop
    /// and the gap stay; a track keeps a crossfade from a track of another part (it fades in
    /// as it does in the whole session). The session's end is the end of the part's last
    /// track.
    ///
    /// - Throws: ``SessionError`` `.invalidValue` for a part no track or take names (the
    ///   message lists those that are), or a part with no track.
    package func selecting(part: String?) throws(SessionError) -> Session {
        guard let part else { return self }
        let known = parts
        guard known.contains(part) else {
            let list = known.isEmpty ? "the session names no parts (add part = \"NAME\" to its tracks)" : "its parts: \(known.joined(separator: ", "))"
            throw SessionError(.invalidValue, file: url.path, "no track or take of the session is in part '\(part)'; \(list)")
        }
        var s = self
        s.tracks = tracks.filter { $0.part == part }
        s.takes = takes.filter { $0.part == part }
        if s.tracks.isEmpty {
            throw SessionError(.noTracks, file: url.path, "part '\(part)' has no tracks (only takes); a part plays at least one track")
        }
        return s
    }
}
