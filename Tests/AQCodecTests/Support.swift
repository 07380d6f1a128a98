import AQConvert
import AQCore
import AQEngine
import AQFileStream
import AQTypes
import Foundation

/// A scratch directory for fixtures made with ffmpeg/sox at test time (removed afterwards).
/// A missing tool throws: the test fails with an install hint, it never skips.
final class CodecFixtures: @unchecked Sendable {
    let dir: URL

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqcodec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: dir) }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    struct ToolFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `tool` (from /usr/bin); stdout to `stdoutFile` when given, stderr to a file.
    func run(_ tool: String, _ args: [String], stdoutFile: String? = nil) throws {
        let exe = "/usr/bin/\(tool)"
        guard FileManager.default.isExecutableFile(atPath: exe) else {
            throw ToolFailed(description: "\(tool) is not installed (apt-get install ffmpeg sox)")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        p.currentDirectoryURL = dir
        let errPath = path(".stderr-\(UInt32.random(in: 0...UInt32.max))")
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errPath) }
        let err = FileHandle(forWritingAtPath: errPath)
        p.standardError = err
        if let stdoutFile {
            _ = FileManager.default.createFile(atPath: stdoutFile, contents: nil)
            p.standardOutput = FileHandle(forWritingAtPath: stdoutFile)
        }
        try p.run()
        p.waitUntilExit()
        try? err?.close()
        guard p.terminationStatus == 0 else {
            let text = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data(), as: UTF8.self)
            throw ToolFailed(description: "\(tool) \(args.joined(separator: " ")) failed: \(text)")
        }
    }

    func ffmpeg(_ args: [String]) throws { try run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + args) }

    /// ffmpeg's own decode of `file`: interleaved Float32, split into planes.
    func ffmpegDecode(_ file: String, channels: Int) throws -> [[Float]] {
        let out = path(UUID().uuidString + ".f32")
        try ffmpeg(["-i", file, "-f", "f32le", out])
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let frames = samples.count / channels
        return (0..<channels).map { c in (0..<frames).map { samples[$0 * channels + c] } }
    }
}

/// A parsed file: format, cookie, gapless info and every packet (bytes and frame count).
struct ParsedFile {
    var format: AudioStreamBasicDescription
    var cookie: [UInt8]?
    var packetTable: AudioFilePacketTableInfo?
    var dataOffset: Int64
    var packets: [(bytes: [UInt8], frames: UInt32)] = []
}

func parseFile(_ bytes: [UInt8], hint: FourCharCode? = nil) throws -> ParsedFile {
    var packets: [(bytes: [UInt8], frames: UInt32)] = []
    let stream = try AudioFileStream(
        fileTypeHint: hint,
        propertyListener: { _, property, flags in
            if property == .magicCookieData { flags.insert(.cacheProperty) }
        },
        packets: { data, count, descriptions in
            guard let descriptions else { return }
            for d in descriptions {
                let start = Int(d.startOffset)
                packets.append((Array(data[start..<(start + Int(d.dataByteSize))]), d.variableFramesInPacket))
            }
        })
    try stream.parse(bytes)
    guard let format = stream.dataFormat else { throw CodecFixtures.ToolFailed(description: "no data format") }
    let parsed = ParsedFile(
        format: format, cookie: stream.magicCookie, packetTable: stream.packetTableInfo,
        dataOffset: stream.dataOffset ?? 0, packets: packets)
    try stream.close()
    return parsed
}

/// What an offline render of a file through one compressed queue gave.
struct Rendered {
    /// Planar output from the queue's start frame.
    var output: [[Float]]
    /// Device frames the queue scheduled (its length at the device rate).
    var frames: Int
    var corruptPackets: Int
    /// Device frames the queue scheduled, counted by the queue (`enqueuedDeviceFrames` after
    /// the flush).
    var deviceFrames: Int64 = 0
}

/// Plays `file` through one queue of an engine on a hand-driven device at `deviceRate`: every
/// packet enqueued in buffers of `packetsPerBuffer` packets, gapless info and cookie from the
/// parser, flushed, started at device frame 0, rendered in 256-frame cycles.
/// `replace` swaps in other bytes for the given packet indices (damage at enqueue).
func renderOffline(
    _ file: ParsedFile, deviceRate: Double? = nil, packetsPerBuffer: Int = 16, gapless: Bool = true,
    replace: [Int: [UInt8]] = [:], configure: (AudioQueue) throws -> Void = { _ in }
) throws -> Rendered {
    let rate = deviceRate ?? file.format.sampleRate
    let channels = Int(file.format.channelsPerFrame)
    let device = ManualDevice(sampleRate: rate, channels: channels)
    let buffersNeeded = (file.packets.count + packetsPerBuffer - 1) / packetsPerBuffer
    let engine = try AudioQueueEngine(
        device: device,
        capacities: RenderCapacities(queues: 4, buffersPerQueue: buffersNeeded + 8, commands: 4 * buffersNeeded + 64, outputChannels: 8))
    defer { engine.close() }
    let q = try engine.newOutput(format: file.format) { _, _ in }
    if let cookie = file.cookie, !cookie.isEmpty { try q.setMagicCookie(cookie) }
    if gapless, let pt = file.packetTable { try q.setGaplessInfo(pt) }
    try configure(q)
    let maxBytes = file.packets.map(\.bytes.count).max() ?? 1
    var p = 0
    while p < file.packets.count {
        let n = min(packetsPerBuffer, file.packets.count - p)
        let b = try q.allocateBuffer(capacity: packetsPerBuffer * maxBytes, packetDescriptions: packetsPerBuffer)
        var offset = 0
        for i in 0..<n {
            let bytes = replace[p + i] ?? file.packets[p + i].bytes
            bytes.withUnsafeBytes { (b.audioData + offset).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            b.packetDescriptions![i] = AudioStreamPacketDescription(
                startOffset: Int64(offset), variableFramesInPacket: file.packets[p + i].frames, dataByteSize: UInt32(bytes.count))
            offset += bytes.count
        }
        b.audioDataByteSize = offset
        b.packetDescriptionCount = n
        try q.enqueue(b)
        p += n
    }
    try q.flush()
    let deviceFrames = q.enqueuedDeviceFrames
    let total = (file.packets.count * PacketDecoder.maximumFramesPerPacket(file.format) + 8192) * Int((rate / file.format.sampleRate).rounded(.up)) * 2
    _ = try engine.start([q], at: AudioTimeStamp(sampleTime: 0))
    let out = device.render(frames: total, cycle: 256)
    let scheduled = Int((Double(try q.prime()) * rate / file.format.sampleRate).rounded())
    return Rendered(output: out, frames: scheduled, corruptPackets: q.corruptPacketCount, deviceFrames: deviceFrames)
}

/// Largest |a − b| over the first `n` frames of every channel.
func maxDifference(_ a: [[Float]], _ b: [[Float]], frames n: Int) -> Float {
    var m: Float = 0
    for c in 0..<min(a.count, b.count) {
        for i in 0..<n { m = max(m, abs(a[c][i] - b[c][i])) }
    }
    return m
}

/// Rewrites a CAF so that its `pakt` chunk comes before `data`, as a streamable CAF has it
/// (ffmpeg writes `pakt` at the end, which a push parser cannot use in time).
func cafWithPacketTableFirst(_ b: [UInt8]) -> [UInt8] {
    var chunks: [(type: [UInt8], body: ArraySlice<UInt8>)] = []
    var i = 8
    while i + 12 <= b.count {
        let type = Array(b[i..<(i + 4)])
        var size: Int64 = 0
        for k in 0..<8 { size = size << 8 | Int64(b[i + 4 + k]) }
        let start = i + 12
        let end = size < 0 ? b.count : min(b.count, start + Int(size))
        chunks.append((type, b[start..<end]))
        i = end
    }
    let isPakt = { (t: [UInt8]) in t == Array("pakt".utf8) }
    let isData = { (t: [UInt8]) in t == Array("data".utf8) }
    let ordered = chunks.filter { !isPakt($0.type) && !isData($0.type) } + chunks.filter { isPakt($0.type) }
        + chunks.filter { isData($0.type) }
    var out = Array(b[0..<8])
    for c in ordered {
        out += c.type
        let n = Int64(c.body.count)
        for k in (0..<8).reversed() { out.append(UInt8(truncatingIfNeeded: n >> (8 * Int64(k)))) }
        out += c.body
    }
    return out
}
