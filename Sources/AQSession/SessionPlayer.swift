import AQConvert
import AQEngine
import Foundation

/// Plays a ``Session`` on an engine: one output queue per track, each fed from its file by the
/// file-stream parser through a small fixed set of buffers, each track's first frame on its
/// exact device frame. Live playback (a ``JackDevice``) and offline rendering
/// (``OfflineRenderer`` on a ``ManualDevice``) use this same type, so the same bytes reach the
/// same queues in the same buffers either way.
///
/// Each track's queue is Float32 at the device's rate: its ``TrackSource`` (on the feeding
/// side) parses, decodes, converts the rate and applies the fades, so the engine converts
/// nothing and the frames are the session's. The player can start at any session position
/// (``init(session:engine:options:from:)``, ``placement(of:in:deviceRate:position:)``), and
/// seek, pause and resume while playing (``seek(to:lead:)``, ``pause()``, ``resume(lead:)``;
/// SessionPlayer+Seek.swift).
///
/// How it feeds: at creation every track's buffers are filled and enqueued (the first with the
/// track's gain as a volume parameter event, exact from its first frame, at queue time 0).
/// When a buffer comes back, the output callback (on the engine's events thread) only hands
/// it to the player's feeder thread, which reads the next frames into it and enqueues it again.
/// After a track's last buffer the feeder flushes the queue and stops it once drained
/// (`stop(immediately: false)`); the queue's `isRunning` listener marks the track done.
///
/// Threads: every public member may be called from any control thread (not the render
/// thread, not from the engine's output callbacks). File reading and parsing happen on the
/// caller's thread during `init` and on the player's own feeder thread afterwards.
package final class SessionPlayer: @unchecked Sendable {
    /// How tracks are buffered.
    ///
    /// Thread safety: a plain value; any thread.
    package struct Options: Sendable {
        /// Frames per buffer, at the device's rate.
        package var bufferFrames: Int
        /// Buffers per track (the memory a track uses is fixed by these two numbers).
        package var buffersPerTrack: Int
        /// Turn on the queues' level metering (for meters on a terminal).
        package var metering: Bool
        /// Record the session's takes (`[[record]]`, a ``TakeRecorder`` each, on the device's
        /// capture ports as ``Session/takeInputLayout`` places them). Off: takes are ignored
        /// (offline rendering).
        package var recordTakes: Bool
        /// The takes' buffering.
        package var takeOptions: TakeRecorder.Options
        /// Feeder threads (nil: one per active core); never more than the tracks, at least one.
        package var feederThreads: Int?

        /// Defaults: 4 buffers of 8192 frames a track, metering off, takes not recorded, a
        /// feeder per core.
        package init(
            bufferFrames: Int = 8192, buffersPerTrack: Int = 4, metering: Bool = false, recordTakes: Bool = false,
            takeOptions: TakeRecorder.Options = TakeRecorder.Options(), feederThreads: Int? = nil
        ) {
            self.bufferFrames = bufferFrames
            self.buffersPerTrack = buffersPerTrack
            self.metering = metering
            self.recordTakes = recordTakes
            self.takeOptions = takeOptions
            self.feederThreads = feederThreads
        }
    }

    /// What became of one track.
    ///
    /// Thread safety: a plain value; any thread.
    package struct TrackReport: Sendable, Equatable {
        /// The track's name.
        package var name: String
        /// The device frame its first frame was scheduled on.
        package var scheduledStartFrame: Int64
        /// The device frame the queue started on (its frame 0), as the render thread reported.
        package var actualStartFrame: Int64?
        /// Device frames of the track that played.
        package var framesPlayed: Int64
        /// Device frames skipped because they were already past when the render thread saw
        /// them (the track kept its place on the timeline).
        package var lateFrames: Int64
        /// True when the track played to its end (not stopped early).
        package var completed: Bool
        /// Compressed packets that could not be decoded and played as silence of their length
        /// (the track kept its place); 0 for PCM.
        package var damagedPackets: Int = 0
        /// Why the track stopped early, if something went wrong.
        package var error: String?
    }

    final class Track {
        let index: Int
        let spec: SessionTrack
        let queue: AudioQueue
        /// The track's frames along the player's timeline (Float32 at the device's rate, fades
        /// applied, loops unrolled); nil for a track that plays nothing from the position on.
        var source: TrackFeed?
        var buffers: [AudioQueueBuffer] = []
        /// Device frames from the player's start to the track's first frame played.
        var startOffset: Int64
        /// Device frames played before the last seek or pause (``seek(to:lead:)``).
        var playedBefore: Int64 = 0
        /// True once the track was stopped by a seek or a pause (its queue's start frame is
        /// the latest run's only once the render thread reported it).
        var restarted = false
        // Feeder side (the init thread, then one feeder thread at a time):
        var first = true
        /// Frames enqueued so far (device rate): the queue time of the next buffer.
        var queuedFrames: Int64 = 0
        // Guarded by `cond`:
        var fed = false
        var done = false
        var completed = false
        var wasRunning = false
        var enqueuedEnd: Int64 = 0
        /// True while a feeder feeds one of the track's buffers.
        var feeding = false
        /// The track's gain (linear): the session's `gain_db` until ``SessionPlayer/setGain(track:decibels:)``.
        var gain: Float = 1
        var error: String?
        var scheduledStart: Int64 = 0
        var damagedPackets = 0

        init(index: Int, spec: SessionTrack, queue: AudioQueue, source: TrackFeed?, startOffset: Int64) {
            self.index = index
            self.gain = spec.linearGain
            self.spec = spec
            self.queue = queue
            self.source = source
            self.startOffset = startOffset
        }
    }

    /// Where one track is when the player is positioned at session frame `position` (device
    /// frames): how long after the player's start its first frame plays, how many of its
    /// frames are skipped, and how many it plays (0: it has ended).
    ///
    /// Thread safety: pure function; any thread.
    package static func placement(of track: SessionTrack, in session: Session, deviceRate: Double, position: Int64)
        -> (startOffset: Int64, skip: Int64, frames: Int64)
    {
        let s = session.startOffset(of: track, deviceRate: deviceRate)
        let n = session.deviceLength(of: track, deviceRate: deviceRate)
        if position >= s + n { return (0, n, 0) }
        return (max(0, s - position), max(0, position - s), n - max(0, position - s))
    }

    /// One track's source from its frame `skip` (device frames), made on the calling thread,
    /// starting on that exact frame with its fades (the reusable part of a locate and of a
    /// loop's wrap).
    static func makeSource(
        for spec: SessionTrack, in session: Session, deviceRate: Double, skip: Int64, bufferFrames: Int
    ) throws(SessionError) -> TrackSource {
        let sessionRate = session.sampleRate ?? deviceRate
        let n = session.deviceLength(of: spec, deviceRate: deviceRate)
        var fades = TrackSource.Fades()
        fades.trackLength = n
        fades.envelope = GainEnvelope(spec.gainPoints, sessionRate: sessionRate, deviceRate: deviceRate)
        if let f = spec.fadeIn {
            fades.inLength = min(n, f.length.deviceFrames(sessionRate: sessionRate, deviceRate: deviceRate))
            fades.inCurve = f.curve
        }
        if let f = spec.fadeOut {
            fades.outLength = min(n, f.length.deviceFrames(sessionRate: sessionRate, deviceRate: deviceRate))
            fades.outCurve = f.curve
        }
        // Crossfades: the overlap with the other track, in device frames at this rate.
        let start = session.startOffset(of: spec, deviceRate: deviceRate)
        if let x = spec.crossfadeIn {
            let other = x.partnerSpan(sessionRate: session.sampleRate, deviceRate: deviceRate)
            fades.inLength = max(0, min(n, other.upperBound - start))
            fades.inCurve = x.curve
        }
        if let x = spec.crossfadeOut {
            let other = x.partnerSpan(sessionRate: session.sampleRate, deviceRate: deviceRate)
            fades.outLength = max(0, min(n, start + n - other.lowerBound))
            fades.outCurve = x.curve
        }
        return try TrackSource(track: spec, deviceRate: deviceRate, length: n, skip: skip, fades: fades, chunkFrames: bufferFrames)
    }

    /// Every track's feed (``makeFeed(for:in:deviceRate:timeline:bufferFrames:)``), in track
    /// order, made concurrently on up to as many threads as the machine has cores; each a feed,
    /// nil (the track plays nothing) or the error making it met. Blocks until all are made.
    static func makeFeeds(
        for session: Session, deviceRate: Double, timeline: PlayTimeline, bufferFrames: Int
    ) -> [Result<TrackFeed?, SessionError>] {
        let n = session.tracks.count
        // Each iteration writes its own element only; read after every iteration returned.
        nonisolated(unsafe) let results = UnsafeMutableBufferPointer<Result<TrackFeed?, SessionError>>.allocate(capacity: n)
        results.initialize(repeating: .success(nil))
        defer { results.deinitialize().deallocate() }
        DispatchQueue.concurrentPerform(iterations: n) { i in
            do throws(SessionError) {
                results[i] = .success(try makeFeed(for: session.tracks[i], in: session, deviceRate: deviceRate, timeline: timeline, bufferFrames: bufferFrames))
            } catch {
                results[i] = .failure(error)
            }
        }
        return Array(results)
    }

    /// One track's feed along `timeline` (nil: it plays nothing), its first source made on
    /// the calling thread.
    static func makeFeed(
        for spec: SessionTrack, in session: Session, deviceRate: Double, timeline: PlayTimeline, bufferFrames: Int
    ) throws(SessionError) -> TrackFeed? {
        let s = session.startOffset(of: spec, deviceRate: deviceRate)
        let n = session.deviceLength(of: spec, deviceRate: deviceRate)
        return try TrackFeed(channels: Int(spec.audio.format.channelsPerFrame), span: s..<(s + n), timeline: timeline) { skip throws(SessionError) in
            try makeSource(for: spec, in: session, deviceRate: deviceRate, skip: skip, bufferFrames: bufferFrames)
        }
    }

    /// The session played.
    package let session: Session
    /// The engine the queues are on.
    package let engine: AudioQueueEngine
    /// The buffering used.
    package let options: Options
    /// Device frames from the player's start (the session position it was made at, or the
    /// last ``seek(to:lead:)``'s) to the end of the last track, with the loop's passes
    /// (``Session/loop``) counted; `Int64.max` while a loop without a count has not been
    /// released (``releaseLoop()``). Any control thread (a short lock).
    package var lengthFrames: Int64 { timeline.length ?? .max }
    /// The player's timeline: which session frame plays at which player frame (a new one at
    /// each seek). Any control thread (a short lock).
    var timeline: PlayTimeline {
        cond.lock()
        defer { cond.unlock() }
        return currentTimeline
    }
    /// Guarded by `cond`.
    var currentTimeline: PlayTimeline
    /// The session position the player starts at (device frames; 0: the session start), or,
    /// after ``seek(to:lead:)``, the one it restarted at. Any control thread (a short lock).
    package var position: Int64 { timeline.position }
    /// The loop region (device frames), when the session has one.
    let loopRange: Range<Int64>?

    let tracks: [Track]
    /// The takes recorded (``Options/recordTakes``), in session order.
    package let takes: [TakeRecorder]
    let cond = NSCondition()
    // Guarded by `cond`:
    var work: [(Int, AudioQueueBuffer)] = []
    /// Buffers being fed now, one per feeder at most (``beginExclusive()`` waits for none).
    var feedsInFlight = 0
    /// True while a seek, a pause or a stop does its work: no buffer is fed meanwhile
    /// (``beginExclusive()``).
    var exclusive = false
    var stopping = false
    var quit = false
    var startFrame: Int64?
    var stopFrame: Int64?
    /// True while a seek or a pause stops and refills the queues: returned buffers and
    /// queue stops are not the tracks' own then.
    var seeking = false
    /// The session position a pause stopped at (nil: not paused), and the loop pass it was in.
    var pausedAt: (frame: Int64, pass: Int)?
    /// Loop passes played before the current timeline's first (after a resume inside the
    /// loop), for the display.
    var passOffset = 0
    /// Signalled by each feeder thread as it ends.
    let feedersDone = DispatchSemaphore(value: 0)
    /// Feeder threads started (``startFeeders(tracks:)``); set once, before any feeds.
    var feederCount = 0
    /// The SCHED_FIFO priority the feeders asked for (nil: ordinary threads), and how many of
    /// them the system gave it to. Guarded by `cond`.
    var feederPriority: (asked: Int32?, granted: Int) = (nil, 0)

    /// Makes a queue per track on `engine`, allocates its buffers and fills and enqueues them
    /// (reading the first frames of every file on the calling thread), then starts the feeder
    /// thread. Nothing plays until ``start(at:)``.
    ///
    /// Each track is a Float32 queue at the device's rate fed by a ``TrackSource`` (decoding,
    /// rate conversion and fades on the feeding side, so a frame's index is its place on the
    /// session's timeline).
    ///
    /// - Parameter from: the session position the player starts at (`--from`): every track is
    ///   positioned on its exact frame there (a track starting later starts later by the
    ///   difference, one already playing from the exact file frame, one that has ended plays
    ///   nothing); the player's start (``start(at:)``) is then that position. Blocks while
    ///   it positions: a compressed track playing at `from` is parsed from its start (packets
    ///   counted, not decoded) on the calling thread.
    /// - Throws: ``SessionError`` (`.invalidValue` when `from` is at or past the session's end,
    ///   or not 0 with takes to record; `.playback` naming the track when the engine refuses a
    ///   queue, a format or a buffer; `.unreadableFile`/`.unsupportedAudio` for a file that
    ///   changed since it was loaded). Queues made so far are disposed of.
    /// - Parameter prepared: the tracks' feeds made ahead for this session
    ///   (``prepare(_:deviceRate:from:bufferFrames:)``, `aqsync play` while its device opens):
    ///   used when made for the device's rate, `from` and `options.bufferFrames`, else ignored
    ///   (every feed made here, as without).
    package init(
        session: Session, engine: AudioQueueEngine, options: Options = Options(), from: SessionTime = .frames(0), prepared: Preparation? = nil
    ) throws(SessionError) {
        self.session = session
        self.engine = engine
        self.options = options
        let rate = engine.device.sampleRate
        let (timeline, loopRange, full) = Self.timeline(of: session, deviceRate: rate, from: from)
        let position = timeline.position
        if position >= full {
            throw SessionError(.invalidValue, file: session.url.path,
                "--from \(Self.describe(from)) (frame \(position) at \(Int(rate)) Hz) is at or past the session's end (frame \(full), \(Self.formatClock(Double(full) / rate))): nothing to play")
        }
        if position > 0 && options.recordTakes && !session.takes.isEmpty {
            throw SessionError(.invalidValue, file: session.url.path, "--from and [[record]] takes cannot be used together yet (takes are placed from the session start)")
        }
        if let loopRange, loopRange.upperBound > full {
            throw SessionError(.invalidValue, file: session.url.path,
                "the loop's end (frame \(loopRange.upperBound) at \(Int(rate)) Hz) is past the session's end (frame \(full))")
        }
        if loopRange != nil && options.recordTakes && !session.takes.isEmpty {
            throw SessionError(.invalidValue, file: session.url.path, "a loop and [[record]] takes cannot be used together yet (takes are placed on the session's frames)")
        }
        // Feeds made ahead while the device opened (`aqsync play`), when they fit. With them, the
        // timeline they were made on: its loop passes (a reference, ``LoopPasses``) are what
        // the feeds follow, so a release (``releaseLoop()``) must reach those.
        let ahead = prepared?.feeds(deviceRate: rate, position: position, bufferFrames: options.bufferFrames, trackCount: session.tracks.count)
        self.currentTimeline = ahead?.timeline ?? timeline
        self.loopRange = loopRange
        var made: [Track] = []
        let cond = self.cond
        // The callbacks need `self`, which is not usable before every property is set: they
        // reach the player through this box, filled in below.
        let box = WeakBox()
        // Every track's file opened and its first source made (parsing, a decoder, a rate
        // converter) on as many threads as the machine has: the largest part of a session's
        // time to its first frame (docs/benchmarking.md, "Time to the first frame").
        let feeds = ahead?.feeds ?? Self.makeFeeds(for: session, deviceRate: rate, timeline: timeline, bufferFrames: options.bufferFrames)
        do throws(SessionError) {
            for (i, spec) in session.tracks.enumerated() {
                let feed = try feeds[i].get()
                let channels = UInt32(spec.audio.format.channelsPerFrame)
                let format = AudioStreamBasicDescription.linearPCM(sampleRate: rate, channels: channels, bits: 32, isFloat: true)
                let queue: AudioQueue
                do {
                    queue = try engine.newOutput(format: format) { _, buffer in
                        box.player?.returned(track: i, buffer: buffer)
                    }
                } catch {
                    throw SessionError(.playback, file: spec.file.path, "track '\(spec.name)': the engine refused the file's format: \(error.message)")
                }
                let t = Track(index: i, spec: spec, queue: queue, source: feed, startOffset: feed?.startOffset ?? 0)
                made.append(t)
                do throws(AudioQueueError) {
                    // Track gains go up to +24 dB (gain_db, setGain): above Apple's volume range.
                    try queue.setMaximumVolume(AudioQueue.loudestVolume)
                    if let outputs = spec.outputs { try queue.setOutputChannels(outputs.map { $0 - 1 }) }
                    if options.metering { try queue.setLevelMeteringEnabled(true) }
                    if t.source != nil {
                        for _ in 0..<max(1, options.buffersPerTrack) {
                            t.buffers.append(try queue.allocateBuffer(capacity: options.bufferFrames * Int(format.bytesPerFrame)))
                        }
                    }
                } catch {
                    throw SessionError(.playback, file: spec.file.path, "track '\(spec.name)': \(error.message)")
                }
                queue.addPropertyListener(.isRunning) { q, _ in
                    box.player?.runningChanged(track: i, running: q.isRunning, error: q.error)
                }
            }
        } catch {
            for t in made { try? t.queue.dispose(immediately: true) }
            throw error
        }
        // The takes: their files are created now (before anything plays).
        var recorders: [TakeRecorder] = []
        if options.recordTakes {
            let layout = session.takeInputLayout
            do throws(SessionError) {
                try Self.checkRoom(for: session.takes, session: session, deviceRate: rate)
                for (i, take) in session.takes.enumerated() {
                    recorders.append(try TakeRecorder(
                        take: take, session: session, engine: engine, inputOffset: layout.offsets[i], options: options.takeOptions))
                }
            } catch {
                for r in recorders { r.close() }
                for t in made { try? t.queue.dispose(immediately: true) }
                throw error
            }
        }
        takes = recorders
        tracks = made
        box.player = self
        _ = cond
        for t in tracks where t.source == nil {
            // Ended before the position: nothing to play.
            t.fed = true
            t.done = true
            t.completed = true
        }
        // The first buffers of every track read and enqueued, tracks spread over the machine's
        // cores (``feed(_:_:)`` touches one track's state and the player's under `cond`; the
        // engine takes enqueues from any thread).
        // Each iteration touches its own track (and the player's state under `cond`).
        nonisolated(unsafe) let toPrime = tracks.filter { $0.source != nil }
        DispatchQueue.concurrentPerform(iterations: toPrime.count) { k in
            for b in toPrime[k].buffers { feed(toPrime[k], b) }
        }
        for t in toPrime {
            if let e = t.error {
                for t in tracks { try? t.queue.dispose(immediately: true) }
                for r in takes { r.close() }
                throw SessionError(.playback, file: t.spec.file.path, "track '\(t.spec.name)': \(e)")
            }
        }
        startFeeders(tracks: toPrime.count)
    }

    static func describe(_ t: SessionTime) -> String {
        switch t {
        case .frames(let f): return "frames:\(f)"
        case .seconds(let s): return formatClock(s)
        }
    }

    /// `m:ss.sss` (or `h:mm:ss.sss`).
    static func formatClock(_ seconds: Double) -> String {
        let ms = Int64((seconds * 1000).rounded())
        let h = ms / 3_600_000, m = ms / 60000 % 60, s = ms / 1000 % 60, f = ms % 1000
        let tail = String(format: "%02d.%03d", Int(s), Int(f))
        return h > 0 ? String(format: "%d:%02d:", Int(h), Int(m)) + tail : "\(m):" + tail
    }

    final class WeakBox: @unchecked Sendable {
        weak var player: SessionPlayer?
    }

    /// Refuses takes that together need more room than their disk has (each take checks its
    /// own too, in ``TakeRecorder/init(take:session:engine:inputOffset:options:)``).
    static func checkRoom(for takes: [SessionTake], session: Session, deviceRate: Double) throws(SessionError) {
        var need: [UInt: (bytes: Int64, free: Int64, names: [String])] = [:]
        for take in takes {
            var fs = statvfs()
            guard statvfs(take.file.deletingLastPathComponent().path, &fs) == 0 else { continue }
            let bytes = max(0, session.deviceLength(of: take, deviceRate: deviceRate)) * Int64(take.channels * max(1, take.format.sample.bytesPerSample))
            var entry = need[fs.f_fsid] ?? (0, Int64(fs.f_bavail) * Int64(fs.f_frsize), [])
            entry.bytes += bytes
            entry.names.append(take.name)
            need[fs.f_fsid] = entry
        }
        for (_, e) in need where e.names.count > 1 && e.free < e.bytes + (1 << 20) {
            throw SessionError(.unwritableFile, file: session.url.path, "the takes \(e.names.joined(separator: ", ")) need \(e.bytes >> 20) MiB together; their disk has \(e.free >> 20) MiB free")
        }
    }

    deinit { close() }

    // MARK: - Control

    /// Schedules every track against one session start frame: `engine.nearestStartTime(time)`
    /// (nil: as soon as possible). Each track's queue starts on its own exact device frame,
    /// session start + its start offset, with its first buffer at queue time 0.
    ///
    /// - Returns: the session start frame (device frames).
    /// - Throws: ``SessionError`` `.playback` when a queue cannot start.
    @discardableResult
    package func start(at time: AudioTimeStamp? = nil) throws(SessionError) -> Int64 {
        let s = Int64(engine.nearestStartTime(time).sampleTime)
        cond.lock()
        startFrame = s
        for t in tracks { t.scheduledStart = s + t.startOffset }
        cond.unlock()
        for t in tracks where t.source != nil {
            do {
                try t.queue.start(at: AudioTimeStamp(sampleTime: Double(s + t.startOffset)))
            } catch {
                stop()
                throw SessionError(.playback, file: t.spec.file.path, "track '\(t.spec.name)' cannot start: \(error.message)")
            }
        }
        for r in takes {
            do throws(SessionError) {
                try r.start(sessionStart: s)
            } catch {
                stop()
                throw error
            }
        }
        return s
    }

    /// Stops every track at once (the next render cycle) and finishes every take (everything
    /// captured so far written, the files closed valid). Buffers come back unplayed; the
    /// player is finished when this returns. Calling it again does nothing. Blocks while the
    /// takes' writers finish, and while a seek or a pause running on another thread finishes.
    package func stop() {
        defer { for r in takes { r.finish() } }
        beginExclusive()
        defer { endExclusive() }
        cond.lock()
        if stopping { cond.unlock(); return }
        stopping = true
        cond.unlock()
        for t in tracks { try? t.queue.stop(immediately: true) }
        let now = Int64(engine.deviceCurrentTime().sampleTime)
        cond.lock()
        stopFrame = now
        for t in tracks where !t.done { t.done = true }
        cond.broadcast()
        cond.unlock()
    }

    /// Stops the feeder thread and disposes of the queues. The engine is left open.
    package func close() {
        cond.lock()
        let wasQuit = quit
        quit = true
        stopping = true
        cond.broadcast()
        cond.unlock()
        if wasQuit { return }
        for _ in 0..<feederCount { feedersDone.wait() }
        for t in tracks { try? t.queue.dispose(immediately: true) }
        for r in takes { r.close() }
    }

    /// True once every track has played to its end and every take has all its frames (or the
    /// player was stopped).
    package var isFinished: Bool {
        cond.lock()
        let tracksDone = !seeking && tracks.allSatisfy(\.done)
        cond.unlock()
        return tracksDone && takes.allSatisfy(\.isFinished)
    }

    /// Waits until ``isFinished`` (at most `timeout` seconds; nil: forever). Returns
    /// ``isFinished``.
    @discardableResult
    package func waitUntilFinished(timeout: Double? = nil) -> Bool {
        let deadline = timeout.map { Date().addingTimeInterval($0) } ?? .distantFuture
        cond.lock()
        while seeking || !tracks.allSatisfy(\.done) {
            if !cond.wait(until: deadline) { break }
        }
        let tracksDone = !seeking && tracks.allSatisfy(\.done)
        cond.unlock()
        guard tracksDone else { return false }
        for r in takes {
            if !r.waitUntilFinished(timeout: max(0, deadline.timeIntervalSinceNow)) { return false }
        }
        return true
    }

    /// What became of each take so far (final once ``isFinished``).
    package func takeReports() -> [TakeRecorder.Report] { takes.map { $0.report() } }

    /// The session start frame (device frames), once ``start(at:)`` ran.
    package var sessionStartFrame: Int64? {
        cond.lock()
        defer { cond.unlock() }
        return startFrame
    }

    /// Offline rendering: waits until every track that is still being fed has audio enqueued
    /// up to device frame `frame` (exclusive), so that no buffer can be late in a cycle that
    /// ends there. Call before each render cycle.
    ///
    /// - Throws: ``SessionError`` `.playback` when the feeder makes no progress for `timeout`
    ///   seconds, or a track failed.
    package func waitUntilEnqueued(through frame: Int64, timeout: Double = 30) throws(SessionError) {
        cond.lock()
        defer { cond.unlock() }
        var deadline = Date().addingTimeInterval(timeout)
        while true {
            if let bad = tracks.first(where: { $0.error != nil }) {
                throw SessionError(.playback, file: bad.spec.file.path, "track '\(bad.spec.name)': \(bad.error!)")
            }
            // Paused (``pause()``): nothing plays, nothing to wait for.
            let waiting = tracks.first { !$0.fed && !$0.done && $0.scheduledStart + $0.enqueuedEnd < frame }
            guard waiting != nil, pausedAt == nil else { return }
            if !cond.wait(until: deadline) {
                throw SessionError(.playback, file: session.url.path, "the feeder made no progress for \(Int(timeout)) s (render stalled at frame \(frame))")
            }
            deadline = Date().addingTimeInterval(timeout)
        }
    }

    /// What became of each track so far (final once ``isFinished``).
    package func report() -> [TrackReport] {
        let stats = tracks.map { ($0.queue.startDeviceFrame, $0.queue.lateFrames) }
        let now = Int64(engine.deviceCurrentTime().sampleTime)
        cond.lock()
        defer { cond.unlock() }
        return zip(tracks, stats).map { t, s in
            let damagedPackets = t.damagedPackets
            let (actual, late) = s
            var played: Int64
            if t.completed {
                played = t.enqueuedEnd
            } else if let a = actual, !t.restarted || a >= t.scheduledStart, pausedAt == nil {
                played = min(max(0, (stopFrame ?? now) - a), t.enqueuedEnd)
            } else {
                played = 0
            }
            played = max(0, played + t.playedBefore - late)
            return TrackReport(
                name: t.spec.name, scheduledStartFrame: t.scheduledStart, actualStartFrame: actual,
                framesPlayed: played, lateFrames: late, completed: t.completed, damagedPackets: damagedPackets,
                error: t.error)
        }
    }

    /// Late frames of every track so far.
    package var lateFrames: Int64 { tracks.reduce(0) { $0 + $1.queue.lateFrames } }

    /// The tracks' names, in session order.
    package var trackNames: [String] { tracks.map(\.spec.name) }

    // MARK: - Listeners

    /// isRunning listener (events thread).
    func runningChanged(track: Int, running: Bool, error: AudioQueueError?) {
        cond.lock()
        let t = tracks[track]
        if seeking {
            // A seek or a pause stopped the queue: not the track's end.
        } else if running {
            t.wasRunning = true
        } else if t.wasRunning || error != nil {
            if let error { t.error = t.error ?? error.message }
            if !t.done {
                t.done = true
                t.completed = t.fed && error == nil && !stopping
            }
        }
        cond.broadcast()
        cond.unlock()
    }
}
