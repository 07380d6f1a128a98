import Foundation

/// A long 32-bit float WAV recording (what `jack-record` writes) scanned in chunks, without
/// holding it in memory: per channel the positions of clicks (the first sample of each run
/// above a threshold) and the witness's frame at each, and for one channel holding a
/// ``FrameCountWitness`` its breaks and slips (see ``WitnessTimeline``).
///
/// Thread safety: a plain value.
package struct RecordingScan: Sendable {
    /// Frames in the recording.
    package let frames: Int
    /// Per channel, the recorded frames where a click starts.
    package let clicks: [[Int]]
    /// Per channel, aligned with ``clicks``: the witness's frame at each click (unwrapped past
    /// 2^24; nil before the witness ran, or without a witness channel).
    package let clickWitnessFrames: [[Int?]]
    /// The witness channel's breaks (recorder or server losses) and slips.
    package let witnessBreaks: [Int]
    package let witnessSlips: [Int]
    /// Where the witness marked that the server had reported an xrun (``WitnessMarks``).
    package let witnessXruns: [Int]
    /// The first recorded frame the witness had played into (nil: never).
    package let witnessStart: Int?
    /// Per channel, aligned with ``clicks``: the server's frame at each click, from the
    /// witness's server channel (unwrapped past 2^24; nil where it was not recorded).
    package let clickServerFrames: [[Int?]]

    /// Scans `url` (RIFF/WAVE, IEEE float 32-bit, any channel count). `witnessChannel`: the
    /// channel holding the witness (nil: none); `serverChannel`: the one holding its server
    /// counter (``FrameCountWitness/serverPort``; nil: none). Blocks while it reads the file.
    package init(url: URL, threshold: Float = 0.25, witnessChannel: Int?, serverChannel: Int? = nil) throws(TestingError) {
        guard let fh = FileHandle(forReadingAtPath: url.path) else { throw TestingError("cannot open \(url.path)") }
        defer { try? fh.close() }
        // The header: find "fmt " for the channel count and "data" for the start.
        let head = [UInt8](fh.readData(ofLength: 4096))
        func u32(_ i: Int) -> Int { Int(head[i]) | Int(head[i + 1]) << 8 | Int(head[i + 2]) << 16 | Int(head[i + 3]) << 24 }
        func u16(_ i: Int) -> Int { Int(head[i]) | Int(head[i + 1]) << 8 }
        guard head.count >= 12, head[0..<4] == [0x52, 0x49, 0x46, 0x46] else { throw TestingError("\(url.path) is not a RIFF file") }
        var i = 12
        var channels = 0, bits = 0, dataStart = -1
        while i + 8 <= head.count {
            let id = String(decoding: head[i..<i + 4], as: UTF8.self), size = u32(i + 4)
            if id == "fmt " { channels = u16(i + 10); bits = u16(i + 22) }
            if id == "data" { dataStart = i + 8; break }
            i += 8 + size + (size & 1)
        }
        guard dataStart > 0, channels > 0, bits == 32 else { throw TestingError("\(url.path): no 32-bit data chunk found") }
        try? fh.seek(toOffset: UInt64(dataStart))
        var clicks = [[Int]](repeating: [], count: channels)
        var clickWitness = [[Int?]](repeating: [], count: channels)
        var clickServer = [[Int?]](repeating: [], count: channels)
        var server: Int?, serverUnwrap = Unwrapped24()
        var current: Int?, unwrap = Unwrapped24()
        var above = [Bool](repeating: false, count: channels)
        var breaks: [Int] = [], marks = WitnessMarks()
        var previous: Int?
        var start: Int?
        var frame = 0
        let chunkFrames = 65536
        while true {
            let data = fh.readData(ofLength: chunkFrames * channels * 4)
            let n = data.count / (channels * 4)
            if n == 0 { break }
            data.withUnsafeBytes { raw in
                let x = raw.bindMemory(to: Float.self)
                for f in 0..<n {
                    // The witness first, so each click of the frame gets the witness's frame.
                    if let wc = witnessChannel, wc < channels {
                        let v = x[f * channels + wc]
                        marks.read(v, at: frame + f)
                        if v != 0 {
                            if start == nil { start = frame + f }
                            let w = Int(abs(v)) - 1
                            if let p = previous, w != (p + 1) & 0xFFFFFF { breaks.append(frame + f) }
                            previous = w
                            current = unwrap(w)
                        } else {
                            current = nil
                        }
                    }
                    if let sc = serverChannel, sc < channels {
                        let v = x[f * channels + sc]
                        if v > 0 {
                            server = serverUnwrap(Int(v) - 1)
                        } else {
                            server = nil
                        }
                    }
                    for c in 0..<channels where c != witnessChannel && c != serverChannel {
                        let v = x[f * channels + c]
                        let on = abs(v) > threshold
                        if on && !above[c] { clicks[c].append(frame + f); clickWitness[c].append(current); clickServer[c].append(server) }
                        above[c] = on
                    }
                }
            }
            frame += n
        }
        frames = frame
        self.clicks = clicks
        clickWitnessFrames = clickWitness
        clickServerFrames = clickServer
        witnessBreaks = breaks
        marks.finish()
        witnessSlips = marks.slips
        witnessXruns = marks.xruns
        witnessStart = start
    }

    /// True when the witness broke or slipped in recorded frames `range`.
    package func witnessUnsure(in range: ClosedRange<Int>) -> Bool {
        Self.any(witnessBreaks, in: range) || Self.any(witnessSlips, in: range)
    }

    /// True when the witness marked an xrun report that may belong to a cycle in recorded frames
    /// `range` (from a period before it to ``WitnessMarks/reportDelay`` after).
    package func serverReportedXrun(near range: ClosedRange<Int>) -> Bool {
        Self.any(witnessXruns, in: (range.lowerBound - 1024)...(range.upperBound + WitnessMarks.reportDelay))
    }

    /// Whether ascending `sorted` holds a value in `range` (binary search).
    static func any(_ sorted: [Int], in range: ClosedRange<Int>) -> Bool {
        var lo = 0, hi = sorted.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if sorted[mid] < range.lowerBound { lo = mid + 1 } else { hi = mid }
        }
        return lo < sorted.count && sorted[lo] <= range.upperBound
    }
}
