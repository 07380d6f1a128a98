import AQEngine
import AQJack
import AQSession
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension Player {
    /// `aqsync play --transport follow|lead`: plays the session where JACK's transport says,
    /// until a stop signal (follow), or locates it to the session's start, starts it and stops
    /// it at the session's end (lead) (docs/transport.md). Returns the exit status.
    func followTransport(device: JackDevice, engine: AudioQueueEngine, rate: Double) -> Int32 {
        let offset = command.transportOffset
        let follower: TransportFollower
        do {
            follower = try TransportFollower(
                session: session, deviceRate: rate, outputs: session.output.channels, offset: offset,
                feederPriority: engine.feederPriority)
        } catch {
            printError(error.description)
            return 1
        }
        return withExtendedLifetime(follower) {
            do throws(DeviceError) {
                try device.setTransportFollower(follower.callbacks)
            } catch {
                printError(error.message)
                return 1
            }
            // The device calls the follower until it stops: stop it before the follower goes.
            defer {
                device.stop()
                follower.close()
            }
            let end = session.deviceLength(deviceRate: rate)
            let xruns0 = device.discontinuityCount(.xrun), late0 = device.lateCycleCount
            log("following the JACK transport with '\(session.name)': \(session.tracks.count) track(s), \(formatSeconds(Double(end) / rate)) at \(Int(rate)) Hz on \(device.uid); session frame 0 = transport frame \(offset); slow-sync: the transport rolls once every track is primed (Ctrl-C stops)")
            // Leading: to the session's start, then rolling (it rolls once every track is primed
            // there: this client is a slow-sync client like any other).
            let leading = command.transport == "lead"
            if leading {
                do throws(DeviceError) {
                    if let tempo = session.tempo {
                        try device.setTimebaseMaster(JackTimebase(
                            bpm: tempo.bpm, beatsPerBar: Int32(tempo.beatsPerBar), beatType: Int32(tempo.beatType), offset: offset))
                        log("timebase master: \(tempo.bpm) bpm, \(tempo.beatsPerBar)/\(tempo.beatType), bar 1 at transport frame \(offset)")
                    }
                    try device.locateTransport(to: offset)
                    try device.setTransportRolling(true)
                    log("leading: transport located to frame \(offset) (the session's start) and started")
                } catch {
                    printError(error.message)
                    return 1
                }
            }
            var lastRolling: Bool?
            var primings = 0
            var drawn = 0
            // Keys (a terminal only): queued by the reader thread, acted on here.
            let pending = Mutex<[ControlKey]>([])
            let keys = tty ? TerminalKeys { key in pending.withLock { $0.append(key) } } : nil
            defer { keys?.stop() }
            let oscInbox = Mutex<[OSCMessage]>([])
            oscTarget.withLock { $0 = { m in oscInbox.withLock { $0.append(m) } } }
            // OSC replies and subscriptions: the transport's position, rolling or stopped.
            oscStatus.withLock {
                $0 = { [follower] in
                    let t = follower.lastTransport
                    return oscPosition(frame: t.frame - offset, rate: rate, state: t.rolling ? "rolling" : "stopped")
                }
            }
            defer {
                oscTarget.withLock { $0 = nil }
                let t = follower.lastTransport
                let ended = oscPosition(frame: t.frame - offset, rate: rate, state: "ended")
                oscStatus.withLock { $0 = { ended } }
            }
            var quitByKey = false
            var passedEnd = false
            var missedSeen: UInt64 = 0
            // Everything goes through one unbuffered write each (print() is buffered: its
            // escape codes would land after a log line and erase it).
            func note(_ line: String) {
                FileHandle.standardOutput.write(Data(((drawn > 0 ? "\u{1B}[1A\u{1B}[2K" : "") + line + "\n").utf8))
                drawn = 0
            }
            let markers = session.markers.map { (name: $0.name, frame: $0.at.deviceFrames(sessionRate: session.sampleRate ?? rate, deviceRate: rate)) }
                .sorted { $0.frame < $1.frame }
            func locate(_ frame: Int64, _ why: String) {
                let f = max(0, frame)
                do throws(DeviceError) {
                    try device.locateTransport(to: f)
                    note("\(why): locate to transport frame \(f) (session \(formatSeconds(Double(f - offset) / rate)))")
                } catch {
                    note("\(why): \(error.message)")
                }
            }
            while caughtSignal.load(ordering: .relaxed) == 0 && !device.serverHasShutDown && !quitByKey && !passedEnd {
                let t = follower.lastTransport
                let c = follower.counters
                let s = t.frame - offset
                if let e = follower.error {
                    printError("the transport follower stopped: \(e)")
                    return 1
                }
                for key in pending.withLock({ k -> [ControlKey] in let a = k; k = []; return a }) {
                    switch key {
                    case .playPause:
                        let rolling = device.transportPosition().map { $0.state != .stopped } ?? false
                        do throws(DeviceError) {
                            try device.setTransportRolling(!rolling)
                            note("key space: transport \(rolling ? "stopped" : "started")")
                        } catch { note("key space: \(error.message)") }
                    case .back: locate((device.transportPosition()?.frame ?? t.frame) - Int64(5 * rate), "key ←")
                    case .forward: locate((device.transportPosition()?.frame ?? t.frame) + Int64(5 * rate), "key →")
                    case .home: locate(offset, "key Home")
                    case .previousMarker:
                        let s = (device.transportPosition()?.frame ?? t.frame) - offset
                        if let m = markers.last(where: { $0.frame < s }) { locate(m.frame + offset, "key [: marker '\(m.name)'") }
                        else { note("key [: no marker before the position") }
                    case .nextMarker:
                        let s = (device.transportPosition()?.frame ?? t.frame) - offset
                        if let m = markers.first(where: { $0.frame > s }) { locate(m.frame + offset, "key ]: marker '\(m.name)'") }
                        else { note("key ]: no marker after the position") }
                    case .loop: note("key l: loops are not applied while following the transport")
                    case .quit: quitByKey = true
                    case .nextSession, .previousSession: note("key \(key == .nextSession ? "n" : "p"): set lists do not follow the transport (one session plays)")
                    }
                }
                for m in oscInbox.withLock({ k -> [OSCMessage] in let a = k; k = []; return a }) {
                    let args = m.arguments
                    switch m.address {
                    case "/aqsync/play", "/aqsync/stop":
                        do throws(DeviceError) {
                            try device.setTransportRolling(m.address == "/aqsync/play")
                            note("osc \(m.address): transport \(m.address == "/aqsync/play" ? "started" : "stopped")")
                        } catch { note("osc \(m.address): \(error.message)") }
                    case "/aqsync/locate":
                        // Seconds (f, d) or frames at the device's rate (i, h): a session position.
                        switch args.first {
                        case .float, .double: locate(offset + Int64((args[0].number! * rate).rounded()), "osc /aqsync/locate \(args[0].number!) s")
                        case .int(let v): locate(offset + Int64(v), "osc /aqsync/locate \(v) frames")
                        case .int64(let v): locate(offset + v, "osc /aqsync/locate \(v) frames")
                        default: note("osc /aqsync/locate: give seconds (a float) or frames (an int)")
                        }
                    case "/aqsync/marker":
                        if case .string(let name)? = args.first, let m = markers.first(where: { $0.name == name }) {
                            locate(m.frame + offset, "osc /aqsync/marker '\(name)'")
                        } else {
                            note("osc /aqsync/marker: no such marker (markers: \(markers.map(\.name).joined(separator: ", ")))")
                        }
                    case "/aqsync/gain":
                        if let (i, db) = oscGainArguments(args, in: session), follower.setGain(track: i, decibels: db) {
                            note("osc /aqsync/gain: track '\(session.tracks[i].name)' at \(db) dB from the next cycle")
                        } else {
                            note(oscGainUsage)
                        }
                    case "/aqsync/loop": note("osc /aqsync/loop: loops are not applied while following the transport")
                    default: note("osc \(m.address): unknown (docs/control.md)")
                    }
                }
                var where_ = "\(formatSeconds(Double(max(0, s)) / rate)) / \(formatSeconds(Double(end) / rate))"
                if s < 0 { where_ = "-" + formatSeconds(Double(-s) / rate) + " (before the session)" }
                if let m = session.marker(at: s, deviceRate: rate) { where_ += "  [\(m.name)]" }
                if tty {
                    let state = t.rolling ? "" : follower.primedFrame == s ? "  primed" : "  priming"
                    let line = "\(t.rolling ? "▶" : "■") transport frame \(t.frame)  session \(where_)\(state)  silent rolling cycles \(c.missedCycles)"
                    FileHandle.standardOutput.write(Data(((drawn > 0 ? "\u{1B}[1A\u{1B}[2K" : "") + line + "\n").utf8))
                    drawn = 1
                } else {
                    if c.primings != primings {
                        primings = c.primings
                        // The frame it was primed at, not the head (which moves on once it rolls).
                        if let p = follower.lastPriming { log("primed at session frame \(p) (transport frame \(p + offset))") }
                    }
                    if lastRolling != t.rolling {
                        lastRolling = t.rolling
                        log("transport \(t.rolling ? "rolling" : "stopped") at transport frame \(t.frame) (session \(where_))")
                    }
                }
                if c.missedCycles > missedSeen {
                    // The transport rolled where the tracks were not primed: it did not wait
                    // (the server's sync timeout ran out, or it rolled before aqsync was there).
                    note("the transport rolled at a frame aqsync was not primed at: \(c.missedCycles - missedSeen) cycle(s) silent (did the server's sync timeout run out?); aqsync joins on the exact frame half a second on")
                    missedSeen = c.missedCycles
                }
                if (command.exitAtEnd || leading) && t.rolling && s >= end {
                    passedEnd = true
                    if leading { try? device.setTransportRolling(false) }
                    note("the transport rolled past the session's end (transport frame \(t.frame), session frame \(s) ≥ \(end))\(leading ? ": stopped it" : "")")
                }
                if !quitByKey && !passedEnd { usleep(100_000) }
            }
            let c = follower.counters
            note("transport: \(c.playedCycles) cycle(s) played, \(c.missedCycles) rolling cycle(s) silent (not primed at the transport's frame), \(c.primings) priming(s), sync answered ready \(c.readyAnswers) / not yet \(c.waitAnswers) time(s)")
            // What the server did to this client's cycles: a late client on jackd2 is called
            // twice back to back, both calls reading the same transport position (docs/transport.md).
            let xruns = device.discontinuityCount(.xrun) - xruns0, late = device.lateCycleCount - late0
            if xruns > 0 || late > 0 || c.repeatedFrames > 0 || c.skippedFrames > 0 {
                note("server: \(xruns) xrun(s), \(late) late cycle(s) called twice back to back; transport frames played again \(c.repeatedFrames), skipped \(c.skippedFrames)")
            }
            // Rolling cycles played silent are lost audio: not a success unless --allow-loss.
            let lossStatus: Int32
            if c.missedCycles == 0 {
                lossStatus = 0
            } else if command.allowLoss {
                log("frames lost (\(c.missedCycles) rolling cycle(s) silent); exit status 0 because of --allow-loss")
                lossStatus = 0
            } else {
                printError("frames lost: \(c.missedCycles) rolling cycle(s) silent, not primed at the transport's frame (exit status 3; --allow-loss accepts it)")
                lossStatus = 3
            }
            if passedEnd { return lossStatus }
            if quitByKey {
                note("stopped by the q key")
                return lossStatus
            }
            let sig = caughtSignal.load(ordering: .relaxed)
            if sig != 0 {
                note("stopped by \(sig == SIGINT ? "Ctrl-C (SIGINT)" : sig == SIGTERM ? "SIGTERM" : "SIGHUP")")
                return 128 + sig
            }
            printError("the JACK server went away")
            return 1
        }
    }
}
