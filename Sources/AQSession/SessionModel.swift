import AQEngine
import Foundation

/// A session: audio files placed on one timeline, each on an exact frame (see
/// docs/session-format.md). Made by ``SessionLoader``, which has checked every file.
///
/// Thread safety: a plain value; any thread.
package struct Session: Sendable {
    /// The session file.
    package var url: URL
    /// `[session] name`; default: the session file's name without extension.
    package var name: String
    /// `[session] sample_rate`: the rate of the frame counts in the file; nil: the device's.
    package var sampleRate: Double?
    /// `[output]`.
    package var output: SessionOutput
    /// `[[track]]`, in file order (at least one).
    package var tracks: [SessionTrack]
    /// `[[record]]`: takes recorded while the session plays, in file order (may be empty).
    package var takes: [SessionTake]
    /// `[[marker]]`: named positions, in file order (may be empty; names unique).
    package var markers: [SessionMarker]
    /// `[session] loop`: the region played more than once; nil: none.
    package var loop: SessionLoop?
    /// `[session] bpm` and `meter`; nil: none.
    package var tempo: SessionTempo? = nil
    /// `[session] gap`: silence before this session in a set list (not before the first);
    /// nil: none.
    package var gap: SessionTime? = nil

    /// Makes a session from its parts (normally ``SessionLoader/load(_:)`` does).
    package init(
        url: URL, name: String, sampleRate: Double?, output: SessionOutput, tracks: [SessionTrack], takes: [SessionTake] = [],
        markers: [SessionMarker] = [], loop: SessionLoop? = nil
    ) {
        self.markers = markers
        self.loop = loop
        self.url = url
        self.name = name
        self.sampleRate = sampleRate
        self.output = output
        self.tracks = tracks
        self.takes = takes
    }

    /// Where each take's channels are on the device's capture ports `in_1…`: take `i` records
    /// ports `offsets[i] ..< offsets[i] + channels` (0-based). Takes with a `connect` list come
    /// first (in file order), then those without, so that `connections` — the port each
    /// capture port listens to, in port order — has no gap: ports past its end stay
    /// unconnected. `total`: the capture ports needed.
    package var takeInputLayout: (offsets: [Int], total: Int, connections: [String]) {
        var offsets = [Int](repeating: 0, count: takes.count)
        var next = 0
        var connections: [String] = []
        for (i, t) in takes.enumerated() where !t.connect.isEmpty {
            offsets[i] = next
            next += t.channels
            connections += t.connect
        }
        for (i, t) in takes.enumerated() where t.connect.isEmpty {
            offsets[i] = next
            next += t.channels
        }
        return (offsets, next, connections)
    }

    /// The device outputs (0-based, ascending, each once) the tracks play on, for a device with
    /// `deviceOutputs` outputs: a track's `outputs` (1-based; 0, none, and outputs past the
    /// device's are left out), else the engine's default (a mono file on every output, n
    /// channels on the first n). Empty when there are no tracks. What a performer of a take
    /// hears the session from (docs/recording.md, "Latency").
    package func trackOutputs(deviceOutputs: Int) -> [Int] {
        var used = Set<Int>()
        for t in tracks {
            let channels = Int(t.audio.format.channelsPerFrame)
            if let outputs = t.outputs {
                used.formUnion(outputs.map { $0 - 1 })
            } else if channels == 1 {
                used.formUnion(0..<deviceOutputs)
            } else {
                used.formUnion(0..<min(channels, deviceOutputs))
            }
        }
        return used.filter { $0 >= 0 && $0 < deviceOutputs }.sorted()
    }

    /// Device frames from the session start to where `take` starts (as for tracks).
    package func startOffset(of take: SessionTake, deviceRate: Double) -> Int64 {
        take.start.deviceFrames(sessionRate: sampleRate ?? deviceRate, deviceRate: deviceRate)
    }

    /// Device frames `take` records: its `length`, or (by default) up to the end of the last
    /// track; 0 or less when a take without a length starts at or after that end.
    package func deviceLength(of take: SessionTake, deviceRate: Double) -> Int64 {
        if let l = take.length { return l.deviceFrames(sessionRate: sampleRate ?? deviceRate, deviceRate: deviceRate) }
        return deviceLength(deviceRate: deviceRate) - startOffset(of: take, deviceRate: deviceRate)
    }

    /// Device frames from the session start to where `track` starts on a device running at
    /// `deviceRate`: `round(start × deviceRate / sessionRate)` (the session rate defaults to
    /// the device's).
    package func startOffset(of track: SessionTrack, deviceRate: Double) -> Int64 {
        track.start.deviceFrames(sessionRate: sampleRate ?? deviceRate, deviceRate: deviceRate)
    }

    /// Device frames `track` lasts on a device at `deviceRate`: its frames after trimming,
    /// converted as the engine converts them (`round(frames × deviceRate / fileRate)`).
    package func deviceLength(of track: SessionTrack, deviceRate: Double) -> Int64 {
        let n = track.playableFrames
        let r = track.audio.format.sampleRate
        if r == deviceRate { return n }
        return Int64((Double(n) * deviceRate / r).rounded(.toNearestOrAwayFromZero))
    }

    /// Device frames from the session start to the end of the track that ends last.
    package func deviceLength(deviceRate: Double) -> Int64 {
        tracks.map { startOffset(of: $0, deviceRate: deviceRate) + deviceLength(of: $0, deviceRate: deviceRate) }.max() ?? 0
    }
}

/// `[output]`: the JACK client and where its ports go.
///
/// Thread safety: a plain value; any thread.
package struct SessionOutput: Sendable, Equatable {
    /// `client_name`; default `aqsync`.
    package var clientName: String
    /// `channels`: output ports `out_1…N`; default 2.
    package var channels: Int
    /// `connect`: output i goes to port i; nil: the server's physical playback ports.
    package var connect: [String]?

    /// Makes an output section.
    package init(clientName: String = "aqsync", channels: Int = 2, connect: [String]? = nil) {
        self.clientName = clientName
        self.channels = channels
        self.connect = connect
    }
}

/// When a track starts, relative to the session start.
///
/// Thread safety: a plain value; any thread.
package enum SessionTime: Sendable, Equatable {
    /// Frames at the session rate.
    case frames(Int64)
    /// Seconds (from `"1.5s"` or `"00:01:02.500"`).
    case seconds(Double)

    /// The time in device frames: frames scaled by device rate / session rate, or seconds ×
    /// device rate, rounded to the nearest frame (halves away from zero).
    package func deviceFrames(sessionRate: Double, deviceRate: Double) -> Int64 {
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
    package static func parse(_ text: String) -> SessionTime? {
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

extension SessionTime {
    /// Parses a play position (`aqsync play/render --from`): seconds (`"90"`, `"90.5"`,
    /// `"1.5s"`, `"250ms"`), `m:ss.sss` / `h:mm:ss.sss` (`"1:30"`), or frames at the session
    /// rate (`"frames:123456"`). Nil when `text` is none of them or negative.
    ///
    /// Thread safety: pure function; any thread.
    package static func parsePosition(_ text: String) -> SessionTime? {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.hasPrefix("frames:") {
            let digits = t.dropFirst(7)
            guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let n = Int64(digits) else { return nil }
            return .frames(n)
        }
        if !t.isEmpty, t.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let v = Double(t), v.isFinite, v >= 0 {
            return .seconds(v)
        }
        return parse(t)
    }
}

/// The shape of a fade (`fade_curve`). For frame i of an L-frame fade, x = i / L for a fade-in
/// (its first frame is x = 0) and x = (N − 1 − i) / L for a fade-out over the last L of the
/// track's N frames (its last frame is x = 0); the gain is c(x), 1 outside the fades.
///
/// Thread safety: a plain value; any thread.
package enum FadeCurve: String, Sendable, Equatable, CaseIterable {
    /// c(x) = x.
    case linear
    /// c(x) = sin(π/2 · x): constant power when a fade-out overlaps a fade-in of the same length.
    case equalPower = "equal-power"
    /// c(x) = (1000^x − 1) / 999: a 60 dB exponential rise (linear in dB for most of its
    /// length), starting at exactly 0 and reaching 1 at x = 1.
    case exponential

    /// The gain at `x` (0…1).
    package func gain(_ x: Double) -> Double {
        switch self {
        case .linear: return x
        case .equalPower: return sin(Double.pi / 2 * x)
        case .exponential: return (pow(1000, x) - 1) / 999
        }
    }
}

/// `fade_in` / `fade_out` of a track: a length and a curve.
///
/// Thread safety: a plain value; any thread.
package struct SessionFade: Sendable, Equatable {
    /// The length (seconds, or frames at the session rate).
    package var length: SessionTime
    /// The curve (`fade_curve`, default linear).
    package var curve: FadeCurve

    /// A fade of `length` with `curve`.
    package init(length: SessionTime, curve: FadeCurve = .linear) {
        self.length = length
        self.curve = curve
    }
}

/// One side of a crossfade (`crossfade = true`): the curve, and where the other track lies, so
/// that the overlap is worked out at the device rate when the track plays.
///
/// Thread safety: a plain value; any thread.
package struct SessionCrossfade: Sendable, Equatable {
    /// The curve of both fades (the later track's `fade_curve`).
    package var curve: FadeCurve
    /// The other track's `start`.
    package var partnerStart: SessionTime
    /// The other track's frames after trims, at its file's rate.
    package var partnerFrames: Int64
    /// The other track's file rate.
    package var partnerRate: Double

    /// The side of a crossfade with `partner`, in `curve`.
    package init(curve: FadeCurve, partner: SessionTrack) {
        self.curve = curve
        partnerStart = partner.start
        partnerFrames = partner.playableFrames
        partnerRate = partner.audio.format.sampleRate
    }

    /// Device frames where the other track lies on a device at `deviceRate` (as
    /// ``Session/startOffset(of:deviceRate:)`` and ``Session/deviceLength(of:deviceRate:)``
    /// place a track).
    package func partnerSpan(sessionRate: Double?, deviceRate: Double) -> Range<Int64> {
        let start = partnerStart.deviceFrames(sessionRate: sessionRate ?? deviceRate, deviceRate: deviceRate)
        let n = partnerRate == deviceRate
            ? partnerFrames : Int64((Double(partnerFrames) * deviceRate / partnerRate).rounded(.toNearestOrAwayFromZero))
        return start..<(start + n)
    }
}

/// `[[track]]`: one audio file on the timeline.
///
/// Thread safety: a plain value; any thread.
package struct SessionTrack: Sendable {
    /// `name`; default: the file's name.
    package var name: String
    /// `file`, resolved against the session file's folder.
    package var file: URL
    /// `start`; default 0.
    package var start: SessionTime
    /// `gain_db`; default 0.
    package var gainDB: Double
    /// `trim_start`: frames of the file skipped at its start.
    package var trimStart: Int64
    /// `trim_end`: frames of the file skipped at its end.
    package var trimEnd: Int64
    /// `outputs`: 1-based output channel for each of the file's channels; nil: the default (a
    /// mono file on every output, n channels on the first n).
    package var outputs: [Int]?
    /// What the loader found in the file.
    package var audio: AudioFileInfo
    /// `fade_in`: the fade at the track's first frames; nil: none.
    package var fadeIn: SessionFade?
    /// `fade_out`: the fade ending on the track's last frame; nil: none.
    package var fadeOut: SessionFade?
    /// `gain`: the track's gain envelope (``SessionGainPoint``, in time order); empty: none.
    package var gainPoints: [SessionGainPoint] = []
    /// `crossfade = true`: this track fades in while the track listed before it fades out,
    /// over the frames where they overlap (the loader checked that they do, and that neither
    /// has a fade of its own there); nil: none.
    package var crossfadeIn: SessionCrossfade?
    /// The crossfade the track listed after this one asked for: this track fades out over the
    /// overlap; nil: none.
    package var crossfadeOut: SessionCrossfade?
    /// `part`: the part this track belongs to (`aqsync play --part NAME` plays only the
    /// tracks of that part); nil: none (it plays only when no part is chosen).
    package var part: String? = nil

    /// Makes a track (normally the loader does).
    package init(
        name: String, file: URL, start: SessionTime = .frames(0), gainDB: Double = 0, trimStart: Int64 = 0,
        trimEnd: Int64 = 0, outputs: [Int]? = nil, audio: AudioFileInfo, fadeIn: SessionFade? = nil,
        fadeOut: SessionFade? = nil
    ) {
        self.fadeIn = fadeIn
        self.fadeOut = fadeOut
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
    package var playableFrames: Int64 { audio.frameCount - trimStart - trimEnd }

    /// The linear gain of ``gainDB``: 10^(dB/20).
    package var linearGain: Float { Float(pow(10, gainDB / 20)) }
}

/// `[[record]]`: a take, recorded from JACK ports into a file while the session plays.
///
/// Thread safety: a plain value; any thread.
package struct SessionTake: Sendable, Equatable {
    /// `file`, resolved against the session file's folder.
    package var file: URL
    /// The container (from the file's extension) and `format`.
    package var format: TakeFormat
    /// `channels`; default: the number of `connect` ports, else 1.
    package var channels: Int
    /// `connect`: the port each channel records from (channel i ← port i); empty: the take's
    /// capture ports are connected to nothing (someone else wires them).
    package var connect: [String]
    /// `start` on the session timeline: file frame 0 is this session frame. Default 0.
    package var start: SessionTime
    /// `length`; nil: until the last track ends.
    package var length: SessionTime?
    /// `compensate`: place the take by the latency a performer hears and plays with
    /// (default true); false: raw, where the frames reached the engine.
    package var compensate: Bool
    /// `part`: the part this take belongs to (`--part NAME` records only that part's takes);
    /// nil: none (recorded only when no part is chosen).
    package var part: String? = nil

    /// Makes a take (normally the loader does).
    package init(
        file: URL, format: TakeFormat, channels: Int = 1, connect: [String] = [], start: SessionTime = .frames(0),
        length: SessionTime? = nil, compensate: Bool = true
    ) {
        self.file = file
        self.format = format
        self.channels = channels
        self.connect = connect
        self.start = start
        self.length = length
        self.compensate = compensate
    }

    /// The file's name, used in messages and the report.
    package var name: String { file.lastPathComponent }
}

