/// A moment on a device's or a queue's timeline (Core Audio's `AudioTimeStamp`): a sample
/// time, a host time and a rate scalar, with flags saying which are valid.
///
/// Thread safety: a plain value; any thread.
public struct AudioTimeStamp: Sendable, Equatable, BitwiseCopyable {
    public struct Flags: OptionSet, Sendable, BitwiseCopyable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// `kAudioTimeStampSampleTimeValid`
        public static let sampleTimeValid = Flags(rawValue: 1 << 0)
        /// `kAudioTimeStampHostTimeValid`
        public static let hostTimeValid = Flags(rawValue: 1 << 1)
        /// `kAudioTimeStampRateScalarValid`
        public static let rateScalarValid = Flags(rawValue: 1 << 2)
    }

    /// Frames: device frames for device times, queue frames (at the queue's rate) for queue times.
    public var sampleTime: Double
    /// Nanoseconds on CLOCK_MONOTONIC.
    public var hostTime: UInt64
    /// Measured frames per second over the nominal rate.
    public var rateScalar: Double
    public var flags: Flags

    public init(sampleTime: Double = 0, hostTime: UInt64 = 0, rateScalar: Double = 0, flags: Flags) {
        self.sampleTime = sampleTime
        self.hostTime = hostTime
        self.rateScalar = rateScalar
        self.flags = flags
    }

    /// A time stamp holding only a sample time.
    public init(sampleTime: Double) {
        self.init(sampleTime: sampleTime, flags: .sampleTimeValid)
    }

    /// A time stamp holding only a host time.
    public init(hostTime: UInt64) {
        self.init(hostTime: hostTime, flags: .hostTimeValid)
    }
}

/// The line between device sample time and host time at one cycle anchor, and the maths on it.
///
/// Thread safety: a plain value; any thread.
public struct DeviceTimebase: Sendable, Equatable {
    /// Device frame of the anchor.
    public var anchorFrame: Int64
    /// Host time (ns) of the anchor frame.
    public var anchorHostTime: UInt64
    /// Nominal frames per second.
    public var nominalRate: Double
    /// Apple's `mRateScalar`: the actual host time per sample frame over the nominal host time
    /// per frame (above 1 when the device runs slow; 1 when the device gave no estimate).
    public var rateScalar: Double

    public init(anchorFrame: Int64, anchorHostTime: UInt64, nominalRate: Double, rateScalar: Double) {
        self.anchorFrame = anchorFrame
        self.anchorHostTime = anchorHostTime
        self.nominalRate = nominalRate
        self.rateScalar = rateScalar
    }

    /// The timebase of a cycle anchor: the rate comes from the device's estimate of the next
    /// cycle's host time when it gave one, and is clamped to ±5 % of nominal.
    public init(cycle: CycleInfo, nominalRate: Double) {
        var scalar = 1.0
        if cycle.nextHostTimeNs > cycle.hostTimeNs && cycle.frames > 0 {
            let actualNsPerFrame = Double(cycle.nextHostTimeNs - cycle.hostTimeNs) / Double(cycle.frames)
            scalar = min(max(actualNsPerFrame * nominalRate / 1e9, 0.95), 1.05)
        }
        self.init(
            anchorFrame: cycle.frame, anchorHostTime: cycle.hostTimeNs, nominalRate: nominalRate,
            rateScalar: scalar)
    }

    /// Frames per nanosecond, measured.
    public var framesPerNanosecond: Double { nominalRate / rateScalar / 1e9 }

    /// Host time of device sample time `sample`, rounded to the nanosecond.
    public func hostTime(forSampleTime sample: Double) -> UInt64 {
        let delta = (sample - Double(anchorFrame)) / framesPerNanosecond
        let host = Double(anchorHostTime) + delta.rounded()
        return host <= 0 ? 0 : UInt64(host)
    }

    /// Device sample time at host time `host` (fractional).
    public func sampleTime(forHostTime host: UInt64) -> Double {
        let delta = host >= anchorHostTime
            ? Double(host - anchorHostTime) : -Double(anchorHostTime - host)
        return Double(anchorFrame) + delta * framesPerNanosecond
    }

    /// A full time stamp for device sample time `sample`.
    public func timeStamp(forSampleTime sample: Double) -> AudioTimeStamp {
        AudioTimeStamp(
            sampleTime: sample, hostTime: hostTime(forSampleTime: sample), rateScalar: rateScalar,
            flags: [.sampleTimeValid, .hostTimeValid, .rateScalarValid])
    }

    /// Fills in whatever `ts` lacks: the sample time from its host time or the other way round.
    /// Nil when `ts` has neither.
    public func complete(_ ts: AudioTimeStamp) -> AudioTimeStamp? {
        if ts.flags.contains(.sampleTimeValid) { return timeStamp(forSampleTime: ts.sampleTime) }
        if ts.flags.contains(.hostTimeValid) {
            var out = timeStamp(forSampleTime: sampleTime(forHostTime: ts.hostTime))
            out.hostTime = ts.hostTime
            return out
        }
        return nil
    }
}
