// ITU-T G.711 expansion (µ-law and A-law to 16-bit linear), written from the recommendation's
// segment description: a code is a sign bit, a 3-bit segment (exponent) and a 4-bit step.

/// G.711 expansion to the 16-bit linear scale, and the tables the deinterleaver reads.
///
/// Thread safety: stateless; the tables are immutable globals built once on first use
/// (first use happens on a control thread, when a deinterleaver for `ulaw`/`alaw` converts).
enum G711 {
    /// µ-law code → 16-bit linear value (−32124…32124). The transmitted byte is the
    /// complement of sign|segment|step; magnitude in 14-bit units is (2·step + 33)·2^segment − 33,
    /// and the 16-bit value is that times 4.
    static func uLawToLinear16(_ code: UInt8) -> Int16 {
        let u = ~code
        let segment = Int32((u >> 4) & 0x07)
        let step = Int32(u & 0x0F)
        let magnitude = (((step << 3) + 0x84) << segment) - 0x84
        return Int16(u & 0x80 != 0 ? -magnitude : magnitude)
    }

    /// A-law code → 16-bit linear value (−32256…32256). The transmitted byte has its even bits
    /// inverted (XOR 0x55); a set sign bit means positive. Magnitude in 13-bit units is
    /// 2·step + 1 in segment 0 and (2·step + 33)·2^(segment−1) above; the 16-bit value is ×8.
    static func aLawToLinear16(_ code: UInt8) -> Int16 {
        let a = code ^ 0x55
        let segment = Int32((a >> 4) & 0x07)
        let step = Int32(a & 0x0F)
        let magnitude =
            segment == 0 ? (step << 4) + 8 : ((step << 4) + 0x108) << (segment - 1)
        return Int16(a & 0x80 != 0 ? magnitude : -magnitude)
    }

    /// Float values (linear16 / 32768) for every µ-law code.
    static let uLawTable: [Float] = (0...255).map { Float(uLawToLinear16(UInt8($0))) / 32768 }
    /// Float values (linear16 / 32768) for every A-law code.
    static let aLawTable: [Float] = (0...255).map { Float(aLawToLinear16(UInt8($0))) / 32768 }
}
