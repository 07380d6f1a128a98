#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A clock of the system, read with `clock_gettime` (issue 26: starting at an instant).
///
/// Host time (``HostClock``) is CLOCK_MONOTONIC; JACK's microsecond clock is
/// CLOCK_MONOTONIC_RAW on jackd2 1.9.21 (the JACK device converts it, see `JackClockSource`);
/// wall-clock instants agreed between machines (PTP, NTP) are CLOCK_REALTIME.
///
/// Thread safety: a plain value; ``now()`` from any thread, the render thread included.
public enum SystemClock: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// CLOCK_REALTIME: the wall clock (UTC nanoseconds since 1970), stepped and slewed by
    /// PTP/NTP daemons. The clock machines keep in step.
    case realtime
    /// CLOCK_MONOTONIC: host time. Slewed by NTP, never stepped.
    case monotonic
    /// CLOCK_MONOTONIC_RAW: the hardware counter, never slewed (JACK's `jack_get_time`).
    case monotonicRaw

    /// The `clockid_t` of `clock_gettime`.
    public var clockID: clockid_t {
        switch self {
        case .realtime: CLOCK_REALTIME
        case .monotonic: CLOCK_MONOTONIC
        case .monotonicRaw: CLOCK_MONOTONIC_RAW
        }
    }

    /// The clock's name in `clock_gettime`'s terms (`CLOCK_REALTIME`, …).
    public var description: String {
        switch self {
        case .realtime: "CLOCK_REALTIME"
        case .monotonic: "CLOCK_MONOTONIC"
        case .monotonicRaw: "CLOCK_MONOTONIC_RAW"
        }
    }

    /// Nanoseconds on this clock now. Any thread (a vDSO call: no lock, no allocation).
    @_noLocks
    public func now() -> Int64 {
        var ts = timespec()
        let id = clockID
        _unsafePerformance { _ = clock_gettime(id, &ts) }
        return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
    }
}

/// An instant on a named system clock: `nanoseconds` read as that clock reads them
/// (CLOCK_REALTIME: since 1970-01-01T00:00:00Z; the monotonic clocks: since boot).
///
/// Thread safety: a plain value. ``hostTime()`` reads clocks only: any thread but the render
/// thread (it loops over a few dozen clock reads), does not block.
public struct SystemInstant: Sendable, Hashable, CustomStringConvertible {
    /// The clock the instant is read on.
    public var clock: SystemClock
    /// Nanoseconds on ``clock``.
    public var nanoseconds: Int64

    /// The instant `nanoseconds` on `clock`.
    public init(clock: SystemClock, nanoseconds: Int64) {
        self.clock = clock
        self.nanoseconds = nanoseconds
    }

    /// The instant now on `clock`. Any thread.
    public static func now(_ clock: SystemClock) -> SystemInstant {
        SystemInstant(clock: clock, nanoseconds: clock.now())
    }

    /// This instant plus `seconds` (rounded to the nanosecond).
    public func adding(seconds: Double) -> SystemInstant {
        SystemInstant(clock: clock, nanoseconds: nanoseconds &+ Int64((seconds * 1e9).rounded()))
    }

    /// Host time (CLOCK_MONOTONIC nanoseconds) of this instant, through an offset between the
    /// clocks measured now (``SystemClockOffset/measure(_:samples:reading:)``). 0 for an
    /// instant before the host clock's origin (boot). Any thread but the render thread; does
    /// not block.
    public func hostTime() -> UInt64 {
        hostTime(offset: SystemClockOffset.measure(clock))
    }

    /// Host time of this instant through `offset` (measured for ``clock``; for another clock
    /// the offset is ignored and the instant is taken to be on host time). 0 for an instant
    /// before boot. Any thread; does not block.
    public func hostTime(offset: SystemClockOffset) -> UInt64 {
        let off = clock == .monotonic || offset.clock != clock ? 0 : offset.nanoseconds
        let host = nanoseconds &- off
        return host <= 0 ? 0 : UInt64(host)
    }

    /// `N ns on CLOCK_…`, for messages.
    public var description: String { "\(nanoseconds) ns on \(clock)" }
}

/// The offset between a system clock and host time (CLOCK_MONOTONIC), measured by reading
/// the clock between two reads of host time: `clock − host` at the middle of the narrowest
/// bracket of all the samples (a read preempted or slowed by the host is wide, and its middle
/// off by up to half its width). The true offset at that moment is within
/// ``bracketNanoseconds`` / 2 of ``nanoseconds``.
///
/// Thread safety: a plain value; ``measure(_:samples:reading:)`` from any thread but the render
/// thread.
public struct SystemClockOffset: Sendable, Hashable {
    /// The clock measured against host time.
    public var clock: SystemClock
    /// `clock − host time`, nanoseconds: host time = instant on `clock` − this.
    public var nanoseconds: Int64
    /// The width of the bracket it was taken from (0 for CLOCK_MONOTONIC itself).
    public var bracketNanoseconds: Int64

    /// An offset known beforehand (tests, or one measured elsewhere).
    public init(clock: SystemClock, nanoseconds: Int64, bracketNanoseconds: Int64 = 0) {
        self.clock = clock
        self.nanoseconds = nanoseconds
        self.bracketNanoseconds = bracketNanoseconds
    }

    /// Measures `clock − CLOCK_MONOTONIC` now: `samples` brackets (host, clock, host), the
    /// narrowest kept. `reading` reads a clock (the system's by default; tests script it).
    /// Any thread but the render thread; does not block (about 3 × `samples` clock reads,
    /// well under 10 µs with the default 32).
    public static func measure(
        _ clock: SystemClock, samples: Int = 32, reading: (SystemClock) -> Int64 = { $0.now() }
    ) -> SystemClockOffset {
        if clock == .monotonic { return SystemClockOffset(clock: clock, nanoseconds: 0, bracketNanoseconds: 0) }
        var best = SystemClockOffset(clock: clock, nanoseconds: 0, bracketNanoseconds: .max)
        for _ in 0..<max(1, samples) {
            let h0 = reading(.monotonic)
            let c = reading(clock)
            let h1 = reading(.monotonic)
            let width = h1 &- h0
            if width >= 0 && width < best.bracketNanoseconds {
                best.bracketNanoseconds = width
                best.nanoseconds = c &- (h0 &+ width / 2)
            }
        }
        return best
    }
}
