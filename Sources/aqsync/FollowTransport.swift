import AQEngine
import AQJack
import AQSession
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension Player {
    /// `aqsync play --transport follow`: plays the session where JACK's transport says, until a
    /// stop signal (docs/transport.md). Returns the exit status.
    func followTransport(device: JackDevice, engine: AudioQueueEngine, rate: Double) -> Int32 {
        let offset = command.transportOffset
        let follower: TransportFollower
        do {
            follower = try TransportFollower(session: session, deviceRate: rate, outputs: session.output.channels, offset: offset)
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
            log("following the JACK transport with '\(session.name)': \(session.tracks.count) track(s), \(formatSeconds(Double(end) / rate)) at \(Int(rate)) Hz on \(device.uid); session frame 0 = transport frame \(offset); slow-sync: the transport rolls once every track is primed (Ctrl-C stops)")
            var lastRolling: Bool?
            var primings = 0
            var drawn = 0
            while caughtSignal.load(ordering: .relaxed) == 0 && !device.serverHasShutDown {
                let t = follower.lastTransport
                let c = follower.counters
                let s = t.frame - offset
                if let e = follower.error {
                    printError("the transport follower stopped: \(e)")
                    return 1
                }
                var where_ = "\(formatSeconds(Double(max(0, s)) / rate)) / \(formatSeconds(Double(end) / rate))"
                if s < 0 { where_ = "-" + formatSeconds(Double(-s) / rate) + " (before the session)" }
                if let m = session.marker(at: s, deviceRate: rate) { where_ += "  [\(m.name)]" }
                if tty {
                    if drawn > 0 { print("\u{1B}[1A\u{1B}[2K", terminator: "") }
                    print("\(t.rolling ? "▶" : "■") transport frame \(t.frame)  session \(where_)  \(follower.primedFrame == s ? "primed" : "priming")  silent rolling cycles \(c.missedCycles)")
                    drawn = 1
                } else {
                    if c.primings != primings {
                        primings = c.primings
                        if let p = follower.primedFrame { log("primed at session frame \(p) (transport frame \(p + offset))") }
                    }
                    if lastRolling != t.rolling {
                        lastRolling = t.rolling
                        log("transport \(t.rolling ? "rolling" : "stopped") at transport frame \(t.frame) (session \(where_))")
                    }
                }
                usleep(100_000)
            }
            let c = follower.counters
            log("transport: \(c.playedCycles) cycle(s) played, \(c.missedCycles) rolling cycle(s) silent (not primed at the transport's frame), \(c.primings) priming(s), sync answered ready \(c.readyAnswers) / not yet \(c.waitAnswers) time(s)")
            let sig = caughtSignal.load(ordering: .relaxed)
            if sig != 0 {
                log("stopped by \(sig == SIGINT ? "Ctrl-C (SIGINT)" : sig == SIGTERM ? "SIGTERM" : "SIGHUP")")
                return 128 + sig
            }
            printError("the JACK server went away")
            return 1
        }
    }
}
