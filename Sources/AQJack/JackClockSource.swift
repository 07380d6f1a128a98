import CJACK
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The clock behind `jack_get_time()` (and so behind the microsecond times of
/// `jack_get_cycle_times`), as identified when a ``JackDevice`` opens its client.
///
/// Finding on this project's machines (Debian, jackd2 1.9.21, default `--clocksource system`):
/// `jack_get_time()` reads **CLOCK_MONOTONIC_RAW**, not CLOCK_MONOTONIC. Measured from Swift,
/// `jack_get_time()·1000 − CLOCK_MONOTONIC_RAW` stayed within −1.0 … +1.4 µs (the microsecond
/// truncation) while `jack_get_time()·1000 − CLOCK_MONOTONIC` was −249.49 ms (the NTP slew
/// accumulated since boot). Our host time is CLOCK_MONOTONIC nanoseconds, so the device adds
/// the CLOCK_MONOTONIC − CLOCK_MONOTONIC_RAW offset, measured afresh every cycle, to JACK's
/// times. The identification is made at run time, so a JACK that uses CLOCK_MONOTONIC (older
/// jackd2) or another clock (`-c h`, HPET) is handled too.
///
/// Thread safety: a plain value.
public enum JackClockSource: UInt8, Sendable, BitwiseCopyable, CustomStringConvertible {
    /// `jack_get_time` reads CLOCK_MONOTONIC: JACK's microseconds × 1000 are host time.
    case monotonic
    /// `jack_get_time` reads CLOCK_MONOTONIC_RAW: host time = JACK's time + (MONOTONIC − RAW).
    case monotonicRaw
    /// Neither: host time = JACK's time + (MONOTONIC − jack_get_time()), measured each cycle
    /// (about 1 µs of jitter from JACK's microsecond resolution).
    case other

    public var description: String {
        switch self {
        case .monotonic: "CLOCK_MONOTONIC"
        case .monotonicRaw: "CLOCK_MONOTONIC_RAW"
        case .other: "another clock"
        }
    }

    /// Compares `jack_get_time()` with CLOCK_MONOTONIC and CLOCK_MONOTONIC_RAW, 64 times, and
    /// names the clock it reads. When both system clocks agree within 5 µs (no NTP slew yet)
    /// the two are indistinguishable and `.monotonicRaw` (what jackd2 1.9.21 reads) is chosen.
    /// Any control thread; needs no client (libjack's clock works without one).
    public static func identify() -> JackClockSource {
        var dMono = [Int64](), dRaw = [Int64]()
        dMono.reserveCapacity(64)
        dRaw.reserveCapacity(64)
        for _ in 0..<64 {
            let m0 = clockNs(CLOCK_MONOTONIC), r0 = clockNs(CLOCK_MONOTONIC_RAW)
            let j = Int64(jack_get_time()) &* 1000
            let r1 = clockNs(CLOCK_MONOTONIC_RAW), m1 = clockNs(CLOCK_MONOTONIC)
            dMono.append(j - (m0 + m1) / 2)
            dRaw.append(j - (r0 + r1) / 2)
        }
        let mono = abs(dMono.sorted()[32]), raw = abs(dRaw.sorted()[32])
        let tolerance: Int64 = 5_000
        switch (mono <= tolerance, raw <= tolerance) {
        case (true, false): return .monotonic
        case (false, true), (true, true): return .monotonicRaw
        case (false, false): return .other
        }
    }

    /// Nanoseconds to add to JACK's time (microseconds × 1000) to get CLOCK_MONOTONIC
    /// nanoseconds, measured now: from the narrowest of three windows of two CLOCK_MONOTONIC
    /// reads around one read of JACK's clock (a window the thread was preempted or the host
    /// stole time in is wide, and its middle off by up to half its width: 40 µs seen on a
    /// loaded VM with one window). Any thread, render thread included (clock reads only).
    @_noLocks
    func offsetToMonotonicNs() -> Int64 {
        if case .monotonic = self { return 0 }
        var best: Int64 = 0, width = Int64.max
        for _ in 0..<3 {
            let m0 = clockNs(CLOCK_MONOTONIC)
            let j = jackClockNs()
            let m1 = clockNs(CLOCK_MONOTONIC)
            if m1 &- m0 < width {
                width = m1 &- m0
                best = (m0 &+ (m1 &- m0) / 2) &- j
            }
        }
        return best
    }

    /// JACK's clock now, in nanoseconds (CLOCK_MONOTONIC_RAW, or jack_get_time's microseconds
    /// and the middle of the microsecond). Render thread included.
    @_noLocks
    private func jackClockNs() -> Int64 {
        switch self {
        case .monotonic: return clockNs(CLOCK_MONOTONIC)
        case .monotonicRaw: return clockNs(CLOCK_MONOTONIC_RAW)
        case .other:
            var j: jack_time_t = 0
            // jack_get_time reads a clock; no lock, no allocation.
            _unsafePerformance { j = jack_get_time() }
            return Int64(truncatingIfNeeded: j &* 1000)
        }
    }
}

/// Nanoseconds on clock `id`. Any thread: clock_gettime is a vDSO call, no lock, no allocation.
@_noLocks
func clockNs(_ id: clockid_t) -> Int64 {
    var ts = timespec()
    _unsafePerformance { _ = clock_gettime(id, &ts) }
    return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
}
