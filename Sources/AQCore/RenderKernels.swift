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
/// Four-lane vectors (see ``mixStereoQuad``: the same sums, lane by lane, without the
/// compiler's overlap checks); when adding, channel 0 and then channel 1, as ``mixStereoQuad``.
@_noLocks
@inline(__always)
func mixStereo(
    _ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>, _ s0: UnsafePointer<Float>,
    _ s1: UnsafePointer<Float>, _ count: Int, _ g: Float, fresh: Bool = false
) {
    let vg = SIMD4<Float>(repeating: g)
    var i = 0
    if fresh {
        let zero = SIMD4<Float>(repeating: 0)
        while i &+ 4 <= count {
            store4(d0, i, zero + load4(s0, i) * vg)
            store4(d1, i, zero + load4(s1, i) * vg)
            i &+= 4
        }
        while i < count {
            d0[i] = 0 + s0[i] * g
            d1[i] = 0 + s1[i] * g
            i &+= 1
        }
    } else {
        addChannel(d0, s0, count, g)
        addChannel(d1, s1, count, g)
    }
}

/// d[i] += s[i] × g: one output channel of ``mixStereo`` when it adds.
@_noLocks
@inline(__always)
func addChannel(_ d: UnsafeMutablePointer<Float>, _ s: UnsafePointer<Float>, _ count: Int, _ g: Float) {
    let vg = SIMD4<Float>(repeating: g)
    var i = 0
    while i &+ 4 <= count {
        store4(d, i, load4(d, i) + load4(s, i) * vg)
        i &+= 4
    }
    while i < count {
        d[i] += s[i] * g
        i &+= 1
    }
}

/// Two stereo queues in one pass over the outputs: d0[i] = (d0[i] + a0[i] × ga) + b0[i] × gb,
/// and the same for channel 1. The same operations in the same order as ``mixStereo`` for
/// queue a and then for queue b (bit for bit the same result), with one read and one write
/// of the outputs instead of two. `fresh` as in ``mixStereo``; vectors as in ``mixStereoQuad``.
@_noLocks
@inline(__always)
func mixStereoPair(
    _ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>, _ a0: UnsafePointer<Float>,
    _ a1: UnsafePointer<Float>, _ ga: Float, _ b0: UnsafePointer<Float>, _ b1: UnsafePointer<Float>, _ gb: Float,
    _ count: Int, fresh: Bool
) {
    let va = SIMD4<Float>(repeating: ga), vb = SIMD4<Float>(repeating: gb)
    var i = 0
    if fresh {
        let zero = SIMD4<Float>(repeating: 0)
        while i &+ 4 <= count {
            store4(d0, i, (zero + load4(a0, i) * va) + load4(b0, i) * vb)
            store4(d1, i, (zero + load4(a1, i) * va) + load4(b1, i) * vb)
            i &+= 4
        }
        while i < count {
            d0[i] = (0 + a0[i] * ga) + b0[i] * gb
            d1[i] = (0 + a1[i] * ga) + b1[i] * gb
            i &+= 1
        }
    } else {
        addPairChannel(d0, a0, ga, b0, gb, count)
        addPairChannel(d1, a1, ga, b1, gb, count)
    }
}

/// d[i] = (d[i] + a[i] × ga) + b[i] × gb: one output channel of ``mixStereoPair`` when it adds.
@_noLocks
@inline(__always)
func addPairChannel(
    _ d: UnsafeMutablePointer<Float>, _ a: UnsafePointer<Float>, _ ga: Float, _ b: UnsafePointer<Float>, _ gb: Float,
    _ count: Int
) {
    let va = SIMD4<Float>(repeating: ga), vb = SIMD4<Float>(repeating: gb)
    var i = 0
    while i &+ 4 <= count {
        store4(d, i, (load4(d, i) + load4(a, i) * va) + load4(b, i) * vb)
        i &+= 4
    }
    while i < count {
        d[i] = (d[i] + a[i] * ga) + b[i] * gb
        i &+= 1
    }
}

/// Four floats from `p + i` (any alignment).
@_noLocks @inline(__always)
func load4(_ p: UnsafePointer<Float>, _ i: Int) -> SIMD4<Float> {
    UnsafeRawPointer(p + i).loadUnaligned(as: SIMD4<Float>.self)
}

/// Four floats to `p + i` (any alignment).
@_noLocks @inline(__always)
func store4(_ p: UnsafeMutablePointer<Float>, _ i: Int, _ v: SIMD4<Float>) {
    UnsafeMutableRawPointer(p + i).storeBytes(of: v, as: SIMD4<Float>.self)
}

/// Four stereo queues in one pass over the outputs: d0[i] = (((d0[i] + a0[i] × ga) + b0[i] × gb)
/// + c0[i] × gc) + e0[i] × ge, and the same for channel 1. The same operations in the same order
/// as ``mixStereo`` for queue a, b, c and then e (bit for bit the same result: each lane is one
/// frame's IEEE product and sums), with one read and one write of the outputs instead of four.
/// `fresh` as in ``mixStereo``. Written with four-lane vectors: the outputs never overlap the
/// sources (device buffers and queue buffers), so the compiler's overlap checks and their
/// set-up, paid per call, are not needed. One output channel after the other, eight frames per
/// iteration with every load before the two stores: with both channels in one loop, an
/// iteration's source loads could carry the low address bits of the previous iteration's output
/// stores (the outputs 16 bytes after the sources modulo 4 KiB), a false dependency at every
/// iteration that cost half again the cycle (docs/benchmarking.md, "a layout the four-queue
/// kernel lost in").
@_noLocks
@inline(__always)
func mixStereoQuad(
    _ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>,
    _ a0: UnsafePointer<Float>, _ a1: UnsafePointer<Float>, _ ga: Float,
    _ b0: UnsafePointer<Float>, _ b1: UnsafePointer<Float>, _ gb: Float,
    _ c0: UnsafePointer<Float>, _ c1: UnsafePointer<Float>, _ gc: Float,
    _ e0: UnsafePointer<Float>, _ e1: UnsafePointer<Float>, _ ge: Float,
    _ count: Int, fresh: Bool
) {
    mixQuadChannel(d0, a0, ga, b0, gb, c0, gc, e0, ge, count, fresh: fresh)
    mixQuadChannel(d1, a1, ga, b1, gb, c1, gc, e1, ge, count, fresh: fresh)
}

/// One output channel of ``mixStereoQuad``: d[i] = (((d[i] + a[i] × ga) + b[i] × gb) + c[i] × gc)
/// + e[i] × ge, with 0 for d[i] when `fresh` (d is then only written). Eight frames per
/// iteration, every load before the two stores.
@_noLocks
@inline(__always)
func mixQuadChannel(
    _ d: UnsafeMutablePointer<Float>, _ a: UnsafePointer<Float>, _ ga: Float, _ b: UnsafePointer<Float>, _ gb: Float,
    _ c: UnsafePointer<Float>, _ gc: Float, _ e: UnsafePointer<Float>, _ ge: Float, _ count: Int, fresh: Bool
) {
    let va = SIMD4<Float>(repeating: ga), vb = SIMD4<Float>(repeating: gb)
    let vc = SIMD4<Float>(repeating: gc), ve = SIMD4<Float>(repeating: ge)
    @inline(__always) func sum(_ v: SIMD4<Float>, _ i: Int) -> SIMD4<Float> {
        (((v + load4(a, i) * va) + load4(b, i) * vb) + load4(c, i) * vc) + load4(e, i) * ve
    }
    @inline(__always) func sum(_ v: Float, _ i: Int) -> Float {
        (((v + a[i] * ga) + b[i] * gb) + c[i] * gc) + e[i] * ge
    }
    var i = 0
    if fresh {
        let zero = SIMD4<Float>(repeating: 0)
        while i &+ 8 <= count {
            let x = sum(zero, i), y = sum(zero, i &+ 4)
            store4(d, i, x)
            store4(d, i &+ 4, y)
            i &+= 8
        }
        while i < count {
            d[i] = sum(0, i)
            i &+= 1
        }
    } else {
        while i &+ 8 <= count {
            let x = sum(load4(d, i), i), y = sum(load4(d, i &+ 4), i &+ 4)
            store4(d, i, x)
            store4(d, i &+ 4, y)
            i &+= 8
        }
        while i &+ 4 <= count {
            store4(d, i, sum(load4(d, i), i))
            i &+= 4
        }
        while i < count {
            d[i] = sum(d[i], i)
            i &+= 1
        }
    }
}

/// Up to three steady stereo queues (both source channels and the gain of each) waiting in the
/// render loop, in the order they came, for a fourth, so that four mix in one pass over the
/// outputs (``mixStereoQuad``). A plain value on the render thread's stack.
struct PendingStereo {
    var count: Int
    var a0: UnsafePointer<Float>?, a1: UnsafePointer<Float>?, ga: Float
    var b0: UnsafePointer<Float>?, b1: UnsafePointer<Float>?, gb: Float
    var c0: UnsafePointer<Float>?, c1: UnsafePointer<Float>?, gc: Float

    /// Nothing waiting. Render thread (written out: the synthesized initializer is not
    /// inlined in a debug build, which `@_noLocks` refuses).
    @_noLocks @inline(__always)
    init() {
        count = 0
        a0 = nil; a1 = nil; ga = 0
        b0 = nil; b1 = nil; gb = 0
        c0 = nil; c1 = nil; gc = 0
    }

    /// Appends a queue (``count`` < 3). Render thread.
    @_noLocks @inline(__always)
    mutating func append(_ s0: UnsafePointer<Float>, _ s1: UnsafePointer<Float>, _ g: Float) {
        if count == 0 {
            a0 = s0; a1 = s1; ga = g
        } else if count == 1 {
            b0 = s0; b1 = s1; gb = g
        } else {
            c0 = s0; c1 = s1; gc = g
        }
        count += 1
    }

    /// Mixes the queues waiting (at least one) and then queue x (both channels and its gain),
    /// in that order, into outputs 0 and 1 (`n` frames): the same sums in the same order as one
    /// ``mixStereo`` per queue. Nothing waits afterwards; the outputs hold the sums (the
    /// caller's `fresh`, as in ``mixStereo``, is false from then on). Render thread.
    ///
    /// Not inlined, nor is the other `flush`: a call once per four queues. With the kernels
    /// inlined where the render loop flushes, the loop's code and its spills grew, and a cycle
    /// of 16 queues took longer.
    @_noLocks @inline(never)
    mutating func flush(
        _ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>, _ n: Int, fresh: Bool,
        then x0: UnsafePointer<Float>, _ x1: UnsafePointer<Float>, _ gx: Float
    ) {
        switch count {
        case 0: mixStereo(d0, d1, x0, x1, n, gx, fresh: fresh)
        case 1: mixStereoPair(d0, d1, a0!, a1!, ga, x0, x1, gx, n, fresh: fresh)
        case 2:
            mixStereoPair(d0, d1, a0!, a1!, ga, b0!, b1!, gb, n, fresh: fresh)
            mixStereo(d0, d1, x0, x1, n, gx)
        default: mixStereoQuad(d0, d1, a0!, a1!, ga, b0!, b1!, gb, c0!, c1!, gc, x0, x1, gx, n, fresh: fresh)
        }
        count = 0
    }

    /// Mixes the queues waiting, in order, into outputs 0 and 1 (`n` frames), as
    /// ``flush(_:_:_:fresh:then:_:_:)`` without a queue after them. Render thread.
    @_noLocks @inline(never)
    mutating func flush(_ d0: UnsafeMutablePointer<Float>, _ d1: UnsafeMutablePointer<Float>, _ n: Int, fresh: Bool) {
        switch count {
        case 0: return
        case 1: mixStereo(d0, d1, a0!, a1!, n, ga, fresh: fresh)
        case 2: mixStereoPair(d0, d1, a0!, a1!, ga, b0!, b1!, gb, n, fresh: fresh)
        default:
            mixStereoPair(d0, d1, a0!, a1!, ga, b0!, b1!, gb, n, fresh: fresh)
            mixStereo(d0, d1, c0!, c1!, n, gc)
        }
        count = 0
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
