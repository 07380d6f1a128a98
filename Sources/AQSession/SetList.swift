import AQEngine
import Foundation

/// A set list: sessions played one after another, each starting exactly where the previous
/// one ended, after its own `[session] gap` of silence (none before the first). The one timing
/// rule of both `aqsync render A B C` (``OfflineRenderer/renderSetList(_:to:format:sampleRate:cycleFrames:)``)
/// and `aqsync play A B C` (live, the command's `SetListPlayback`), so that the live output is
/// the render's, sample for sample.
///
/// Thread safety: stateless; any thread.
package enum SetList {
    /// Device frames of silence before the session at `index` in the list: its `[session] gap`
    /// at `deviceRate` (frames scaled from the session's rate, seconds rounded to the nearest
    /// frame); 0 for the first session and for one without a gap.
    package static func gapFrames(before session: Session, at index: Int, deviceRate: Double) -> Int64 {
        guard index > 0, let gap = session.gap else { return 0 }
        return gap.deviceFrames(sessionRate: session.sampleRate ?? deviceRate, deviceRate: deviceRate)
    }

    /// The device frame the session at `index` starts on when the previous one ends at
    /// `previousEnd` (its start plus its length with its loop's passes, exclusive): that end
    /// plus the session's gap.
    package static func start(of session: Session, at index: Int, after previousEnd: Int64, deviceRate: Double) -> Int64 {
        previousEnd + gapFrames(before: session, at: index, deviceRate: deviceRate)
    }

    /// Refuses, before anything plays, a set list `aqsync play` cannot play as `aqsync render`
    /// renders it: the sessions play through one JACK client, so their `[output]` tables must
    /// agree (`channels` always: the output ports are the client's, and a mono track without
    /// `outputs` plays on every output; `connect` and `client_name` unless the command line
    /// overrides them); a loop without a count would never end (as for a render); `[[record]]`
    /// takes are not recorded in a set list (yet).
    ///
    /// - Throws: ``SessionError`` `.invalidValue` naming the session file and what differs.
    package static func checkLive(_ sessions: [Session], connectOverridden: Bool = false, clientNameOverridden: Bool = false) throws(SessionError) {
        guard let first = sessions.first else { throw SessionError(.invalidValue, file: "", "a set list needs at least one session") }
        for s in sessions {
            if let loop = s.loop, loop.count == nil {
                throw SessionError(.invalidValue, file: s.url.path,
                    "the loop has no count, so it never ends: in a set list a session needs one ([session] loop = { …, count = N }), as a render does")
            }
            if !s.takes.isEmpty {
                throw SessionError(.invalidValue, file: s.url.path,
                    "[[record]] takes cannot be recorded in a set list yet (play the session alone to record them)")
            }
            if s.output.channels != first.output.channels {
                throw SessionError(.invalidValue, file: s.url.path,
                    "[output] channels = \(s.output.channels), but '\(first.url.lastPathComponent)' has \(first.output.channels): the sessions of a set list play through one JACK client, with the same output ports")
            }
            if !connectOverridden && s.output.connect != first.output.connect {
                throw SessionError(.invalidValue, file: s.url.path,
                    "[output] connect differs from that of '\(first.url.lastPathComponent)': the sessions of a set list play through one JACK client (--connect or --no-connect sets it for all)")
            }
            if !clientNameOverridden && s.output.clientName != first.output.clientName {
                throw SessionError(.invalidValue, file: s.url.path,
                    "[output] client_name '\(s.output.clientName)' differs from that of '\(first.url.lastPathComponent)', '\(first.output.clientName)': the sessions of a set list play through one JACK client (--client-name sets it for all)")
            }
        }
    }
}
