/// Percentiles of a set of samples (nearest rank on the sorted samples: exact, no binning).
///
/// Thread safety: a plain value.
public struct Percentiles: Sendable, Equatable, Codable {
    public var p50: Double
    public var p99: Double
    public var p999: Double
    public var max: Double
    /// Samples the figures were taken from.
    public var count: Int

    public init(p50: Double, p99: Double, p999: Double, max: Double, count: Int) {
        self.p50 = p50
        self.p99 = p99
        self.p999 = p999
        self.max = max
        self.count = count
    }

    /// The percentiles of `samples` scaled by `scale` (e.g. 1e-3 for ns → µs); all zero when
    /// there are none. Sorts a copy. Control thread.
    public init(_ samples: [Double], scale: Double = 1) {
        let s = samples.sorted()
        func rank(_ p: Double) -> Double {
            guard !s.isEmpty else { return 0 }
            let i = Swift.min(s.count - 1, Swift.max(0, Int((p * Double(s.count)).rounded(.up)) - 1))
            return s[i] * scale
        }
        self.init(p50: rank(0.5), p99: rank(0.99), p999: rank(0.999), max: (s.last ?? 0) * scale, count: s.count)
    }
}

/// A text histogram of `samples` (in `unit`) in `bins` rows, bars scaled to `width`, with an
/// optional vertical marker value (e.g. the period budget) noted in the heading. Control thread.
public func textHistogram(_ samples: [Double], unit: String, bins: Int = 16, width: Int = 50) -> String {
    guard let lo = samples.min(), let hi = samples.max(), !samples.isEmpty else { return "(no samples)\n" }
    // Bins up to the 99.9th percentile; the rest are counted in the last row.
    let sorted = samples.sorted()
    let top = Swift.max(sorted[Swift.min(sorted.count - 1, Int(Double(sorted.count) * 0.999))], lo + 1e-9)
    let w = (top - lo) / Double(bins)
    var counts = [Int](repeating: 0, count: bins + 1)
    for v in samples {
        if v > top { counts[bins] += 1 } else { counts[Swift.min(bins - 1, Int((v - lo) / w))] += 1 }
    }
    let peak = Swift.max(counts.max() ?? 1, 1)
    var out = ""
    for b in 0...bins {
        if b == bins && counts[b] == 0 { break }
        let label = b == bins
            ? "> \(fmt(top))".padding(toLength: 22, withPad: " ", startingAt: 0)
            : "\(fmt(lo + Double(b) * w))–\(fmt(lo + Double(b + 1) * w))".padding(toLength: 22, withPad: " ", startingAt: 0)
        let bar = String(repeating: "█", count: counts[b] == 0 ? 0 : Swift.max(1, counts[b] * width / peak))
        out += "\(label) \(unit) │\(bar) \(counts[b])\n"
    }
    if hi > top { out += "max \(fmt(hi)) \(unit)\n" }
    return out
}

/// A number with three significant-ish digits for tables.
func fmt(_ v: Double) -> String {
    if v == 0 { return "0" }
    let a = abs(v)
    let digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3
    var s = String(Int((v * pow10(digits)).rounded()))
    if digits > 0 {
        let neg = s.hasPrefix("-")
        if neg { s.removeFirst() }
        while s.count <= digits { s = "0" + s }
        s.insert(".", at: s.index(s.endIndex, offsetBy: -digits))
        if neg { s = "-" + s }
    }
    return s
}

private func pow10(_ n: Int) -> Double {
    var r = 1.0
    for _ in 0..<n { r *= 10 }
    return r
}
