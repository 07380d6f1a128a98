/// Where a queue's next buffer goes: the queue frame after the last buffer enqueued, the
/// device frame (from the queue's frame 0) after the last rate-converted audio handed over,
/// whether the rate converter's stream is open, and the timeline's epoch, which changes
/// whenever queue time restarts (a stop, a reset, a completed stop-after-drain), so that the
/// renderer can tell buffers of the old timeline from those of the new
/// (``RenderEvent/stopped(slot:generation:run:frame:drainEnd:)``).
///
/// Thread safety: a value guarded by its queue's lock.
struct QueueTimeline {
    /// Queue frames (the queue's rate).
    var nextQueueFrame: Int64 = 0
    /// Device frames from the queue's frame 0 (queues whose rate is converted).
    var nextDeviceFrame: Int64 = 0
    /// The rate converter holds state for the next buffer.
    var streamOpen = false
    private(set) var epoch: UInt32 = 0
    /// Queue frames to device frames (``QueueTimeMap``); `ratio` is the slope at rate 1.
    var map: QueueTimeMap
    let ratio: Double

    /// A timeline at 0 for a queue of `ratio` device frames per queue frame.
    init(ratio: Double) {
        self.ratio = ratio
        map = QueueTimeMap(slope: ratio)
    }

    /// Queue time restarts at 0 (a stop or a reset).
    mutating func restart() {
        map.reset(slope: ratio)
        nextQueueFrame = 0
        nextDeviceFrame = 0
        streamOpen = false
        epoch &+= 1
    }

    /// A stop-after-drain completed at `drainEnd` device frames: queue time restarts there, so
    /// what was enqueued after it keeps its place relative to the new frame 0 (the renderer
    /// moved those buffers back by as much); the queue frame there comes from ``map``.
    mutating func restart(afterDrainEndingAt drainEnd: Int64) {
        let q = map.queueFrame(atDevice: Double(drainEnd))
        map.rebase(device: Double(drainEnd), queue: q)
        nextDeviceFrame = max(0, nextDeviceFrame - drainEnd)
        nextQueueFrame = max(0, nextQueueFrame - Int64(q.rounded()))
        streamOpen = false
        epoch &+= 1
    }
}
