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
}

/// Audio queue parameters (`AudioQueueParameterID`).
public enum AudioQueueParameterID: UInt32, Sendable {
    /// `kAudioQueueParam_Volume`: linear gain, 0 to 1 (default 1).
    case volume = 1
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
