import AQEngine
import Foundation
import TOMLKit

/// Reads a session file (TOML, see docs/session-format.md) and checks everything before
/// anything plays: the TOML, every key and value, and every audio file (it exists, it is audio
/// aqsync plays, the trims leave something).
///
/// Thread safety: stateless; any thread.
package enum SessionLoader {
    static let topKeys: Set<String> = ["session", "output", "track", "record", "marker"]
    static let sessionKeys: Set<String> = ["name", "sample_rate", "loop", "bpm", "meter", "gap"]
    static let outputKeys: Set<String> = ["client_name", "channels", "connect"]
    static let trackKeys: Set<String> = ["name", "file", "start", "gain_db", "trim_start", "trim_end", "outputs", "fade_in", "fade_out", "fade_curve", "gain", "crossfade", "part"]
    static let recordKeys: Set<String> = ["file", "format", "channels", "connect", "start", "length", "compensate", "part"]
    /// Capture ports one session may record from, over all its takes.
    package static let maximumTakeChannels = 32

    /// Loads and checks the session file at `url`.
    ///
    /// - Throws: ``SessionError`` naming the file (the session file, with line and column for
    ///   TOML errors and where the key at fault was found, or the audio file at fault) and the
    ///   problem.
    package static func load(_ url: URL) throws(SessionError) -> Session {
        let path = url.path
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            let reason: String
            var isDir: ObjCBool = false
            if !FileManager.default.fileExists(atPath: path, isDirectory: &isDir) { reason = "no such file" }
            else if isDir.boolValue { reason = "it is a directory" }
            else if !FileManager.default.isReadableFile(atPath: path) { reason = "permission denied" }
            else { reason = "not UTF-8 text" }
            throw SessionError(.unreadableFile, file: path, "cannot read session file: \(reason)")
        }
        return try parse(text, url: url)
    }

    /// Parses session text as if read from `url` (relative audio paths resolve against its
    /// folder) and checks every audio file.
    package static func parse(_ text: String, url: URL) throws(SessionError) -> Session {
        let path = url.path
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let e as TOMLParseError {
            throw SessionError(.syntax, file: path, line: e.source.begin.line, column: e.source.begin.column, "TOML syntax error: \(e.description)")
        } catch {
            throw SessionError(.syntax, file: path, "TOML syntax error: \(error)")
        }
        let loc = Locator(text: text, file: path)

        for key in root.keys where !topKeys.contains(key) {
            throw loc.error(.unknownKey, key: key, section: nil, "unknown key '\(key)' (expected [session], [output], [[track]], [[record]] and [[marker]])")
        }

        // [session]
        var name = url.deletingPathExtension().lastPathComponent
        var sampleRate: Double?
        if let v = root["session"] {
            guard let t = v.table else { throw loc.error(.invalidValue, key: "session", section: nil, "'session' must be a table: [session]") }
            let sec = Locator.Section.table("session")
            for key in t.keys where !sessionKeys.contains(key) {
                throw loc.error(.unknownKey, key: key, section: sec, "unknown key '\(key)' in [session] (expected: bpm, gap, loop, meter, name, sample_rate)")
            }
            if let n = t["name"] {
                guard let s = n.string else { throw loc.error(.invalidValue, key: "name", section: sec, "[session] name must be a string") }
                name = s
            }
            if let r = t["sample_rate"] {
                let value = r.int.map(Double.init) ?? r.double
                guard let value, value.isFinite, value >= 1000, value <= 768_000 else {
                    throw loc.error(.invalidValue, key: "sample_rate", section: sec, "[session] sample_rate must be a number of frames per second (1000 to 768000)")
                }
                sampleRate = value
            }
        }

        // [output]
        var output = SessionOutput()
        if let v = root["output"] {
            guard let t = v.table else { throw loc.error(.invalidValue, key: "output", section: nil, "'output' must be a table: [output]") }
            let sec = Locator.Section.table("output")
            for key in t.keys where !outputKeys.contains(key) {
                throw loc.error(.unknownKey, key: key, section: sec, "unknown key '\(key)' in [output] (expected: client_name, channels, connect)")
            }
            if let n = t["client_name"] {
                guard let s = n.string, !s.isEmpty else { throw loc.error(.invalidValue, key: "client_name", section: sec, "[output] client_name must be a non-empty string") }
                output.clientName = s
            }
            if let c = t["channels"] {
                guard let n = c.int, n >= 1, n <= 32 else {
                    throw loc.error(.invalidValue, key: "channels", section: sec, "[output] channels must be an integer from 1 to 32")
                }
                output.channels = n
            }
            if let c = t["connect"] {
                guard let a = c.array else { throw loc.error(.invalidValue, key: "connect", section: sec, "[output] connect must be an array of port names") }
                var ports: [String] = []
                for item in a {
                    guard let s = item.string else { throw loc.error(.invalidValue, key: "connect", section: sec, "[output] connect must be an array of port names (strings)") }
                    ports.append(s)
                }
                output.connect = ports
            }
        }

        // [[track]]
        guard let tv = root["track"] else {
            throw SessionError(.noTracks, file: path, "the session has no tracks: add at least one [[track]] with a file")
        }
        guard let list = tv.array else {
            throw loc.error(.invalidValue, key: "track", section: nil, "'track' must be an array of tables: write [[track]]")
        }
        if list.isEmpty { throw SessionError(.noTracks, file: path, "the session has no tracks: add at least one [[track]] with a file") }
        var tracks: [SessionTrack] = []
        var crossfades: [Int: FadeCurve] = [:]  // `crossfade = true`: track index → its curve
        let folder = url.deletingLastPathComponent()
        for (i, item) in list.enumerated() {
            let sec = Locator.Section.track(i)
            let label = "track \(i + 1)"
            guard let t = item.table else { throw loc.error(.invalidValue, key: "track", section: nil, "\(label) must be a table: write [[track]]") }
            for key in t.keys where !trackKeys.contains(key) {
                throw loc.error(.unknownKey, key: key, section: sec, "unknown key '\(key)' in \(label) (expected: \(trackKeys.sorted().joined(separator: ", ")))")
            }
            guard let fv = t["file"] else { throw loc.error(.invalidValue, key: nil, section: sec, "\(label) has no file: add file = \"name.wav\"") }
            guard let file = fv.string, !file.isEmpty else { throw loc.error(.invalidValue, key: "file", section: sec, "\(label): file must be a path (a string)") }
            let fileURL = file.hasPrefix("/") ? URL(fileURLWithPath: file) : folder.appendingPathComponent(file)
            var trackName = fileURL.lastPathComponent
            if let n = t["name"] {
                guard let s = n.string else { throw loc.error(.invalidValue, key: "name", section: sec, "\(label): name must be a string") }
                trackName = s
            }
            let tl = "track '\(trackName)'"
            var start = SessionTime.frames(0)
            if let s = t["start"] {
                if let n = s.int {
                    guard n >= 0 else { throw loc.error(.invalidValue, key: "start", section: sec, "\(tl): start \(n) is negative; a track cannot start before the session") }
                    start = .frames(Int64(n))
                } else if let str = s.string {
                    if str.trimmingCharacters(in: .whitespaces).hasPrefix("-") {
                        throw loc.error(.invalidValue, key: "start", section: sec, "\(tl): start \"\(str)\" is negative; a track cannot start before the session")
                    }
                    guard let parsed = SessionTime.parse(str) else {
                        throw loc.error(.invalidValue, key: "start", section: sec, "\(tl): start \"\(str)\" is not a time (write frames as an integer, or \"1.5s\", \"250ms\", \"00:01:02.500\")")
                    }
                    start = parsed
                } else {
                    throw loc.error(.invalidValue, key: "start", section: sec, "\(tl): start must be an integer number of frames or a string such as \"1.5s\" or \"00:01:02.500\"")
                }
            }
            var gain = 0.0
            if let g = t["gain_db"] {
                guard let v = g.double ?? g.int.map(Double.init), v.isFinite else {
                    throw loc.error(.invalidValue, key: "gain_db", section: sec, "\(tl): gain_db must be a number (decibels), not \(g.type)")
                }
                guard v <= 24 else { throw loc.error(.invalidValue, key: "gain_db", section: sec, "\(tl): gain_db \(v) is above +24 dB") }
                gain = v
            }
            func frames(_ key: String) throws(SessionError) -> Int64 {
                guard let v = t[key] else { return 0 }
                guard let n = v.int else { throw loc.error(.invalidValue, key: key, section: sec, "\(tl): \(key) must be an integer number of frames") }
                guard n >= 0 else { throw loc.error(.invalidValue, key: key, section: sec, "\(tl): \(key) \(n) is negative") }
                return Int64(n)
            }
            let trimStart = try frames("trim_start")
            let trimEnd = try frames("trim_end")
            var outputs: [Int]?
            if let o = t["outputs"] {
                guard let a = o.array else { throw loc.error(.invalidValue, key: "outputs", section: sec, "\(tl): outputs must be an array of output channels, e.g. [1, 2]") }
                var list: [Int] = []
                for item in a {
                    guard let n = item.int, n >= 1, n <= output.channels else {
                        throw loc.error(.invalidValue, key: "outputs", section: sec, "\(tl): outputs must list output channels from 1 to \(output.channels)")
                    }
                    list.append(n)
                }
                outputs = list
            }
            // The audio file: exists, is audio aqsync plays, the trims leave something.
            let info: AudioFileInfo
            do {
                info = try AudioFileReader.probe(fileURL)
            } catch {
                var e = error
                e.message = "\(tl): \(e.message)"
                throw e
            }
            if let outputs, outputs.count != Int(info.format.channelsPerFrame) {
                throw loc.error(.invalidValue, key: "outputs", section: sec, "\(tl): outputs lists \(outputs.count) channel(s) but \(fileURL.lastPathComponent) has \(info.format.channelsPerFrame)")
            }
            if trimStart + trimEnd >= info.frameCount {
                throw loc.error(.trimTooLong, key: trimEnd > 0 ? "trim_end" : "trim_start", section: sec,
                    "\(tl): trim_start \(trimStart) + trim_end \(trimEnd) frames leave nothing of \(fileURL.lastPathComponent) (\(info.frameCount) frames)")
            }
            // Fades: lengths at most the track's, a known curve.
            var curve = FadeCurve.linear
            if let c = t["fade_curve"] {
                guard let name = c.string, let known = FadeCurve(rawValue: name) else {
                    throw loc.error(.invalidValue, key: "fade_curve", section: sec,
                        "\(tl): fade_curve must be \(FadeCurve.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), not \(c.string.map { "\"\($0)\"" } ?? c.type.description)")
                }
                curve = known
            }
            // The track's length in frames at the session rate (the file's when none is given).
            let rateForLength = sampleRate ?? info.format.sampleRate
            let playable = info.frameCount - trimStart - trimEnd
            let trackFrames = rateForLength == info.format.sampleRate
                ? playable : Int64((Double(playable) * rateForLength / info.format.sampleRate).rounded(.toNearestOrAwayFromZero))
            func fade(_ key: String) throws(SessionError) -> SessionFade? {
                guard let v = t[key] else { return nil }
                var length: SessionTime
                if let n = v.double ?? v.int.map(Double.init) {
                    guard n.isFinite, n >= 0 else { throw loc.error(.invalidValue, key: key, section: sec, "\(tl): \(key) \(n) is negative") }
                    length = .seconds(n)
                } else if let str = v.string {
                    if str.trimmingCharacters(in: .whitespaces).hasPrefix("-") || str.hasPrefix("frames:-") {
                        throw loc.error(.invalidValue, key: key, section: sec, "\(tl): \(key) \"\(str)\" is negative")
                    }
                    guard let parsed = SessionTime.parsePosition(str) else {
                        throw loc.error(.invalidValue, key: key, section: sec, "\(tl): \(key) \"\(str)\" is not a length (write seconds as a number, \"frames:N\", \"1.5s\", \"250ms\" or \"0:01.5\")")
                    }
                    length = parsed
                } else {
                    throw loc.error(.invalidValue, key: key, section: sec, "\(tl): \(key) must be seconds (a number) or a string such as \"frames:4800\" or \"1.5s\"")
                }
                let frames = length.deviceFrames(sessionRate: rateForLength, deviceRate: rateForLength)
                if frames > trackFrames {
                    throw loc.error(.invalidValue, key: key, section: sec,
                        "\(tl): \(key) of \(frames) frames is longer than the track (\(trackFrames) frames at \(Int(rateForLength)) Hz)")
                }
                return frames == 0 ? nil : SessionFade(length: length, curve: curve)
            }
            let fadeIn = try fade("fade_in")
            let fadeOut = try fade("fade_out")
            var track = SessionTrack(
                name: trackName, file: fileURL, start: start, gainDB: gain, trimStart: trimStart, trimEnd: trimEnd,
                outputs: outputs, audio: info, fadeIn: fadeIn, fadeOut: fadeOut)
            track.part = try parsePart(t, loc: loc, sec: sec, what: tl)
            track.gainPoints = try parseGainPoints(t, loc: loc, sec: sec, what: tl, trackFrames: trackFrames, rate: rateForLength)
            if let c = t["crossfade"] {
                guard let on = c.bool else {
                    throw loc.error(.invalidValue, key: "crossfade", section: sec, "\(tl): crossfade must be true or false, not \(c.type)")
                }
                if on { crossfades[tracks.count] = curve }
            }
            tracks.append(track)
        }
        try linkCrossfades(&tracks, requested: crossfades, sampleRate: sampleRate, loc: loc)
        let takes = try parseTakes(root, loc: loc, folder: folder, tracks: tracks)
        var session = Session(url: url, name: name, sampleRate: sampleRate, output: output, tracks: tracks, takes: takes)
        session.markers = try parseMarkers(root, loc: loc, session: session)
        session.loop = try parseLoop(root, loc: loc, session: session)
        session.tempo = try parseTempo(root, loc: loc)
        session.gap = try parseGap(root, loc: loc)
        return session
    }

    /// `[[record]]`: every key checked, the file's folder writable, no two takes (or a take and
    /// a track) on one file, the format one that can be recorded.
    static func parseTakes(_ root: TOMLTable, loc: Locator, folder: URL, tracks: [SessionTrack]) throws(SessionError) -> [SessionTake] {
        guard let rv = root["record"] else { return [] }
        guard let list = rv.array else {
            throw loc.error(.invalidValue, key: "record", section: nil, "'record' must be an array of tables: write [[record]]")
        }
        var takes: [SessionTake] = []
        var seen: [String: Int] = [:]
        let trackFiles = Set(tracks.map { $0.file.standardizedFileURL.resolvingSymlinksInPath().path })
        var total = 0
        for (i, item) in list.enumerated() {
            let sec = Locator.Section.record(i)
            let label = "record \(i + 1)"
            guard let t = item.table else { throw loc.error(.invalidValue, key: "record", section: nil, "\(label) must be a table: write [[record]]") }
            for key in t.keys where !recordKeys.contains(key) {
                throw loc.error(.unknownKey, key: key, section: sec, "unknown key '\(key)' in \(label) (expected: \(recordKeys.sorted().joined(separator: ", ")))")
            }
            guard let fv = t["file"] else { throw loc.error(.invalidValue, key: nil, section: sec, "\(label) has no file: add file = \"take.wav\"") }
            guard let file = fv.string, !file.isEmpty else { throw loc.error(.invalidValue, key: "file", section: sec, "\(label): file must be a path (a string)") }
            let fileURL = file.hasPrefix("/") ? URL(fileURLWithPath: file) : folder.appendingPathComponent(file)
            let tl = "take '\(fileURL.lastPathComponent)'"
            guard let container = TakeFormat.Container(extension: fileURL.pathExtension) else {
                throw loc.error(.invalidValue, key: "file", section: sec, "\(tl): the file must end in .wav, .caf, .aif or .aiff (the extension chooses the container)")
            }
            var format = TakeFormat(container: container)
            if let f = t["format"] {
                let text = f.int.map(String.init) ?? f.string?.lowercased()
                switch text {
                case "16": format.sample = .int(bits: 16)
                case "24": format.sample = .int(bits: 24)
                case "32": format.sample = .int(bits: 32)
                case "32f", "float", "f32": format.sample = .float32
                case "alac": format.sample = .alac
                case "aac": format.sample = .aac
                default:
                    throw loc.error(.invalidValue, key: "format", section: sec, "\(tl): format must be 16, 24 or 32 (integer PCM bits), \"32f\" (float) or \"alac\"/\"aac\" (.caf only), not \(text.map { "'\($0)'" } ?? "a \(f.type)")")
                }
                if format.sample.isCompressed && container != .caf {
                    throw loc.error(.invalidValue, key: "format", section: sec, "\(tl): \(text!) takes must be .caf files (WAV and AIFF hold PCM only here)")
                }
            }
            do throws(TakeFormatUnavailable) {
                _ = try format.writerMaker()
            } catch {
                throw loc.error(.invalidValue, key: "format", section: sec, "\(tl): \(error.message)")
            }
            var connect: [String] = []
            if let c = t["connect"] {
                guard let a = c.array else { throw loc.error(.invalidValue, key: "connect", section: sec, "\(tl): connect must be an array of JACK port names, e.g. [\"system:capture_1\"]") }
                for item in a {
                    guard let s = item.string, !s.isEmpty else {
                        throw loc.error(.invalidValue, key: "connect", section: sec, "\(tl): connect must be an array of JACK port names (non-empty strings)")
                    }
                    connect.append(s)
                }
            }
            var channels = max(1, connect.count)
            if let c = t["channels"] {
                guard let n = c.int, n >= 1, n <= maximumTakeChannels else {
                    throw loc.error(.invalidValue, key: "channels", section: sec, "\(tl): channels must be an integer from 1 to \(maximumTakeChannels)")
                }
                channels = n
            }
            if format.sample.isCompressed && channels > 8 {
                throw loc.error(.invalidValue, key: t["channels"] != nil ? "channels" : "connect", section: sec, "\(tl): \(format.sample == .alac ? "ALAC" : "AAC") takes have 1 to 8 channels, not \(channels)")
            }
            if !connect.isEmpty && connect.count != channels {
                throw loc.error(.invalidValue, key: "connect", section: sec, "\(tl): connect lists \(connect.count) port(s) for \(channels) channel(s): give one port per channel (or none)")
            }
            total += channels
            if total > maximumTakeChannels {
                throw loc.error(.invalidValue, key: t["channels"] != nil ? "channels" : nil, section: sec, "\(tl): the takes record more than \(maximumTakeChannels) channels in all")
            }
            let start = try time(t, "start", loc: loc, sec: sec, what: tl, zeroAllowed: true) ?? .frames(0)
            let length = try time(t, "length", loc: loc, sec: sec, what: tl, zeroAllowed: false)
            var compensate = true
            if let c = t["compensate"] {
                guard let b = c.bool else { throw loc.error(.invalidValue, key: "compensate", section: sec, "\(tl): compensate must be true or false") }
                compensate = b
            }
            // The file: a new or writable file in a writable folder; not twice; not a track.
            let path = fileURL.standardizedFileURL.resolvingSymlinksInPath().path
            if let other = seen[path] {
                throw loc.error(.invalidValue, key: "file", section: sec, "\(tl): record \(other + 1) already records to \(path)")
            }
            if trackFiles.contains(path) {
                throw loc.error(.invalidValue, key: "file", section: sec, "\(tl): \(path) is a track of the session; a take must not overwrite it")
            }
            seen[path] = i
            var isDir: ObjCBool = false
            let dir = fileURL.deletingLastPathComponent().path
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
                if isDir.boolValue { throw loc.error(.unwritableFile, key: "file", section: sec, "\(tl): \(path) is a directory") }
                if access(path, W_OK) != 0 { throw loc.error(.unwritableFile, key: "file", section: sec, "\(tl): \(path) cannot be overwritten: \(String(cString: strerror(errno)))") }
            }
            if !FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) || !isDir.boolValue {
                throw loc.error(.unwritableFile, key: "file", section: sec, "\(tl): the folder \(dir) does not exist")
            }
            if access(dir, W_OK | X_OK) != 0 {
                throw loc.error(.unwritableFile, key: "file", section: sec, "\(tl): cannot write in \(dir): \(String(cString: strerror(errno)))")
            }
            var take = SessionTake(file: fileURL, format: format, channels: channels, connect: connect, start: start, length: length, compensate: compensate)
            take.part = try parsePart(t, loc: loc, sec: sec, what: tl)
            takes.append(take)
        }
        return takes
    }

    /// A time key (`start`, `length`) of a take: frames or a time string; nil when absent.
    static func time(_ t: TOMLTable, _ key: String, loc: Locator, sec: Locator.Section, what: String, zeroAllowed: Bool) throws(SessionError) -> SessionTime? {
        guard let s = t[key] else { return nil }
        let rule = zeroAllowed ? "negative; a take cannot start before the session" : "not positive; a take records at least one frame"
        if let n = s.int {
            guard n > 0 || (zeroAllowed && n == 0) else { throw loc.error(.invalidValue, key: key, section: sec, "\(what): \(key) \(n) is \(rule)") }
            return .frames(Int64(n))
        }
        if let str = s.string {
            if str.trimmingCharacters(in: .whitespaces).hasPrefix("-") {
                throw loc.error(.invalidValue, key: key, section: sec, "\(what): \(key) \"\(str)\" is \(rule)")
            }
            guard let parsed = SessionTime.parse(str) else {
                throw loc.error(.invalidValue, key: key, section: sec, "\(what): \(key) \"\(str)\" is not a time (write frames as an integer, or \"1.5s\", \"250ms\", \"00:01:02.500\")")
            }
            if !zeroAllowed, case .seconds(let v) = parsed, v <= 0 {
                throw loc.error(.invalidValue, key: key, section: sec, "\(what): \(key) \"\(str)\" is \(rule)")
            }
            return parsed
        }
        throw loc.error(.invalidValue, key: key, section: sec, "\(what): \(key) must be an integer number of frames or a string such as \"1.5s\" or \"00:01:02.500\"")
    }
}

/// Finds where a key is written in the session text, for messages (TOMLKit gives positions
/// only for syntax errors).
struct Locator {
    enum Section { case table(String), track(Int), record(Int), marker(Int) }
    let lines: [Substring]
    let file: String

    init(text: String, file: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        self.file = file
    }

    func error(_ kind: SessionError.Kind, key: String?, section: Section?, _ message: String) -> SessionError {
        let pos = find(key: key, in: section)
        return SessionError(kind, file: file, line: pos?.line, column: pos?.column, message)
    }

    /// The line and column of `key = …` in `section` (the header line when `key` is nil).
    func find(key: String?, in section: Section?) -> (line: Int, column: Int)? {
        var from = 0
        var to = lines.count
        if let section {
            var headerIndex: Int?
            var seen = -1
            for (i, l) in lines.enumerated() {
                let h = l.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "")
                switch section {
                case .table(let name): if h.hasPrefix("[\(name)]") { headerIndex = i }
                case .track(let n):
                    if h.hasPrefix("[[track]]") { seen += 1; if seen == n { headerIndex = i } }
                case .record(let n):
                    if h.hasPrefix("[[record]]") { seen += 1; if seen == n { headerIndex = i } }
                case .marker(let n):
                    if h.hasPrefix("[[marker]]") { seen += 1; if seen == n { headerIndex = i } }
                }
                if headerIndex != nil { break }
            }
            guard let headerIndex else { return nil }
            guard key != nil else { return (headerIndex + 1, 1) }
            from = headerIndex + 1
            to = lines[from...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("[") }) ?? lines.count
        }
        guard let key else { return nil }
        for i in from..<to {
            let l = lines[i]
            let trimmed = l.drop(while: { $0 == " " || $0 == "\t" })
            for form in [key, "\"\(key)\"", "'\(key)'"] where trimmed.hasPrefix(form) {
                let rest = trimmed.dropFirst(form.count).drop(while: { $0 == " " || $0 == "\t" })
                if rest.hasPrefix("=") || rest.hasPrefix(".") {
                    return (i + 1, l.distance(from: l.startIndex, to: trimmed.startIndex) + 1)
                }
            }
            if section == nil, trimmed.hasPrefix("[") && trimmed.contains(key) { return (i + 1, 1) }
        }
        return nil
    }
}
