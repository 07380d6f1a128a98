import AQEngine
import AQSession
import ArgumentParser
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `--part NAME` and `--start-at INSTANT` of `aqsync play` (issue 26, docs/multi-machine.md).
extension PlayCommand {
    /// How long before the instant the instant is taken to a device frame: close enough that
    /// the device's rate estimate is extrapolated over little time, far enough that the
    /// tracks' queues are started well ahead of their first frame.
    static let startAtConversionLead = 0.3

    /// Checks `--start-at` (its form, and the options it excludes) and `--part`. Part of
    /// ``validate()``: a ValidationError (status 64).
    func validateStartAtAndPart() throws {
        if let part, part.isEmpty { throw ValidationError("--part must not be empty") }
        guard let startAt else { return }
        if sessions.count > 1 { throw ValidationError("--start-at starts one session, not a set list") }
        if let transport { throw ValidationError("--start-at and --transport \(transport) exclude each other: the transport says when the session plays") }
        do throws(StartInstantError) {
            _ = try StartInstant.parse(startAt, now: .now(.realtime))
        } catch {
            throw ValidationError("--start-at \(error.description)")
        }
    }

    /// `--start-at`, read now (`+N` counts from here); nil without it. An instant less than
    /// `--lead` ahead (or past) exits with status 1: there would be no time to fill the
    /// tracks' buffers, and a late start is never played.
    func startInstant() throws -> SystemInstant? {
        guard let startAt else { return nil }
        let now = SystemInstant.now(.realtime)
        let instant: SystemInstant
        do throws(StartInstantError) {
            instant = try StartInstant.parse(startAt, now: now)
        } catch {
            printError("--start-at \(error.description)")
            throw ExitCode(1)
        }
        let ahead = Double(instant.nanoseconds - now.nanoseconds) / 1e9
        if ahead < lead {
            let when = ahead < 0 ? String(format: "%.3f s ago", -ahead) : String(format: "only %.3f s from now", ahead)
            printError("--start-at \(StartInstant.format(instant.nanoseconds)) is \(when); it must be at least --lead (\(lead) s) ahead, the time to fill every track's buffers")
            throw ExitCode(1)
        }
        return instant
    }
}

/// The session as `--part` plays it (the whole session without it, `part` nil); a part the
/// session does not name exits with status 1 and a line listing the parts it does.
/// (`aqsync play --part` and `aqsync render --part`.)
func selectPart(of session: Session, part: String?) throws -> Session {
    do throws(SessionError) {
        return try session.selecting(part: part)
    } catch {
        printError(error.description)
        throw ExitCode(1)
    }
}

extension Player {
    /// Starts the session: `--lead` from now, or at the `--start-at` instant. With an instant,
    /// waits (on this thread) until ``PlayCommand/startAtConversionLead`` before it (half that
    /// after a discontinuity in the last half second), then takes it to a device frame through
    /// a freshly measured CLOCK_REALTIME − CLOCK_MONOTONIC offset, the device's latest cycle
    /// and a rate measured over the last half second (``BaselineRate``), and starts every
    /// track there; an instant the device can no longer honour throws, and so does a server
    /// clock whose rate reads more than 1000 ppm off nominal (it cannot place the instant
    /// within a frame). Returns the session start frame, or nil when a
    /// stop signal came while waiting.
    func startSession(_ player: SessionPlayer, engine: AudioQueueEngine, rate: Double) throws(SessionError) -> Int64? {
        guard let instant = startAt else {
            let want = engine.deviceCurrentTime().sampleTime + command.lead * rate
            return try player.start(at: AudioTimeStamp(sampleTime: want.rounded(.up)))
        }
        // The rate: measured between the device's cycles 0.8 s before the instant and the ones
        // at the conversion, 0.3 s before (one cycle's estimate is JACK's microseconds over one
        // period: 190 ppm at 256 frames, 57 µs over 0.3 s). A discontinuity in between (an
        // xrun: frames kept or lost) spoils that baseline: the references are taken again right
        // after it, and when that leaves less than 0.25 s the conversion waits until 0.15 s
        // before the instant. A rate more than 1000 ppm off nominal is refused
        // (``BaselineRate``): the start throws.
        func sleep(untilSecondsBefore seconds: Double) -> Bool {
            let until = instant.adding(seconds: -seconds).nanoseconds
            while true {
                if caughtSignal.load(ordering: .relaxed) != 0 { return false }
                let left = until - SystemClock.realtime.now()
                if left <= 0 { return true }
                usleep(useconds_t(min(left / 1000, 20_000)))
            }
        }
        guard sleep(untilSecondsBefore: PlayCommand.startAtConversionLead + 0.5) else { return nil }
        func secondsBefore() -> Double { Double(instant.nanoseconds - SystemClock.realtime.now()) / 1e9 }
        var epoch = engine.discontinuity.epoch
        var referencesFrom = secondsBefore()
        var references = player.timebases()
        var referencesTo = secondsBefore()
        // Until `lead` before the instant: a discontinuity takes the references again at once
        // (not at the conversion), so the baseline after it is as long as the time allows.
        func watch(untilSecondsBefore lead: Double) -> Bool {
            while true {
                if caughtSignal.load(ordering: .relaxed) != 0 { return false }
                if engine.discontinuity.epoch != epoch {
                    epoch = engine.discontinuity.epoch
                    referencesFrom = secondsBefore()
                    references = player.timebases()
                    referencesTo = secondsBefore()
                    continue
                }
                let left = secondsBefore() - lead
                if left <= 0 { return true }
                usleep(useconds_t(min(left * 1e6, 5_000)))
            }
        }
        guard watch(untilSecondsBefore: PlayCommand.startAtConversionLead) else { return nil }
        if referencesTo - PlayCommand.startAtConversionLead < 0.25 {
            // A discontinuity in the last half second left less than 0.25 s of baseline:
            // converting later, 0.15 s before the instant, lengthens it.
            guard watch(untilSecondsBefore: PlayCommand.startAtConversionLead / 2) else { return nil }
        }
        let sameEpoch = engine.discontinuity.epoch == epoch
        let offset = SystemClockOffset.measure(.realtime)
        let anchorsFrom = secondsBefore()
        let windows = String(format: "references %.3f–%.3f s, anchors %.3f–", referencesFrom, referencesTo, anchorsFrom)
        let started: (frame: Int64, spread: Double, rate: BaselineRate)
        do {
            started = try player.start(atInstant: instant, offset: offset, rateSince: sameEpoch ? references : [])
        } catch {
            // The windows the refusal judged, for a witness to check it against the server's cycles.
            log("start at \(StartInstant.format(instant.nanoseconds)) (CLOCK_REALTIME) refused; " + windows + String(format: "%.3f", secondsBefore()) + " s before the instant")
            throw error
        }
        let (frame, spread, rate) = started
        let left = secondsBefore()
        let rateLine = switch rate.verdict {
        case .measured: String(format: "rate %.3f ppm off nominal over %.2f s", rate.ppm, rate.seconds)
        case .noBaseline, .implausible: sameEpoch ? "rate of the latest cycle (no longer baseline)" : "rate of the latest cycle (a discontinuity since the reference)"
        }
        // Once the instant has come: where the device's clock of that moment puts it (the cycle
        // that contains it), against the frame the tracks started on. A difference is the
        // server's clock moving after the conversion (a late wake-up bending its estimate).
        let after = DispatchTime.now() + .nanoseconds(Int(max(0, instant.nanoseconds - SystemClock.realtime.now()))) + .milliseconds(30)
        DispatchQueue.global().asyncAfter(deadline: after) { [self] in
            guard let ts = engine.deviceTime(at: instant) else { return }
            let line = String(format: "at the instant the device's clock put it at device frame %.2f: the start is %+.2f frames from it", ts.sampleTime, Double(frame) - ts.sampleTime)
            notices.withLock { $0.append(line) }
        }
        log("start at \(StartInstant.format(instant.nanoseconds)) (CLOCK_REALTIME): device frame \(frame); CLOCK_REALTIME − CLOCK_MONOTONIC = \(offset.nanoseconds) ns (bracket \(offset.bracketNanoseconds) ns); \(rateLine); the median of 9 cycles' anchors and \(rate.timebases.count) references (spread " + String(format: "%.3f", spread) + " frames; " + windows + String(format: "%.3f", left) + " s before the instant); scheduled " + String(format: "%.3f", left) + " s before the instant")
        return frame
    }
}
