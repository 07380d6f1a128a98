import AQCore
import AQTypes

/// The engine's device time: its timebase, latencies, current and nearest start time, time
/// translation, discontinuities and counters (`AudioQueueDevice…` of Audio Queue Services).
extension AudioQueueEngine {
    /// The device's timebase at its latest cycle, or nil before the first cycle. Any thread
    /// but the render thread; does not block.
    public var timebase: DeviceTimebase? { shared.timebase }

    /// The device's port latencies now (``AudioDevice/latency``): `playback`, the frames between
    /// a frame the engine renders and the performer hearing it; `capture`, the frames between a
    /// sound entering the physical input and the engine's inputs, which input queues' time
    /// stamps already subtract. To place a take where it was played against what the performer
    /// heard, subtract `playback` from its time stamps too (docs/recording.md, "Latency").
    /// May change while the device runs (JACK recomputes it when connections change). Any
    /// thread but the render thread; does not block.
    public var latency: DeviceLatency { device.latency }

    /// The capture latency of device input `channel` (0-based) now, in device frames
    /// (``AudioDevice/captureLatency(ofInput:)``; on JACK, that of the port `in_(channel+1)`):
    /// 0 for a channel the device does not have. An input queue recording inputs
    /// `0 ..< n` subtracts the largest of theirs (``AudioInputQueue/captureLatency``). Any
    /// thread but the render thread; does not block.
    public func captureLatency(ofInput channel: Int) -> Int { device.captureLatency(ofInput: channel) }

    /// The playback latency of device output `channel` (0-based) now, in device frames
    /// (``AudioDevice/playbackLatency(ofOutput:)``; on JACK, that of the port `out_(channel+1)`):
    /// 0 for a channel the device does not have. Any thread but the render thread; does not
    /// block.
    public func playbackLatency(ofOutput channel: Int) -> Int { device.playbackLatency(ofOutput: channel) }

    /// The largest capture latency of device inputs `channels` (0 for none): what a recording
    /// of those inputs on one time axis is compensated by (docs/recording.md, "Latency"). Any
    /// thread but the render thread; does not block.
    public func captureLatency(ofInputs channels: some Sequence<Int>) -> Int { device.captureLatency(ofInputs: channels) }

    /// The largest playback latency of device outputs `channels` (0 for none): what a listener
    /// to those outputs is taken to hear them late by (docs/recording.md, "Latency"). Any
    /// thread but the render thread; does not block.
    public func playbackLatency(ofOutputs channels: some Sequence<Int>) -> Int { device.playbackLatency(ofOutputs: channels) }

    /// The device's current time (`AudioQueueDeviceGetCurrentTime`): the host time is always
    /// valid; the sample time once the device has rendered a cycle. For the hand-driven device,
    /// "now" is the first frame of the next cycle. Any thread but the render thread; does not
    /// block.
    public func deviceCurrentTime() -> AudioTimeStamp { shared.deviceCurrentTime() }

    /// The earliest device time a start or buffer scheduled now can still honour, and never
    /// earlier than `requested` (`AudioQueueDeviceGetNearestStartTime`): the first frame of
    /// the next cycle plus the device's scheduling lead, and never earlier than the current
    /// time (``deviceCurrentTime()``, which runs on with the host clock while a cycle is
    /// late). The sample time is a whole frame. Any thread but the render thread; does not
    /// block.
    public func nearestStartTime(_ requested: AudioTimeStamp? = nil) -> AudioTimeStamp {
        let tb = timebase
        var earliest: Int64 = 0
        if let a = core.pointee.clock.anchor() {
            earliest = a.frame + Int64(a.frames) + device.schedulingLead
            if device.handDriven == nil, let tb {
                let wall = tb.sampleTime(forHostTime: HostClock.now())
                if !device.isRunning {
                    // The device is away (its server is coming back): its next cycle is where
                    // the wall clock will be by then, not after the last cycle it rendered.
                    earliest = max(earliest, Int64(wall) + Int64(a.frames) + device.schedulingLead)
                } else {
                    // A late cycle (a loaded machine): never earlier than the current time
                    // `deviceCurrentTime()` reports, which runs on with the host clock.
                    earliest = max(earliest, Int64(wall.rounded(.up)))
                }
            }
        } else if let manual = device.handDriven {
            earliest = manual.currentFrame
        }
        var want = earliest
        if let r = requested {
            if r.flags.contains(.sampleTimeValid) {
                want = max(earliest, Int64(r.sampleTime.rounded(.up)))
            } else if r.flags.contains(.hostTimeValid), let tb {
                want = max(earliest, Int64(tb.sampleTime(forHostTime: r.hostTime).rounded(.up)))
            }
        }
        return tb?.timeStamp(forSampleTime: Double(want)) ?? AudioTimeStamp(sampleTime: Double(want))
    }

    /// Fills in the other half of a device time stamp: host time from sample time or the
    /// reverse (`AudioQueueDeviceTranslateTime`). Returns `time` unchanged before the first
    /// cycle. Any thread but the render thread; does not block.
    public func translateTime(_ time: AudioTimeStamp) -> AudioTimeStamp {
        timebase?.complete(time) ?? time
    }

    /// The current discontinuity epoch and its latest cause. Any thread; does not block.
    public var discontinuity: (epoch: UInt64, reason: DiscontinuityReason) { shared.discontinuity }

    /// Render-thread counters. Any thread; does not block.
    public var statistics: RenderStatistics { core.pointee.statistics }
}
