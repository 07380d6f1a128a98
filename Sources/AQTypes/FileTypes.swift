/// Audio file type identifiers (Core Audio's `AudioFileTypeID`), as four-char codes.
///
/// Thread safety: constants; use from any thread.
public enum AudioFileTypeID {
    /// RIFF WAVE, `'WAVE'`.
    public static let wave: FourCharCode = "WAVE"
    /// Audio Interchange File Format, `'AIFF'`.
    public static let aiff: FourCharCode = "AIFF"
    /// AIFF-C (compressed or little-endian AIFF), `'AIFC'`.
    public static let aifc: FourCharCode = "AIFC"
    /// Core Audio Format, `'caff'`.
    public static let caf: FourCharCode = "caff"
    /// NeXT/Sun `.au`/`.snd`, `'NeXT'`.
    public static let next: FourCharCode = "NeXT"
    /// MPEG-1/2 Layer 1 elementary stream, `'MPG1'`.
    public static let mp1: FourCharCode = "MPG1"
    /// MPEG-1/2 Layer 2 elementary stream, `'MPG2'`.
    public static let mp2: FourCharCode = "MPG2"
    /// MPEG-1/2 Layer 3 elementary stream, `'MPG3'`.
    public static let mp3: FourCharCode = "MPG3"
    /// AAC in ADTS framing, `'adts'`.
    public static let aacADTS: FourCharCode = "adts"
}

/// Channel layout tags (`AudioChannelLayoutTag`), with Core Audio's values.
///
/// Thread safety: constants; use from any thread.
public enum AudioChannelLayoutTag {
    /// The layout is given by the channel descriptions.
    public static let useChannelDescriptions: UInt32 = 0
    /// The layout is given by the channel bitmap (WAVE's `dwChannelMask` bits).
    public static let useChannelBitmap: UInt32 = 1 << 16
    /// One channel.
    public static let mono: UInt32 = (100 << 16) | 1
    /// Two channels, left then right.
    public static let stereo: UInt32 = (101 << 16) | 2
    /// The tag's low 16 bits: the number of channels (0 for the two "use" tags).
    public static func channelCount(_ tag: UInt32) -> UInt32 { tag & 0xFFFF }
}

/// One channel of an ``AudioChannelLayout`` (Core Audio's `AudioChannelDescription`).
///
/// Thread safety: a plain value; use from any thread.
public struct AudioChannelDescription: Hashable, Sendable, BitwiseCopyable {
    /// `AudioChannelLabel` (1 left, 2 right, 3 centre, ...).
    public var label: UInt32
    /// `AudioChannelFlags` (coordinate kind).
    public var flags: UInt32
    public var coordinate0: Float
    public var coordinate1: Float
    public var coordinate2: Float
    public init(label: UInt32, flags: UInt32 = 0, coordinates: (Float, Float, Float) = (0, 0, 0)) {
        self.label = label
        self.flags = flags
        coordinate0 = coordinates.0
        coordinate1 = coordinates.1
        coordinate2 = coordinates.2
    }
}

/// How channels map to speakers (Core Audio's `AudioChannelLayout`).
///
/// Thread safety: a plain value; use from any thread.
public struct AudioChannelLayout: Hashable, Sendable {
    /// An ``AudioChannelLayoutTag`` value.
    public var tag: UInt32
    /// Speaker bitmap, meaningful when `tag` is ``AudioChannelLayoutTag/useChannelBitmap``.
    public var bitmap: UInt32
    /// Per-channel descriptions, meaningful when `tag` is
    /// ``AudioChannelLayoutTag/useChannelDescriptions``.
    public var descriptions: [AudioChannelDescription]
    public init(tag: UInt32, bitmap: UInt32 = 0, descriptions: [AudioChannelDescription] = []) {
        self.tag = tag
        self.bitmap = bitmap
        self.descriptions = descriptions
    }
    /// Size in bytes of the C struct: 12 bytes of header plus 20 per description.
    public var byteSize: Int { 12 + 20 * max(descriptions.count, 1) }
}

/// Gapless playback information (Core Audio's `AudioFilePacketTableInfo`).
///
/// `numberValidFrames = packets × framesPerPacket − primingFrames − remainderFrames` for
/// formats with constant frames per packet.
/// Thread safety: a plain value; use from any thread.
public struct AudioFilePacketTableInfo: Hashable, Sendable, BitwiseCopyable {
    /// Frames of real audio (what the source had before encoding).
    public var numberValidFrames: Int64
    /// Frames at the start that are encoder/decoder delay, to be dropped.
    public var primingFrames: Int32
    /// Frames at the end that are padding, to be dropped.
    public var remainderFrames: Int32
    public init(numberValidFrames: Int64, primingFrames: Int32, remainderFrames: Int32) {
        self.numberValidFrames = numberValidFrames
        self.primingFrames = primingFrames
        self.remainderFrames = remainderFrames
    }
}

/// One format a stream can be decoded to (Core Audio's `AudioFormatListItem`).
///
/// Thread safety: a plain value; use from any thread.
public struct AudioFormatListItem: Hashable, Sendable, BitwiseCopyable {
    public var format: AudioStreamBasicDescription
    /// An ``AudioChannelLayoutTag`` value.
    public var channelLayoutTag: UInt32
    public init(format: AudioStreamBasicDescription, channelLayoutTag: UInt32) {
        self.format = format
        self.channelLayoutTag = channelLayoutTag
    }
}
