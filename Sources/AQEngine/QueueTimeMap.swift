/// How a queue's own time (queue frames, the sample time `AudioQueueGetCurrentTime` reports and
/// start times are given in) maps onto device frames from the queue's frame 0: piecewise
/// linear, one piece per play rate in force. Without time/pitch there is one piece of slope
/// device rate / queue rate from (0, 0), so queue frame q is device frame q × ratio exactly as
/// before; with `kAudioQueueParam_PlayRate` r a piece's slope is ratio / r (at rate 2 a queue
/// frame lasts half a device frame's worth of the queue's rate: the queue's time runs at the
/// play rate, as Apple's does).
///
/// A new piece starts at the queue frame of the first buffer enqueued at a new rate; the
/// device frame it starts at is where the map put that queue frame, so the map is continuous.
///
/// Thread safety: a value guarded by its queue's lock.
struct QueueTimeMap {
    /// A piece: from queue frame `queue` (device frame `device`) on, `slope` device frames per
    /// queue frame.
    struct Piece: Equatable {
        var queue: Double
        var device: Double
        var slope: Double
    }
    private(set) var pieces: [Piece]

    /// One piece of `slope` from (0, 0).
    init(slope: Double) { pieces = [Piece(queue: 0, device: 0, slope: slope)] }

    /// The device frame (from the queue's frame 0) where queue frame `q` plays.
    func deviceFrame(_ q: Double) -> Double {
        let p = piece { $0.queue <= q }
        return p.device + (q - p.queue) * p.slope
    }

    /// The queue frame playing at device frame `d` (from the queue's frame 0).
    func queueFrame(atDevice d: Double) -> Double {
        let p = piece { $0.device <= d }
        return p.queue + (d - p.device) / p.slope
    }

    /// The last piece for which `starts` holds (the first if none), by binary search: pieces
    /// ascend in both queue and device frames, so a queue changing its rate on every buffer
    /// for hours still finds its piece in a few steps.
    private func piece(_ starts: (Piece) -> Bool) -> Piece {
        var lo = 0, hi = pieces.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if starts(pieces[mid]) { lo = mid } else { hi = mid - 1 }
        }
        return pieces[lo]
    }

    /// From queue frame `q` on, `slope` device frames per queue frame. Pieces after `q` (none
    /// in practice: buffers are enqueued in queue order) are dropped.
    mutating func setSlope(_ slope: Double, from q: Double) {
        pieces.removeAll(where: { $0.queue > q })
        guard let last = pieces.last, last.slope != slope else { return }
        if last.queue == q && pieces.count > 1 {
            pieces[pieces.count - 1].slope = slope
        } else {
            pieces.append(Piece(queue: q, device: deviceFrame(q), slope: slope))
        }
    }

    /// Queue time restarts where device frame `d` and queue frame `q` were: both become 0.
    /// The piece in force there is kept (re-based), earlier ones go.
    mutating func rebase(device d: Double, queue q: Double) {
        let current = pieces.last(where: { $0.device <= d }) ?? pieces[0]
        var kept = [Piece(queue: 0, device: 0, slope: current.slope)]
        for p in pieces where p.device > d {
            kept.append(Piece(queue: p.queue - q, device: p.device - d, slope: p.slope))
        }
        pieces = kept
    }

    /// Back to one piece of `slope` from (0, 0) (a stop or a reset).
    mutating func reset(slope: Double) { pieces = [Piece(queue: 0, device: 0, slope: slope)] }
}
