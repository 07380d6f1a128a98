import Foundation

/// One channel's meter as a display shows it, fed with the peak since the previous redraw
/// (``SessionPlayer/levels()``): the bar rises at once and falls at ``fallDBPerSecond``; the
/// hold marker stays on the highest peak for ``holdSeconds``, then falls at the same rate; the
/// clip indicator latches at the first peak at or above 0 dBFS (a float sample of magnitude
/// 1 or more, clipped by any integer output) and stays until ``resetClip()``.
///
/// A value: one thread at a time (the display's).
package struct PeakMeter: Sendable, Equatable {
    /// Lowest level shown, dBFS; the bottom of the scale.
    package static let floorDB: Float = -60
    /// How long the hold marker stays before it falls, seconds.
    package static let holdSeconds: Double = 1.5
    /// How fast the bar and the hold marker fall, dB per second.
    package static let fallDBPerSecond: Float = 20

    /// The bar's level, dBFS (at least ``floorDB``).
    package private(set) var level: Float = PeakMeter.floorDB
    /// The hold marker's level, dBFS (at least ``floorDB``).
    package private(set) var hold: Float = PeakMeter.floorDB
    /// The highest peak seen since the start (or the last ``resetClip()``), dBFS.
    package private(set) var maximum: Float = -.infinity
    /// A peak reached 0 dBFS (latched).
    package private(set) var clipped = false
    private var holdSince: Double = 0
    private var last: Double?

    package init() {}

    /// Takes the peak of the span that ended at `time` (seconds, any steady clock).
    /// - Parameter peakDB: the span's highest sample peak, dBFS (-120 or less for silence).
    package mutating func update(peakDB: Float, at time: Double) {
        let dt = Float(max(0, time - (last ?? time)))
        last = time
        let peak = max(PeakMeter.floorDB, peakDB)
        level = max(peak, level - PeakMeter.fallDBPerSecond * dt)
        if peak >= hold {
            hold = peak
            holdSince = time
        } else if time - holdSince > PeakMeter.holdSeconds {
            // Falls only for the part of this span after the hold time.
            let falling = min(dt, Float(time - holdSince - PeakMeter.holdSeconds))
            hold = max(peak, hold - PeakMeter.fallDBPerSecond * falling)
        }
        maximum = max(maximum, peakDB)
        if peakDB >= 0 { clipped = true }
    }

    /// Clears the clip indicator and the maximum.
    package mutating func resetClip() {
        clipped = false
        maximum = -.infinity
    }

    /// The bar, `cells` wide: `#` up to the level, `|` at the hold marker, `-` elsewhere, on a
    /// scale from ``floorDB`` (left edge) to 0 dBFS (right edge), linear in dB.
    package func bar(cells: Int) -> String {
        guard cells > 0 else { return "" }
        let filled = PeakMeter.cell(level, cells: cells)
        let marker = hold > PeakMeter.floorDB ? PeakMeter.cell(hold, cells: cells) - 1 : -1
        return String((0..<cells).map { i in i == marker && i >= filled ? "|" : i < filled ? "#" : "-" })
    }

    /// Cells filled for `db` on a scale of `cells`.
    static func cell(_ db: Float, cells: Int) -> Int {
        max(0, min(cells, Int(((db - floorDB) / -floorDB * Float(cells)).rounded())))
    }

    /// The scale under bars of `cells` cells: dBFS marks at their cells (those that fit).
    package static func scale(cells: Int) -> String {
        var line = [Character](repeating: " ", count: cells)
        for mark in [-60, 0, -20, -40, -10, -6, -3] {  // the ends first, then by importance
            let text = Array(mark == 0 ? "0" : String(mark))
            // The mark's text ends on its cell (the left edge's starts there).
            let end = mark == -60 ? text.count - 1 : max(text.count - 1, cell(Float(mark), cells: cells) - 1)
            let start = end - text.count + 1
            guard start >= 0, end < cells, line[start...end].allSatisfy({ $0 == " " }),
                start == 0 || line[start - 1] == " ", end == cells - 1 || line[end + 1] == " " else { continue }
            line.replaceSubrange(start...end, with: text)
        }
        return String(line)
    }
}

/// What `aqsync play` shows on a terminal, laid out for the terminal's size: the progress line
/// first (always kept), then a dBFS scale, then one line per track; every line cut to fit the
/// width (a line never wraps, so a redraw always knows how many lines it drew), and at most
/// `height - 1` lines. When the tracks do not fit, a page of them is shown with a line saying
/// which; the caller turns the pages by changing `page`.
///
/// Pure function of its arguments: any thread.
package enum StatusScreen {
    /// The lines to draw.
    /// - Parameters:
    ///   - head: the progress line.
    ///   - scale: the scale line (placed under the track lines' bars), or nil for none.
    ///   - tracks: one line per track.
    ///   - width, height: the terminal's columns and rows.
    ///   - page: which page of tracks to show when they do not all fit (taken modulo the
    ///     number of pages).
    package static func layout(head: String, scale: String?, tracks: [String], width: Int, height: Int, page: Int = 0) -> [String] {
        let columns = max(1, width - 1)  // the last column would make some terminals wrap
        let rows = max(1, height - 1)  // the line the cursor rests on after the last newline
        var lines = [fit(head, columns)]
        var room = rows - 1
        guard room > 0, !tracks.isEmpty else { return lines }
        if let scale, room >= 2 {
            lines.append(fit(scale, columns))
            room -= 1
        }
        if tracks.count <= room {
            lines += tracks.map { fit($0, columns) }
            return lines
        }
        // A page of `room - 1` tracks and a line naming it.
        let shown = max(1, room - 1)
        let pages = (tracks.count + shown - 1) / shown
        let first = ((page % pages) + pages) % pages * shown
        let last = min(tracks.count, first + shown)
        lines += tracks[first..<last].map { fit($0, columns) }
        if room >= 2 {
            lines.append(fit("  tracks \(first + 1)-\(last) of \(tracks.count)", columns))
        }
        return lines
    }

    /// `line` cut to `columns` characters (an ellipsis marks the cut).
    package static func fit(_ line: String, _ columns: Int) -> String {
        guard line.count > columns else { return line }
        guard columns > 1 else { return String(line.prefix(columns)) }
        return String(line.prefix(columns - 1)) + "…"
    }

    /// The escape sequences that replace `previous` drawn lines (0: none yet) with `lines`:
    /// up to the first of them, each line erased and written, and anything below erased.
    package static func redraw(_ lines: [String], replacing previous: Int) -> String {
        var out = previous > 0 ? "\u{1B}[\(previous)A\r" : "\r"
        for l in lines { out += "\u{1B}[2K" + l + "\n" }
        return out + "\u{1B}[J"
    }
}
