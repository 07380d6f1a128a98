// The file-stream parser's benchmarks (issue 3). docs/benchmarking.md says how to run them.
//
// - "Parse-WAV-PCM-64MiB": a 64 MiB 16-bit stereo WAV fed to AudioFileStream in 64 KiB
//   chunks, packets delivered and touched (one byte per callback). Throughput = 64 MiB / time.
// - "Parse-MP3-framing-64MiB": 64 MiB of MPEG-1 Layer III frames (128 kb/s, 44.1 kHz: 417-byte
//   frames, silent payload) in 64 KiB chunks: frame sync, header checks, packet descriptions.
// - "Memory-WAV-stream-16MiB" / "-1GiB" (and MP3): the stream is made 64 KiB at a time into
//   one reused buffer, so the process holds no copy of it: equal peak resident memory and
//   malloc counts for 16 MiB and 1 GiB show the parser's memory does not grow with the stream.
import AQFileStream
import AQTypes
import Benchmark

/// A little-endian WAV header for `dataBytes` of 16-bit stereo 44.1 kHz PCM, then the data.
func makeWAV(dataBytes: Int) -> [UInt8] {
    var b: [UInt8] = []
    func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { b += $0 } }
    func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { b += $0 } }
    b += Array("RIFF".utf8); u32(36 + dataBytes); b += Array("WAVE".utf8)
    b += Array("fmt ".utf8); u32(16); u16(1); u16(2); u32(44100); u32(44100 * 4); u16(4); u16(16)
    b += Array("data".utf8); u32(dataBytes)
    b.reserveCapacity(b.count + dataBytes)
    for i in 0..<dataBytes { b.append(UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13)) }
    return b
}

/// `bytes` worth of 417-byte MPEG-1 Layer III frames (0xFFFB9064: 128 kb/s, 44.1 kHz, no
/// padding, joint stereo), silent payload.
func makeMP3(bytes: Int) -> [UInt8] {
    let frame: [UInt8] = [0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0, count: 413)
    var b: [UInt8] = []
    b.reserveCapacity(bytes + frame.count)
    while b.count < bytes { b += frame }
    return b
}

/// Feeds `data` to a new parser in 64 KiB chunks; returns a checksum of what the packet
/// callback saw so that nothing is optimised away.
func parse(_ data: [UInt8]) -> Int {
    var seen = 0
    let stream = try! AudioFileStream(propertyListener: { _, _, _ in }, packets: { bytes, packets, _ in
        seen &+= packets &+ Int(bytes.first ?? 0)
    })
    data.withUnsafeBytes { all in
        var offset = 0
        while offset < all.count {
            let n = min(65536, all.count - offset)
            try! stream.parse(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + n)]))
            offset += n
        }
    }
    try! stream.close()
    return seen
}

/// Parses a stream of `total` bytes made 64 KiB at a time by `fill(chunk, streamOffset)` into
/// one reused buffer.
func parseStream(total: Int, fill: (UnsafeMutableRawBufferPointer, Int) -> Void) -> Int {
    var seen = 0
    let stream = try! AudioFileStream(propertyListener: { _, _, _ in }, packets: { bytes, packets, _ in
        seen &+= packets &+ Int(bytes.first ?? 0)
    })
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
    defer { chunk.deallocate() }
    var offset = 0
    while offset < total {
        let n = min(65536, total - offset)
        let part = UnsafeMutableRawBufferPointer(rebasing: chunk[0..<n])
        fill(part, offset)
        try! stream.parse(UnsafeRawBufferPointer(part))
        offset += n
    }
    try! stream.close()
    return seen
}

let wavHeader = Array(makeWAV(dataBytes: 0).prefix(44))
let mp3Frame: [UInt8] = [0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0, count: 413)

/// WAV bytes at `offset…`: the header (claiming `total - 44` data bytes), then a pattern.
func fillWAV(total: Int) -> (UnsafeMutableRawBufferPointer, Int) -> Void {
    var header = wavHeader
    withUnsafeBytes(of: UInt32(total - 8).littleEndian) { for i in 0..<4 { header[4 + i] = $0[i] } }
    withUnsafeBytes(of: UInt32(total - 44).littleEndian) { for i in 0..<4 { header[40 + i] = $0[i] } }
    return { buf, offset in
        for i in 0..<buf.count {
            let p = offset + i
            buf[i] = p < 44 ? header[p] : UInt8(truncatingIfNeeded: p &* 2_654_435_761 >> 13)
        }
    }
}

func fillMP3(_ buf: UnsafeMutableRawBufferPointer, _ offset: Int) {
    for i in 0..<buf.count { buf[i] = mp3Frame[(offset + i) % 417] }
}

final class DataBox: @unchecked Sendable { var data: [UInt8] = [] }

let benchmarks: @Sendable () -> Void = {
    for (name, size, make) in [
        ("Parse-WAV-PCM-64MiB", 64 << 20, makeWAV), ("Parse-WAV-PCM-16MiB", 16 << 20, makeWAV),
        ("Parse-MP3-framing-64MiB", 64 << 20, makeMP3), ("Parse-MP3-framing-16MiB", 16 << 20, makeMP3),
    ] as [(String, Int, (Int) -> [UInt8])] {
        let box = DataBox()
        Benchmark(
            name,
            configuration: .init(
                metrics: [.wallClock, .throughput, .peakMemoryResident, .mallocCountTotal],
                timeUnits: .milliseconds, warmupIterations: 1, maxDuration: .seconds(3), maxIterations: 20,
                setup: { box.data = make(size) }, teardown: { box.data = [] })
        ) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(parse(box.data)) }
        }
    }
    for (name, total) in [("16MiB", 16 << 20), ("1GiB", 1 << 30)] {
        let memory = Benchmark.Configuration(
            metrics: [.peakMemoryResident, .mallocCountTotal], warmupIterations: 0, maxDuration: .seconds(20), maxIterations: 1)
        Benchmark("Memory-WAV-stream-\(name)", configuration: memory) { _ in
            blackHole(parseStream(total: total, fill: fillWAV(total: total)))
        }
        Benchmark("Memory-MP3-stream-\(name)", configuration: memory) { _ in
            blackHole(parseStream(total: total, fill: fillMP3))
        }
    }
}
