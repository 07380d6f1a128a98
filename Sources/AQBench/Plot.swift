import Foundation

/// An SVG histogram of `samples` (in `unit`) with a vertical line at `budget` (the period),
/// so the distance between the callback's durations and its deadline is visible.
/// Control thread.
public func histogramSVG(_ samples: [Double], unit: String, title: String, budget: Double, bins: Int = 60) -> String {
    let w = 800.0, h = 400.0, left = 60.0, right = 20.0, top = 40.0, bottom = 50.0
    let pw = w - left - right, ph = h - top - bottom
    let sorted = samples.sorted()
    let hiSample = sorted.isEmpty ? 1 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.999))]
    // The x axis reaches the budget, or the 99.9th percentile when that is beyond it.
    let xMax = max(budget, hiSample) * 1.05
    let bw = xMax / Double(bins)
    var counts = [Int](repeating: 0, count: bins)
    for v in samples { counts[min(bins - 1, max(0, Int(v / bw)))] += 1 }
    let peak = Double(max(counts.max() ?? 1, 1))
    var s = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(w))" height="\(Int(h))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(left)" y="22" font-size="14">\(escape(title))</text>

        """
    for (i, c) in counts.enumerated() where c > 0 {
        // Log scale on counts, so the tail is visible next to the peak.
        let bh = ph * log10(Double(c) + 1) / log10(peak + 1)
        s += "<rect x=\(q(left + Double(i) * pw / Double(bins))) y=\(q(top + ph - bh)) width=\(q(pw / Double(bins) - 1)) height=\(q(bh)) fill=\"#4a7ab5\"/>\n"
    }
    let bx = left + budget / xMax * pw
    s += "<line x1=\(q(bx)) y1=\(q(top)) x2=\(q(bx)) y2=\(q(top + ph)) stroke=\"#c0392b\" stroke-width=\"2\" stroke-dasharray=\"6,4\"/>\n"
    s += "<text x=\(q(bx - 4)) y=\(q(top + 14)) text-anchor=\"end\" fill=\"#c0392b\">period \(fmt(budget)) \(unit)</text>\n"
    s += "<line x1=\(q(left)) y1=\(q(top + ph)) x2=\(q(left + pw)) y2=\(q(top + ph)) stroke=\"black\"/>\n"
    for k in 0...5 {
        let v = xMax * Double(k) / 5
        let x = left + pw * Double(k) / 5
        s += "<text x=\(q(x)) y=\(q(top + ph + 18)) text-anchor=\"middle\">\(fmt(v))</text>\n"
    }
    s += "<text x=\(q(left + pw / 2)) y=\(q(h - 10)) text-anchor=\"middle\">duration (\(unit)); \(samples.count) cycles, counts on a log scale</text>\n"
    s += "</svg>\n"
    return s
}

private func q(_ v: Double) -> String { "\"\(Int(v.rounded()))\"" }

private func escape(_ s: String) -> String {
    s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
}

