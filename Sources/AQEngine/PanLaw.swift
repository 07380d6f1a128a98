#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `kAudioQueueParam_Pan`'s law (issue 22): the factors what a queue sends to the left
/// (output 0) and right (output 1) outputs are multiplied by, for a pan position p in −1…1
/// (−1 hard left, 0 centre, 1 hard right). Apple documents the range and that a mono source is
/// panned, a stereo source's balance changes and a source of more channels is not affected,
/// but not the curves; these are the ones chosen here (docs/c-api.md, "Pan and volume ramps"):
///
/// - **mono** (one channel, played on both outputs): equal power, compensated so that the
///   centre is unity — θ = (p + 1) × π/4, left = √2 × cos θ, right = √2 × sin θ. The power
///   left² + right² is 2 at every position (as at the centre, where both are 1, which is how a
///   mono queue played before pan existed); a hard-panned source is 3 dB louder on its side
///   (√2 ≈ 1.414, which may exceed full scale: the device clips what goes past it), and exactly
///   silent on the other.
/// - **stereo** (two channels): balance — the far side fades linearly, the near side stays at
///   unity: left = min(1, 1 − p), right = min(1, 1 + p).
/// - **more channels**: no effect (1 and 1).
///
/// Any thread; pure.
public enum PanLaw {
    /// The (left, right) factors for pan position `pan` (−1…1) on a queue of `channels` channels.
    public static func factors(pan: Float, channels: Int) -> (left: Float, right: Float) {
        if pan == 0 { return (1, 1) }  // exactly the unpanned mix
        switch channels {
        case 1:
            // The hard positions exactly (cos(π/2) is not exactly 0 in floating point).
            if pan <= -1 { return (Float(2.0.squareRoot()), 0) }
            if pan >= 1 { return (0, Float(2.0.squareRoot())) }
            let theta = (Double(pan) + 1) * Double.pi / 4
            return (Float(2.0.squareRoot() * cos(theta)), Float(2.0.squareRoot() * sin(theta)))
        case 2:
            return (min(1, 1 - pan), min(1, 1 + pan))
        default:
            return (1, 1)
        }
    }
}
