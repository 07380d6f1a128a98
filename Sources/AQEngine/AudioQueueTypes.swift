import AQTypes
import Foundation

/// Identifiers of audio queue properties, with the reference's four-character codes.
public enum AudioQueuePropertyID: UInt32, Sendable, CaseIterable {
    /// `kAudioQueueProperty_IsRunning` ('aqrn'): Bool, read-only; listeners hear changes.
    case isRunning = 0x6171_726E
    /// `kAudioQueueDeviceProperty_SampleRate` ('aqsr'): Double, read-only.
    case deviceSampleRate = 0x6171_7372
    /// `kAudioQueueDeviceProperty_NumberChannels` ('aqdc'): Int, read-only.
    case deviceNumberChannels = 0x6171_6463
    /// `kAudioQueueProperty_CurrentDevice` ('aqcd'): String, read-only here (one device per engine).
    case currentDevice = 0x6171_6364
    /// `kAudioQueueProperty_MagicCookie` ('aqmc'): bytes (compressed formats).
    case magicCookie = 0x6171_6D63
    /// `kAudioQueueProperty_ChannelLayout` ('aqcl'): ``AudioChannelLayout``.
    case channelLayout = 0x6171_636C
    /// `kAudioQueueProperty_EnableLevelMetering` ('aqme'): Bool.
    case enableLevelMetering = 0x6171_6D65
    /// `kAudioQueueProperty_CurrentLevelMeter` ('aqmv'): [``AudioQueueLevelMeterState``], linear.
    case currentLevelMeter = 0x6171_6D76
    /// `kAudioQueueProperty_CurrentLevelMeterDB` ('aqmd'): [``AudioQueueLevelMeterState``], dB.
    case currentLevelMeterDB = 0x6171_6D64
    /// `kAudioQueueProperty_MaximumOutputPacketSize` ('xops'): UInt32, read-only: the largest
    /// packet of the queue's format (a recording queue: the largest its encoder writes).
    case maximumOutputPacketSize = 0x786F_7073
    /// `kAudioQueueProperty_StreamDescription` ('aqft'): the queue's format (the C
    /// `AudioStreamBasicDescription`, 40 bytes), read-only.
    case streamDescription = 0x6171_6674
    /// `kAudioQueueProperty_DecodeBufferSizeFrames` ('dcbf'): UInt32, playback queues: the
    /// frames of decode room kept allocated (1 to 2^20; default 4096).
    case decodeBufferSizeFrames = 0x6463_6266
    /// `kAudioQueueProperty_ConverterError` ('qcve'): UInt32, read-only: the latest decoding
    /// (playback) or encoding (recording) error, 0 if none.
    case converterError = 0x7163_7665
    /// `kAudioQueueProperty_EnableTimePitch` ('q_tp'): UInt32 0 or 1, playback queues: a
    /// time/pitch unit (SoundTouch) in the queue's chain. Set while stopped with no buffer
    /// enqueued (``AudioQueue/setTimePitchEnabled(_:)``).
    case enableTimePitch = 0x715F_7470
    /// `kAudioQueueProperty_TimePitchAlgorithm` ('qtpa'): UInt32, an
    /// ``AudioQueueTimePitchAlgorithm`` (default Spectral), playback queues.
    case timePitchAlgorithm = 0x7174_7061
    /// `kAudioQueueProperty_TimePitchBypass` ('qtpb'): UInt32, 1 = bypassed, playback queues.
    case timePitchBypass = 0x7174_7062
    /// `kAudioQueueProperty_ChannelAssignments` ('aqca'): [``AudioQueueChannelAssignment``],
    /// one per queue channel, read/write, both kinds of queue (``AudioQueue/setChannelAssignments(_:)``,
    /// ``AudioInputQueue/setChannelAssignments(_:)``). By ID, the bytes are one little-endian
    /// `UInt32` channel number (1-based; 0: not played) per queue channel, on the queue's device.
    case channelAssignments = 0x6171_6361
}

/// One element of `kAudioQueueProperty_ChannelAssignments`: the device channel a channel of the
/// queue plays on (playback) or records from (recording).
public struct AudioQueueChannelAssignment: Sendable, Equatable {
    /// The device's identifier (``AudioQueue/currentDevice``): the queue's own device is the only
    /// one it can be assigned to.
    public var deviceUID: String
    /// The device channel, counting from 1 (0 when read: the channel is not played).
    public var channelNumber: Int
    public init(deviceUID: String, channelNumber: Int) {
        self.deviceUID = deviceUID
        self.channelNumber = channelNumber
    }
}

extension AudioQueueChannelAssignment {
    /// Checks `assignments` for a queue of `channels` channels on device `uid` with `deviceChannels`
    /// channels and returns the 0-based device channels.
    /// - Throws: `.invalidPropertySize` unless there is one per channel; `.invalidDevice` for
    ///   another device's identifier; `.invalidPropertyValue` for a channel outside 1…`deviceChannels`.
    static func deviceChannels(
        _ assignments: [AudioQueueChannelAssignment], channels: Int, uid: String, deviceChannels: Int
    ) throws(AudioQueueError) -> [Int] {
        guard assignments.count == channels else {
            throw AudioQueueError(.invalidPropertySize, "\(assignments.count) channel assignments for a \(channels)-channel queue (one per channel)")
        }
        for a in assignments where a.deviceUID != uid {
            throw AudioQueueError(.invalidDevice, "device \(a.deviceUID) is not the queue's (\(uid))")
        }
        for a in assignments where a.channelNumber < 1 || a.channelNumber > deviceChannels {
            throw AudioQueueError(.invalidPropertyValue, "device channel \(a.channelNumber) is outside 1…\(deviceChannels)")
        }
        return assignments.map { $0.channelNumber - 1 }
    }

    /// The property's bytes by ID: one little-endian `UInt32` per channel.
    static func bytes(_ channelNumbers: [Int]) -> [UInt8] {
        channelNumbers.flatMap { n in withUnsafeBytes(of: UInt32(clamping: n).littleEndian) { Array($0) } }
    }

    /// Assignments on device `uid` from the property's bytes by ID.
    /// - Throws: `.invalidPropertySize` unless the bytes are whole `UInt32`s.
    static func from(bytes: [UInt8], uid: String) throws(AudioQueueError) -> [AudioQueueChannelAssignment] {
        guard bytes.count % 4 == 0 else {
            throw AudioQueueError(.invalidPropertySize, "ChannelAssignments by ID is one UInt32 per channel")
        }
        return stride(from: 0, to: bytes.count, by: 4).map { i in
            let v = bytes[i..<i + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }.littleEndian
            return AudioQueueChannelAssignment(deviceUID: uid, channelNumber: Int(v))
        }
    }
}

/// `kAudioCodecBadDataError` ('bada'): what ``AudioQueuePropertyID/converterError`` reads once
/// a packet could not be decoded (it played as silence of its length).
public let audioCodecBadDataError: UInt32 = 0x6261_6461

extension AudioStreamBasicDescription {
    /// The C `AudioStreamBasicDescription`'s 40 bytes (little-endian; `mReserved` 0), as
    /// `kAudioQueueProperty_StreamDescription` reads.
    public var propertyBytes: [UInt8] {
        var out = withUnsafeBytes(of: sampleRate.bitPattern.littleEndian) { Array($0) }
        for v in [formatID.rawValue, formatFlags.rawValue, bytesPerPacket, framesPerPacket, bytesPerFrame, channelsPerFrame, bitsPerChannel, 0] {
            out += withUnsafeBytes(of: v.littleEndian) { Array($0) }
        }
        return out
    }

    /// The largest packet of this format in bytes: `bytesPerPacket` when constant; else AAC's
    /// 6144 bits a channel, MP3's 1441 bytes (layer III at its highest rate and padding), and
    /// for the other codecs a bound no packet exceeds (its most frames of 32-bit samples, plus
    /// 64 bytes of headers).
    func maximumPacketBytes(framesPerPacket most: Int) -> UInt32 {
        if bytesPerPacket > 0 { return bytesPerPacket }
        let channels = max(Int(channelsPerFrame), 1)
        switch formatID {
        case AudioFormatID.mpeg4AAC, AudioFormatID.mpeg4AAC_HE, AudioFormatID.mpeg4AAC_HE_V2: return UInt32(768 * channels)
        case AudioFormatID.mpegLayer3: return 1441
        case AudioFormatID.mpegLayer2: return 1729
        case AudioFormatID.mpegLayer1: return 772
        default: return UInt32(clamping: max(most, 1) * channels * 4 + 64)
        }
    }
}

/// Audio queue parameters (`AudioQueueParameterID`).
public enum AudioQueueParameterID: UInt32, Sendable {
    /// `kAudioQueueParam_Volume`: linear gain, 0 to 1 (default 1).
    case volume = 1
    /// `kAudioQueueParam_PlayRate`: 0.5 to 2 (default 1), with time/pitch enabled: the speed
    /// (``AudioQueue/setParameter(_:_:)`` says when it applies).
    case playRate = 2
    /// `kAudioQueueParam_Pitch`: −2400 to 2400 cents (default 0), with time/pitch enabled and
    /// the Spectral algorithm.
    case pitch = 3
    /// `kAudioQueueParam_VolumeRampTime`: seconds over which later volume changes of a running
    /// queue ramp, 0 to 3600 (default 0: the engine's ``AudioQueueEngine/volumeRampSeconds``).
    case volumeRampTime = 4
    /// `kAudioQueueParam_Pan`: −1 (hard left) to 1 (hard right), default 0; the law: ``PanLaw``.
    case pan = 13
}

/// A parameter value that takes effect when a buffer starts (`AudioQueueParameterEvent`).
public struct AudioQueueParameterEvent: Sendable, Equatable {
    public var parameter: UInt32
    public var value: Float
    public init(_ parameter: AudioQueueParameterID, _ value: Float) {
        self.parameter = parameter.rawValue
        self.value = value
    }
    /// An event with a raw parameter ID (unknown IDs are refused at enqueue).
    public init(rawParameter: UInt32, value: Float) {
        self.parameter = rawParameter
        self.value = value
    }
}

/// One channel's level (`AudioQueueLevelMeterState`): linear 0…1, or dB.
public struct AudioQueueLevelMeterState: Sendable, Equatable {
    /// RMS over the latest render cycle.
    public var averagePower: Float
    public var peakPower: Float
}

/// A timeline object (`AudioQueueTimelineRef`): remembers the discontinuity epoch it last saw.
///
/// Thread safety: use one timeline from one thread at a time.
public final class AudioQueueTimeline: @unchecked Sendable {
    var epoch: UInt64
    init(epoch: UInt64) { self.epoch = epoch }
}
