import AQSession
import Foundation

extension Player {
    /// Keys and OSC in plain play (docs/control.md): `l` and `/aqsync/loop` end the loop; the
    /// rest say what is not there yet. Returns what to stop when playback ends (the keys'
    /// reader, the OSC target). Main thread.
    func plainControls(player: SessionPlayer) -> () -> Void {
        // Keys on a terminal: `l` ends the loop; the others act only when following the
        // transport (docs/control.md).
        let keys = tty ? TerminalKeys { [self] key in
            let line: String
            switch key {
            case .loop:
                if let n = player.releaseLoop() { line = "key l: the loop ends after pass \(n)" } else { line = "key l: no loop is playing" }
            case .quit: line = "key q: Ctrl-C stops playback (q quits with --transport follow)"
            default: line = "key: seeking while playing is not there yet (with --transport follow the keys locate the transport)"
            }
            notices.withLock { $0.append(line) }
        } : nil
        oscTarget.withLock {
            $0 = { [self] m in
                let line: String
                switch m.address {
                case "/aqsync/loop":
                    if let n = player.releaseLoop() { line = "osc /aqsync/loop: the loop ends after pass \(n)" } else { line = "osc /aqsync/loop: no loop is playing" }
                default: line = "osc \(m.address): not there yet without --transport follow (only /aqsync/loop)"
                }
                notices.withLock { $0.append(line) }
            }
        }
        return { [self] in
            keys?.stop()
            oscTarget.withLock { $0 = nil }
        }
    }
}
