import AQTypes

/// The error thrown by ``AudioFileStream``, carrying Audio File Stream Services' result code.
///
/// Two errors are equal when their codes are equal; ``detail`` is a human-readable explanation
/// for messages and is not part of equality.
/// Thread safety: a plain value; use from any thread.
public struct AudioFileStreamError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `OSStatus` value (a four-char code packed big-endian, as in `AudioFileStream.h`).
    public let code: Int32
    /// What went wrong, for people; may be empty.
    public let detail: String

    public init(code: Int32, detail: String = "") {
        self.code = code
        self.detail = detail
    }

    init(_ fcc: FourCharCode, _ detail: String = "") {
        self.init(code: Int32(bitPattern: fcc.rawValue), detail: detail)
    }

    /// The code as four characters (`"dta?"`).
    public var fourCharCode: FourCharCode { FourCharCode(rawValue: UInt32(bitPattern: code)) }

    /// The same error with another detail text.
    public func with(detail: String) -> AudioFileStreamError {
        AudioFileStreamError(code: code, detail: detail)
    }

    public static func == (a: AudioFileStreamError, b: AudioFileStreamError) -> Bool { a.code == b.code }
    public func hash(into h: inout Hasher) { h.combine(code) }

    /// A short name for the code ("invalid file").
    public var name: String {
        switch self {
        case .unsupportedFileType: "unsupported file type"
        case .unsupportedDataFormat: "unsupported data format"
        case .unsupportedProperty: "unsupported property"
        case .badPropertySize: "bad property size"
        case .notOptimized: "not optimized"
        case .invalidPacketOffset: "invalid packet offset"
        case .invalidFile: "invalid file"
        case .valueUnknown: "value unknown"
        case .dataUnavailable: "data unavailable"
        case .illegalOperation: "illegal operation"
        case .discontinuityCantRecover: "discontinuity can't recover"
        default: "error"
        }
    }

    /// `name ('code'): detail`.
    public var description: String {
        let base = "\(name) ('\(fourCharCode)')"
        return detail.isEmpty ? base : base + ": " + detail
    }

    /// `kAudioFileStreamError_UnsupportedFileType`, `'typ?'`: not a file type the parser knows.
    public static let unsupportedFileType = AudioFileStreamError("typ?")
    /// `kAudioFileStreamError_UnsupportedDataFormat`, `'fmt?'`: known container, unsupported data.
    public static let unsupportedDataFormat = AudioFileStreamError("fmt?")
    /// `kAudioFileStreamError_UnsupportedProperty`, `'pty?'`: property not supported.
    public static let unsupportedProperty = AudioFileStreamError("pty?")
    /// `kAudioFileStreamError_BadPropertySize`, `'!siz'`: wrong size (or missing input) for a property.
    public static let badPropertySize = AudioFileStreamError("!siz")
    /// `kAudioFileStreamError_NotOptimized`, `'optm'`: packets can't be produced as laid out.
    public static let notOptimized = AudioFileStreamError("optm")
    /// `kAudioFileStreamError_InvalidPacketOffset`, `'pck?'`: packet number out of range.
    public static let invalidPacketOffset = AudioFileStreamError("pck?")
    /// `kAudioFileStreamError_InvalidFile`, `'dta?'`: the file is malformed.
    public static let invalidFile = AudioFileStreamError("dta?")
    /// `kAudioFileStreamError_ValueUnknown`, `'unk?'`: the property has no value (yet, or in this file).
    public static let valueUnknown = AudioFileStreamError("unk?")
    /// `kAudioFileStreamError_DataUnavailable`, `'more'`: more data must be parsed first.
    public static let dataUnavailable = AudioFileStreamError("more")
    /// `kAudioFileStreamError_IllegalOperation`, `'nope'`: not allowed now (closed, re-entered).
    public static let illegalOperation = AudioFileStreamError("nope")
    /// `kAudioFileStreamError_UnspecifiedError`, `'wht?'`.
    public static let unspecifiedError = AudioFileStreamError("wht?")
    /// `kAudioFileStreamError_DiscontinuityCantRecover`, `'dsc!'`: a discontinuity the parser
    /// can't resynchronise after.
    public static let discontinuityCantRecover = AudioFileStreamError("dsc!")
}
