import AQBench
import Foundation
import Testing

/// The SVG plots have axes, units, percentile markers and the period, are scaled to the data,
/// and render to a PNG that is not empty (rsvg-convert, Debian's librsvg2-bin, installed by
/// `make deps`). The PNGs are left in the temporary directory for a person to look at.
@Suite struct PlotTests {
    /// Renders `svg` to a PNG with rsvg-convert; returns the PNG's bytes.
    func png(_ svg: String, name: String) throws -> Data {
        let dir = FileManager.default.temporaryDirectory
        let svgURL = dir.appendingPathComponent("\(name).svg"), pngURL = dir.appendingPathComponent("\(name).png")
        try svg.write(to: svgURL, atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(at: pngURL)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["rsvg-convert", "-o", pngURL.path, svgURL.path]
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "rsvg-convert failed (is librsvg2-bin installed? make deps)")
        return (try? Data(contentsOf: pngURL)) ?? Data()
    }

    @Test func histogramHasAxesMarkersAndIsScaledToTheData() throws {
        // 20 µs ± a little, a rare tail; the period (1333 µs) is far beyond the data.
        var samples = (0..<5000).map { 20 + Double($0 % 97) / 20 }
        samples += [60, 75, 300]
        let svg = histogramSVG(samples, unit: "µs", title: "test histogram", budget: 1333)
        for text in ["p50", "p99", "p99.9", "duration (µs)", "cycles per bin (log scale)", "period 1333", "off the axis"] {
            #expect(svg.contains(text), "missing \(text)")
        }
        // Scaled to the data: the rightmost x tick is within a few times the p99.9, not the period.
        let ticks = svg.components(separatedBy: "text-anchor=\"middle\">").dropFirst().compactMap {
            Double($0.prefix { "0123456789.".contains($0) })
        }
        let right = try #require(ticks.max())
        #expect(right > 24 && right < 100, "x axis ends at \(right)")
        let data = try png(svg, name: "aqbench-histogram")
        #expect(data.count > 2000, "PNG of \(data.count) bytes")
        #expect(data.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
    }

    @Test func histogramDrawsThePeriodWhenItIsNear() {
        let samples = (0..<1000).map { 900 + Double($0 % 300) }
        let svg = histogramSVG(samples, unit: "µs", title: "near", budget: 1333)
        #expect(svg.contains("stroke-dasharray=\"6,4\""), "the period line")
        #expect(!svg.contains("off the axis"))
    }

    @Test func scalingPlotHasEveryPeriodForBoth() throws {
        let results = runOfflineGrid(queues: [1, 16], frames: [32, 256], seconds: 0.03, rounds: 1)
        let svg = scalingSVG(results, title: "scaling")
        for text in ["engine, 32 frames", "C, 32 frames", "engine, 256 frames", "C, 256 frames", "ns per source frame", "queues (log scale)"] {
            #expect(svg.contains(text), "missing \(text)")
        }
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 4)
        let data = try png(svg, name: "aqbench-scaling")
        #expect(data.count > 2000, "PNG of \(data.count) bytes")
    }
}
