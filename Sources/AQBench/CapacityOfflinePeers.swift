import Foundation

/// The tools `aqsync bench --capacity --offline --peer …` renders the same session with
/// (issue 25): what a user would pick instead of `aqsync render`.
///
/// Thread safety: a plain value.
public enum OfflinePeer: String, Sendable, Codable, CaseIterable {
    case ffmpeg
    case ecasound
    case sox

    /// Parses "ffmpeg,ecasound,sox". Pure.
    public static func list(_ text: String) -> [OfflinePeer]? {
        let p = text.split(separator: ",").map { OfflinePeer(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
        return p.contains(where: { $0 == nil }) || p.isEmpty ? nil : p.compactMap { $0 }
    }
}

/// The command line (arguments, without the program) with which `peer` mixes `tracks` copies
/// of `file` (stereo), track t delayed by `t × spacing` frames, summed without scaling, into a
/// stereo 32-bit float WAV `output` at `rate` — the capacity session that `aqsync render
/// --format f32` renders. nil when the tool has no reader for the format.
///
/// - ffmpeg: one input per track, `aresample=RATE,adelay=DS:all=1` on each (a no-op
///   resampler at the file's own rate), `amix=inputs=N:normalize=0` (a plain sum).
/// - ecasound: one chain per track, `-i:playat,Dsa,INPUT` (``ecasoundInput``; 44.1 kHz WAV
///   not offered: its resample object inside playat is not what a user would write),
///   `-z:mixmode,sum`, the output `-f:f32_le,2,RATE -o:OUT`.
/// - sox: `sox -m`, each input `-v 1` (its default scales each by 1/N) and read through a pipe
///   that delays it (`"|sox FILE -p [rate RATE] pad Ds"`: sox -m has no per-input offset); MP3
///   and AAC not offered (Debian's sox has no MP3 reader without libsox-fmt-mp3). Pure.
public func offlinePeerArguments(
    _ peer: OfflinePeer, format: CapacityFormat, file: String, tracks: Int, spacing: Int, rate: Int, output: String
) -> [String]? {
    guard tracks > 0 else { return nil }
    switch peer {
    case .ffmpeg:
        var a = ["-v", "error", "-nostdin", "-y"]
        for _ in 0..<tracks { a += ["-i", file] }
        var graph = (0..<tracks).map { "[\($0):a]aresample=\(rate),adelay=\($0 * spacing)S:all=1[a\($0)]" }.joined(separator: ";")
        graph += ";" + (0..<tracks).map { "[a\($0)]" }.joined() + "amix=inputs=\(tracks):normalize=0:dropout_transition=0[mix]"
        return a + ["-filter_complex", graph, "-map", "[mix]", "-ac", "2", "-ar", "\(rate)", "-c:a", "pcm_f32le", output]
    case .ecasound:
        guard format != .wav44, let input = ecasoundInput(format, file: file, deviceRate: rate) else { return nil }
        var a = ["-q", "-z:mixmode,sum"]
        for t in 0..<tracks { a += ["-a:\(t + 1)", "-i:playat,\(t * spacing)sa,\(input)"] }
        return a + ["-a:" + (1...tracks).map(String.init).joined(separator: ","), "-f:f32_le,2,\(rate)", "-o:\(output)"]
    case .sox:
        guard format != .mp3 && format != .aac else { return nil }
        var a = ["-m"]
        for t in 0..<tracks {
            let resample = format.fileRate(deviceRate: rate) == rate ? "" : " rate \(rate)"
            a += ["-v", "1", "|sox \(soxQuoted(file)) -p\(resample) pad \(t * spacing)s"]
        }
        return a + ["-e", "floating-point", "-b", "32", output]
    }
}

/// `s` quoted for the shell sox runs a pipe input with. Pure.
func soxQuoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

/// A WAV file's samples as 32-bit floats, interleaved (format 3, or WAVE_FORMAT_EXTENSIBLE with
/// 32-bit samples; RIFF or RF64 with the size in the data chunk). nil for anything else. Pure.
public func readFloatWAV(_ data: Data) -> (channels: Int, samples: [Float])? {
    let b = [UInt8](data)
    guard b.count >= 12, b[8..<12].elementsEqual("WAVE".utf8) else { return nil }
    func u32(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24 }
    func u16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
    var i = 12
    var channels = 0, bits = 0, tag = 0
    while i + 8 <= b.count {
        let id = String(decoding: b[i..<i + 4], as: UTF8.self)
        var size = u32(i + 4)
        if id == "fmt " && i + 24 <= b.count {
            tag = u16(i + 8)
            channels = u16(i + 10)
            bits = u16(i + 22)
        } else if id == "data" {
            guard (tag == 3 || tag == 0xFFFE) && bits == 32 && channels > 0 else { return nil }
            if size == 0xFFFF_FFFF || i + 8 + size > b.count { size = (b.count - i - 8) / 4 * 4 }
            let count = size / 4
            var out = [Float](repeating: 0, count: count)
            out.withUnsafeMutableBytes { dst in b.withUnsafeBytes { src in dst.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[(i + 8)..<(i + 8 + count * 4)])) } }
            return (channels, out)
        }
        i += 8 + size + (size & 1)
    }
    return nil
}

/// How far `b` is from `a`: frames of each, and the largest absolute sample difference over
/// the frames both have (nil when either is not a float WAV of the same channel count). Pure.
public func compareFloatWAVs(_ a: Data, _ b: Data) -> (framesA: Int, framesB: Int, maxDifference: Float)? {
    guard let x = readFloatWAV(a), let y = readFloatWAV(b), x.channels == y.channels else { return nil }
    var d: Float = 0
    for i in 0..<min(x.samples.count, y.samples.count) { d = max(d, abs(x.samples[i] - y.samples[i])) }
    return (x.samples.count / x.channels, y.samples.count / y.channels, d)
}

/// One row of the offline comparison: a tool's renders of the session. JSON keys are the
/// snake_case names in `CodingKeys`.
///
/// Thread safety: a plain value.
public struct OfflineComparisonRow: Sendable, Codable {
    /// "aqsync" or the peer's name.
    public var tool: String
    public var format: CapacityFormat
    public var tracks: Int
    public var seconds: Double
    public var wallSeconds: [Double]
    public var cpuSeconds: [Double]
    public var maxRSSMiB: Double
    /// Why the tool did not render (not installed, no reader, an error), or nil.
    public var skipped: String?
    /// Against aqsync's output: frames of each, and the largest sample difference.
    public var framesAqsync: Int?
    public var frames: Int?
    public var maxDifference: Float?
    /// The command of the last run, for people (a session file for aqsync).
    public var command: String

    enum CodingKeys: String, CodingKey {
        case tool, format, tracks, seconds, skipped, frames, command
        case wallSeconds = "wall_seconds"
        case cpuSeconds = "cpu_seconds"
        case maxRSSMiB = "max_rss_mib"
        case framesAqsync = "frames_aqsync"
        case maxDifference = "max_difference"
    }

    public var medianWall: Double { median(wallSeconds) }
}

/// `aqsync render` of the session (track t at `t × spacing` frames) and each peer's render of
/// the same, alternating run by run (aqsync, then each peer, `runs` rounds), all to 32-bit
/// float WAV at `rate`; each peer's last output compared with aqsync's. Control thread; blocks.
public func runOfflineComparison(
    aqsync: URL, peers: [OfflinePeer], formats: [CapacityFormat], tracks: Int, seconds: Double, spacing: Int, runs: Int, sampleRate: Int,
    log: (String) -> Void = { _ in }
) throws -> [OfflineComparisonRow] {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqcapcmp-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    var rows: [OfflineComparisonRow] = []
    for format in formats {
        let file = try capacityFile(format, seconds: seconds, deviceRate: sampleRate, in: dir)
        let session = try writeCapacitySession(in: dir, file: file, tracks: tracks, clientName: "aqcap-render", spacing: spacing)
        var tools: [(name: String, path: URL, arguments: (String) -> [String])] = [
            ("aqsync", aqsync, { ["render", session.path, "-o", $0, "--format", "f32", "--rate", "\(sampleRate)", "--quiet"] }),
        ]
        var formatRows: [OfflineComparisonRow] = [OfflineComparisonRow(
            tool: "aqsync", format: format, tracks: tracks, seconds: seconds, wallSeconds: [], cpuSeconds: [], maxRSSMiB: 0,
            command: "aqsync render SESSION -o OUT --format f32 --rate \(sampleRate) --quiet")]
        for peer in peers {
            var row = OfflineComparisonRow(tool: peer.rawValue, format: format, tracks: tracks, seconds: seconds, wallSeconds: [], cpuSeconds: [], maxRSSMiB: 0, command: "")
            if let path = findExecutable(peer.rawValue) {
                if offlinePeerArguments(peer, format: format, file: file.path, tracks: tracks, spacing: spacing, rate: sampleRate, output: "OUT") != nil {
                    tools.append((peer.rawValue, path, { offlinePeerArguments(peer, format: format, file: file.path, tracks: tracks, spacing: spacing, rate: sampleRate, output: $0)! }))
                } else {
                    row.skipped = "no reader for \(format.rawValue)"
                }
            } else {
                row.skipped = "not installed"
            }
            formatRows.append(row)
        }
        for run in 1...max(1, runs) {
            for tool in tools {
                let out = dir.appendingPathComponent("\(tool.name).wav")
                let text = dir.appendingPathComponent("\(tool.name).out")
                let started = Date()
                let child = try MeasuredChild(path: tool.path.path, arguments: tool.arguments(out.path), output: text.path)
                try child.waitSamplingMemory()
                let wall = Date().timeIntervalSince(started)
                let i = formatRows.firstIndex { $0.tool == tool.name }!
                guard child.exitStatus == 0 else {
                    let said = (try? String(contentsOf: text, encoding: .utf8)) ?? ""
                    if tool.name == "aqsync" { throw BenchError("aqsync render exited with status \(child.exitStatus ?? -1): \(said)") }
                    formatRows[i].skipped = "exited with status \(child.exitStatus ?? -1): \(said.split(separator: "\n").last.map(String.init) ?? "")"
                    log("  \(tool.name) \(format.rawValue): \(formatRows[i].skipped!)")
                    continue
                }
                formatRows[i].wallSeconds.append(wall)
                formatRows[i].cpuSeconds.append(child.cpuSeconds)
                formatRows[i].maxRSSMiB = max(formatRows[i].maxRSSMiB, Double(child.maxRSSBytes) / 1_048_576)
                if tool.name != "aqsync" { formatRows[i].command = tool.name + " " + tool.arguments("OUT").map { $0.contains(" ") || $0.contains(";") || $0.contains("|") ? "'\($0)'" : $0 }.joined(separator: " ") }
                log("  \(tool.name) \(format.rawValue) \(tracks) tracks, run \(run): \(fmt(wall)) s wall, \(fmt(child.cpuSeconds)) s CPU")
            }
        }
        // Each peer's last output against aqsync's.
        if let mine = try? Data(contentsOf: dir.appendingPathComponent("aqsync.wav")) {
            for i in formatRows.indices where formatRows[i].tool != "aqsync" && formatRows[i].skipped == nil {
                if let theirs = try? Data(contentsOf: dir.appendingPathComponent("\(formatRows[i].tool).wav")), let c = compareFloatWAVs(mine, theirs) {
                    formatRows[i].framesAqsync = c.framesA
                    formatRows[i].frames = c.framesB
                    formatRows[i].maxDifference = c.maxDifference
                }
            }
        }
        rows += formatRows
    }
    return rows
}

/// The rows as a Markdown table: per format and tool, the median wall time, aqsync's over it,
/// CPU per track-second, peak RSS, and the output against aqsync's. Pure.
public func describeOfflineComparison(_ rows: [OfflineComparisonRow]) -> String {
    var s = "| format | tool | wall (median, s; runs) | aqsync / tool (wall) | CPU ms per track-second (median) | peak RSS (MiB) | output against aqsync's (frames; largest difference) |\n"
    s += "|---|---|---|---:|---:|---:|---|\n"
    for r in rows {
        if let why = r.skipped, r.wallSeconds.isEmpty {
            s += "| \(r.format.rawValue) | \(r.tool) | — (\(why)) | | | | |\n"
            continue
        }
        let a = rows.first { $0.tool == "aqsync" && $0.format == r.format }
        let ratio = r.tool == "aqsync" ? "" : a.map { String(format: "%.3f", $0.medianWall / r.medianWall) } ?? ""
        let cpu = median(r.cpuSeconds) * 1000 / (Double(r.tracks) * r.seconds)
        var same = ""
        if let f = r.frames, let fa = r.framesAqsync, let d = r.maxDifference {
            same = (f == fa ? "\(f) frames, same" : "\(f) against \(fa)") + "; " + (d == 0 ? "identical" : String(format: "%.3g", d))
        }
        s += "| \(r.format.rawValue) | \(r.tool) | \(String(format: "%.3f", r.medianWall)); \(r.wallSeconds.map { fmt($0) }.joined(separator: ", ")) | \(ratio) | \(String(format: "%.3f", cpu)) | \(String(format: "%.1f", r.maxRSSMiB)) | \(same) |\n"
    }
    return s
}

/// The rows as JSON. Control thread.
public func encodeOfflineComparisonJSON(_ rows: [OfflineComparisonRow]) -> String { encodeJSON(rows) }
