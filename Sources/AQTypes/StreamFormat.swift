/// The audio data format identifiers (`mFormatID` of an AudioStreamBasicDescription).
public enum AudioFormatID {
    /// Linear PCM, `'lpcm'`.
    public static let linearPCM: FourCharCode = "lpcm"
    /// µ-law 2:1, `'ulaw'`.
    public static let uLaw: FourCharCode = "ulaw"
    /// A-law 2:1, `'alaw'`.
    public static let aLaw: FourCharCode = "alaw"
    /// MPEG-1/2 Layer 1, `'.mp1'`.
    public static let mpegLayer1: FourCharCode = ".mp1"
    /// MPEG-1/2 Layer 2, `'.mp2'`.
    public static let mpegLayer2: FourCharCode = ".mp2"
    /// MPEG-1/2 Layer 3, `'.mp3'`.
    public static let mpegLayer3: FourCharCode = ".mp3"
    /// MPEG-4 AAC, `'aac '`.
    public static let mpeg4AAC: FourCharCode = "aac "
    /// MPEG-4 HE-AAC (AAC LC core + SBR), `'aach'`: 2048 frames a packet at the full rate.
    public static let mpeg4AAC_HE: FourCharCode = "aach"
    /// MPEG-4 HE-AAC v2 (AAC LC core + SBR + parametric stereo), `'aacp'`: 2048 frames a
    /// packet at the full rate, two channels from a mono core.
    public static let mpeg4AAC_HE_V2: FourCharCode = "aacp"
    /// Apple Lossless, `'alac'`.
    public static let appleLossless: FourCharCode = "alac"
    /// Apple IMA4 (IMA ADPCM as QuickTime packs it), `'ima4'`: packets of 64 frames, one
    /// 34-byte block per channel (2-byte header, 32 bytes of 4-bit samples), so
    /// `bytesPerPacket` is 34 × channels; `bytesPerFrame` and `bitsPerChannel` are 0.
    public static let appleIMA4: FourCharCode = "ima4"
}

/// Format flags (`mFormatFlags`), with Core Audio's bit values.
public struct AudioFormatFlags: OptionSet, Hashable, Sendable, BitwiseCopyable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `kAudioFormatFlagIsFloat`: samples are IEEE floating point.
    public static let isFloat = AudioFormatFlags(rawValue: 1 << 0)
    /// `kAudioFormatFlagIsBigEndian`: multi-byte samples are big-endian.
    public static let isBigEndian = AudioFormatFlags(rawValue: 1 << 1)
    /// `kAudioFormatFlagIsSignedInteger`: integer samples are signed.
    public static let isSignedInteger = AudioFormatFlags(rawValue: 1 << 2)
    /// `kAudioFormatFlagIsPacked`: samples fill their bytes (no padding bits).
    public static let isPacked = AudioFormatFlags(rawValue: 1 << 3)
    /// `kAudioFormatFlagIsAlignedHigh`: unpacked samples sit in the high bits.
    public static let isAlignedHigh = AudioFormatFlags(rawValue: 1 << 4)
    /// `kAudioFormatFlagIsNonInterleaved`: one buffer per channel.
    public static let isNonInterleaved = AudioFormatFlags(rawValue: 1 << 5)
}

/// The description of a stream of audio (Core Audio's `AudioStreamBasicDescription`).
///
/// For linear PCM a packet is one frame; for compressed formats `bytesPerPacket` is 0 when
/// packets vary in size and `bitsPerChannel` is 0.
/// Thread safety: a plain value; use from any thread.
public struct AudioStreamBasicDescription: Hashable, Sendable, BitwiseCopyable {
    /// Frames per second of the stream.
    public var sampleRate: Double
    /// What the data is (`lpcm`, `ulaw`, `.mp3`, ...). See ``AudioFormatID``.
    public var formatID: FourCharCode
    public var formatFlags: AudioFormatFlags
    /// Bytes in one packet; 0 for variable-size packets.
    public var bytesPerPacket: UInt32
    /// Frames in one packet; 0 when packets hold a variable number of frames.
    public var framesPerPacket: UInt32
    /// Bytes in one frame (all channels); 0 for compressed formats.
    public var bytesPerFrame: UInt32
    public var channelsPerFrame: UInt32
    /// Bits of one sample of one channel; 0 for compressed formats.
    public var bitsPerChannel: UInt32

    public init(
        sampleRate: Double, formatID: FourCharCode, formatFlags: AudioFormatFlags,
        bytesPerPacket: UInt32, framesPerPacket: UInt32, bytesPerFrame: UInt32,
        channelsPerFrame: UInt32, bitsPerChannel: UInt32
    ) {
        self.sampleRate = sampleRate
        self.formatID = formatID
        self.formatFlags = formatFlags
        self.bytesPerPacket = bytesPerPacket
        self.framesPerPacket = framesPerPacket
        self.bytesPerFrame = bytesPerFrame
        self.channelsPerFrame = channelsPerFrame
        self.bitsPerChannel = bitsPerChannel
    }

    /// Interleaved linear PCM with packed samples.
    ///
    /// - Parameters:
    ///   - bits: 8, 16, 24, 32 for integers; 32 or 64 for floats.
    ///   - isFloat: IEEE floating point samples.
    ///   - bigEndian: byte order of multi-byte samples.
    ///   - signed: signed integer samples (ignored for floats; WAVE's 8-bit PCM is unsigned).
    public static func linearPCM(
        sampleRate: Double, channels: UInt32, bits: UInt32, isFloat: Bool = false,
        bigEndian: Bool = false, signed: Bool = true
    ) -> AudioStreamBasicDescription {
        var flags: AudioFormatFlags = [.isPacked]
        if isFloat { flags.insert(.isFloat) } else if signed { flags.insert(.isSignedInteger) }
        if bigEndian && bits > 8 { flags.insert(.isBigEndian) }
        let bytesPerFrame = (bits + 7) / 8 * channels
        return AudioStreamBasicDescription(
            sampleRate: sampleRate, formatID: AudioFormatID.linearPCM, formatFlags: flags,
            bytesPerPacket: bytesPerFrame, framesPerPacket: 1, bytesPerFrame: bytesPerFrame,
            channelsPerFrame: channels, bitsPerChannel: bits)
    }

    /// Apple IMA4 as Core Audio describes it: `'ima4'`, no flags, 34 × `channels` bytes and 64
    /// frames a packet, `bytesPerFrame` and `bitsPerChannel` 0. Pure; any thread.
    public static func appleIMA4(sampleRate: Double, channels: UInt32) -> AudioStreamBasicDescription {
        AudioStreamBasicDescription(
            sampleRate: sampleRate, formatID: AudioFormatID.appleIMA4, formatFlags: [],
            bytesPerPacket: 34 * channels, framesPerPacket: 64, bytesPerFrame: 0,
            channelsPerFrame: channels, bitsPerChannel: 0)
    }

    /// True for `lpcm`.
    public var isLinearPCM: Bool { formatID == AudioFormatID.linearPCM }
}

/// Where one packet lies in a buffer of variable-size packets
/// (Core Audio's `AudioStreamPacketDescription`).
public struct AudioStreamPacketDescription: Hashable, Sendable, BitwiseCopyable {
    /// Byte offset of the packet from the start of the buffer.
    public var startOffset: Int64
    /// Frames in the packet when the format's `framesPerPacket` is 0; otherwise 0.
    public var variableFramesInPacket: UInt32
    /// Bytes in the packet.
    public var dataByteSize: UInt32
    public init(startOffset: Int64, variableFramesInPacket: UInt32, dataByteSize: UInt32) {
        self.startOffset = startOffset
        self.variableFramesInPacket = variableFramesInPacket
        self.dataByteSize = dataByteSize
    }
}
