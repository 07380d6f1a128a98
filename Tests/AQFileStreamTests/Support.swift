import AQFileStream
import AQTypes
import Foundation
import Testing

/// Deterministic random numbers (SplitMix64) for sample data and split points.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum ToolError: Error, CustomStringConvertible {
    case missing(String)
    case failed(String, String)
    var description: String {
        switch self {
        case .missing(let t): "\(t) is not installed (install sox and ffmpeg: apt-get install sox ffmpeg)"
        case .failed(let cmd, let err): "\(cmd) failed: \(err)"
        }
    }
}

/// sox/ffmpeg in a scratch directory. Missing tools throw (the test fails), they never skip.
final class Fixtures: @unchecked Sendable {
    let dir: URL

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: dir) }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    static func tool(_ name: String) throws -> String {
        for d in ["/usr/bin", "/usr/local/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: "\(d)/\(name)") {
            return "\(d)/\(name)"
        }
        throw ToolError.missing(name)
    }

    /// Runs a tool; stdout goes to `stdoutFile` when given.
    func run(_ tool: String, _ args: [String], stdoutFile: String? = nil) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Self.tool(tool))
        p.arguments = args
        p.currentDirectoryURL = dir
        // stderr goes to a file: Foundation's pipe reading traps on EINTR, and other suites in
        // this process (JACK) make signals arrive.
        let errURL = dir.appendingPathComponent(".stderr-\(UInt32.random(in: 0...UInt32.max))")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errURL) }
        let errHandle = FileHandle(forWritingAtPath: errURL.path)
        p.standardError = errHandle
        if let stdoutFile {
            _ = FileManager.default.createFile(atPath: stdoutFile, contents: nil)
            p.standardOutput = FileHandle(forWritingAtPath: stdoutFile)
        }
        try p.run()
        p.waitUntilExit()
        try? errHandle?.close()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        guard p.terminationStatus == 0 else {
            throw ToolError.failed(([tool] + args).joined(separator: " "), String(decoding: errData, as: UTF8.self))
        }
    }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let p = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        return p
    }

    func read(_ p: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: p))) }

    func sox(_ args: [String]) throws { try run("sox", args) }
    func ffmpeg(_ args: [String]) throws { try run("ffmpeg", ["-v", "error", "-y"] + args) }
}

/// Everything a parse produced, independent of how the input was split.
struct Parsed: Equatable {
    var announced: [AudioFileStreamProperty] = []
    var values: [AudioFileStreamProperty: AudioFileStreamPropertyValue] = [:]
    var data: [UInt8] = []
    var sizes: [UInt32] = []
    var frames: [UInt32] = []
    var packetCount = 0
    var error: AudioFileStreamError?
    var bufferedHighWater = 0

    var format: AudioStreamBasicDescription? {
        if case .dataFormat(let f)? = values[.dataFormat] { return f }
        return nil
    }
    func uint64(_ p: AudioFileStreamProperty) -> UInt64? {
        if case .uint64(let v)? = values[p] { return v }
        return nil
    }
    func uint32(_ p: AudioFileStreamProperty) -> UInt32? {
        if case .uint32(let v)? = values[p] { return v }
        return nil
    }
    func int64(_ p: AudioFileStreamProperty) -> Int64? {
        if case .int64(let v)? = values[p] { return v }
        return nil
    }
    var cookie: [UInt8]? {
        if case .bytes(let v)? = values[.magicCookieData] { return v }
        return nil
    }
    var table: AudioFilePacketTableInfo? {
        if case .packetTableInfo(let v)? = values[.packetTableInfo] { return v }
        return nil
    }
    /// The bytes of packet `i` (variable-size formats).
    func packet(_ i: Int) -> ArraySlice<UInt8> {
        let start = sizes[0..<i].reduce(0) { $0 + Int($1) }
        return data[start..<start + Int(sizes[i])]
    }
}

enum Split: CustomStringConvertible {
    case whole, bytewise, random(UInt64), chunks(Int)
    var description: String {
        switch self {
        case .whole: "whole"
        case .bytewise: "bytewise"
        case .random(let s): "random(\(s))"
        case .chunks(let n): "chunks(\(n))"
        }
    }
}

/// Feeds `bytes` to a new parser split as asked, recording everything.
func parse(_ bytes: [UInt8], split: Split = .whole, hint: FourCharCode? = nil) -> Parsed {
    var out = Parsed()
    let box = Box()
    let stream: AudioFileStream
    do {
        stream = try AudioFileStream(
            fileTypeHint: hint,
            propertyListener: { s, property, flags in
                box.parsed.announced.append(property)
                if let v = try? s.value(of: property) { box.parsed.values[property] = v }
                if property == .magicCookieData { flags.insert(.cacheProperty) }
            },
            packets: { data, count, descriptions in
                box.parsed.packetCount += count
                box.parsed.data.append(contentsOf: data)
                if let descriptions {
                    // Keep only the payload bytes, packet by packet.
                    box.parsed.data.removeLast(data.count)
                    for d in descriptions {
                        let start = Int(d.startOffset)
                        box.parsed.data.append(contentsOf: data[start..<start + Int(d.dataByteSize)])
                        box.parsed.sizes.append(d.dataByteSize)
                        box.parsed.frames.append(d.variableFramesInPacket)
                    }
                }
            })
    } catch {
        out.error = error
        return out
    }
    var pieces: [Range<Int>] = []
    switch split {
    case .whole: pieces = [0..<bytes.count]
    case .bytewise: pieces = (0..<bytes.count).map { $0..<$0 + 1 }
    case .chunks(let n): pieces = stride(from: 0, to: bytes.count, by: n).map { $0..<min($0 + n, bytes.count) }
    case .random(let seed):
        var rng = SplitMix(seed: seed)
        var i = 0
        while i < bytes.count {
            let n = Int.random(in: 0...min(700, bytes.count - i), using: &rng)
            pieces.append(i..<i + n)
            i += n
        }
    }
    bytes.withUnsafeBytes { raw in
        for r in pieces {
            do throws(AudioFileStreamError) {
                try stream.parse(UnsafeRawBufferPointer(rebasing: raw[r]))
            } catch {
                box.parsed.error = error
                return
            }
            box.parsed.bufferedHighWater = max(box.parsed.bufferedHighWater, stream.bufferedByteCount)
        }
    }
    out = box.parsed
    // Final values of every property (running values like maximum packet size included).
    for p in AudioFileStreamProperty.allCases {
        if let v = try? stream.value(of: p) { out.values[p] = v }
    }
    if out.sizes.isEmpty, let f = out.format, f.bytesPerPacket > 0 {
        out.sizes = []
    }
    return out
}

final class Box: @unchecked Sendable { var parsed = Parsed() }

/// Deterministic sample bytes.
func randomBytes(_ n: Int, seed: UInt64, excluding: Set<UInt8> = []) -> [UInt8] {
    var rng = SplitMix(seed: seed)
    var out: [UInt8] = []
    out.reserveCapacity(n)
    while out.count < n {
        let b = UInt8.random(in: 0...255, using: &rng)
        if !excluding.contains(b) { out.append(b) }
    }
    return out
}

/// Float samples k/32768 (exact through every integer path), `bytes` wide, in either order.
func floatSamples(_ count: Int, width: Int, bigEndian: Bool, seed: UInt64) -> [UInt8] {
    var rng = SplitMix(seed: seed)
    var out: [UInt8] = []
    for _ in 0..<count {
        let k = Double(Int16.random(in: -32767...32767, using: &rng)) / 32768
        var bytes: [UInt8]
        if width == 4 {
            let b = Float(k).bitPattern
            bytes = (0..<4).map { UInt8((b >> (8 * $0)) & 0xFF) }
        } else {
            let b = k.bitPattern
            bytes = (0..<8).map { UInt8((b >> (8 * UInt64($0))) & 0xFF) }
        }
        if bigEndian { bytes.reverse() }
        out += bytes
    }
    return out
}
