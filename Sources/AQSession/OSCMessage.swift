import Foundation

/// One argument of an OSC message (the types `oscsend` and most clients send).
///
/// Thread safety: a plain value; any thread.
package enum OSCArgument: Sendable, Equatable {
    case int(Int32), float(Float), string(String), double(Double), int64(Int64)

    /// The argument as a number (ints, floats and doubles), else nil.
    package var number: Double? {
        switch self {
        case .int(let v): return Double(v)
        case .float(let v): return Double(v)
        case .double(let v): return v
        case .int64(let v): return Double(v)
        case .string: return nil
        }
    }
}

/// An OSC 1.0 message: an address pattern and its arguments (docs/control.md).
///
/// Thread safety: a plain value; any thread.
package struct OSCMessage: Sendable, Equatable {
    /// The address, e.g. `/aqsync/locate`.
    package var address: String
    /// The arguments, in order.
    package var arguments: [OSCArgument]

    /// A message.
    package init(address: String, arguments: [OSCArgument] = []) {
        self.address = address
        self.arguments = arguments
    }

    /// The messages in one UDP packet: a message, or a `#bundle` of messages and bundles
    /// (their time tags are ignored: everything is acted on when it arrives). Nil for a packet
    /// that is neither, is cut short, or has an argument type other than i, f, s, d, h (and
    /// the argument-less T, F, N, I, which are skipped).
    ///
    /// Thread safety: pure function; any thread.
    package static func parse(_ bytes: [UInt8]) -> [OSCMessage]? {
        var i = 0
        func string() -> String? {
            guard let end = bytes[i...].firstIndex(of: 0) else { return nil }
            let s = String(decoding: bytes[i..<end], as: UTF8.self)
            i = (end + 4) & ~3
            return i <= bytes.count ? s : nil
        }
        func u32() -> UInt32? {
            guard i + 4 <= bytes.count else { return nil }
            let v = UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
            i += 4
            return v
        }
        func u64() -> UInt64? {
            guard let hi = u32(), let lo = u32() else { return nil }
            return UInt64(hi) << 32 | UInt64(lo)
        }
        if bytes.starts(with: Array("#bundle\0".utf8)) {
            i = 16  // "#bundle\0" and the time tag
            guard bytes.count >= 16 else { return nil }
            var all: [OSCMessage] = []
            while i < bytes.count {
                guard let size = u32(), size % 4 == 0, i + Int(size) <= bytes.count,
                    let inner = parse(Array(bytes[i..<(i + Int(size))])) else { return nil }
                all += inner
                i += Int(size)
            }
            return all
        }
        guard bytes.first == UInt8(ascii: "/"), let address = string() else { return nil }
        if i >= bytes.count { return [OSCMessage(address: address)] }
        guard let tags = string(), tags.first == "," else { return nil }
        var args: [OSCArgument] = []
        for t in tags.dropFirst() {
            switch t {
            case "i": guard let v = u32() else { return nil }; args.append(.int(Int32(bitPattern: v)))
            case "f": guard let v = u32() else { return nil }; args.append(.float(Float(bitPattern: v)))
            case "s", "S": guard let v = string() else { return nil }; args.append(.string(v))
            case "d": guard let v = u64() else { return nil }; args.append(.double(Double(bitPattern: v)))
            case "h": guard let v = u64() else { return nil }; args.append(.int64(Int64(bitPattern: v)))
            case "T", "F", "N", "I": continue
            default: return nil
            }
        }
        return [OSCMessage(address: address, arguments: args)]
    }

    /// The message as one OSC 1.0 packet: the address, the type tags, the arguments, each
    /// padded to 4 bytes, big-endian (what ``parse(_:)`` and liblo read).
    ///
    /// Thread safety: pure function; any thread.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        func pad() { while out.count % 4 != 0 { out.append(0) } }
        func string(_ s: String) { out += Array(s.utf8); out.append(0); pad() }
        func u32(_ v: UInt32) { out += [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u64(_ v: UInt64) { u32(UInt32(v >> 32)); u32(UInt32(v & 0xFFFF_FFFF)) }
        string(address)
        string("," + arguments.map { a -> String in
            switch a {
            case .int: "i"
            case .float: "f"
            case .string: "s"
            case .double: "d"
            case .int64: "h"
            }
        }.joined())
        for a in arguments {
            switch a {
            case .int(let v): u32(UInt32(bitPattern: v))
            case .float(let v): u32(v.bitPattern)
            case .string(let v): string(v)
            case .double(let v): u64(v.bitPattern)
            case .int64(let v): u64(UInt64(bitPattern: v))
            }
        }
        return out
    }
}
