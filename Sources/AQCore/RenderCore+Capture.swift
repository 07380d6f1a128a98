#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFloatMode
import CMembarrier
import Synchronization

/// The device's inputs: metering and the capture ring, and their readers.
extension RenderCore {
    /// Meters the device's inputs for one cycle: each channel's peak, the held peak, the
    /// channel count, the cycle's frame and the frames seen. Render thread.
    @_noLocks
    func meterInputs(_ inputs: UnsafePointer<UnsafeMutablePointer<Float>>, count: Int, frame: Int64, n: Int) {
        let k = capacities.inputChannels
        var c = 0
        while c < count {
            let p = inputs[c]
            var peak: Float = 0
            var i = 0
            while i < n {
                let v = abs(p[i])
                if v > peak { peak = v }
                i += 1
            }
            inputMeters[2 * c].store(peak.bitPattern, ordering: .relaxed)
            raisePeak(inputMeters + (2 * c + 1), to: peak)
            c += 1
        }
        if captureMask > 0 { captureInputs(inputs, count: count, frame: frame, n: n) }
        inputMeters[2 * k].store(UInt32(truncatingIfNeeded: count), ordering: .relaxed)
        inputCounters.pointee.framesSeen.store(inputCounters.pointee.framesSeen.load(ordering: .relaxed) &+ Int64(n), ordering: .relaxed)
        inputCounters.pointee.latestCycleFrame.store(frame, ordering: .releasing)
    }

    /// True when the capture ring has advanced by the control side's wake threshold since the
    /// last wake (or went back): the input queues have something to read. Records the wake.
    /// Render thread. Inlined into the render entry point: it runs every cycle, and for a
    /// renderer without inputs it is two loads and a branch.
    @_noLocks @inline(__always)
    func captureWantsWake() -> Bool {
        let every = control.pointee.captureWakeFrames.load(ordering: .relaxed)
        guard every > 0, captureMask > 0 else { return false }
        let end = inputCounters.pointee.end.load(ordering: .relaxed)
        let woken = inputCounters.pointee.wokenEnd.load(ordering: .relaxed)
        guard end < woken || end - woken >= Int64(every) else { return false }
        inputCounters.pointee.wokenEnd.store(end, ordering: .relaxed)
        return true
    }

    /// Copies one cycle's inputs into the capture ring at their device frames; channels the
    /// cycle lacks are silence, and so are device frames skipped since the previous cycle (at
    /// most the ring's length of them is written). Render thread.
    @_noLocks
    func captureInputs(_ inputs: UnsafePointer<UnsafeMutablePointer<Float>>, count: Int, frame: Int64, n: Int) {
        let ring = captureMask + 1
        let planes = capacities.inputChannels
        var start = inputCounters.pointee.first.load(ordering: .relaxed)
        let end = inputCounters.pointee.end.load(ordering: .relaxed)
        var from = frame
        if start < 0 || frame < end {
            // The first cycle, or time went back (a new time line): the ring starts over.
            start = frame
        } else if frame > end {
            // Skipped frames: silence, as far back as the ring reaches.
            inputCounters.pointee.skippedFrames.store(inputCounters.pointee.skippedFrames.load(ordering: .relaxed) &+ (frame - end), ordering: .relaxed)
            from = max(end, frame &- Int64(ring))
        }
        let writeEnd = frame &+ Int64(n)
        inputCounters.pointee.writing.store(writeEnd, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        var c = 0
        while c < planes {
            let plane = capture + c * ring
            var f = from
            while f < frame {
                plane[Int(f) & captureMask] = 0
                f += 1
            }
            let src: UnsafeMutablePointer<Float>? = c < count ? inputs[c] : nil
            var i = 0
            while i < n {
                plane[(Int(frame) &+ i) & captureMask] = src == nil ? 0 : src.unsafelyUnwrapped[i]
                i += 1
            }
            c += 1
        }
        if start != inputCounters.pointee.first.load(ordering: .relaxed) {
            inputCounters.pointee.first.store(start, ordering: .relaxed)
        }
        inputCounters.pointee.end.store(writeEnd, ordering: .releasing)
    }

    /// The captured input frames a reader can have now: from the first valid frame (−1: none
    /// captured yet) to `end` (exclusive), with `ring` frames at most kept. Any thread; never
    /// blocks.
    package var captureWindow: (first: Int64, end: Int64, ring: Int) {
        let end = inputCounters.pointee.end.load(ordering: .acquiring)
        return (inputCounters.pointee.first.load(ordering: .relaxed), end, captureMask + 1)
    }

    /// Device frames the device skipped (captured as silence). Any thread; never blocks.
    package var skippedCaptureFrames: Int64 { inputCounters.pointee.skippedFrames.load(ordering: .relaxed) }

    /// Copies captured input from device frame `frame` on, at most `maxFrames` frames, into
    /// `dest` (`channels` pointers, device input channel `c` into `dest[c]`; channels beyond
    /// the ring's are silence). Returns the device frame of `dest`'s first frame and how many
    /// were copied: the first is later than `frame` when frames from `frame` on were already
    /// overwritten (or never captured) — those are lost; 0 frames when none is there yet.
    /// A control thread (one reader per destination); never blocks, never waits for the render
    /// thread: a copy the render thread overwrote meanwhile is retried from later frames.
    ///
    /// `sources`, when given (`channels` entries), names the device input each destination
    /// plane is read from (0-based; `dest[c]` gets input `sources[c]`); without it `dest[c]`
    /// gets input `c`. An input the ring does not hold reads as silence.
    package func readCapture(
        from frame: Int64, maxFrames: Int, into dest: UnsafePointer<UnsafeMutablePointer<Float>>, channels: Int,
        sources: UnsafePointer<Int>? = nil
    ) -> (first: Int64, frames: Int) {
        let ring = Int64(captureMask + 1)
        var lo = frame
        for _ in 0..<8 {
            let end = inputCounters.pointee.end.load(ordering: .acquiring)
            let start = inputCounters.pointee.first.load(ordering: .relaxed)
            if start < 0 || captureMask == 0 { return (frame, 0) }
            // Keep clear of the cycle being written: it may overwrite up to a cycle past `end − ring`.
            lo = max(lo, start, end - ring)
            if lo >= end { return (max(lo, frame), 0) }
            let k = Int(min(Int64(maxFrames), end - lo))
            for c in 0..<channels {
                let d = dest[c]
                let input = sources?[c] ?? c
                if input >= 0 && input < capacities.inputChannels {
                    let plane = capture + input * (captureMask + 1)
                    for i in 0..<k { d[i] = plane[(Int(lo) &+ i) & captureMask] }
                } else {
                    d.update(repeating: 0, count: k)
                }
            }
            atomicMemoryFence(ordering: .acquiring)
            let writing = inputCounters.pointee.writing.load(ordering: .relaxed)
            let firstIntact = writing - ring
            if lo >= firstIntact { return (lo, k) }
            lo = firstIntact  // overwritten while copied: those frames are lost
        }
        return (lo, 0)
    }

    /// What the render thread last saw of the device's inputs: the device frame of the latest
    /// cycle that had inputs (−1: none yet), the input channels it had, and the input frames
    /// seen in all. Any thread; never blocks.
    package var inputStatus: (latestCycleFrame: Int64, channels: Int, framesSeen: Int64) {
        let frame = inputCounters.pointee.latestCycleFrame.load(ordering: .acquiring)
        return (frame, Int(inputMeters[2 * capacities.inputChannels].load(ordering: .relaxed)),
                inputCounters.pointee.framesSeen.load(ordering: .relaxed))
    }

    /// The peak (linear, absolute) of device input `channel` in the latest cycle that had
    /// inputs. Any thread; never blocks.
    package func inputPeak(channel: Int) -> Float {
        guard channel >= 0, channel < capacities.inputChannels else { return 0 }
        return Float(bitPattern: inputMeters[2 * channel].load(ordering: .relaxed))
    }

    /// The highest peak of device input `channel` since the last call, and starts the next
    /// span at 0. Any thread, one reader at a time; never blocks.
    package func takeInputPeak(channel: Int) -> Float {
        guard channel >= 0, channel < capacities.inputChannels else { return 0 }
        return Float(bitPattern: inputMeters[2 * channel + 1].exchange(0, ordering: .relaxed))
    }

}
