import AQSession

/// The arguments of `/aqsync/gain` (docs/control.md): a track, by name (s) or by number from 1
/// (i), and decibels (f, d, i or h). Returns the track's 0-based index and the gain, or nil
/// when the message does not name a track of `session` and a number.
func oscGainArguments(_ args: [OSCArgument], in session: Session) -> (track: Int, decibels: Double)? {
    guard args.count == 2, let db = args[1].number else { return nil }
    var index: Int?
    if case .string(let name) = args[0] { index = session.tracks.firstIndex { $0.name == name } }
    if case .int(let i) = args[0] { index = Int(i) - 1 }
    guard let i = index, session.tracks.indices.contains(i) else { return nil }
    return (i, db)
}

/// What `/aqsync/gain` is answered with when its arguments are not understood.
let oscGainUsage = "osc /aqsync/gain: give a track (name, or number from 1) and decibels (at most +24)"
