import AQEngine
import AQSession
import Foundation

/// The sessions `aqsync play` plays in turn (one, or a set list: `aqsync play A B C`), and the
/// players open for them: the one playing and at most one more (the next, prepared while the
/// current plays, or, after `p`, the previous). docs/session-format.md, "Set lists live".
///
/// Timing: the next session is made (its buffers filled) as soon as the current one has
/// started, and started on the device frame ``SetList/start(of:at:after:deviceRate:)`` says —
/// the current one's start plus its length (its loop's passes counted), plus the next one's
/// gap, the render's rule — once that frame is less than ``commitSeconds`` away (the
/// commitment: until then, seeks, pauses and a loop's release in the current session are
/// allowed and move its end; from then on they are refused). A skip (`n`/`p`, `/aqsync/next`,
/// `/aqsync/previous`) fades the current session out over the engine's volume ramp, stops it,
/// and starts the session skipped to `--lead` seconds later, without its gap (a committed next
/// session starts where it was scheduled).
///
/// Threads: ``tick()`` and ``advance()`` on the main thread (the monitor's); the controls
/// (``skip(by:why:note:)``, ``whileUncommitted(_:)``) on the keys' reader and the OSC server's
/// threads; ``stopAll()`` on any thread. One lock guards the state; it is held while a player
/// is made or started, and around a control's seek.
final class SetListPlayback: @unchecked Sendable {
    let sessions: [Session]
    let engine: AudioQueueEngine
    let options: SessionPlayer.Options
    let rate: Double
    /// `--lead` in device frames: a start that is not on the set list's timeline (the first
    /// session, a skip) is this far from now.
    let leadFrames: Int64
    /// How close to its start the next session is committed.
    static let commitSeconds = 1.0

    private let lock = NSLock()
    // Guarded by `lock`:
    private var index = 0
    private var playing: SessionPlayer
    private var next: (index: Int, player: SessionPlayer)?
    /// The device frame the next session was started on (nil: not committed yet).
    private var nextStart: Int64?
    /// Where a skip goes (nil: none asked).
    private var jump: Int?
    private var stopped = false
    /// Lines for the log (drained by the monitor).
    private var lines: [String] = []
    /// A session that could not be made or started: the set list ends there (status 1).
    private var failed: String?
    /// Frames by which sessions started after the frame the set list's rule gives them (a
    /// main thread too late to schedule them): a loss, as a track's late frames are.
    private var late: Int64 = 0

    var failure: String? { lock.withLock { failed } }
    var lateFrames: Int64 { lock.withLock { late } }

    /// Makes the first session's player (not started), with its tracks' feeds `prepared` ahead
    /// when they fit (``TrackPreparation``).
    init(sessions: [Session], engine: AudioQueueEngine, options: SessionPlayer.Options, leadSeconds: Double, prepared: SessionPlayer.Preparation? = nil) throws(SessionError) {
        self.sessions = sessions
        self.engine = engine
        self.options = options
        rate = engine.device.sampleRate
        leadFrames = Int64((leadSeconds * engine.device.sampleRate).rounded(.up))
        playing = try SessionPlayer(session: sessions[0], engine: engine, options: options, prepared: prepared)
    }

    /// Like the first init, with `--from` (one session only).
    init(session: Session, engine: AudioQueueEngine, options: SessionPlayer.Options, from: SessionTime, leadSeconds: Double, prepared: SessionPlayer.Preparation? = nil) throws(SessionError) {
        sessions = [session]
        self.engine = engine
        self.options = options
        rate = engine.device.sampleRate
        leadFrames = Int64((leadSeconds * engine.device.sampleRate).rounded(.up))
        playing = try SessionPlayer(session: session, engine: engine, options: options, from: from, prepared: prepared)
    }

    var isSetList: Bool { sessions.count > 1 }

    /// True while another session is to play after the one playing (the next in the list, or
    /// the one a skip goes to), and nothing stopped the set list.
    var hasMore: Bool { lock.withLock { !stopped && failed == nil && (jump ?? index + 1) < sessions.count } }

    /// The player of the session playing now.
    var current: SessionPlayer { lock.withLock { playing } }
    /// Its place in the list (0-based).
    var currentIndex: Int { lock.withLock { index } }

    /// "2/3 'b'": the session playing, for the display and the log.
    func label(_ i: Int) -> String { "\(i + 1)/\(sessions.count) '\(sessions[i].name)'" }

    /// True once a skip asked for the session playing to end (until ``advance()``): its report
    /// says so, and its silent tracks are no loss.
    var isSkipping: Bool { lock.withLock { jump != nil } }

    /// Lines for the log since the last call.
    func takeLines() -> [String] { lock.withLock { defer { lines.removeAll() }; return lines } }

    /// The monitor's tick (main thread, every 50–100 ms): makes the next session's player when
    /// there is none, and starts it on its exact frame once that frame is near.
    func tick() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped, jump == nil, failed == nil, index + 1 < sessions.count else { return }
        if next == nil {
            do throws(SessionError) {
                next = (index + 1, try SessionPlayer(session: sessions[index + 1], engine: engine, options: options))
            } catch {
                failed = "session \(label(index + 1)): \(error.description)"
                return
            }
        }
        guard let nx = next, nextStart == nil, !playing.isPaused, let s = playing.sessionStartFrame else { return }
        let length = playing.lengthFrames
        guard length != .max else { return }
        let at = SetList.start(of: sessions[nx.index], at: nx.index, after: s + length, deviceRate: rate)
        let now = Int64(engine.deviceCurrentTime().sampleTime)
        guard at - now <= Int64(Self.commitSeconds * rate) else { return }
        do throws(SessionError) {
            let started = try nx.player.start(at: AudioTimeStamp(sampleTime: Double(at)))
            nextStart = started
            let gap = started - (s + length)
            var line = "session \(label(nx.index)) scheduled: starts at device frame \(started), \(gap == 0 ? "where the previous ends" : "\(gap) frames after the previous ends")"
            if started != at { late += started - at; line += " (LATE: the set list's frame was \(at), \(started - at) frames too late to schedule)" }
            lines.append(line)
        } catch {
            failed = "session \(label(nx.index)): \(error.description)"
        }
    }

    /// Runs `body` (a seek, a pause, a loop's release of the current session) unless the next
    /// session is committed; then returns nil. The lock is held meanwhile, so the commitment
    /// waits for it.
    func whileUncommitted<T>(_ body: () -> T) -> T? {
        lock.lock()
        defer { lock.unlock() }
        if nextStart != nil { return nil }
        return body()
    }

    /// What a control refused while committed says.
    var committedRefusal: String {
        let i = currentIndex
        return "the next session (\(i + 2 <= sessions.count ? label(i + 1) : "none")) is already scheduled to start where this one ends (\(String(format: "%g", Self.commitSeconds)) s before it): n skips to it"
    }

    /// A skip (`n`: +1, `p`: −1), from a control thread: fades the current session out,
    /// stops it, and leaves the rest to ``advance()``. `note` gets the log line (before the
    /// stop, so that it comes before the lines of the session skipped to).
    func skip(by delta: Int, why: String, note: (String) -> Void) {
        lock.lock()
        guard isSetList else {
            lock.unlock()
            return note("\(why): one session is playing (a set list is several: aqsync play A.toml B.toml …)")
        }
        if stopped || failed != nil { lock.unlock(); return note("\(why): playback has ended") }
        if let j = jump { lock.unlock(); return note("\(why): already moving to \(j < sessions.count ? "session " + label(j) : "the end")") }
        let target = index + delta
        if target < 0 { let l = label(index); lock.unlock(); return note("\(why): no session before \(l) (Home starts it again)") }
        jump = target
        let from = label(index)
        let player = playing
        let committed = nextStart != nil
        lock.unlock()
        let ramp = player.fadeOut()
        let fade = "\(why): \(from) fades out (\(Int((ramp * 1000).rounded())) ms)"
        if target >= sessions.count {
            note(fade + "; it is the last: playback ends")
        } else {
            let when = committed && delta == 1 ? "where it was scheduled" : String(format: "%g s after the fade (--lead), without its gap", Double(leadFrames) / rate)
            note(fade + "; session \(label(target)) starts \(when)")
        }
        // The ramp runs from the first cycle after the change reaches the renderer: wait for it
        // and two periods of any size the server runs (50 ms covers 1024 frames at 44.1 kHz).
        usleep(UInt32((ramp + 0.05) * 1_000_000))
        player.stop()
    }

    /// After the current session's player has finished (main thread): closes it and returns
    /// the next one to play — started on its frame, or now + the lead after a skip — or nil at
    /// the end of the list (or after ``stopAll()`` or a failure).
    func advance() -> SessionPlayer? {
        lock.lock()
        defer { lock.unlock() }
        let old = playing
        let target: Int
        let wasSkip = jump != nil
        if let j = jump {
            target = j
        } else {
            target = index + 1
        }
        jump = nil
        if stopped || failed != nil || target >= sessions.count {
            closeNext()
            return nil
        }
        // At most two players: the one that ended is closed before another is made.
        old.close()
        let player: SessionPlayer
        if let nx = next, nx.index == target {
            player = nx.player
            if nextStart == nil {
                // Not committed in time (a main thread held up): as soon as it can, counted late.
                let due = old.sessionStartFrame.map { SetList.start(of: sessions[target], at: target, after: $0 + old.lengthFrames, deviceRate: rate) }
                startSoon(player, target, due: wasSkip ? nil : due)
            }
            next = nil
        } else {
            closeNext()
            do throws(SessionError) {
                player = try SessionPlayer(session: sessions[target], engine: engine, options: options)
            } catch {
                failed = "session \(label(target)): \(error.description)"
                return nil
            }
            startSoon(player, target)
        }
        nextStart = nil
        index = target
        playing = player
        return failed == nil ? player : nil
    }

    /// Starts `player` (session `i`) `leadFrames` from now. Lock held.
    private func startSoon(_ player: SessionPlayer, _ i: Int, due: Int64? = nil) {
        do throws(SessionError) {
            let want = engine.deviceCurrentTime().sampleTime + Double(leadFrames)
            let s = try player.start(at: AudioTimeStamp(sampleTime: want.rounded(.up)))
            var line = "session \(label(i)) starts at device frame \(s)"
            if let due, s > due {
                late += s - due
                line += " (LATE: the set list's frame was \(due), \(s - due) frames before; it was not scheduled in time)"
            }
            lines.append(line)
        } catch {
            failed = "session \(label(i)): \(error.description)"
        }
    }

    /// Stops and closes the next session's player, if any. Lock held.
    private func closeNext() {
        if let nx = next {
            nx.player.stop()
            nx.player.close()
        }
        next = nil
        nextStart = nil
    }

    /// Stops everything (a stop signal, the server gone for good): the current session and a
    /// committed next one; ``advance()`` then returns nil. Any thread.
    func stopAll() {
        lock.lock()
        stopped = true
        let p = playing
        let nx = next?.player
        lock.unlock()
        p.stop()
        nx?.stop()
    }

    /// Closes every player still open (main thread, at the end).
    func closeAll() {
        lock.lock()
        defer { lock.unlock() }
        closeNext()
        playing.close()
    }
}
