/// A live recording of a session's outputs, beside a ``FrameCountWitness`` channel, compared
/// with the offline render of the same session (`origin`: the recorded frame of the render's
/// frame 0), stretch by stretch between the places where the witness broke or slipped.
///
/// A stretch matches when every sample in it equals the render at the recorded mapping (frame
/// `p` holds render frame `p − origin`: what a client downstream of aqsync heard, continuous)
/// or at the witness's mapping (render frame = witness frame at `p` − witness frame at
/// `origin`: the recorder lost or repeated frames of every client alike). Samples within a
/// period (1024 frames) of a break or slip are not judged: there the witness cannot tell
/// which side of the loss a cycle was on. In a stretch matching neither mapping, wrong frames
/// beside one of the witness's xrun marks, a period long at most, are what the recorder read
/// of a late client's ports in a cycle the server reported (``WitnessMarks/lateCycleStretches(wrong:xruns:)``):
/// counted apart.
///
/// Where the witness's server channel was recorded, a third mapping: render frame = server
/// frame at `p` − server frame at `origin`, later by at most the frames aqsync reported lost
/// and kept (from a period after the first frame wrong at none on). It holds where the server
/// gave aqsync a cycle it did not give the recorder and the witness (their counts go on
/// together; only the server's counter shows the cycle they missed).
///
/// A stretch matching none of these is searched for the constant shift under which it
/// matches the render (±8192 frames, a period after its first wrong frame). When that shift is at most the time
/// aqsync reported lost and kept (`keptLostFrames`: under ``LostTimePolicy/keepEveryFrame``
/// a cycle the server did not give aqsync leaves every track later by it, together), the
/// stretch is aqsync doing what its policy and its report say: counted apart
/// (``shiftedByKeptTime``). The other samples that differ count as mismatches: aqsync's doing,
/// reported with the shift found, if any.
///
/// Thread safety: a plain value.
package struct LiveRenderMatch: Sendable, CustomStringConvertible {
    /// Samples (all channels) that differ from the render in stretches the witness vouched for.
    package let mismatches: Int
    /// Recorded frames judged, and frames left unjudged next to a break or slip.
    package let judgedFrames: Int, unjudgedFrames: Int
    /// The first differing sample, for the report.
    package let first: String?
    /// Stretches, and of those matched only through the witness's mapping.
    package let stretches: Int, matchedThroughWitness: Int
    /// Stretches matched only through the server's counter (the witness's server channel),
    /// later by at most the frames aqsync reported lost and kept.
    package let matchedThroughServerCounter: Int
    /// For each of those, how much later than the server's counter it matched.
    package let serverCounterShifts: [Int]
    /// Samples that differ beside the witness's xrun marks, a period long at most (not in
    /// ``mismatches``).
    package let inServerXruns: Int
    /// Stretches that match the render moved later by exactly the frames aqsync reported lost
    /// and kept (not in ``mismatches``).
    package let shiftedByKeptTime: Int
    /// Per stretch that matched neither mapping, the shift under which it matches the render
    /// (positive: the recording later), nil when none in ±8192 does.
    package let shifts: [Int?]
    /// The frames aqsync reported lost and kept, as given.
    package let keptLostFrames: Int

    /// Compares `live` (channels, each at least `origin + render length` frames) with
    /// `offline` beside `witness`. `origin` must be ≥ 0. `keptLostFrames`: the frames aqsync
    /// reported the server lost and it kept (its device's lost minus skipped frames).
    package init(live: [[Float]], witness: WitnessTimeline, offline: [[Float]], origin: Int, keptLostFrames: Int = 0, margin: Int = 1024) {
        let n = offline.first?.count ?? 0
        let end = min(origin + n, live.first?.count ?? 0)
        let marks = (witness.breaks + witness.slips).filter { $0 > origin && $0 < end }.sorted()
        var bounds = [origin]
        for m in marks where m > bounds[bounds.count - 1] { bounds.append(m) }
        bounds.append(end)
        let w0 = origin < witness.frames.count ? witness.frames[origin] : nil
        var mismatches = 0, judged = 0, unjudged = 0, viaWitness = 0, viaServerCounter = 0, stretches = 0, reported = 0, kept = 0
        var first: String?
        var shifts: [Int?] = [], serverShifts: [Int] = []
        for k in 0..<(bounds.count - 1) {
            let a = bounds[k] + (k == 0 ? 0 : margin), b = bounds[k + 1] - (k + 1 == bounds.count - 1 ? 0 : margin)
            unjudged += (bounds[k + 1] - bounds[k]) - max(0, b - a)
            guard a < b else { continue }
            stretches += 1
            judged += b - a
            // The two mappings of recorded frame p into the render: per recorded frame, the
            // samples that differ, and the first place.
            func count(_ index: (Int) -> Int?) -> (bad: [Int: Int], first: [Int: String]) {
                var bad: [Int: Int] = [:], where_: [Int: String] = [:]
                for p in a..<b {
                    // Outside the render, what was played is silence.
                    guard let i = index(p) else { bad[p] = live.count; continue }
                    for c in live.indices where c < offline.count && live[c][p] != (i >= 0 && i < n ? offline[c][i] : 0) {
                        bad[p, default: 0] += 1
                        if where_[p] == nil { where_[p] = "output \(c + 1), render frame \(i) (recorded \(p))" }
                    }
                }
                return (bad, where_)
            }
            let recorded = count { $0 - origin }
            if recorded.bad.isEmpty { continue }
            if let w0 {
                let viaW = count { p in p < witness.frames.count ? witness.frames[p].map { $0 - w0 } : nil }
                if viaW.bad.isEmpty { viaWitness += 1; continue }
            }
            // Through the server's counter (when recorded): render frame = server frame at p −
            // server frame at origin, later by at most what aqsync reported lost and kept (a
            // cycle the server gave aqsync but not the recorder and the witness, or the other
            // way round).
            if let s0 = origin < witness.serverFrames.count ? witness.serverFrames[origin] : nil {
                let viaServer: (Int) -> Int? = { p in p < witness.serverFrames.count ? witness.serverFrames[p].map { $0 - s0 } : nil }
                let wrong = count(viaServer).bad
                if wrong.isEmpty { viaServerCounter += 1; serverShifts.append(0); continue }
                let from = min((wrong.keys.min() ?? a) + margin, b - 1)
                if keptLostFrames > 0, let d = Self.shift(live: live, offline: offline, index: viaServer, from: from, to: b, among: 1...keptLostFrames) {
                    viaServerCounter += 1
                    serverShifts.append(d)
                    continue
                }
            }
            let firstWrong = recorded.bad.keys.min() ?? a
            let d = Self.shift(live: live, offline: offline, index: { $0 - origin }, from: min(firstWrong + margin, b - 1), to: b, among: nil)
            shifts.append(d)
            if let d, d > 0, d <= keptLostFrames {
                kept += 1
                continue
            }
            let split = WitnessMarks.lateCycleStretches(wrong: recorded.bad.keys.sorted(), xruns: witness.xruns)
            for r in split.reported { reported += r.reduce(0) { $0 + (recorded.bad[$1] ?? 0) } }
            for r in split.unexplained {
                mismatches += r.reduce(0) { $0 + (recorded.bad[$1] ?? 0) }
                if first == nil { first = recorded.first[r.lowerBound].map { $0 + (d.map { ", the stretch matches the render \($0) frames later" } ?? ", no shift in ±8192 matches") } }
            }
        }
        self.mismatches = mismatches
        self.judgedFrames = judged
        self.unjudgedFrames = unjudged
        self.first = first
        self.stretches = stretches
        self.matchedThroughWitness = viaWitness
        self.matchedThroughServerCounter = viaServerCounter
        self.serverCounterShifts = serverShifts
        self.inServerXruns = reported
        self.shiftedByKeptTime = kept
        self.shifts = shifts
        self.keptLostFrames = keptLostFrames
    }

    /// The shift `d` under which recorded frames `a..<b` hold render frames `index(p) − d` in
    /// every channel (frames outside the render compare as silence): the first of `among`, or
    /// (nil) the smallest in size in ±8192; nil when none does.
    static func shift(live: [[Float]], offline: [[Float]], index: (Int) -> Int?, from a: Int, to b: Int, among: ClosedRange<Int>?) -> Int? {
        let n = offline.first?.count ?? 0
        let channels = min(live.count, offline.count)
        func matches(_ d: Int) -> Bool {
            for p in a..<b {
                guard let j = index(p) else { return false }
                let i = j - d
                for c in 0..<channels where live[c][p] != (i >= 0 && i < n ? offline[c][i] : 0) { return false }
            }
            return true
        }
        guard a < b else { return nil }
        if let among { return among.first(where: matches) }
        for size in 1...8192 {
            if matches(size) { return size }
            if matches(-size) { return -size }
        }
        return nil
    }

    package var description: String {
        "\(mismatches) samples differ from the render in \(stretches) stretch(es) the witness vouched for"
            + (first.map { " (first: \($0))" } ?? "")
            + "; \(judgedFrames) frames judged, \(unjudgedFrames) next to a break or slip not judged, \(matchedThroughWitness) stretch(es) matched through the witness's frames, \(matchedThroughServerCounter) through the server's counter\(serverCounterShifts.contains { $0 != 0 } ? " (later by \(serverCounterShifts.map(String.init).joined(separator: ", ")))" : ""), \(inServerXruns) samples differing beside the server's xrun reports"
            + (shiftedByKeptTime > 0 ? ", \(shiftedByKeptTime) stretch(es) later by the \(keptLostFrames) frames aqsync reported lost and kept" : "")
    }
}
