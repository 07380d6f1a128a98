/// Planar float frames waiting for a buffer (a recording queue's converted frames): appended at
/// the end, taken from the front without moving what stays (a read index; the storage is
/// compacted only once more has been taken than is left, so each frame moves at most once).
///
/// Thread safety: a plain value; under its owner's lock.
struct PlanarFIFO {
    /// Channels.
    let channels: Int
    private var planes: [[Float]]
    private var head = 0

    /// An empty FIFO of `channels` channels.
    init(channels: Int) {
        self.channels = channels
        planes = Array(repeating: [], count: channels)
    }

    /// Frames waiting.
    var count: Int { (planes.first?.count ?? 0) - head }
    /// True when no frame waits.
    var isEmpty: Bool { count == 0 }

    /// Appends `frames` frames: channel `c`'s from `plane(c)`.
    mutating func append(frames: Int, _ plane: (Int) -> UnsafePointer<Float>) {
        guard frames > 0 else { return }
        for c in 0..<channels { planes[c].append(contentsOf: UnsafeBufferPointer(start: plane(c), count: frames)) }
    }

    /// Sample `i` (from the front) of channel `c`.
    @inline(__always)
    func sample(_ c: Int, _ i: Int) -> Float { planes[c][head + i] }

    /// Takes `frames` frames (at most ``count``) off the front.
    mutating func removeFirst(_ frames: Int) {
        head += min(frames, count)
        if head == planes[0].count {
            for c in 0..<channels { planes[c].removeAll(keepingCapacity: true) }
            head = 0
        } else if head > count {
            for c in 0..<channels { planes[c].removeFirst(head) }
            head = 0
        }
    }

    /// Forgets every frame.
    mutating func removeAll() {
        for c in 0..<channels { planes[c].removeAll(keepingCapacity: true) }
        head = 0
    }
}
