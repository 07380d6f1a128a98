import AQConvert
import AQCore
import AQTypes
import Foundation

extension AudioInputQueue {
    // MARK: - Properties by ID (AudioQueueGetPropertySize, AudioQueueGetProperty, AudioQueueSetProperty)

    /// The size in bytes of a recording queue's property (`AudioQueueGetPropertySize`), laid out
    /// as for output queues: `MagicCookie` its bytes (AAC: the `esds` body, ALAC: the 24-byte
    /// ALACSpecificConfig, linear PCM: 0), valid from creation; `IsRunning` and
    /// `EnableLevelMetering` a `UInt32`; the device's rate a `Float64` and its input channels a
    /// `UInt32`; `CurrentDevice` the device identifier's UTF-8 bytes; the level meters 8 per
    /// channel. Any thread but the render thread; does not block.
    /// - Throws: `.invalidProperty` for an unknown ID or the channel layout (recording queues
    ///   have none here), `.invalidQueue` for a stale handle.
    public func propertySize(_ rawID: UInt32) throws(AudioQueueError) -> Int {
        try property(rawID).count
    }

    /// A recording queue's property as bytes (`AudioQueueGetProperty`), laid out as
    /// ``propertySize(_:)`` says (integers and floats little-endian). The level meters are
    /// refused with `.invalidProperty` while metering is off. Any thread but the render thread;
    /// does not block.
    public func property(_ rawID: UInt32) throws(AudioQueueError) -> [UInt8] {
        guard let id = AudioQueuePropertyID(rawValue: rawID) else {
            throw AudioQueueError(.invalidProperty, "unknown property ID \(rawID)")
        }
        try locked { () throws(AudioQueueError) in try checkLive() }
        func u32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        switch id {
        case .isRunning: return u32(isRunning ? 1 : 0)
        case .magicCookie: return magicCookie
        case .enableLevelMetering: return u32(locked { meteringEnabled } ? 1 : 0)
        case .deviceSampleRate: return withUnsafeBytes(of: hub.device.sampleRate.bitPattern.littleEndian) { Array($0) }
        case .deviceNumberChannels: return u32(UInt32(hub.device.inputChannelCount))
        case .currentDevice: return Array(hub.device.uid.utf8)
        case .currentLevelMeter, .currentLevelMeterDB:
            func value(_ x: Float) -> Float { id == .currentLevelMeter ? x : (x > 0 ? 20 * log10(x) : -Float.infinity) }
            return try currentLevelMeter().flatMap { u32(value($0.averagePower).bitPattern) + u32(value($0.peakPower).bitPattern) }
        case .channelLayout:
            throw AudioQueueError(.invalidProperty, "recording queues have no channel layout here (channel c records device input c)")
        case .streamDescription: return format.propertyBytes
        case .maximumOutputPacketSize:
            return u32(encoder.map { UInt32(clamping: $0.maximumPacketSize) } ?? format.bytesPerPacket)
        case .converterError: return u32(0)
        case .decodeBufferSizeFrames:
            throw AudioQueueError(.invalidProperty, "a recording queue decodes nothing (DecodeBufferSizeFrames is for playback queues)")
        case .enableTimePitch, .timePitchAlgorithm, .timePitchBypass:
            throw AudioQueueError(.invalidProperty, "time/pitch is for playback queues")
        case .channelAssignments: return AudioQueueChannelAssignment.bytes(channelAssignments.map(\.channelNumber))
        }
    }

    /// Sets a recording queue's property from bytes (`AudioQueueSetProperty`):
    /// `EnableLevelMetering` (a `UInt32`, 0 or not), `ChannelAssignments` (a `UInt32` channel
    /// number per channel, on the queue's device) and `CurrentDevice` (UTF-8 bytes; only the
    /// engine's own device, as for output queues: `.invalidDevice` otherwise). The others are
    /// read-only (`.invalidProperty`); bytes of the wrong size are `.invalidPropertySize`. Any
    /// thread but the render thread; does not block.
    public func setProperty(_ rawID: UInt32, _ value: [UInt8]) throws(AudioQueueError) {
        guard let id = AudioQueuePropertyID(rawValue: rawID) else {
            throw AudioQueueError(.invalidProperty, "unknown property ID \(rawID)")
        }
        switch id {
        case .enableLevelMetering:
            guard value.count == 4 else { throw AudioQueueError(.invalidPropertySize, "EnableLevelMetering is a UInt32 (4 bytes)") }
            try setLevelMetering(value.contains { $0 != 0 })
        case .currentDevice:
            try locked { () throws(AudioQueueError) in try checkLive() }
            guard String(bytes: value, encoding: .utf8) == hub.device.uid else {
                throw AudioQueueError(.invalidDevice, "a recording queue stays on its engine's device (\(hub.device.uid))")
            }
        case .channelAssignments:
            try setChannelAssignments(AudioQueueChannelAssignment.from(bytes: value, uid: hub.device.uid))
        default:
            throw AudioQueueError(.invalidProperty, "\(id) cannot be set on a recording queue")
        }
    }

    // MARK: - Time

    /// A timeline for ``currentTime(timeline:)``'s discontinuity flag
    /// (`AudioQueueCreateTimeline`). Any thread; does not block.
    public func createTimeline() -> AudioQueueTimeline {
        AudioQueueTimeline(epoch: hub.discontinuity.epoch)
    }

    /// The queue's current time (`AudioQueueGetCurrentTime`), as for playback queues: frames at
    /// the queue's rate since its start (device frames since the start frame, not counting
    /// paused spans, × queue rate / device rate), not advancing while paused, 0 before a start
    /// frame is reached and while stopped; the host time is the device's now. `discontinuity`
    /// is true once for each new discontinuity of the device's time line since `timeline` last
    /// asked. A stale handle reads 0. Any thread; does not block.
    public func currentTime(timeline: AudioQueueTimeline? = nil) -> (time: AudioTimeStamp, discontinuity: Bool) {
        let (gone, st, origin, paused) = locked { (disposed, state, timeOrigin, pauseFrame) }
        if gone { return (AudioTimeStamp(sampleTime: 0), false) }
        let now = hub.deviceCurrentTime()
        var deviceFrames = 0.0
        switch st {
        case .running: deviceFrames = max(0, now.sampleTime - Double(origin))
        case .paused: deviceFrames = max(0, Double(paused - origin))
        case .stopped: deviceFrames = 0
        }
        var discontinuity = false
        if let timeline {
            let e = hub.discontinuity.epoch
            if e != timeline.epoch {
                timeline.epoch = e
                discontinuity = true
            }
        }
        let ts = AudioTimeStamp(
            sampleTime: deviceFrames / ratio, hostTime: now.hostTime, rateScalar: now.rateScalar,
            flags: now.flags.union(.sampleTimeValid))
        return (ts, discontinuity)
    }
}
