#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Host time: nanoseconds on CLOCK_MONOTONIC. (jackd2 1.9.21's `jack_get_time` reads
/// CLOCK_MONOTONIC_RAW in microseconds; the JACK device converts — see docs/jack-device.md.)
///
/// Thread safety: any thread, including the render thread.
public enum HostClock {
    /// Nanoseconds on CLOCK_MONOTONIC now.
    @_noLocks
    public static func now() -> UInt64 {
        var ts = timespec()
        // clock_gettime is a vDSO call: no lock, no allocation.
        _unsafePerformance { _ = clock_gettime(CLOCK_MONOTONIC, &ts) }
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}
