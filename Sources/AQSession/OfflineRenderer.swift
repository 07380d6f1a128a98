import AQEngine
import Foundation

/// Renders a session to a WAV file as fast as the machine goes: the same ``SessionPlayer``
/// as live playback, on an engine driven by a ``ManualDevice`` at the session's rate, cycle
/// after cycle on the calling thread. Before each cycle every track still being fed has audio
/// enqueued past the cycle's end, so no buffer is ever late: the output is what live playback
/// sends when nothing is late.
///
/// Thread safety: stateless; call from any control thread (the calling thread becomes the
/// render thread while ``render(session:to:format:sampleRate:cycleFrames:progress:)`` runs).
package enum OfflineRenderer {
    /// What a render did.
    ///
    /// Thread safety: a plain value; any thread.
    package struct Result: Sendable {
        /// Frames written (the session's length at `sampleRate`, less the `from` position, plus
        /// the loop's repeated passes).
        package var frames: Int64
        /// The rate rendered at.
        package var sampleRate: Double
        /// Output channels.
        package var channels: Int
        /// Seconds the render took.
        package var seconds: Double
        /// Samples clipped by an integer output format.
        package var clippedSamples: Int64
        /// Each track's report.
        package var tracks: [SessionPlayer.TrackReport]
        /// Seconds of audio rendered per second of time.
        package var speed: Double { seconds > 0 ? Double(frames) / sampleRate / seconds : 0 }
    }

    /// The rate a session renders at when none is asked for: its `sample_rate`, else 48000.
    package static func defaultSampleRate(_ session: Session) -> Double { session.sampleRate ?? 48000 }

    /// Renders `session` into the WAV file `url`.
    ///
    /// - Parameters:
    ///   - sampleRate: the device rate; nil for ``defaultSampleRate(_:)``.
    ///   - cycleFrames: frames per render cycle (the result does not depend on it).
    ///   - from: the session position the file starts at (its frame 0 is that session frame;
    ///     ``SessionPlayer/init(session:engine:options:from:)``).
    ///   - progress: called on the calling thread now and then with (frames done, total).
    /// - Throws: ``SessionError`` (`.output` for the file, `.playback` for the engine).
    @discardableResult
    package static func render(
        session: Session, to url: URL, format: WAVSampleFormat = .f32, sampleRate: Double? = nil,
        cycleFrames: Int = 1024, options: SessionPlayer.Options = SessionPlayer.Options(),
        from: SessionTime = .frames(0), progress: ((Int64, Int64) -> Void)? = nil
    ) throws(SessionError) -> Result {
        let began = Date()
        try refuseEndlessLoop(session)
        let rate = sampleRate ?? defaultSampleRate(session)
        var made: WAVWriter?
        // The file is made once the player is (a refused position leaves no file behind).
        let (done, tracks) = try renderSession(
            session, into: { () throws(SessionError) -> WAVWriter in
                let w = try WAVWriter(url: url, sampleRate: Int(rate.rounded()), channels: session.output.channels, format: format)
                made = w
                return w
            }, rate: rate, cycleFrames: cycleFrames, options: options, from: from, progress: progress)
        guard let writer = made else { throw SessionError(.output, file: url.path, "no output was made") }
        try writer.finish()
        return Result(
            frames: done, sampleRate: rate, channels: session.output.channels, seconds: Date().timeIntervalSince(began),
            clippedSamples: writer.clippedSamples, tracks: tracks)
    }

    /// A loop without a count never ends: refused.
    static func refuseEndlessLoop(_ session: Session) throws(SessionError) {
        if let loop = session.loop, loop.count == nil {
            throw SessionError(.invalidValue, file: session.url.path,
                "the loop has no count, so it never ends: a render needs one ([session] loop = { …, count = N })")
        }
    }

    /// Renders `session` from `from` to its end into the writer `makeWriter` returns once the
    /// player is made (its channels may be more than the session's: the rest are silent), on a
    /// ``ManualDevice`` at `rate`. Returns the frames written and the tracks' reports. The
    /// calling thread is the render thread while it runs.
    static func renderSession(
        _ session: Session, into makeWriter: () throws(SessionError) -> WAVWriter, rate: Double, cycleFrames: Int, options: SessionPlayer.Options,
        from: SessionTime, progress: ((Int64, Int64) -> Void)?
    ) throws(SessionError) -> (Int64, [SessionPlayer.TrackReport]) {
        let channels = session.output.channels
        let device = ManualDevice(sampleRate: rate, channels: channels, framesPerCycle: cycleFrames, uid: "offline")
        let engine: AudioQueueEngine
        do {
            engine = try AudioQueueEngine(device: device, capacities: SessionPlayer.engineCapacities(for: session, options: options))
        } catch {
            throw SessionError(.playback, file: session.url.path, "cannot make the offline engine: \(error.message)")
        }
        defer { engine.close() }
        let player = try SessionPlayer(session: session, engine: engine, options: options, from: from)
        defer { player.close() }
        let writer = try makeWriter()
        let total = player.lengthFrames
        try player.start(at: AudioTimeStamp(sampleTime: 0))
        let width = max(channels, writer.channels)
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: cycleFrames * width)
        storage.initialize(repeating: 0, count: cycleFrames * width)
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: width)
        defer { storage.deallocate(); planes.deallocate() }
        for c in 0..<width { planes[c] = storage + c * cycleFrames }
        var done: Int64 = 0
        var lastProgress = Date()
        while done < total {
            let n = Int(min(Int64(cycleFrames), total - done))
            try player.waitUntilEnqueued(through: done + Int64(n))
            device.render(frames: n, into: planes)
            try writer.write(planar: planes, frames: n)
            done += Int64(n)
            if let progress, Date().timeIntervalSince(lastProgress) > 0.25 {
                lastProgress = Date()
                progress(done, total)
            }
        }
        progress?(done, total)
        // Let the events thread hear the last buffers and stops (one more cycle for the stops).
        device.render(frames: cycleFrames, into: planes)
        _ = player.waitUntilFinished(timeout: 2)
        return (done, player.report())
    }
}
