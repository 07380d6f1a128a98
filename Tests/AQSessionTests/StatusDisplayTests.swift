import AQSession
import Foundation
import Testing

/// The terminal meters' ballistics and the screen layout, as pure values.
@Suite struct StatusDisplayTests {
    /// The bar rises at once and falls at 20 dB/s; the hold marker stays 1.5 s on the peak,
    /// then falls at 20 dB/s; the clip indicator latches at 0 dBFS and above.
    @Test func peakHoldDecayAndClipLatch() {
        var m = PeakMeter()
        m.update(peakDB: -120, at: 0)
        #expect(m.level == PeakMeter.floorDB && m.hold == PeakMeter.floorDB && !m.clipped)
        m.update(peakDB: -3, at: 0.1)  // a 2 ms burst's span
        #expect(m.level == -3 && m.hold == -3)
        m.update(peakDB: -120, at: 0.2)
        #expect(abs(m.level - -5) < 1e-4, "the bar falls 2 dB in 0.1 s: \(m.level)")
        #expect(m.hold == -3)
        for i in 3...16 { m.update(peakDB: -120, at: Double(i) / 10) }  // to 1.6 s
        #expect(m.hold == -3, "held for 1.5 s")
        m.update(peakDB: -120, at: 1.7)
        #expect(abs(m.hold - -5) < 1e-3, "the hold falls 20 dB/s after 1.5 s: \(m.hold)")
        #expect(abs(m.level - -35) < 1e-3, "the bar fell 32 dB in 1.6 s: \(m.level)")
        #expect(m.maximum == -3 && !m.clipped)
        m.update(peakDB: 5, at: 1.8)
        #expect(m.clipped && m.level == 5 && m.maximum == 5)
        for i in 19...100 { m.update(peakDB: -120, at: Double(i) / 10) }
        #expect(m.clipped, "the clip indicator latches")
        #expect(m.hold == PeakMeter.floorDB && m.level == PeakMeter.floorDB)
        m.resetClip()
        #expect(!m.clipped)
    }

    /// The bar on its scale: −3 dBFS fills 95 % of it, 0 dBFS and +5 dBFS fill it; the hold
    /// marker is drawn past the bar; the scale puts its marks on their cells.
    @Test func barAndScale() {
        var m = PeakMeter()
        m.update(peakDB: -3, at: 0)
        #expect(m.bar(cells: 20) == String(repeating: "#", count: 19) + "-")
        m.update(peakDB: -120, at: 1)
        #expect(m.bar(cells: 20) == String(repeating: "#", count: 12) + "------|-", "level −23 dB, hold −3 dB")
        var full = PeakMeter()
        full.update(peakDB: 5, at: 0)
        #expect(full.bar(cells: 20) == String(repeating: "#", count: 20))
        let scale = PeakMeter.scale(cells: 30)
        #expect(scale.count == 30)
        #expect(scale.hasPrefix("-60") && scale.hasSuffix("0"))
        // −20 dBFS is two thirds of the way: its text ends on cell 20.
        let chars = Array(scale)
        #expect(String(chars[17..<20]) == "-20", "\(scale)")
        #expect(PeakMeter.scale(cells: 4).count == 4)
    }

    /// 40 × 10: the progress line first, lines cut to 39 columns, at most 9 lines, tracks in
    /// pages with a line naming the page; 200 × 60: everything, uncut.
    @Test func layoutFitsTheTerminal() {
        let head = "▶ 0:01.250 / 0:30.000  discontinuities 0  late frames 0"
        let scale = "  " + String(repeating: " ", count: 8) + "  " + PeakMeter.scale(cells: 32) + "  dBFS"
        let tracks = (1...20).map { "  track-\($0)   [" + String(repeating: "#", count: 32) + "]  -3.0 dB" }
        let small = StatusScreen.layout(head: head, scale: scale, tracks: tracks, width: 40, height: 10)
        #expect(small.count == 9)
        #expect(small.allSatisfy { $0.count <= 39 }, "\(small)")
        #expect(small[0].hasPrefix("▶ 0:01.250 / 0:30.000") && small[0].hasSuffix("…"))
        #expect(small[1].contains("-60"))
        #expect(small[2].hasPrefix("  track-1 ") && small[7].hasPrefix("  track-6 "))
        #expect(small[8] == "  tracks 1-6 of 20")
        let page4 = StatusScreen.layout(head: head, scale: scale, tracks: tracks, width: 40, height: 10, page: 3)
        #expect(page4[2].hasPrefix("  track-19 ") && page4[3].hasPrefix("  track-20 ") && page4.last == "  tracks 19-20 of 20")
        #expect(StatusScreen.layout(head: head, scale: scale, tracks: tracks, width: 40, height: 10, page: 4) == small)
        let big = StatusScreen.layout(head: head, scale: scale, tracks: tracks, width: 200, height: 60)
        #expect(big == [head, scale] + tracks)
        // The smallest terminals keep the progress line.
        #expect(StatusScreen.layout(head: head, scale: scale, tracks: tracks, width: 10, height: 2) == ["▶ 0:01.2…"])
        #expect(StatusScreen.layout(head: head, scale: scale, tracks: tracks, width: 1, height: 1) == ["▶"])
    }

    /// A redraw goes up over the lines drawn before, erases each line it writes and what is
    /// below the last.
    @Test func redrawSequence() {
        #expect(StatusScreen.redraw(["a", "b"], replacing: 0) == "\r\u{1B}[2Ka\n\u{1B}[2Kb\n\u{1B}[J")
        #expect(StatusScreen.redraw(["a"], replacing: 3) == "\u{1B}[3A\r\u{1B}[2Ka\n\u{1B}[J")
    }
}
