import AQSession
import AQTesting
import Foundation
import Testing

/// A temporary folder, removed when the value is released.
final class TempDir: @unchecked Sendable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("aqsession-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
    func write(_ name: String, _ text: String) throws -> URL {
        let u = file(name)
        try text.write(to: u, atomically: true, encoding: .utf8)
        return u
    }
}

struct ToolFailure: Error, CustomStringConvertible { var description: String }

/// Runs a tool to completion with its output in a file (pipes and EINTR don't mix well). A
/// tool still running after `timeout` seconds is hung: ended (``Process/terminateAndReap(grace:)``)
/// and reported by a thrown ``ToolFailure`` with what it printed.
@discardableResult
func runTool(_ path: String, _ args: [String], environment: [String: String] = [:], timeout: Double = 300) throws -> (status: Int32, output: String) {
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw ToolFailure(description: "\(path) is missing (apt-get install sox ffmpeg)")
    }
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("aqsession-tool-\(UUID().uuidString.prefix(8)).log")
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: log) }
    let fh = try FileHandle(forWritingTo: log)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    var env = ProcessInfo.processInfo.environment
    for (k, v) in environment { env[k] = v }
    p.environment = env
    p.standardOutput = fh
    p.standardError = fh
    p.standardInput = FileHandle.nullDevice
    try p.run()
    let hung = !p.waitUntilExit(within: timeout)
    try? fh.close()
    let out = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    if hung { throw ToolFailure(description: "\(path) \(args.joined(separator: " ")) still ran after \(Int(timeout)) s:\n\(out)") }
    return (p.terminationStatus, out)
}

/// The built `aqsync` next to the test bundle.
func aqsyncURL() -> URL {
    let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let beside = dir.appendingPathComponent("aqsync")
    if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/aqsync")
}

/// Starts `aqsync ARGUMENTS` as a child process with its output and errors in `log` (made
/// empty first) and its input from /dev/null. Returns the running process; the caller waits for
/// it or ends it. Test thread; does not wait for the child.
func startAqsync(_ arguments: [String], log: URL) throws -> Process {
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    let fh = try FileHandle(forWritingTo: log)
    defer { try? fh.close() }
    let p = Process()
    p.executableURL = aqsyncURL()
    p.arguments = arguments
    p.standardOutput = fh
    p.standardError = fh
    p.standardInput = FileHandle.nullDevice
    try p.run()
    return p
}

/// An audio file of impulses made with sox: raw float samples of known value, converted.
struct ImpulseFile {
    var url: URL
    var rate: Int
    var frames: Int
    /// Per channel, the file frames holding an impulse.
    var impulses: [[Int]]
}

/// Writes `frames` frames of silence with `amplitude` at `impulses[c]` in channel c, then
/// converts with sox to `name` using `encoding` arguments (e.g. ["-e", "signed-integer", "-b", "16"]).
func makeImpulseFile(
    _ dir: TempDir, _ name: String, rate: Int, frames: Int, impulses: [[Int]], amplitude: Float = 0.5, encoding: [String]
) throws -> ImpulseFile {
    let channels = impulses.count
    var samples = [Float](repeating: 0, count: frames * channels)
    for (c, list) in impulses.enumerated() { for f in list { samples[f * channels + c] = amplitude } }
    let raw = dir.file(name + ".f32")
    try samples.withUnsafeBytes { try Data($0).write(to: raw) }
    let out = dir.file(name)
    let r = try runTool("/usr/bin/sox", ["-D", "-t", "raw", "-e", "floating-point", "-b", "32", "-L", "-r", "\(rate)", "-c", "\(channels)", raw.path] + encoding + [out.path])
    guard r.status == 0 else { throw ToolFailure(description: "sox failed for \(name): \(r.output)") }
    try? FileManager.default.removeItem(at: raw)
    return ImpulseFile(url: out, rate: rate, frames: frames, impulses: impulses)
}

/// Peaks: for each run of samples above `threshold` in magnitude, the frame of the largest.
func peaks(_ x: [Float], threshold: Float) -> [Int] {
    var out: [Int] = []
    var i = 0
    while i < x.count {
        if abs(x[i]) > threshold {
            var best = i
            var j = i
            while j < x.count && abs(x[j]) > threshold {
                if abs(x[j]) > abs(x[best]) { best = j }
                j += 1
            }
            out.append(best)
            i = j
        } else {
            i += 1
        }
    }
    return out
}

/// A session of two parts on one output, `frames` long each (default 96 000: 2 s): part A,
/// clicks of 0.5 every `spacing` frames from session frame 0; part B, clicks of 0.8 every
/// `spacing` frames from `offsetB`; written as `name`. For the tests of `--part` with a shared
/// start (`--start-at`, netjack2).
func writeTwoPartClickSession(
    _ dir: TempDir, spacing: Int, offsetB: Int = 0, frames: Int = 96_000, name: String = "parts.toml"
) throws -> URL {
    _ = try makeImpulseFile(dir, "a.wav", rate: 48000, frames: frames, impulses: [Array(stride(from: 0, to: frames, by: spacing))], amplitude: 0.5, encoding: ["-e", "signed-integer", "-b", "16"])
    _ = try makeImpulseFile(dir, "b.wav", rate: 48000, frames: frames, impulses: [Array(stride(from: offsetB, to: frames, by: spacing))], amplitude: 0.8, encoding: ["-e", "signed-integer", "-b", "16"])
    return try dir.write(name, """
        [output]
        channels = 1
        [[track]]
        file = "a.wav"
        part = "A"
        [[track]]
        file = "b.wav"
        part = "B"
        """)
}
