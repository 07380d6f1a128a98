import AQEngine
import Foundation

/// Starting a session at an instant of a system clock (`aqsync play --start-at`, issue 26).
extension SessionPlayer {
    /// Schedules every track against the session start frame of `instant`: session frame 0
    /// (or the `from` position) plays on the device frame of the instant, each track on its
    /// own frame after it. The frame is the median of the instant's device time through the
    /// anchors of `cycles` successive device cycles (at most `window` seconds of them;
    /// ``AudioQueueEngine/deviceTime(at:offset:rateSince:)``): one cycle's anchor carries the
    /// noise of its host-time conversion (the JACK device's CLOCK_MONOTONIC − RAW window, up to
    /// tens of µs when the VM was preempted in it), the median of several does not. An instant
    /// the device can no longer honour is refused: nothing starts. Call it shortly before the
    /// instant. Any control thread; blocks for the sampling (`window` at most).
    ///
    /// - Parameter rateSince: earlier timebases of the same discontinuity epoch
    ///   (``timebases(cycles:window:)``), for a rate measured over a long baseline: each sample
    ///   is the median of the predictions through each of them.
    /// - Returns: the session start frame (device frames) and the spread (largest − smallest)
    ///   of the samples, in frames.
    /// - Throws: ``SessionError`` `.playback`: no cycle yet, the instant is too close or past
    ///   (the message says by how much), or a queue cannot start.
    @discardableResult
    package func start(
        atInstant instant: SystemInstant, offset: SystemClockOffset? = nil, rateSince earlier: [DeviceTimebase] = [],
        cycles: Int = 9, window: Double = 0.08
    ) throws(SessionError) -> (frame: Int64, spread: Double) {
        let offset = offset ?? SystemClockOffset.measure(instant.clock)
        var samples: [Double] = []
        var lastAnchor: Int64?
        let deadline = Date().addingTimeInterval(window)
        while samples.count < max(1, cycles) {
            if let tb = engine.timebase, tb.anchorFrame != lastAnchor {
                lastAnchor = tb.anchorFrame
                var predictions = (earlier.isEmpty ? [nil] : earlier.map(Optional.some)).compactMap { r in
                    engine.deviceTime(at: instant, offset: offset, rateSince: r)?.sampleTime
                }
                predictions.sort()
                if !predictions.isEmpty { samples.append(predictions[predictions.count / 2]) }
            }
            if Date() >= deadline {
                if !samples.isEmpty { break }
                // No cycle in the whole window (the server stopped calling, or went away):
                // refused rather than waited for without end.
                throw SessionError(.playback, file: session.url.path, "cannot start at the instant: the device ran no cycle in the \(String(format: "%.3f", window)) s before it (no timeline to place \(instant) on)")
            }
            usleep(1000)
        }
        samples.sort()
        let median = samples[samples.count / 2]
        let frame = Int64(median.rounded())
        let earliest = Int64(engine.nearestStartTime().sampleTime)
        if frame < earliest {
            let ms = Double(earliest - frame) / engine.device.sampleRate * 1000
            throw SessionError(.playback, file: session.url.path, "cannot start at the instant: \(instant) is device frame \(frame), \(earliest - frame) frames (\(String(format: "%.3f", ms)) ms) before the earliest frame a start can still honour (\(earliest))")
        }
        let s = try start(at: AudioTimeStamp(sampleTime: Double(frame)))
        return (s, samples.last! - samples.first!)
    }

    /// The engine's timebase at each of `cycles` successive device cycles (at most `window`
    /// seconds of them): references for ``start(atInstant:offset:rateSince:cycles:window:)``.
    /// Any control thread; blocks for the sampling.
    package func timebases(cycles: Int = 9, window: Double = 0.08) -> [DeviceTimebase] {
        var out: [DeviceTimebase] = []
        let deadline = Date().addingTimeInterval(window)
        while out.count < cycles && Date() < deadline {
            if let tb = engine.timebase, tb.anchorFrame != out.last?.anchorFrame { out.append(tb) }
            usleep(1000)
        }
        return out
    }
}
