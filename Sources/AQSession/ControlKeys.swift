/// The keys `aqsync play` answers on a terminal (docs/control.md).
///
/// Thread safety: a plain value; any thread.
package enum ControlKey: Sendable, Equatable {
    /// Space: start/stop the transport (when following it).
    case playPause
    /// ← / →: 5 seconds back / on.
    case back, forward
    /// Home: the session's start.
    case home
    /// `l`: the loop off (released after the pass playing).
    case loop
    /// `[` / `]`: the previous / next marker.
    case previousMarker, nextMarker
    /// `q`: quit.
    case quit
    /// `n` / `p`: the next / previous session of a set list (`aqsync play A B C`).
    case nextSession, previousSession

    /// The keys in `bytes` (what a terminal in non-canonical mode sends), in order; bytes that
    /// are no key of these (and an escape sequence cut at the end) are skipped. Arrow keys and
    /// Home come as `ESC [ C`, `ESC [ D`, `ESC [ H`, `ESC O H`, `ESC [ 1 ~` or `ESC [ 7 ~`.
    ///
    /// Thread safety: pure function; any thread.
    package static func decode(_ bytes: [UInt8]) -> [ControlKey] {
        var keys: [ControlKey] = []
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x1B, i + 2 < bytes.count, bytes[i + 1] == UInt8(ascii: "[") || bytes[i + 1] == UInt8(ascii: "O") {
                let c = bytes[i + 2]
                switch c {
                case UInt8(ascii: "C"): keys.append(.forward); i += 3; continue
                case UInt8(ascii: "D"): keys.append(.back); i += 3; continue
                case UInt8(ascii: "H"): keys.append(.home); i += 3; continue
                case UInt8(ascii: "1"), UInt8(ascii: "7"):
                    if i + 3 < bytes.count, bytes[i + 3] == UInt8(ascii: "~") { keys.append(.home); i += 4; continue }
                default: break
                }
                // Another sequence: skip to its final byte.
                var j = i + 2
                while j < bytes.count && !(0x40...0x7E).contains(bytes[j]) { j += 1 }
                i = j + 1
                continue
            }
            if b == 0x1B {
                // An escape sequence cut at the end (or a lone escape): nothing more is a key.
                if i + 1 < bytes.count && (bytes[i + 1] == UInt8(ascii: "[") || bytes[i + 1] == UInt8(ascii: "O")) { break }
                i += 1
                continue
            }
            switch b {
            case UInt8(ascii: " "): keys.append(.playPause)
            case UInt8(ascii: "l"), UInt8(ascii: "L"): keys.append(.loop)
            case UInt8(ascii: "["): keys.append(.previousMarker)
            case UInt8(ascii: "]"): keys.append(.nextMarker)
            case UInt8(ascii: "q"), UInt8(ascii: "Q"): keys.append(.quit)
            case UInt8(ascii: "n"), UInt8(ascii: "N"): keys.append(.nextSession)
            case UInt8(ascii: "p"), UInt8(ascii: "P"): keys.append(.previousSession)
            default: break
            }
            i += 1
        }
        return keys
    }
}
