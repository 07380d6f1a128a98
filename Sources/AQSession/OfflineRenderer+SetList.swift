import AQEngine
import Foundation

extension OfflineRenderer {
    /// Renders a set list: `sessions` one after another into one WAV file, each starting
    /// exactly where the previous one ended, after its own `[session] gap` of silence (none
    /// for the first). The file has the most output channels of any session (the others'
    /// extra channels are silent) and is rendered at `sampleRate` (nil: the first session's
    /// ``defaultSampleRate(_:)``). Each session is rendered exactly as ``render(session:to:format:sampleRate:cycleFrames:options:from:progress:)``
    /// renders it alone.
    ///
    /// Thread safety: any control thread; it becomes the render thread while it runs.
    ///
    /// - Returns: one ``Result`` per session (its frames, without the gap before it).
    /// - Throws: ``SessionError`` as for one session; a loop without a count in any session is
    ///   refused before anything is rendered.
    @discardableResult
    package static func renderSetList(
        _ sessions: [Session], to url: URL, format: WAVSampleFormat = .f32, sampleRate: Double? = nil, cycleFrames: Int = 1024
    ) throws(SessionError) -> [Result] {
        guard let first = sessions.first else { throw SessionError(.invalidValue, file: url.path, "a set list needs at least one session") }
        for s in sessions { try refuseEndlessLoop(s) }
        let rate = sampleRate ?? defaultSampleRate(first)
        let channels = sessions.map(\.output.channels).max() ?? 2
        let writer = try WAVWriter(url: url, sampleRate: Int(rate.rounded()), channels: channels, format: format)
        let silence = UnsafeMutablePointer<Float>.allocate(capacity: cycleFrames)
        silence.initialize(repeating: 0, count: cycleFrames)
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
        defer { silence.deallocate(); planes.deallocate() }
        for c in 0..<channels { planes[c] = silence }
        var results: [Result] = []
        for (i, session) in sessions.enumerated() {
            let began = Date()
            // The set list's timing rule (``SetList``, shared with live play): the gap, then the session.
            do {
                var left = SetList.gapFrames(before: session, at: i, deviceRate: rate)
                while left > 0 {
                    let n = Int(min(left, Int64(cycleFrames)))
                    try writer.write(planar: planes, frames: n)
                    left -= Int64(n)
                }
            }
            let (frames, tracks) = try renderSession(
                session, into: { () throws(SessionError) -> WAVWriter in writer }, rate: rate, cycleFrames: cycleFrames, options: SessionPlayer.Options(), from: .frames(0), progress: nil)
            results.append(Result(
                frames: frames, sampleRate: rate, channels: session.output.channels, seconds: Date().timeIntervalSince(began),
                clippedSamples: 0, tracks: tracks))
        }
        try writer.finish()
        if var last = results.popLast() {
            last.clippedSamples = writer.clippedSamples
            results.append(last)
        }
        return results
    }
}
