import AQEngine
import Foundation

/// A session: audio files placed on one timeline, each on an exact frame (see
/// docs/session-format.md). Made by ``SessionLoader``, which has checked every file.
///
/// Thread safety: a plain value; any thread.
public struct Session: Sendable {
    /// The session file.
    public var url: URL
    /// `[session] name`; default: the session file's name without extension.
    public var name: String
    /// `[session] sample_rate`: the rate of the frame counts in the file; nil: the device's.
    public var sampleRate: Double?
    /// `[output]`.
    public var output: SessionOutput
    /// `[[track]]`, in file order (at least one).
    public var tracks: [SessionTrack]

    /// Makes a session from its parts (normally ``SessionLoader/load(_:)`` does).
    public init(url: URL, name: String, sampleRate: Double?, output: SessionOutput, tracks: [SessionTrack]) {
        self.url = url
        self.name = name
        self.sampleRate = sampleRate
        self.output = output
        self.tracks = tracks
    }

    /// Device frames from the session start to where `track` starts on a device running at
    /// `deviceRate`: `round(start × deviceRate / sessionRate)` (the session rate defaults to
    /// the device's).
    public func startOffset(of track: SessionTrack, deviceRate: Double) -> Int64 {
        track.start.deviceFrames(sessionRate: sampleRate ?? deviceRate, deviceRate: deviceRate)
    }

    /// Device frames `track` lasts on a device at `deviceRate`: its frames after trimming,
    /// converted as the engine converts them (`round(frames × deviceRate / fileRate)`).
    public func deviceLength(of track: SessionTrack, deviceRate: Double) -> Int64 {
        let n = track.playableFrames
        let r = track.audio.format.sampleRate
        if r == deviceRate { return n }
        return Int64((Double(n) * deviceRate / r).rounded(.toNearestOrAwayFromZero))
    }

    /// Device frames from the session start to the end of the track that ends last.
    public func deviceLength(deviceRate: Double) -> Int64 {
        tracks.map { startOffset(of: $0, deviceRate: deviceRate) + deviceLength(of: $0, deviceRate: deviceRate) }.max() ?? 0
    }
}

/// `[output]`: the JACK client and where its ports go.
///
/// Thread safety: a plain value; any thread.
public struct SessionOutput: Sendable, Equatable {
    /// `client_name`; default `aqsync`.
    public var clientName: String
    /// `channels`: output ports `out_1…N`; default 2.
    public var channels: Int
    /// `connect`: output i goes to port i; nil: the server's physical playback ports.
    public var connect: [String]?

    /// Makes an output section.
    public init(clientName: String = "aqsync", channels: Int = 2, connect: [String]? = nil) {
        self.clientName = clientName
        self.channels = channels
        self.connect = connect
    }
}

/// When a track starts, relative to the session start.
///
/// Thread safety: a plain value; any thread.
public enum SessionTime: Sendable, Equatable {
    /// Frames at the session rate.
    case frames(Int64)
    /// Seconds (from `"1.5s"` or `"00:01:02.500"`).
    case seconds(Double)

    /// The time in device frames: frames scaled by device rate / session rate, or seconds ×
    /// device rate, rounded to the nearest frame (halves away from zero).
    public func deviceFrames(sessionRate: Double, deviceRate: Double) -> Int64 {
        switch self {
        case .frames(let f):
            if sessionRate == deviceRate { return f }
            return Int64((Double(f) * deviceRate / sessionRate).rounded(.toNearestOrAwayFromZero))
        case .seconds(let s):
            return Int64((s * deviceRate).rounded(.toNearestOrAwayFromZero))
        }
    }

    /// Parses the string forms: `"1.5s"`, `"250ms"`, `"00:01:02.500"` (h:m:s), `"01:02.5"` (m:s).
    /// Nil when `text` is none of them or negative.
    public static func parse(_ text: String) -> SessionTime? {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.hasSuffix("ms"), let v = Double(t.dropLast(2)), v.isFinite, v >= 0 { return .seconds(v / 1000) }
        if t.hasSuffix("s"), let v = Double(t.dropLast()), v.isFinite, v >= 0 { return .seconds(v) }
        let parts = t.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3 else { return nil }
        var total = 0.0
        for (i, p) in parts.enumerated() {
            let isLast = i == parts.count - 1
            guard !p.isEmpty, p.allSatisfy({ $0.isNumber || (isLast && $0 == ".") }), let v = Double(p) else { return nil }
            if i > 0 && v >= 60 { return nil }
            total = total * 60 + v
        }
        return .seconds(total)
    }
}

/// `[[track]]`: one audio file on the timeline.
///
/// Thread safety: a plain value; any thread.
public struct SessionTrack: Sendable {
    /// `name`; default: the file's name.
    public var name: String
    /// `file`, resolved against the session file's folder.
    public var file: URL
    /// `start`; default 0.
    public var start: SessionTime
    /// `gain_db`; default 0.
    public var gainDB: Double
    /// `trim_start`: frames of the file skipped at its start.
    public var trimStart: Int64
    /// `trim_end`: frames of the file skipped at its end.
    public var trimEnd: Int64
    /// `outputs`: 1-based output channel for each of the file's channels; nil: the default (a
    /// mono file on every output, n channels on the first n).
    public var outputs: [Int]?
    /// What the loader found in the file.
    public var audio: AudioFileInfo

    /// Makes a track (normally the loader does).
    public init(
        name: String, file: URL, start: SessionTime = .frames(0), gainDB: Double = 0, trimStart: Int64 = 0,
        trimEnd: Int64 = 0, outputs: [Int]? = nil, audio: AudioFileInfo
    ) {
        self.name = name
        self.file = file
        self.start = start
        self.gainDB = gainDB
        self.trimStart = trimStart
        self.trimEnd = trimEnd
        self.outputs = outputs
        self.audio = audio
    }

    /// Frames of the file that play (after both trims), at the file's rate.
    public var playableFrames: Int64 { audio.frameCount - trimStart - trimEnd }

    /// The linear gain of ``gainDB``: 10^(dB/20).
    public var linearGain: Float { Float(pow(10, gainDB / 20)) }
}

/// What the file-stream parser found in an audio file's header.
///
/// Thread safety: a plain value; any thread.
public struct AudioFileInfo: Sendable, Equatable {
    /// The container (`WAVE`, `AIFF`, `AIFC`, `caff`, `NeXT`).
    public var fileType: FourCharCode
    /// The audio's format (interleaved PCM, µ-law or A-law).
    public var format: AudioStreamBasicDescription
    /// Frames of audio in the file.
    public var frameCount: Int64

    /// Makes a description.
    public init(fileType: FourCharCode, format: AudioStreamBasicDescription, frameCount: Int64) {
        self.fileType = fileType
        self.format = format
        self.frameCount = frameCount
    }
}
