import Foundation

extension CaptureRecorder {
    /// What became of a capture (``CaptureRecorder/report()``).
    ///
    /// Thread safety: a plain value; any thread.
    package struct Report: Sendable, Equatable {
        /// The file.
        package var file: URL
        /// Channels in the file: device inputs `0 ..< channels`.
        package var channels: Int
        /// Frames in the file.
        package var frames: Int64
        /// The device frame (at the inputs) of file frame 0; nil before ``CaptureRecorder/start()``.
        package var startFrame: Int64?
        /// Frames lost: silence in their place, or missing at the end when recording stopped.
        package var lostFrames: Int64
        /// Why recording stopped early, if a write failed.
        package var error: String?

        /// Makes a report.
        package init(file: URL, channels: Int, frames: Int64, startFrame: Int64?, lostFrames: Int64, error: String?) {
            self.file = file
            self.channels = channels
            self.frames = frames
            self.startFrame = startFrame
            self.lostFrames = lostFrames
            self.error = error
        }

        /// `capture: 240000 frames written to cap.wav (in_1…in_3, raw: file frame 0 is device
        /// frame 12288, session frame -12000)`, then `(N frames dropped: silence in their
        /// place)` and the error when there were any. `name`: the file as the user gave it;
        /// `sessionStart`: the device frame of session frame 0.
        package func summary(name: String, sessionStart: Int64) -> String {
            var s = "capture: \(frames) frames written to \(name) (\(Self.ports("in_", Array(0..<channels)))"
            if let startFrame { s += ", raw: file frame 0 is device frame \(startFrame), session frame \(startFrame - sessionStart)" }
            s += ")"
            if lostFrames > 0 { s += " (\(lostFrames) frames dropped: silence in their place)" }
            if let error { s += "; error: \(error)" }
            return s
        }

        /// `in_1`, `in_1…in_3` (consecutive), `in_1, in_3`; `none` for none (JACK's port
        /// names, 1-based).
        package static func ports(_ prefix: String, _ channels: [Int]) -> String {
            TakeRecorder.Report.ports(prefix, channels)
        }
    }

    /// The ports recorded: `in_1…in_3`. Any thread.
    package var portsText: String { Report.ports("in_", Array(0..<channels)) }
}
