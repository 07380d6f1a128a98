import AQTypes

/// The properties of an audio file stream (`kAudioFileStreamProperty_…`), raw value = the
/// four-char code.
///
/// Thread safety: a plain value; use from any thread.
public enum AudioFileStreamProperty: UInt32, CaseIterable, Sendable, CustomStringConvertible {
    /// `'redy'` UInt32: 0 until the parser reached the audio data, then 1 (everything the header
    /// can tell is known).
    case readyToProducePackets = 0x7265_6479
    /// `'ffmt'` UInt32 four-char code: the file type (``AudioFileTypeID``).
    case fileFormat = 0x6666_6D74
    /// `'dfmt'` ``AudioStreamBasicDescription`` of the packets.
    case dataFormat = 0x6466_6D74
    /// `'flst'` array of ``AudioFormatListItem``: one item, the data format and layout tag; for
    /// an AAC stream taken for HE-AAC, `aacp`/`aach` at the SBR rate first, then the data
    /// format (the LC core).
    case formatList = 0x666C_7374
    /// `'mgic'` bytes: the magic cookie (CAF `kuki`, ADTS AudioSpecificConfig).
    case magicCookieData = 0x6D67_6963
    /// `'bcnt'` UInt64: bytes of audio data, when the header says.
    case audioDataByteCount = 0x6263_6E74
    /// `'pcnt'` UInt64: packets of audio data, when the header says.
    case audioDataPacketCount = 0x7063_6E74
    /// `'psze'` UInt32: largest packet (exact for CBR and packet tables, else largest seen so far).
    case maximumPacketSize = 0x7073_7A65
    /// `'doff'` Int64: byte offset in the file of the first audio packet.
    case dataOffset = 0x646F_6666
    /// `'cmap'` ``AudioChannelLayout``, when the file has one (CAF `chan`, WAVE channel mask).
    case channelLayout = 0x636D_6170
    /// `'pkfr'` packet → frame; use ``AudioFileStream/frame(forPacket:)``.
    case packetToFrame = 0x706B_6672
    /// `'frpk'` frame → packet; use ``AudioFileStream/packet(forFrame:)``.
    case frameToPacket = 0x6672_706B
    /// `'pkby'` packet → byte; use ``AudioFileStream/byte(forPacket:)``.
    case packetToByte = 0x706B_6279
    /// `'bypk'` byte → packet; use ``AudioFileStream/packet(forByte:)``.
    case byteToPacket = 0x6279_706B
    /// `'pnfo'` ``AudioFilePacketTableInfo``: priming, remainder and valid frames.
    case packetTableInfo = 0x706E_666F
    /// `'pkub'` UInt32: the largest packet this format can have.
    case packetSizeUpperBound = 0x706B_7562
    /// `'abpp'` Float64: average bytes per packet (exact for CBR and tables, else running).
    case averageBytesPerPacket = 0x6162_7070
    /// `'brat'` UInt32: bits per second.
    case bitRate = 0x6272_6174

    /// The four-char code (`'dfmt'`).
    public var code: FourCharCode { FourCharCode(rawValue: rawValue) }
    public var description: String { code.description }
}

/// A property's value, typed by what the property holds.
///
/// Thread safety: a plain value; use from any thread.
public enum AudioFileStreamPropertyValue: Hashable, Sendable {
    case uint32(UInt32)
    case uint64(UInt64)
    case int64(Int64)
    case float64(Double)
    case dataFormat(AudioStreamBasicDescription)
    case formatList([AudioFormatListItem])
    case bytes([UInt8])
    case channelLayout(AudioChannelLayout)
    case packetTableInfo(AudioFilePacketTableInfo)

    /// Size in bytes of the C representation (what `AudioFileStreamGetPropertyInfo` reports).
    public var byteSize: Int {
        switch self {
        case .uint32: 4
        case .uint64, .int64, .float64: 8
        case .dataFormat: 40
        case .formatList(let l): 48 * l.count
        case .bytes(let b): b.count
        case .channelLayout(let l): l.byteSize
        case .packetTableInfo: 16
        }
    }
}

/// Flags of the property listener (`kAudioFileStreamPropertyFlag_…`).
///
/// Thread safety: a plain value; use from any thread.
public struct AudioFileStreamPropertyFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Set by the parser: the value stays available after the listener returns.
    public static let propertyIsCached = AudioFileStreamPropertyFlags(rawValue: 1)
    /// Set by the listener: keep this (uncached) value after the listener returns.
    public static let cacheProperty = AudioFileStreamPropertyFlags(rawValue: 2)
}

/// Flags of ``AudioFileStream/parse(_:flags:)`` (`kAudioFileStreamParseFlag_…`).
///
/// Thread safety: a plain value; use from any thread.
public struct AudioFileStreamParseFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// These bytes don't follow the previous ones: drop any partial packet and resynchronise.
    public static let discontinuity = AudioFileStreamParseFlags(rawValue: 1)
}

/// Flags returned by ``AudioFileStream/seek(toPacket:)`` (`kAudioFileStreamSeekFlag_…`).
///
/// Thread safety: a plain value; use from any thread.
public struct AudioFileStreamSeekFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// The byte offset is an estimate (no packet table).
    public static let offsetIsEstimated = AudioFileStreamSeekFlags(rawValue: 1)
}

/// Result of a frame → packet translation (`AudioFramePacketTranslation`).
///
/// Thread safety: a plain value; use from any thread.
public struct AudioFramePacketTranslation: Hashable, Sendable {
    public var frame: Int64
    public var packet: Int64
    public var frameOffsetInPacket: UInt32
    public init(frame: Int64, packet: Int64, frameOffsetInPacket: UInt32) {
        self.frame = frame
        self.packet = packet
        self.frameOffsetInPacket = frameOffsetInPacket
    }
}

/// Result of a byte ↔ packet translation (`AudioBytePacketTranslation`). Bytes are counted from
/// the start of the audio data (add ``AudioFileStream/dataOffset`` for a file offset).
///
/// Thread safety: a plain value; use from any thread.
public struct AudioBytePacketTranslation: Hashable, Sendable {
    public var byte: Int64
    public var packet: Int64
    public var byteOffsetInPacket: UInt32
    /// `kBytePacketTranslationFlag_IsEstimate`: no packet table, the value is an estimate.
    public var isEstimate: Bool
    public init(byte: Int64, packet: Int64, byteOffsetInPacket: UInt32, isEstimate: Bool) {
        self.byte = byte
        self.packet = packet
        self.byteOffsetInPacket = byteOffsetInPacket
        self.isEstimate = isEstimate
    }
}
