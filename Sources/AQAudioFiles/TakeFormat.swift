import Foundation

/// How a take is stored: container and sample format.
///
/// Thread safety: a plain value; any thread.
package struct TakeFormat: Sendable, Equatable, CustomStringConvertible {
    /// The container, from the file's extension.
    package enum Container: String, Sendable, CaseIterable {
        /// `.wav`: RIFF/WAVE, little-endian PCM (`WAVE_FORMAT_IEEE_FLOAT` for float), at most
        /// 4 GiB of audio.
        case wav
        /// `.caf`: Core Audio Format, little-endian PCM; no size limit.
        case caf
        /// `.aif`/`.aiff`: AIFF (big-endian integer PCM) or AIFF-C (`fl32`, for float); at
        /// most 4 GiB of audio.
        case aiff

        /// The container for a file's extension (case-insensitive), or nil.
        package init?(extension ext: String) {
            switch ext.lowercased() {
            case "wav", "wave": self = .wav
            case "caf": self = .caf
            case "aif", "aiff", "aifc": self = .aiff
            default: return nil
            }
        }
    }

    /// The samples.
    package enum Sample: Sendable, Equatable {
        /// Signed integer PCM of 16, 24 or 32 bits.
        case int(bits: Int)
        /// 32-bit IEEE float PCM.
        case float32
        /// Apple Lossless (CAF only).
        case alac
        /// AAC (CAF only).
        case aac

        /// True for the compressed formats.
        package var isCompressed: Bool { self == .alac || self == .aac }
        /// Bytes of one PCM sample (0 for compressed formats).
        package var bytesPerSample: Int {
            switch self {
            case .int(let b): return b / 8
            case .float32: return 4
            case .alac, .aac: return 0
            }
        }
    }

    /// The container.
    package var container: Container
    /// The samples; default 24-bit integer.
    package var sample: Sample

    /// Makes a format.
    package init(container: Container, sample: Sample = .int(bits: 24)) {
        self.container = container
        self.sample = sample
    }

    /// `"24-bit WAV"`, `"32-bit float CAF"`, `"ALAC CAF"`.
    package var description: String {
        let c = container == .aiff ? "AIFF" : container.rawValue.uppercased()
        switch sample {
        case .int(let b): return "\(b)-bit \(c)"
        case .float32: return "32-bit float \(c)"
        case .alac: return "ALAC \(c)"
        case .aac: return "AAC \(c)"
        }
    }
}
