import Foundation

/// An SVG histogram of `samples` (in `unit`): counts on a log y axis, the x axis scaled to the
/// data (up to a little past the 99.9th percentile; the rarer tail is counted in the last bin),
/// the p50, p99 and p99.9 marked, and the period `budget` drawn as a dashed line when it lies
/// within the axis (otherwise its value is written at the right edge with an arrow).
/// Control thread.
public func histogramSVG(_ samples: [Double], unit: String, title: String, budget: Double, bins: Int = 60) -> String {
    let w = 800.0, h = 420.0, left = 70.0, right = 30.0, top = 44.0, bottom = 56.0
    let pw = w - left - right, ph = h - top - bottom
    let p = Percentiles(samples)
    let lo = samples.min() ?? 0
    // The axis starts a little below the fastest sample and ends a little past the p99.9 (or
    // at the period when that is close enough to be drawn without squeezing the data).
    var xMin = max(0, lo - (p.p999 - lo) * 0.05)
    var xMax = max(p.p999 + (p.p999 - xMin) * 0.1, xMin + 1e-9)
    let budgetShown = budget > 0 && budget <= 1.5 * xMax
    if budgetShown { xMax = max(xMax, budget * 1.05) }
    if xMax - xMin < 1e-9 { xMin = 0; xMax = max(1, xMax) }
    let bw = (xMax - xMin) / Double(bins)
    var counts = [Int](repeating: 0, count: bins)
    for v in samples { counts[min(bins - 1, max(0, Int((v - xMin) / bw)))] += 1 }
    let peak = Double(max(counts.max() ?? 1, 1))
    let decades = max(1, Int(log10(peak).rounded(.up)))
    let yTop = pow(10, Double(decades))
    func y(_ count: Double) -> Double { top + ph - ph * log10(max(count, 1)) / log10(yTop) }
    func x(_ v: Double) -> Double { left + (v - xMin) / (xMax - xMin) * pw }
    var s = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(w))" height="\(Int(h))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(Int(left))" y="24" font-size="14">\(escape(title))</text>

        """
    // Bars: a bin of one count sits just above the axis (log scale starts at 1).
    for (i, c) in counts.enumerated() where c > 0 {
        let top0 = min(y(Double(c)), top + ph - 2)
        s += "<rect x=\(q(left + Double(i) * pw / Double(bins))) y=\(q(top0)) width=\(q(max(1, pw / Double(bins) - 1))) height=\(q(top + ph - top0)) fill=\"#4a7ab5\"/>\n"
    }
    // Axes, ticks, labels.
    s += "<line x1=\(q(left)) y1=\(q(top + ph)) x2=\(q(left + pw)) y2=\(q(top + ph)) stroke=\"black\"/>\n"
    s += "<line x1=\(q(left)) y1=\(q(top)) x2=\(q(left)) y2=\(q(top + ph)) stroke=\"black\"/>\n"
    for k in 0...5 {
        let v = xMin + (xMax - xMin) * Double(k) / 5
        s += "<line x1=\(q(x(v))) y1=\(q(top + ph)) x2=\(q(x(v))) y2=\(q(top + ph + 5)) stroke=\"black\"/>\n"
        s += "<text x=\(q(x(v))) y=\(q(top + ph + 19)) text-anchor=\"middle\">\(fmt(v))</text>\n"
    }
    for d in 0...decades {
        let c = pow(10, Double(d))
        s += "<line x1=\(q(left - 5)) y1=\(q(y(c))) x2=\(q(left)) y2=\(q(y(c))) stroke=\"black\"/>\n"
        s += "<text x=\(q(left - 8)) y=\(q(y(c) + 4)) text-anchor=\"end\">\(Int(c))</text>\n"
    }
    s += "<text x=\(q(left + pw / 2)) y=\(q(h - 12)) text-anchor=\"middle\">duration (\(unit)); \(samples.count) cycles</text>\n"
    s += "<text transform=\"translate(16,\(Int(top + ph / 2))) rotate(-90)\" text-anchor=\"middle\">cycles per bin (log scale)</text>\n"
    // Percentile markers.
    for (name, v, colour, dy) in [("p50", p.p50, "#27ae60", 0.0), ("p99", p.p99, "#e67e22", 14.0), ("p99.9", p.p999, "#8e44ad", 28.0)] {
        s += "<line x1=\(q(x(v))) y1=\(q(top)) x2=\(q(x(v))) y2=\(q(top + ph)) stroke=\"\(colour)\" stroke-width=\"1.5\"/>\n"
        // Labels near the right edge go to the left of their line.
        let leftward = x(v) > left + pw * 0.75
        s += "<text x=\(q(x(v) + (leftward ? -4 : 4))) y=\(q(top + 12 + dy)) text-anchor=\"\(leftward ? "end" : "start")\" fill=\"\(colour)\">\(name) \(fmt(v)) \(unit)</text>\n"
    }
    if budgetShown {
        let bx = x(budget)
        s += "<line x1=\(q(bx)) y1=\(q(top)) x2=\(q(bx)) y2=\(q(top + ph)) stroke=\"#c0392b\" stroke-width=\"2\" stroke-dasharray=\"6,4\"/>\n"
        s += "<text x=\(q(bx - 4)) y=\(q(top + 56)) text-anchor=\"end\" fill=\"#c0392b\">period \(fmt(budget)) \(unit)</text>\n"
    } else if budget > 0 {
        s += "<text x=\(q(left + pw)) y=\(q(top - 6)) text-anchor=\"end\" fill=\"#c0392b\">period \(fmt(budget)) \(unit) → (\(fmt(budget / max(p.p999, 1e-9)))× the p99.9, off the axis)</text>\n"
    }
    if let mx = samples.max(), mx > xMax {
        s += "<text x=\(q(left + pw)) y=\(q(top + ph - 6)) text-anchor=\"end\">max \(fmt(mx)) \(unit) (last bin holds the tail)</text>\n"
    }
    s += "</svg>\n"
    return s
}

/// One line of ``scalingSVG(_:title:)``: a period's ns per source frame against queue count.
public struct ScalingSeries: Sendable {
    public var label: String
    /// (queues, ns per source frame), queues ascending.
    public var points: [(Double, Double)]
    /// Dashed (the C reference) or solid (the engine).
    public var dashed: Bool
    /// Lines of the same period share a colour.
    public var colourIndex: Int
    public init(label: String, points: [(Double, Double)], dashed: Bool, colourIndex: Int) {
        self.label = label
        self.points = points
        self.dashed = dashed
        self.colourIndex = colourIndex
    }
}

/// The grid's scaling picture (issue 13): ns per source frame (y, linear from 0) against queue
/// count (x, log scale), one colour per period, the engine solid and the C reference dashed.
/// Control thread.
public func scalingSVG(_ results: [OfflineBenchResult], title: String) -> String {
    let periods = Array(Set(results.map(\.frames))).sorted()
    var series = [ScalingSeries]()
    for (i, p) in periods.enumerated() {
        let rs = results.filter { $0.frames == p }.sorted { $0.queues < $1.queues }
        series.append(ScalingSeries(label: "engine, \(p) frames", points: rs.map { (Double($0.queues), $0.nsPerSourceFrame) }, dashed: false, colourIndex: i))
        series.append(ScalingSeries(label: "C, \(p) frames", points: rs.map { (Double($0.queues), $0.cNsPerSourceFrame) }, dashed: true, colourIndex: i))
    }
    return linePlotSVG(series, title: title, xLabel: "queues (log scale)", yLabel: "ns per source frame")
}

private let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]

/// Lines on a log-x, linear-y plot with axes, ticks and a legend. Control thread.
func linePlotSVG(_ series: [ScalingSeries], title: String, xLabel: String, yLabel: String) -> String {
    let w = 860.0, h = 480.0, left = 70.0, right = 200.0, top = 44.0, bottom = 56.0
    let pw = w - left - right, ph = h - top - bottom
    let xs = series.flatMap { $0.points.map(\.0) }.filter { $0 > 0 }
    let ys = series.flatMap { $0.points.map(\.1) }
    let xLo = log2(xs.min() ?? 1), xHi = max(log2(xs.max() ?? 2), xLo + 1)
    let yMax = niceCeiling((ys.max() ?? 1) * 1.08)
    func x(_ v: Double) -> Double { left + (log2(max(v, 1e-9)) - xLo) / (xHi - xLo) * pw }
    func y(_ v: Double) -> Double { top + ph - v / yMax * ph }
    var s = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(w))" height="\(Int(h))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(Int(left))" y="24" font-size="14">\(escape(title))</text>
        <line x1=\(q(left)) y1=\(q(top + ph)) x2=\(q(left + pw)) y2=\(q(top + ph)) stroke="black"/>
        <line x1=\(q(left)) y1=\(q(top)) x2=\(q(left)) y2=\(q(top + ph)) stroke="black"/>

        """
    for v in Array(Set(xs)).sorted() {
        s += "<line x1=\(q(x(v))) y1=\(q(top)) x2=\(q(x(v))) y2=\(q(top + ph + 5)) stroke=\"#ddd\"/>\n"
        s += "<text x=\(q(x(v))) y=\(q(top + ph + 19)) text-anchor=\"middle\">\(Int(v))</text>\n"
    }
    for k in 0...5 {
        let v = yMax * Double(k) / 5
        s += "<line x1=\(q(left - 5)) y1=\(q(y(v))) x2=\(q(left + pw)) y2=\(q(y(v))) stroke=\"\(k == 0 ? "black" : "#eee")\"/>\n"
        s += "<text x=\(q(left - 8)) y=\(q(y(v) + 4)) text-anchor=\"end\">\(fmt(v))</text>\n"
    }
    s += "<text x=\(q(left + pw / 2)) y=\(q(h - 12)) text-anchor=\"middle\">\(escape(xLabel))</text>\n"
    s += "<text transform=\"translate(16,\(Int(top + ph / 2))) rotate(-90)\" text-anchor=\"middle\">\(escape(yLabel))</text>\n"
    for (i, line) in series.enumerated() {
        let colour = palette[line.colourIndex % palette.count]
        let pts = line.points.map { "\(Int(x($0.0).rounded())),\(Int(y($0.1).rounded()))" }.joined(separator: " ")
        let dash = line.dashed ? " stroke-dasharray=\"6,4\"" : ""
        s += "<polyline points=\"\(pts)\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\"\(dash)/>\n"
        for p in line.points {
            s += line.dashed
                ? "<rect x=\(q(x(p.0) - 3)) y=\(q(y(p.1) - 3)) width=\"6\" height=\"6\" fill=\"white\" stroke=\"\(colour)\"/>\n"
                : "<circle cx=\(q(x(p.0))) cy=\(q(y(p.1))) r=\"3.5\" fill=\"\(colour)\"/>\n"
        }
        let ly = top + 10 + Double(i) * 18
        s += "<line x1=\(q(left + pw + 16)) y1=\(q(ly)) x2=\(q(left + pw + 46)) y2=\(q(ly)) stroke=\"\(colour)\" stroke-width=\"2\"\(dash)/>\n"
        s += "<text x=\(q(left + pw + 52)) y=\(q(ly + 4))>\(escape(line.label))</text>\n"
    }
    s += "</svg>\n"
    return s
}

/// 1, 2 or 5 times a power of ten, at least `v`.
func niceCeiling(_ v: Double) -> Double {
    guard v > 0 else { return 1 }
    let e = pow(10, (log10(v)).rounded(.down))
    for m in [1.0, 2, 5, 10] where m * e >= v { return m * e }
    return 10 * e
}

private func q(_ v: Double) -> String { "\"\(Int(v.rounded()))\"" }

private func escape(_ s: String) -> String {
    s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
}
