import AQEngine
import Foundation

/// What the file-stream parser found in an audio file's header.
///
/// Thread safety: a plain value; any thread.
package struct AudioFileInfo: Sendable, Equatable {
    /// The container (`WAVE`, `AIFF`, `AIFC`, `caff`, `NeXT`).
    package var fileType: FourCharCode
    /// The audio's format (interleaved PCM, µ-law or A-law).
    package var format: AudioStreamBasicDescription
    /// Frames of audio in the file.
    package var frameCount: Int64

    /// Makes a description.
    package init(fileType: FourCharCode, format: AudioStreamBasicDescription, frameCount: Int64) {
        self.fileType = fileType
        self.format = format
        self.frameCount = frameCount
    }
}
