/// A rate measured over a long baseline (issue 26: starting at an instant).
///
/// One cycle's rate estimate comes from JACK's microsecond cycle times: over a 5.3 ms period a
/// microsecond is 190 ppm, which extrapolated over 0.5 s moves a frame by up to 95 µs (4.5
/// frames at 48 kHz; measured: 2.2 frames in the first live run of `StartAtOnJACKTests`). Two
/// anchors a second or more apart give the rate to about a ppm.
extension DeviceTimebase {
    /// The most a device's rate may be off its nominal rate and still be taken for its rate:
    /// 1000 ppm. A sound card's crystal is within ±100 ppm of nominal (cheap USB devices ±300),
    /// and jackd's clock filter (DLL) on a running server follows it; a line through the
    /// server's cycle times that runs further off than that is the filter still correcting a
    /// disturbance (a stall or a re-anchor after an xrun: measured −16 132 ppm over 0.12 s in
    /// CI), whose frame for a later instant no rate measured before can predict.
    public static let plausibleRateDeviation = 1e-3

    /// The rate off nominal, in ppm (positive: more frames per second than nominal).
    public var ppmOffNominal: Double { (1 / rateScalar - 1) * 1e6 }

    /// This timebase (its anchor) with the rate measured between `earlier`'s anchor and this
    /// one's, or nil when that says nothing sure: `earlier` is less than `minimumSeconds`
    /// before, the rate differs from this cycle's own estimate by more than `tolerance`
    /// (1000 ppm: frames lost or kept between the two, a discontinuity — check the engine's
    /// discontinuity epoch too), or it is more than ``plausibleRateDeviation`` off nominal
    /// (see ``BaselineRate``). Any thread.
    public func refined(since earlier: DeviceTimebase, minimumSeconds: Double = 0.25, tolerance: Double = 1e-3) -> DeviceTimebase? {
        guard let scalar = baselineScalar(since: earlier, minimumSeconds: minimumSeconds),
              abs(scalar / rateScalar - 1) <= tolerance, abs(scalar - 1) <= Self.plausibleRateDeviation else { return nil }
        var out = self
        out.rateScalar = scalar
        return out
    }

    /// The rate scalar of the line from `earlier`'s anchor to this one's, unchecked; nil when
    /// the two are not in order, of other nominal rates, or less than `minimumSeconds` apart.
    func baselineScalar(since earlier: DeviceTimebase, minimumSeconds: Double) -> Double? {
        guard anchorHostTime > earlier.anchorHostTime, anchorFrame > earlier.anchorFrame, nominalRate == earlier.nominalRate else { return nil }
        let ns = Double(anchorHostTime - earlier.anchorHostTime)
        guard ns >= minimumSeconds * 1e9 else { return nil }
        let frames = Double(anchorFrame - earlier.anchorFrame)
        // rateScalar = actual ns per frame × nominal rate / 1e9.
        return ns / frames * nominalRate / 1e9
    }
}

/// What a start at an instant may take the device's rate from (issue 26): the rate measured
/// from earlier reference cycles to the latest cycle, judged. Made by
/// ``judge(latest:references:minimumSeconds:)``; a plain value, any thread.
///
/// The decision, and why (docs/multi-machine.md, "How close"):
/// - ``Verdict-swift.enum/measured``: the references at least `minimumSeconds` back give a
///   rate within ``DeviceTimebase/plausibleRateDeviation`` of nominal, and most of them agree
///   with the latest cycle's own estimate within 1000 ppm: the prediction is made through each
///   of those (``timebases``).
/// - ``Verdict-swift.enum/noBaseline``: no reference is far enough back (or none is given):
///   the latest cycle's own rate is used, as long as it is itself plausible.
/// - ``Verdict-swift.enum/implausible``: the baseline's rate (or, without a baseline, the
///   cycle's own) is further off nominal than that, or the references disagree with the
///   latest cycle (a line that bends: the server re-anchored its clock inside the baseline).
///   The server's clock is being corrected; the frame it will give the instant cannot be
///   known to within a frame, by that rate or by the nominal rate (−16 000 ppm over 0.13 s is
///   100 frames): the start is refused, never made from it.
public struct BaselineRate: Sendable, Equatable {
    public enum Verdict: Sendable, Equatable {
        case measured
        case noBaseline
        case implausible
    }

    public var verdict: Verdict
    /// The latest cycle refined through each reference that gives a sure rate (`.measured`),
    /// or the latest cycle alone (`.noBaseline`); empty when `.implausible`.
    public var timebases: [DeviceTimebase]
    /// The median rate off nominal (ppm) over the baseline, or the cycle's own without one.
    public var ppm: Double
    /// The median baseline (s); 0 without one.
    public var seconds: Double
    /// Why, in words, when `.implausible` (for an error line); empty otherwise.
    public var reason: String

    /// Judges the rate from `references` (earlier cycles of the same discontinuity epoch,
    /// oldest first or in any order) to `latest`. Pure: no clock is read.
    public static func judge(latest: DeviceTimebase, references: [DeviceTimebase], minimumSeconds: Double) -> BaselineRate {
        let bound = DeviceTimebase.plausibleRateDeviation
        let lines = references.compactMap { r in
            latest.baselineScalar(since: r, minimumSeconds: minimumSeconds).map { (scalar: $0, seconds: Double(latest.anchorHostTime - r.anchorHostTime) / 1e9) }
        }
        guard !lines.isEmpty else {
            let ppm = latest.ppmOffNominal
            if abs(latest.rateScalar - 1) > bound {
                return BaselineRate(verdict: .implausible, timebases: [], ppm: ppm, seconds: 0,
                                    reason: "the latest cycle's own rate is \(fmt(ppm)) ppm off nominal and there is no baseline of \(fmt(minimumSeconds)) s to measure it over (beyond ±\(fmt(bound * 1e6)) ppm the server's clock is being corrected)")
            }
            return BaselineRate(verdict: .noBaseline, timebases: [latest], ppm: ppm, seconds: 0, reason: "")
        }
        let scalars = lines.map(\.scalar).sorted()
        let scalar = scalars[scalars.count / 2]
        let seconds = lines.map(\.seconds).sorted()[lines.count / 2]
        let ppm = (1 / scalar - 1) * 1e6
        if abs(scalar - 1) > bound {
            return BaselineRate(verdict: .implausible, timebases: [], ppm: ppm, seconds: seconds,
                                reason: "the server's clock ran \(fmt(ppm)) ppm off nominal over the \(fmt(seconds)) s before (beyond ±\(fmt(bound * 1e6)) ppm: its clock filter is still correcting a stall or a re-anchor)")
        }
        let sure = references.compactMap { latest.refined(since: $0, minimumSeconds: minimumSeconds) }
        guard sure.count * 2 > lines.count else {
            return BaselineRate(verdict: .implausible, timebases: [], ppm: ppm, seconds: seconds,
                                reason: "the server's clock over the \(fmt(seconds)) s before (\(fmt(ppm)) ppm off nominal) disagrees with its latest cycle's own rate (\(fmt(latest.ppmOffNominal)) ppm) by more than \(fmt(bound * 1e6)) ppm in \(lines.count - sure.count) of \(lines.count) references: its clock re-anchored or bent inside the baseline")
        }
        let sureScalars = sure.map(\.rateScalar).sorted()
        return BaselineRate(verdict: .measured, timebases: sure, ppm: (1 / sureScalars[sureScalars.count / 2] - 1) * 1e6, seconds: seconds, reason: "")
    }

    private static func fmt(_ v: Double) -> String {
        let r = (v * 1000).rounded() / 1000
        return "\(r)"
    }
}

extension BaselineRate {
    /// The device time of host time `host`, judged through `anchors` (the timebases of
    /// successive device cycles) and `references` (earlier cycles of the same discontinuity
    /// epoch): at each anchor the rate is judged (``judge(latest:references:minimumSeconds:)``)
    /// and the prediction is the median through the timebases it gives; an anchor whose rate is
    /// implausible is left out, as a noisy anchor is (one cycle whose own estimate bends with
    /// one late wake-up). Pure; any thread.
    /// - Returns: the median of the predictions, their spread (largest − smallest, frames) and
    ///   the rate of the last anchor used; or, when half of the anchors or more were left out
    ///   (or none was given), nil and the reason of their median one.
    public static func deviceTime(
        ofHostTime host: UInt64, anchors: [DeviceTimebase], references: [DeviceTimebase], minimumSeconds: Double
    ) -> (time: (sampleTime: Double, spread: Double, rate: BaselineRate)?, refusal: String) {
        var samples: [Double] = []
        var used: BaselineRate?
        var refused: [BaselineRate] = []
        for anchor in anchors {
            let rate = judge(latest: anchor, references: references, minimumSeconds: minimumSeconds)
            guard rate.verdict != .implausible else {
                refused.append(rate)
                continue
            }
            let predictions = rate.timebases.map { $0.sampleTime(forHostTime: host) }.sorted()
            samples.append(predictions[predictions.count / 2])
            used = rate
        }
        guard let used, refused.count < samples.count else {
            let reason = refused.isEmpty ? "no device cycle" : refused[refused.count / 2].reason
            return (nil, "\(reason) (at \(refused.count) of \(anchors.count) anchors)")
        }
        samples.sort()
        return ((samples[samples.count / 2], samples.last! - samples.first!, used), "")
    }
}
