import AQEngine
import AQSession
import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `--part NAME` and `--start-at INSTANT` of `aqsync play` (issue 26, docs/multi-machine.md).
extension PlayCommand {
    /// How long before the instant the instant is taken to a device frame: close enough that
    /// the device's rate estimate is extrapolated over little time, far enough that the
    /// tracks' queues are started well ahead of their first frame.
    static let startAtConversionLead = 0.5

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
    /// waits (on this thread) until ``PlayCommand/startAtConversionLead`` before it, then takes
    /// it to a device frame through a freshly measured CLOCK_REALTIME − CLOCK_MONOTONIC offset
    /// and the device's latest cycle, and starts every track there; an instant the device can
    /// no longer honour throws. Returns the session start frame, or nil when a stop signal
    /// came while waiting.
    func startSession(_ player: SessionPlayer, engine: AudioQueueEngine, rate: Double) throws(SessionError) -> Int64? {
        guard let instant = startAt else {
            let want = engine.deviceCurrentTime().sampleTime + command.lead * rate
            return try player.start(at: AudioTimeStamp(sampleTime: want.rounded(.up)))
        }
        let convertAt = instant.adding(seconds: -PlayCommand.startAtConversionLead).nanoseconds
        while true {
            if caughtSignal.load(ordering: .relaxed) != 0 { return nil }
            let left = convertAt - SystemClock.realtime.now()
            if left <= 0 { break }
            usleep(useconds_t(min(left / 1000, 20_000)))
        }
        let offset = SystemClockOffset.measure(.realtime)
        let frame = try player.start(atInstant: instant, offset: offset)
        let left = Double(instant.nanoseconds - SystemClock.realtime.now()) / 1e9
        log("start at \(StartInstant.format(instant.nanoseconds)) (CLOCK_REALTIME): device frame \(frame); CLOCK_REALTIME − CLOCK_MONOTONIC = \(offset.nanoseconds) ns (bracket \(offset.bracketNanoseconds) ns); scheduled " + String(format: "%.3f", left) + " s before the instant")
        return frame
    }
}
