import AQConvert
import AQCore
import AQTypes
import Foundation

/// Properties by ID, as the C API's AudioQueueGetPropertySize, AudioQueueGetProperty and
/// AudioQueueSetProperty reach them; the typed properties are in AudioQueueProperties.swift.
extension AudioQueue {
    // MARK: - Properties by ID (AudioQueueGetPropertySize, AudioQueueGetProperty, AudioQueueSetProperty)

    /// The size in bytes of a property's value (`AudioQueueGetPropertySize`), as the reference
    /// lays it out: `IsRunning`, `NumberChannels`, `EnableLevelMetering` a `UInt32` (4);
    /// `SampleRate` a `Float64` (8); `MagicCookie` its bytes; `ChannelLayout` the C
    /// `AudioChannelLayout` (12 + 20 per channel description); the level meters 8 per channel
    /// (two `Float32`); `CurrentDevice` its UTF-8 bytes (on Linux there is no `CFStringRef`).
    /// Any thread but the render thread; does not block.
    /// - Throws: `.invalidProperty` for an unknown ID, `.invalidQueue` for a stale handle.
    public func propertySize(_ rawID: UInt32) throws(AudioQueueError) -> Int {
        try property(rawID).count
    }

    /// A property's value as bytes (`AudioQueueGetProperty`), laid out as
    /// ``propertySize(_:)`` says (integers and floats little-endian). The level meters are
    /// refused with `.invalidProperty` while metering is off.
    /// Any thread but the render thread; does not block.
    public func property(_ rawID: UInt32) throws(AudioQueueError) -> [UInt8] {
        guard let id = AudioQueuePropertyID(rawValue: rawID) else {
            throw AudioQueueError(.invalidProperty, "unknown property ID \(rawID)")
        }
        if locked({ disposed }) { throw AudioQueueError(.invalidQueue, "the queue was disposed of: the handle is stale") }
        func u32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        switch id {
        case .isRunning: return u32(isRunning ? 1 : 0)
        case .deviceSampleRate: return withUnsafeBytes(of: deviceSampleRate.bitPattern.littleEndian) { Array($0) }
        case .deviceNumberChannels: return u32(UInt32(deviceChannelCount))
        case .currentDevice: return Array(currentDevice.utf8)
        case .magicCookie: return magicCookie
        case .channelLayout: return channelLayout.bytes
        case .enableLevelMetering: return u32(isLevelMeteringEnabled ? 1 : 0)
        case .currentLevelMeter, .currentLevelMeterDB:
            let states = try id == .currentLevelMeter ? currentLevelMeter() : currentLevelMeterDB()
            return states.flatMap { u32($0.averagePower.bitPattern) + u32($0.peakPower.bitPattern) }
        case .streamDescription: return format.propertyBytes
        case .maximumOutputPacketSize: return u32(locked { format.maximumPacketBytes(framesPerPacket: maximumFramesPerPacket) })
        case .decodeBufferSizeFrames: return u32(UInt32(locked { decodeBufferFrames }))
        case .converterError: return u32(locked { codec.corruptPackets } > 0 ? audioCodecBadDataError : 0)
        case .enableTimePitch: return u32(locked { timePitch.enabled } ? 1 : 0)
        case .timePitchAlgorithm: return u32(locked { timePitch.algorithm.rawValue })
        case .timePitchBypass: return u32(locked { timePitch.bypassed } ? 1 : 0)
        case .channelAssignments: return AudioQueueChannelAssignment.bytes(channelAssignments.map(\.channelNumber))
        }
    }

    /// Sets a property from bytes (`AudioQueueSetProperty`): `MagicCookie`, `ChannelLayout`,
    /// `EnableLevelMetering` (a `UInt32`, 0 or not), `CurrentDevice` (UTF-8 bytes). The others
    /// are read-only (`.invalidProperty`); bytes of the wrong size are `.invalidPropertySize`.
    /// Any thread but the render thread; does not block.
    public func setProperty(_ rawID: UInt32, _ value: [UInt8]) throws(AudioQueueError) {
        guard let id = AudioQueuePropertyID(rawValue: rawID) else {
            throw AudioQueueError(.invalidProperty, "unknown property ID \(rawID)")
        }
        switch id {
        case .magicCookie:
            try setMagicCookie(value)
        case .channelLayout:
            guard let l = AudioChannelLayout(bytes: value) else {
                throw AudioQueueError(.invalidPropertySize, "\(value.count) bytes are not an AudioChannelLayout")
            }
            try setChannelLayout(l)
        case .enableLevelMetering:
            guard value.count == 4 else { throw AudioQueueError(.invalidPropertySize, "EnableLevelMetering is a UInt32 (4 bytes)") }
            try setLevelMeteringEnabled(value.contains { $0 != 0 })
        case .currentDevice:
            guard let uid = String(bytes: value, encoding: .utf8) else {
                throw AudioQueueError(.invalidPropertySize, "CurrentDevice is a UTF-8 device identifier")
            }
            try setCurrentDevice(uid)
        case .decodeBufferSizeFrames:
            guard value.count == 4 else { throw AudioQueueError(.invalidPropertySize, "DecodeBufferSizeFrames is a UInt32 (4 bytes)") }
            let frames = Int(value.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }.littleEndian)
            try setDecodeBufferSizeFrames(frames)
        case .enableTimePitch, .timePitchAlgorithm, .timePitchBypass:
            guard value.count == 4 else { throw AudioQueueError(.invalidPropertySize, "\(id) is a UInt32 (4 bytes)") }
            let v = value.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }.littleEndian
            switch id {
            case .enableTimePitch: try setTimePitchEnabled(v != 0)
            case .timePitchAlgorithm:
                guard let a = AudioQueueTimePitchAlgorithm(rawValue: v) else {
                    throw AudioQueueError(.invalidPropertyValue, "\(v) is not a kAudioQueueTimePitchAlgorithm_ value")
                }
                try setTimePitchAlgorithm(a)
            default: try setTimePitchBypassed(v != 0)
            }
        case .channelAssignments:
            try setChannelAssignments(AudioQueueChannelAssignment.from(bytes: value, uid: hub.device.uid))
        case .isRunning, .deviceSampleRate, .deviceNumberChannels, .currentLevelMeter, .currentLevelMeterDB,
             .streamDescription, .maximumOutputPacketSize, .converterError:
            throw AudioQueueError(.invalidProperty, "\(id) is read-only")
        }
    }

    /// Sets `kAudioQueueProperty_DecodeBufferSizeFrames`: the frames of decode room a compressed
    /// queue keeps allocated (the scratch every enqueued buffer is decoded into, at the queue's
    /// rate), allocated now, on this thread, so that enqueueing buffers of up to that many frames
    /// allocates nothing. A larger buffer than that is still decoded (the room grows). A linear
    /// PCM queue decodes nothing: the value is kept and read back. Any thread but the render
    /// thread; does not block.
    /// - Throws: `.invalidPropertyValue` outside 1…2^20 frames; `.invalidQueue`, `.disposalPending`.
    public func setDecodeBufferSizeFrames(_ frames: Int) throws(AudioQueueError) {
        guard frames >= 1, frames <= 1 << 20 else {
            throw AudioQueueError(.invalidPropertyValue, "DecodeBufferSizeFrames \(frames) is outside 1…\(1 << 20)")
        }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        decodeBufferFrames = frames
        if isCompressed { _ = codec.scratch(channels: channels, frames: frames) }
    }

    /// Sets `kAudioQueueProperty_CurrentDevice`. An engine renders on one device, so the only
    /// device a queue can be set to is its engine's (its listeners then run on the calling
    /// thread); another device's identifier is refused with `.invalidDevice` (make an engine on
    /// that device and a queue on it). Any thread but the render thread; does not block.
    public func setCurrentDevice(_ uid: String) throws(AudioQueueError) {
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            guard uid == hub.device.uid else {
                throw AudioQueueError(.invalidDevice, "device \(uid) is not this engine's (\(hub.device.uid)); an engine renders on one device")
            }
        }
        notify(.currentDevice)
    }
}
