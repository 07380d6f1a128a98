import AQEngine
import Foundation

/// Starting a session at an instant of a system clock (`aqsync play --start-at`, issue 26).
extension SessionPlayer {
    /// Schedules every track against the session start frame of `instant`: session frame 0
    /// (or the `from` position) plays on the device frame of the instant, each track on its
    /// own frame after it. The frame is the median of the instant's device time through the
    /// anchors of `cycles` successive device cycles (at most `window` seconds of them): one
    /// cycle's anchor carries the noise of its host-time conversion (the JACK device's
    /// CLOCK_MONOTONIC − RAW window, up to tens of µs when the VM was preempted in it), the
    /// median of several does not. At each anchor the rate is judged
    /// (``BaselineRate/judge(latest:references:minimumSeconds:)``): measured from `rateSince`
    /// when sure, the cycle's own without a baseline, and never one further than
    /// ``DeviceTimebase/plausibleRateDeviation`` off nominal or one whose references disagree
    /// with the latest cycle: an anchor whose rate is such is left out, and when that is half
    /// of them or more the start is refused (the server's clock is being corrected; nothing
    /// can place the instant within a frame). An instant the device can no longer
    /// honour is refused too: nothing starts. Call it shortly before the instant. Any control
    /// thread; blocks for the sampling (`window` at most).
    ///
    /// - Parameter rateSince: earlier timebases of the same discontinuity epoch
    ///   (``timebases(cycles:window:)``), for a rate measured over a long baseline (at least
    ///   `minimumBaseline` seconds): each sample is the median of the predictions through each
    ///   of them that gives a sure rate.
    /// - Returns: the session start frame (device frames), the spread (largest − smallest) of
    ///   the samples, in frames, and the rate of the last sample used.
    /// - Throws: ``SessionError`` `.playback`: no cycle yet, an implausible rate (the message
    ///   says which and over how long), the instant is too close or past (the message says by
    ///   how much), or a queue cannot start.
    @discardableResult
    package func start(
        atInstant instant: SystemInstant, offset: SystemClockOffset? = nil, rateSince earlier: [DeviceTimebase] = [],
        minimumBaseline: Double = 0.1, cycles: Int = 9, window: Double = 0.08
    ) throws(SessionError) -> (frame: Int64, spread: Double, rate: BaselineRate) {
        let offset = offset ?? SystemClockOffset.measure(instant.clock)
        let host = instant.hostTime(offset: offset)
        var anchors: [DeviceTimebase] = []
        let deadline = Date().addingTimeInterval(window)
        while anchors.count < max(1, cycles) {
            if let tb = engine.timebase, tb.anchorFrame != anchors.last?.anchorFrame { anchors.append(tb) }
            if Date() >= deadline {
                if !anchors.isEmpty { break }
                // No cycle in the whole window (the server stopped calling, or went away):
                // refused rather than waited for without end.
                throw SessionError(.playback, file: session.url.path, "cannot start at the instant: the device ran no cycle in the \(String(format: "%.3f", window)) s before it (no timeline to place \(instant) on)")
            }
            usleep(1000)
        }
        let judged = BaselineRate.deviceTime(ofHostTime: host, anchors: anchors, references: earlier, minimumSeconds: minimumBaseline)
        guard let (median, spread, rate) = judged.time else {
            throw SessionError(.playback, file: session.url.path, "cannot start at the instant: \(judged.refusal); the instant's frame cannot be known to within a frame by that rate or the nominal one, so nothing started")
        }
        let frame = Int64(median.rounded())
        let earliest = Int64(engine.nearestStartTime().sampleTime)
        if frame < earliest {
            let ms = Double(earliest - frame) / engine.device.sampleRate * 1000
            throw SessionError(.playback, file: session.url.path, "cannot start at the instant: \(instant) is device frame \(frame), \(earliest - frame) frames (\(String(format: "%.3f", ms)) ms) before the earliest frame a start can still honour (\(earliest))")
        }
        let s = try start(at: AudioTimeStamp(sampleTime: Double(frame)))
        return (s, spread, rate)
    }

    /// The engine's timebase at each of `cycles` successive device cycles (at most `window`
    /// seconds of them; the latest at least, when the device has run a cycle): references for ``start(atInstant:offset:rateSince:minimumBaseline:cycles:window:)``.
    /// Any control thread; blocks for the sampling.
    package func timebases(cycles: Int = 9, window: Double = 0.08) -> [DeviceTimebase] {
        var out: [DeviceTimebase] = []
        let deadline = Date().addingTimeInterval(window)
        while out.count < cycles {
            if let tb = engine.timebase, tb.anchorFrame != out.last?.anchorFrame { out.append(tb) }
            // The latest cycle is always looked at once, even with a window of 0.
            if out.count >= cycles || Date() >= deadline { break }
            usleep(1000)
        }
        return out
    }
}
