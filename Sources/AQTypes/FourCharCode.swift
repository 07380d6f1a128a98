/// A four-character code, as Core Audio uses for format IDs, file types and property IDs.
///
/// The value is the big-endian packing of four ASCII bytes: `"lpcm"` is `0x6C70636D`.
/// Thread safety: a plain value; use from any thread.
public struct FourCharCode: RawRepresentable, Hashable, Sendable, BitwiseCopyable,
    CustomStringConvertible, ExpressibleByStringLiteral
{
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Packs the first four bytes of `string` (padded with spaces when shorter).
    public init(_ string: String) {
        var v: UInt32 = 0
        var bytes = Array(string.utf8.prefix(4))
        while bytes.count < 4 { bytes.append(0x20) }
        for b in bytes { v = (v << 8) | UInt32(b) }
        rawValue = v
    }

    public init(stringLiteral value: String) { self.init(value) }

    /// The four characters; bytes outside printable ASCII are shown as `\xNN`.
    public var description: String {
        var s = ""
        for shift in stride(from: 24, through: 0, by: -8) {
            let b = UInt8((rawValue >> UInt32(shift)) & 0xFF)
            if b >= 0x20 && b < 0x7F { s.unicodeScalars.append(Unicode.Scalar(b)) } else {
                let hex = String(b, radix: 16, uppercase: true)
                s += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return s
    }
}
