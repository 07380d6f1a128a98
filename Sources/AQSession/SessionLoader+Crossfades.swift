import Foundation

extension SessionLoader {
    /// `crossfade = true`: a track crossfades with the track listed just before it, over the
    /// frames where they overlap. Checked here, at the session rate (the first track's file
    /// rate when the session gives none): the earlier track must start first and end inside
    /// the later one (an overlap of at least one frame, no track inside the other), and
    /// neither may have a fade of its own at that end. The lengths themselves are worked out
    /// at the device rate when the tracks play (``SessionPlayer/makeSource``), so that the
    /// crossfade is exact at any rate.
    /// `requested`: track index → the curve of its crossfade.
    static func linkCrossfades(_ tracks: inout [SessionTrack], requested: [Int: FadeCurve], sampleRate: Double?, loc: Locator) throws(SessionError) {
        guard let rate = sampleRate ?? tracks.first?.audio.format.sampleRate else { return }
        func span(_ t: SessionTrack) -> Range<Int64> {
            SessionCrossfade(curve: .linear, partner: t).partnerSpan(sessionRate: rate, deviceRate: rate)
        }
        for i in tracks.indices {
            guard let curve = requested[i] else { continue }
            let sec = Locator.Section.track(i)
            let name = "track '\(tracks[i].name)'"
            guard i > 0 else {
                throw loc.error(.invalidValue, key: "crossfade", section: sec, "\(name): crossfade needs a track listed before it to fade from")
            }
            let prev = tracks[i - 1]
            let a = span(prev), b = span(tracks[i])
            guard b.lowerBound > a.lowerBound else {
                throw loc.error(.invalidValue, key: "crossfade", section: sec, "\(name) starts at frame \(b.lowerBound), not after '\(prev.name)' (frame \(a.lowerBound)): it cannot crossfade from it")
            }
            guard b.lowerBound < a.upperBound else {
                throw loc.error(.invalidValue, key: "crossfade", section: sec, "\(name) starts at frame \(b.lowerBound), after '\(prev.name)' ends (frame \(a.upperBound)): they do not overlap, there is nothing to crossfade")
            }
            guard b.upperBound >= a.upperBound else {
                throw loc.error(.invalidValue, key: "crossfade", section: sec, "\(name) ends at frame \(b.upperBound), before '\(prev.name)' (frame \(a.upperBound)): a crossfade needs the earlier track to end inside the later one")
            }
            guard tracks[i].fadeIn == nil else {
                throw loc.error(.invalidValue, key: "crossfade", section: sec, "\(name) has both crossfade and fade_in: the crossfade is its fade-in")
            }
            guard prev.fadeOut == nil else {
                throw loc.error(.invalidValue, key: "crossfade", section: sec, "\(name) crossfades from '\(prev.name)', which has a fade_out: the crossfade is its fade-out")
            }
            tracks[i].crossfadeIn = SessionCrossfade(curve: curve, partner: prev)
            tracks[i - 1].crossfadeOut = SessionCrossfade(curve: curve, partner: tracks[i])
        }
    }
}
