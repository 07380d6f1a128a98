import AQSession
import Foundation

extension Player {
    /// Keys and OSC in plain play (docs/control.md): ←/→, Home, `[`/`]`, `/aqsync/locate` and
    /// `/aqsync/marker` seek (``SessionPlayer/seek(to:lead:)``), space, `/aqsync/play` and
    /// `/aqsync/stop` pause and resume, `l` and `/aqsync/loop` end the loop, `n`/`p` and
    /// `/aqsync/next`/`/aqsync/previous` skip in a set list (``SetListPlayback``; once the next
    /// session is committed, seeks, pauses, resumes and the loop's end are refused). Each action is
    /// answered by a log line. Returns what to stop when playback ends (the keys' reader, the
    /// OSC target). Main thread; the actions run on the keys' reader thread and the OSC
    /// server's thread (a seek blocks there while the tracks are positioned).
    ///
    /// The returned closure takes `final`: false between two sessions of a set list (the OSC
    /// subscribers are not told `ended`; the next session's controls take over), true at the
    /// end of playback. It may be called again with true after false.
    func plainControls(player: SessionPlayer, setList: SetListPlayback) -> (_ final: Bool) -> Void {
        let rate = player.engine.device.sampleRate
        let session = player.session
        let markers = session.markers.map { (name: $0.name, frame: $0.at.deviceFrames(sessionRate: session.sampleRate ?? rate, deviceRate: rate)) }
            .sorted { $0.frame < $1.frame }
        let end = session.deviceLength(deviceRate: rate)
        // The session position now (the paused one while paused; the end once past it).
        let now = { @Sendable () -> Int64 in
            player.sessionFrame(atDeviceFrame: Int64(player.engine.deviceCurrentTime().sampleTime))?.frame ?? end
        }
        let seekNow = { @Sendable (frame: Int64, why: String) -> String in
            let f = max(0, frame)
            let clamped = frame < 0 ? " (clamped to the session start)" : ""
            do throws(SessionError) {
                switch try player.seek(to: f) {
                case .playing(let p, let d): return "\(why): seek to session \(formatSeconds(Double(p) / rate))\(clamped) (plays from device frame \(d))"
                case .paused(let p): return "\(why): paused at session \(formatSeconds(Double(p) / rate))\(clamped) (space or /aqsync/play plays on from there)"
                case .ended: return "\(why): session frame \(f) is at or past the session's end (\(formatSeconds(Double(end) / rate))): playback ends"
                }
            } catch {
                return "\(why): \(error.message)"
            }
        }
        let pauseNow = { @Sendable (why: String) -> String in
            do throws(SessionError) {
                if let p = try player.pause() { return "\(why): paused at session \(formatSeconds(Double(p) / rate))" }
                return player.isPaused ? "\(why): already paused" : "\(why): playback has ended"
            } catch {
                return "\(why): \(error.message)"
            }
        }
        let resumeNow = { @Sendable (why: String) -> String in
            do throws(SessionError) {
                switch try player.resume() {
                case .playing(let p, let d)?: return "\(why): resume at session \(formatSeconds(Double(p) / rate)) (plays from device frame \(d))"
                case .ended?: return "\(why): the paused position is at the session's end: playback ends"
                case .paused?, nil: return "\(why): already playing"
                }
            } catch {
                return "\(why): \(error.message)"
            }
        }
        // In a set list, once the next session is committed (its start scheduled where this
        // one ends), nothing may move this one's end.
        let seek = { @Sendable (frame: Int64, why: String) -> String in
            setList.whileUncommitted { seekNow(frame, why) } ?? "\(why): \(setList.committedRefusal)"
        }
        let pause = { @Sendable (why: String) -> String in
            setList.whileUncommitted { pauseNow(why) } ?? "\(why): \(setList.committedRefusal)"
        }
        let resume = { @Sendable (why: String) -> String in
            setList.whileUncommitted { resumeNow(why) } ?? "\(why): \(setList.committedRefusal)"
        }
        let release = { @Sendable (why: String) -> String in
            setList.whileUncommitted { () -> String in
                if let n = player.releaseLoop() { return "\(why): the loop ends after pass \(n)" }
                return "\(why): no loop is playing"
            } ?? "\(why): \(setList.committedRefusal)"
        }
        let previous = { @Sendable (why: String) -> String in
            let s = now()
            guard let m = markers.last(where: { $0.frame < s }) else { return "\(why): no marker before the position" }
            return seek(m.frame, "\(why): marker '\(m.name)'")
        }
        let next = { @Sendable (why: String) -> String in
            let s = now()
            guard let m = markers.first(where: { $0.frame > s }) else { return "\(why): no marker after the position" }
            return seek(m.frame, "\(why): marker '\(m.name)'")
        }
        let five = Int64(5 * rate)
        let keys = tty ? TerminalKeys { [self] key in
            let line: String
            switch key {
            case .loop: line = release("key l")
            case .nextSession, .previousSession:
                setList.skip(by: key == .nextSession ? 1 : -1, why: key == .nextSession ? "key n" : "key p") { l in notices.withLock { $0.append(l) } }
                return
            case .quit: line = "key q: Ctrl-C stops playback (q quits with --transport follow)"
            case .back: line = seek(now() - five, "key ←")
            case .forward: line = seek(now() + five, "key →")
            case .home: line = seek(0, "key Home")
            case .previousMarker: line = previous("key [")
            case .nextMarker: line = next("key ]")
            case .playPause: line = player.isPaused ? resume("key space") : pause("key space")
            }
            notices.withLock { $0.append(line) }
        } : nil
        oscTarget.withLock {
            $0 = { [self] m in
                let line: String
                let args = m.arguments
                switch m.address {
                case "/aqsync/loop": line = release("osc /aqsync/loop")
                case "/aqsync/next", "/aqsync/previous":
                    let next = m.address == "/aqsync/next"
                    setList.skip(by: next ? 1 : -1, why: "osc \(m.address)") { l in notices.withLock { $0.append(l) } }
                    return
                case "/aqsync/play": line = resume("osc /aqsync/play")
                case "/aqsync/stop": line = pause("osc /aqsync/stop")
                case "/aqsync/locate":
                    // Seconds (f, d) or frames at the device's rate (i, h): a session position.
                    switch args.first {
                    case .float, .double:
                        let s = args[0].number!
                        if s.isFinite && abs(s) < 1e9 { line = seek(Int64((s * rate).rounded()), "osc /aqsync/locate \(s) s") }
                        else { line = "osc /aqsync/locate: \(s) s is not a position" }
                    case .int(let v): line = seek(Int64(v), "osc /aqsync/locate \(v) frames")
                    case .int64(let v): line = seek(v, "osc /aqsync/locate \(v) frames")
                    default: line = "osc /aqsync/locate: give seconds (a float) or frames (an int)"
                    }
                case "/aqsync/marker":
                    if case .string(let name)? = args.first, let mk = markers.first(where: { $0.name == name }) {
                        line = seek(mk.frame, "osc /aqsync/marker '\(name)'")
                    } else {
                        line = "osc /aqsync/marker: no such marker (markers: \(markers.isEmpty ? "none" : markers.map(\.name).joined(separator: ", ")))"
                    }
                case "/aqsync/gain":
                    if let (i, db) = oscGainArguments(args, in: session), player.setGain(track: i, decibels: db) {
                        line = "osc /aqsync/gain: track '\(session.tracks[i].name)' at \(db) dB (ramped over \(player.engine.volumeRampSeconds * 1000) ms from the next cycle)"
                    } else {
                        line = oscGainUsage
                    }
                default: line = "osc \(m.address): unknown (docs/control.md)"
                }
                notices.withLock { $0.append(line) }
            }
        }
        // OSC replies and subscriptions: the position now, paused or playing.
        let status = { @Sendable () -> OSCMessage in
            let at = now()
            // Between two sessions of a set list the one that ended is not the end.
            let state = at >= end || player.isFinished ? (setList.hasMore ? "playing" : "ended") : player.isPaused ? "paused" : "playing"
            return oscPosition(frame: min(at, end), rate: rate, state: state)
        }
        oscStatus.withLock { $0 = status }
        oscMeterStatus.withLock { $0 = { oscMeters(player.currentLevelsDB()) } }
        return { [self] final in
            keys?.stop()
            oscTarget.withLock { $0 = nil }
            guard final else { return }
            // The last word for the subscribers: where it ended.
            let ended = oscPosition(frame: min(now(), end), rate: rate, state: "ended")
            oscStatus.withLock { $0 = { ended } }
            oscMeterStatus.withLock { $0 = nil }
        }
    }
}
