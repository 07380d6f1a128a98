import AQTypes

/// Why an ``AudioStreamBasicDescription`` cannot be converted by ``PCMDeinterleaver``.
///
/// Every case has a human-readable ``message`` naming what is wrong, and maps to the Audio
/// Queue result code `'fmt?'` (``resultCode``, `kAudioFormatUnsupportedDataFormatError`).
///
/// Thread safety: a plain value; use from any thread (it is made and thrown on the control side).
public enum PCMFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The format ID is not `lpcm`, `ulaw` or `alaw` (compressed data must be decoded first).
    case unsupportedFormatID(FourCharCode)
    /// `kAudioFormatFlagIsNonInterleaved` is set; only interleaved data is accepted.
    case nonInterleaved
    /// The sample rate is outside 8000…192000 Hz (or not a finite number).
    case sampleRateOutOfRange(Double)
    /// The channel count is outside 1…8.
    case channelCountOutOfRange(UInt32)
    /// Linear PCM integers of this bit depth are not supported (only 8, 16, 24, 32).
    case unsupportedIntegerBitDepth(UInt32)
    /// Floating-point samples of this bit depth are not supported (only 32, 64).
    case unsupportedFloatBitDepth(UInt32)
    /// Unsigned integers wider than 8 bits (the flag `isSignedInteger` is missing).
    case unsignedWideInteger(bits: UInt32)
    /// Signed 8-bit integers (only unsigned 8-bit, as in WAVE, is supported).
    case signedEightBit
    /// Both `isFloat` and `isSignedInteger` are set.
    case conflictingFloatAndIntegerFlags
    /// µ-law or A-law data whose `bitsPerChannel` is not 8.
    case companded(formatID: FourCharCode, bits: UInt32)
    /// `framesPerPacket` is not 1 (uncompressed data has one frame per packet).
    case framesPerPacket(UInt32)
    /// `bytesPerFrame` does not match channels × bytes per sample (unpacked or padded samples).
    case bytesPerFrame(expected: UInt32, actual: UInt32)
    /// `bytesPerPacket` differs from `bytesPerFrame`.
    case bytesPerPacket(expected: UInt32, actual: UInt32)

    /// `kAudioFormatUnsupportedDataFormatError`, `'fmt?'` = 1718449215, the Audio Queue result
    /// code for every case.
    public static let unsupportedDataFormatResultCode: Int32 = 1_718_449_215

    /// The Audio Queue result code to report: always `'fmt?'` (1718449215).
    public var resultCode: Int32 { Self.unsupportedDataFormatResultCode }

    /// What is wrong, in words, naming the offending field and value.
    public var message: String {
        switch self {
        case .unsupportedFormatID(let id):
            return "format ID '\(id)' is not supported: only 'lpcm', 'ulaw' and 'alaw' can be converted (decode compressed data first)"
        case .nonInterleaved:
            return "non-interleaved data is not supported: the format must be interleaved (clear kAudioFormatFlagIsNonInterleaved)"
        case .sampleRateOutOfRange(let rate):
            return "sample rate \(rate) Hz is out of range: must be 8000…192000 Hz"
        case .channelCountOutOfRange(let n):
            return "channel count \(n) is out of range: must be 1…8"
        case .unsupportedIntegerBitDepth(let bits):
            return "\(bits)-bit integer samples are not supported: integers must be 8 (unsigned), 16, 24 or 32 bits"
        case .unsupportedFloatBitDepth(let bits):
            return "\(bits)-bit float samples are not supported: floats must be 32 or 64 bits"
        case .unsignedWideInteger(let bits):
            return "unsigned \(bits)-bit integer samples are not supported: \(bits)-bit integers must be signed (set kAudioFormatFlagIsSignedInteger)"
        case .signedEightBit:
            return "signed 8-bit integer samples are not supported: 8-bit integers must be unsigned (offset 128)"
        case .conflictingFloatAndIntegerFlags:
            return "format flags say both float and signed integer: set exactly one of kAudioFormatFlagIsFloat, kAudioFormatFlagIsSignedInteger"
        case .companded(let id, let bits):
            return "'\(id)' data must have 8 bits per channel, not \(bits)"
        case .framesPerPacket(let n):
            return "framesPerPacket is \(n): uncompressed data must have 1 frame per packet"
        case .bytesPerFrame(let expected, let actual):
            return "bytesPerFrame is \(actual) but channels × bytes per sample is \(expected): samples must be packed (24-bit samples in 3 bytes)"
        case .bytesPerPacket(let expected, let actual):
            return "bytesPerPacket is \(actual) but must equal bytesPerFrame (\(expected))"
        }
    }

    /// Same as ``message``.
    public var description: String { message }
}
