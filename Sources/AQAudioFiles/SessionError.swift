import Foundation

/// Why a session could not be loaded, played or rendered: the file at fault, where in it (for
/// TOML errors and keys the loader can find), and what is wrong, in words.
///
/// Thread safety: a plain value; any thread.
package struct SessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem it is (for tests and programs; people read ``message``).
    package enum Kind: String, Sendable {
        /// The TOML does not parse.
        case syntax
        /// A key the format does not have.
        case unknownKey
        /// A value of the wrong type or out of range, or a required key missing.
        case invalidValue
        /// The session has no `[[track]]`.
        case noTracks
        /// An audio file is missing or cannot be read.
        case unreadableFile
        /// A file is not audio the parser reads, or not in a format aqsync plays.
        case unsupportedAudio
        /// Trims leave nothing of the file.
        case trimTooLong
        /// The JACK server, the engine or a queue refused.
        case playback
        /// Writing the output file (or a take) failed.
        case output
        /// A take's file cannot be written where the session says (checked before playback).
        case unwritableFile
    }

    /// What kind of problem it is.
    package var kind: Kind
    /// The file at fault (the session file, an audio file, or the output file).
    package var file: String
    /// 1-based line in ``file``, when known.
    package var line: Int?
    /// 1-based column in ``file``, when known.
    package var column: Int?
    /// What is wrong, for people.
    package var message: String

    /// Makes an error.
    package init(_ kind: Kind, file: String, line: Int? = nil, column: Int? = nil, _ message: String) {
        self.kind = kind
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `FILE:LINE:COLUMN: message` (line and column when known).
    package var description: String {
        var place = file
        if let line {
            place += ":\(line)"
            if let column { place += ":\(column)" }
        }
        return "\(place): \(message)"
    }
}
