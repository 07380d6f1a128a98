// Decoding throughput of AQConvert.PacketDecoder (issue 6). docs/codecs.md has the results.
//
// - "Decode-MP3-10s", "Decode-AAC-10s", "Decode-ALAC-10s": 10 s of 44.1 kHz stereo (a sine
//   plus noise, made by ffmpeg once at start-up into a temporary file and parsed with
//   AQFileStream), every packet decoded to planar Float32 into preallocated planes, as
//   AudioQueue.enqueue does on the enqueuing thread. Throughput = 10 s / time ("× real time").
import AQConvert
import AQFileStream
import AQTypes
import Benchmark
import Foundation

struct Fixture {
    var format: AudioStreamBasicDescription
    var cookie: [UInt8]
    var packets: [[UInt8]]
}

/// Encodes 10 s with ffmpeg (`codec` arguments, `ext` container) and parses it into packets.
func fixture(_ ext: String, _ codec: [String]) -> Fixture {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqcodec-bench-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("b.\(ext)").path
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    p.arguments = ["-nostdin", "-v", "error", "-y",
        "-f", "lavfi", "-i", "sine=f=440:d=10:sample_rate=44100",
        "-f", "lavfi", "-i", "anoisesrc=d=10:a=0.1:sample_rate=44100",
        "-filter_complex", "[0][1]amerge=inputs=2[a]", "-map", "[a]", "-ac", "2"] + codec + [file]
    try! p.run()
    p.waitUntilExit()
    var bytes = [UInt8](try! Data(contentsOf: URL(fileURLWithPath: file)))
    if ext == "caf" { bytes = packetTableFirst(bytes) }
    var packets: [[UInt8]] = []
    let s = try! AudioFileStream(
        propertyListener: { _, p, f in if p == .magicCookieData { f.insert(.cacheProperty) } },
        packets: { data, _, descs in
            for d in descs! { packets.append(Array(data[Int(d.startOffset)..<(Int(d.startOffset) + Int(d.dataByteSize))])) }
        })
    try! s.parse(bytes)
    let f = Fixture(format: s.dataFormat!, cookie: s.magicCookie ?? [], packets: packets)
    try! s.close()
    return f
}

/// A CAF with its `pakt` before `data` (ffmpeg writes it after; the push parser needs it first).
func packetTableFirst(_ b: [UInt8]) -> [UInt8] {
    var chunks: [(type: [UInt8], body: ArraySlice<UInt8>)] = []
    var i = 8
    while i + 12 <= b.count {
        var size = 0
        for k in 0..<8 { size = size << 8 | Int(b[i + 4 + k]) }
        chunks.append((Array(b[i..<(i + 4)]), b[(i + 12)..<min(b.count, i + 12 + size)]))
        i += 12 + size
    }
    let data = Array("data".utf8)
    var out = Array(b[0..<8])
    for c in chunks.filter({ $0.type != data }) + chunks.filter({ $0.type == data }) {
        out += c.type
        for k in (0..<8).reversed() { out.append(UInt8(truncatingIfNeeded: c.body.count >> (8 * k))) }
        out += c.body
    }
    return out
}

/// Decodes every packet of `f` into preallocated planes; returns frames decoded.
func decodeAll(_ f: Fixture, _ planes: UnsafePointer<UnsafeMutablePointer<Float>>, capacity: Int) -> Int {
    let d = try! PacketDecoder(format: f.format, magicCookie: f.cookie)
    var frames = 0
    for p in f.packets {
        frames += p.withUnsafeBytes { d.decode($0, framesIfCorrupt: 0, into: planes, offset: 0, capacity: capacity) }
    }
    return frames
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput], maxDuration: .seconds(5), maxIterations: 20)
    let capacity = 8192
    let storage = UnsafeMutablePointer<Float>.allocate(capacity: 2 * capacity)
    let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
    planes[0] = storage
    planes[1] = storage + capacity
    for (name, ext, codec) in [
        ("MP3", "mp3", ["-c:a", "libmp3lame", "-b:a", "192k"]),
        ("AAC", "aac", ["-c:a", "aac", "-b:a", "160k", "-f", "adts"]),
        ("ALAC", "caf", ["-c:a", "alac", "-sample_fmt", "s16p"]),
    ] {
        let f = fixture(ext, codec)
        Benchmark("Decode-\(name)-10s") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(decodeAll(f, planes, capacity: capacity))
            }
        }
    }
}
