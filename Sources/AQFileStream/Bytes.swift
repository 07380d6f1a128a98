import AQTypes

// Big/little-endian readers over raw bytes. Callers check bounds first.
extension UnsafeRawBufferPointer {
    @inline(__always) func be16(_ i: Int) -> UInt16 { UInt16(self[i]) << 8 | UInt16(self[i + 1]) }
    @inline(__always) func le16(_ i: Int) -> UInt16 { UInt16(self[i + 1]) << 8 | UInt16(self[i]) }
    @inline(__always) func be24(_ i: Int) -> UInt32 {
        UInt32(self[i]) << 16 | UInt32(self[i + 1]) << 8 | UInt32(self[i + 2])
    }
    @inline(__always) func be32(_ i: Int) -> UInt32 {
        UInt32(self[i]) << 24 | UInt32(self[i + 1]) << 16 | UInt32(self[i + 2]) << 8 | UInt32(self[i + 3])
    }
    @inline(__always) func le32(_ i: Int) -> UInt32 {
        UInt32(self[i + 3]) << 24 | UInt32(self[i + 2]) << 16 | UInt32(self[i + 1]) << 8 | UInt32(self[i])
    }
    @inline(__always) func be64(_ i: Int) -> UInt64 { UInt64(be32(i)) << 32 | UInt64(be32(i + 4)) }
    @inline(__always) func fcc(_ i: Int) -> FourCharCode { FourCharCode(rawValue: be32(i)) }

    /// An 80-bit IEEE 754 extended float (AIFF's sample rate); nil for infinities and NaNs.
    func float80(_ i: Int) -> Double? {
        let se = be16(i)
        let exponent = Int(se & 0x7FFF)
        let mantissa = be64(i + 2)
        if exponent == 0x7FFF { return nil }
        if mantissa == 0 { return 0 }
        let magnitude = Double(sign: .plus, exponent: exponent - 16383 - 63, significand: Double(mantissa))
        return se & 0x8000 != 0 ? -magnitude : magnitude
    }

    func slice(_ from: Int, _ to: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: self[from..<to])
    }
}

/// A growable byte buffer for the bytes of a header or packet split across parse calls.
/// Its size is bounded by the largest amount the parser ever waits for.
struct CarryBuffer: ~Copyable {
    private(set) var base: UnsafeMutableRawPointer?
    private(set) var count = 0
    private var capacity = 0

    var isEmpty: Bool { count == 0 }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    mutating func append(_ src: UnsafeRawBufferPointer) {
        guard src.count > 0 else { return }
        if count + src.count > capacity {
            let newCapacity = max(count + src.count, capacity * 2, 256)
            let p = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            if let base, count > 0 { p.copyMemory(from: base, byteCount: count) }
            base?.deallocate()
            base = p
            capacity = newCapacity
        }
        (base! + count).copyMemory(from: src.baseAddress!, byteCount: src.count)
        count += src.count
    }

    mutating func removeFirst(_ n: Int) {
        precondition(n <= count)
        if n == count { count = 0; return }
        if n > 0 { base!.copyMemory(from: base! + n, byteCount: count - n) }
        count -= n
    }

    mutating func removeAll() {
        count = 0
        // Give back big buffers (a large header) so memory stays small afterwards.
        if capacity > 1 << 16 { base?.deallocate(); base = nil; capacity = 0 }
    }

    deinit { base?.deallocate() }
}
