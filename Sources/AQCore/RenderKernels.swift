#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFloatMode
import CMembarrier
import Synchronization

/// dst[i] += src[i] × gain(i), the gain ramping from `g0` toward `target` by `step` per frame
/// and exactly `target` from frame `left` on.
@_noLocks
@inline(__always)
func mixInto(
    _ dst: UnsafeMutablePointer<Float>, _ src: UnsafePointer<Float>, _ count: Int, _ g0: Float, _ target: Float,
    _ step: Float, left: Int
) {
    if step == 0 || g0 == target {
        for i in 0..<count { dst[i] += src[i] * g0 }
    } else {
        for i in 0..<count { dst[i] += src[i] * RenderCore.gain(g0, toward: target, step: step, after: i, left: left) }
    }
}

/// d0[i] += s0[i] × g and d1[i] += s1[i] × g: the stereo case of ``mixInto`` at a steady gain.
/// `fresh`: the outputs hold nothing yet (not even zeros); they get 0 + s × g, exactly what
/// clearing them and adding would give, without the clearing pass or reading them.
@_noLocks
@inline(__always)
func mixStereo(
    _ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>, _ s0: UnsafePointer<Float>,
    _ s1: UnsafePointer<Float>, _ count: Int, _ g: Float, fresh: Bool = false
) {
    // Two simple passes vectorise and unroll better than one pass over four streams.
    if fresh {
        for i in 0..<count { d0[i] = 0 + s0[i] * g }
        for i in 0..<count { d1[i] = 0 + s1[i] * g }
    } else {
        for i in 0..<count { d0[i] += s0[i] * g }
        for i in 0..<count { d1[i] += s1[i] * g }
    }
}

/// Two stereo queues in one pass over the outputs: d0[i] = (d0[i] + a0[i] × ga) + b0[i] × gb,
/// and the same for channel 1. The same operations in the same order as ``mixStereo`` for
/// queue a and then for queue b (bit for bit the same result), with one read and one write
/// of the outputs instead of two. `fresh` as in ``mixStereo``.
@_noLocks
@inline(__always)
func mixStereoPair(
    _ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>, _ a0: UnsafePointer<Float>,
    _ a1: UnsafePointer<Float>, _ ga: Float, _ b0: UnsafePointer<Float>, _ b1: UnsafePointer<Float>, _ gb: Float,
    _ count: Int, fresh: Bool
) {
    if fresh {
        for i in 0..<count { d0[i] = (0 + a0[i] * ga) + b0[i] * gb }
        for i in 0..<count { d1[i] = (0 + a1[i] * ga) + b1[i] * gb }
    } else {
        for i in 0..<count { d0[i] = (d0[i] + a0[i] * ga) + b0[i] * gb }
        for i in 0..<count { d1[i] = (d1[i] + a1[i] * ga) + b1[i] * gb }
    }
}

/// Clears `count` frames of outputs 0 and 1.
@_noLocks
@inline(__always)
func clearStereo(_ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>, _ count: Int) {
    d0.update(repeating: 0, count: count)
    d1.update(repeating: 0, count: count)
}

/// Peak and sum of squares of src × gain into acc[0], acc[1] (the gain as in ``mixInto``).
@_noLocks
@inline(__always)
func accumulateMeter(
    _ src: UnsafePointer<Float>, _ count: Int, _ g0: Float, _ target: Float, _ step: Float, left: Int,
    into acc: UnsafeMutablePointer<Float>
) {
    var peak = acc[0]
    var sum = acc[1]
    for i in 0..<count {
        let v = src[i] * RenderCore.gain(g0, toward: target, step: step, after: i, left: left)
        peak = max(peak, abs(v))
        sum += v * v
    }
    acc[0] = peak
    acc[1] = sum
}
