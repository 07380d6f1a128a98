/// A rate measured over a long baseline (issue 26: starting at an instant).
///
/// One cycle's rate estimate comes from JACK's microsecond cycle times: over a 5.3 ms period a
/// microsecond is 190 ppm, which extrapolated over 0.5 s moves a frame by up to 95 µs (4.5
/// frames at 48 kHz; measured: 2.2 frames in the first live run of `StartAtOnJACKTests`). Two
/// anchors a second or more apart give the rate to about a ppm.
extension DeviceTimebase {
    /// This timebase (its anchor) with the rate measured between `earlier`'s anchor and this
    /// one's, or nil when that says nothing sure: `earlier` is less than `minimumSeconds`
    /// before, or the rate differs from this cycle's own estimate by more than `tolerance`
    /// (1000 ppm: frames lost or kept between the two, a discontinuity — check the engine's
    /// discontinuity epoch too). Any thread.
    public func refined(since earlier: DeviceTimebase, minimumSeconds: Double = 0.25, tolerance: Double = 1e-3) -> DeviceTimebase? {
        guard anchorHostTime > earlier.anchorHostTime, anchorFrame > earlier.anchorFrame, nominalRate == earlier.nominalRate else { return nil }
        let ns = Double(anchorHostTime - earlier.anchorHostTime)
        guard ns >= minimumSeconds * 1e9 else { return nil }
        let frames = Double(anchorFrame - earlier.anchorFrame)
        // rateScalar = actual ns per frame × nominal rate / 1e9.
        let scalar = ns / frames * nominalRate / 1e9
        guard abs(scalar / rateScalar - 1) <= tolerance else { return nil }
        var out = self
        out.rateScalar = scalar
        return out
    }
}
