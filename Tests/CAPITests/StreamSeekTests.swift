import Foundation
import Testing

/// An AudioStreamer-style seek (issue 22): `stream_seek.c` parses a file's first bytes with
/// `AudioFileStreamParseBytes` until ReadyToProducePackets, computes the packet at 50 % as
/// AudioStreamer and StreamingKit do, calls `AudioFileStreamSeek`, feeds the bytes from
/// `DataOffset + outDataByteOffset` with `kAudioFileStreamParseFlag_Discontinuity`, and renders
/// what the packets callback gives through an output queue offline. The rendered audio must equal
/// ffmpeg's decode of the whole file from the packet that should play first (after the codec's
/// pre-roll), and must not equal it one to three packets earlier or later. Files are made by
/// ffmpeg at test time from a two-channel chirp (the frequency changes with time, so each packet
/// sounds different). AAC is encoded without perceptual noise substitution (`-aac_pns 0`): PNS
/// bands are random noise, which a decoder started anywhere else makes differently (by 6e-6 on
/// this chirp). docs/file-stream.md ("Seeking") has the numbers measured.
@Suite(.serialized) struct StreamSeekTests {
    /// Left: 200 Hz rising by 300 Hz a second; right: 3 kHz falling by 200 Hz a second.
    static let chirp = "aevalsrc=exprs='0.5*sin(2*PI*(200*t+150*t*t))|0.4*sin(2*PI*(3000*t-100*t*t))':s=44100:d=10"

    struct Case: CustomStringConvertible, Sendable {
        var name: String
        var file: String
        var encode: String
        /// Packets the decoder needs after a discontinuity (stream_seek.c's PREROLL: a count, or
        /// "mp3" for the bit reservoir's reach counted from the packets delivered).
        var preroll: String
        /// PCM: no positions file (the program checks the byte arithmetic).
        var pcm = false
        /// Move CAF's `pakt` before `data` (ffmpeg writes it after; a stream needs it first).
        var paktFirst = false
        /// ffmpeg writes to a pipe: a CAF's data size is then −1 (to the end), no packet count.
        var pipe = false
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "CBR MP3 (Info tag with TOC)", file: "cbr.mp3", encode: "-c:a libmp3lame -b:a 128k", preroll: "mp3"),
        Case(name: "CBR MP3 without a tag", file: "cbr-notag.mp3", encode: "-c:a libmp3lame -b:a 128k -write_xing 0", preroll: "mp3"),
        Case(name: "VBR MP3 (Xing tag with TOC)", file: "vbr.mp3", encode: "-c:a libmp3lame -q:a 4", preroll: "mp3"),
        Case(name: "MPEG-2 Layer III, 22.05 kHz mono VBR", file: "mpeg2.mp3", encode: "-ar 22050 -ac 1 -c:a libmp3lame -q:a 6", preroll: "mp3"),
        Case(name: "ADTS AAC", file: "adts.aac", encode: "-c:a aac -b:a 128k -aac_pns 0 -f adts", preroll: "1"),
        Case(name: "M4A, moov first", file: "faststart.m4a", encode: "-c:a aac -b:a 128k -aac_pns 0 -movflags +faststart", preroll: "1"),
        Case(name: "CAF PCM", file: "pcm.caf", encode: "-c:a pcm_s16le", preroll: "0", pcm: true),
        Case(name: "CAF 24-bit big-endian PCM from a pipe (data size -1)", file: "pcm24-pipe.caf",
             encode: "-c:a pcm_s24be -f caf", preroll: "0", pcm: true, pipe: true),
        Case(name: "CAF Apple Lossless, pakt first", file: "alac.caf", encode: "-c:a alac", preroll: "0", paktFirst: true),
    ]

    static func requireLAME() throws {
        let r = try CAPI.shell("ffmpeg -hide_banner -encoders")
        try #require(r.output.contains("libmp3lame"), "ffmpeg without libmp3lame: install an ffmpeg built with it (Debian's is)")
    }

    typealias Fixture = (file: String, reference: String, positions: String)
    private static let madeLock = NSLock()
    nonisolated(unsafe) private static var made: [String: Fixture] = [:]

    /// Makes `c`'s file, ffmpeg's whole decode of it (nothing trimmed) and ffprobe's packet
    /// positions in a directory of their own, once per test process; returns the paths.
    static func fixture(_ c: Case) throws -> Fixture {
        madeLock.lock()
        defer { madeLock.unlock() }
        if let f = made[c.file] { return f }
        let f = try makeFixture(c)
        made[c.file] = f
        return f
    }

    private static func makeFixture(_ c: Case) throws -> Fixture {
        if c.encode.contains("libmp3lame") { try requireLAME() }
        let dir = try CAPI.prefix().appendingPathComponent("stream-seek")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent(c.file).path
        let output = c.pipe ? "pipe:1 > '\(file)'" : "'\(file)'"
        let enc = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i \"\(chirp)\" \(c.encode) \(output)")
        try #require(enc.status == 0, "\(enc.output)")
        if c.paktFirst { try moveCAFPacketTableFirst(file) }
        let reference = file + ".f32"
        let dec = try CAPI.shell("ffmpeg -loglevel error -y -flags2 +skip_manual -i '\(file)' -f f32le '\(reference)'")
        try #require(dec.status == 0, "\(dec.output)")
        var positions = "-"
        if !c.pcm {
            positions = file + ".pos"
            let probe = try CAPI.shell("ffprobe -v error -show_entries packet=pos -of csv=p=0 '\(file)' > '\(positions)'")
            try #require(probe.status == 0, "\(probe.output)")
        }
        return (file, reference, positions)
    }

    /// Rewrites a CAF with its `pakt` chunk just before `data` (the layout a streaming writer
    /// makes; the audio bytes are unchanged).
    static func moveCAFPacketTableFirst(_ path: String) throws {
        let d = try Data(contentsOf: URL(fileURLWithPath: path))
        var chunks: [(type: String, bytes: Data)] = []
        var p = 8
        while p + 12 <= d.count {
            let type = String(decoding: d[p..<p + 4], as: UTF8.self)
            let size = d[p + 4..<p + 12].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            let end = size < 0 ? d.count : min(d.count, p + 12 + Int(size))
            chunks.append((type, d[p..<end]))
            p = end
        }
        try #require(chunks.contains { $0.type == "pakt" } && chunks.contains { $0.type == "data" }, "CAF chunks: \(chunks.map(\.type))")
        let order = chunks.filter { $0.type != "pakt" && $0.type != "data" } + chunks.filter { $0.type == "pakt" }
            + chunks.filter { $0.type == "data" }
        var out = d[0..<8]
        for c in order { out.append(c.bytes) }
        try out.write(to: URL(fileURLWithPath: path))
    }

    static func run(_ c: Case, at fraction: Double = 0.5, wrong: Bool = false, linear: Bool = false) throws -> CAPI.Run {
        let f = try fixture(c)
        let exe = try CAPI.build("Tests/CAPIPrograms/stream_seek.c")
        // The reference is ffmpeg's decode, bit for bit: MP3 through ffmpeg's decoder too
        // (libmpg123's differs by rounding, up to 2e-6 on this chirp; docs/codecs.md).
        var environment = ["AQSYNC_DEVICE": "offline", "AQSYNC_SAMPLE_RATE": "44100", "STREAM_SEEK_AT": "\(fraction)",
                           "AQSYNC_MP3_DECODER": "libavcodec"]
        if linear { environment["STREAM_SEEK_LINEAR"] = "1" }
        return try CAPI.run(exe, [f.file, f.reference, f.positions, c.preroll] + (wrong ? ["wrong"] : []), environment: environment)
    }

    /// At 50 % (the case) and at 30 % (the Xing TOC and the averages land elsewhere).
    @Test(arguments: cases, [0.5, 0.3]) func streamSeekPlaysFromTheExactPacket(_ c: Case, at fraction: Double) throws {
        let r = try Self.run(c, at: fraction)
        #expect(r.status == 0 && r.output.contains(" 0 failed"), "\(c.name) at \(fraction):\n\(r.output)")
        #expect(r.output.contains("result: seek "), "\(r.output)")
        for line in r.output.split(separator: "\n") where line.hasPrefix("result:") || line.hasPrefix("MP3 pre-roll") {
            print("\(c.name) at \(fraction): \(line)")
        }
    }

    /// What AudioStreamer and StreamingKit really do with an estimated answer: ignore it and read
    /// from DataOffset + the same fraction of the audio bytes. The parser, told of the
    /// discontinuity, resumes at the first frame at or after that offset, wherever the seek said.
    @Test(arguments: cases.filter { $0.preroll == "mp3" || $0.file.hasSuffix(".aac") })
    func playersOwnEstimateAlsoPlaysFromAPacket(_ c: Case) throws {
        let r = try Self.run(c, linear: true)
        #expect(r.status == 0 && r.output.contains(" 0 failed"), "\(c.name):\n\(r.output)")
        #expect(r.output.contains("the players' linear estimate instead"), "\(r.output)")
        for line in r.output.split(separator: "\n") where line.hasPrefix("first packet at or after") {
            print("\(c.name), the players' estimate: \(line)")
        }
    }

    /// The judgement can fail: expecting the packet after the right one, it does (for an exact
    /// seek, a decoder with pre-roll and an estimated one).
    @Test(arguments: [cases[6], cases[5], cases[2]]) func aStartOnePacketLateIsCaught(_ c: Case) throws {
        let r = try Self.run(c, wrong: true)
        #expect(r.status == 1, "\(c.name):\n\(r.output)")
        #expect(r.output.contains("is not the reference's from packet"), "\(r.output)")
    }

    /// Files whose packet table follows the audio can't be played from a stream: the parser
    /// answers `kAudioFileStreamError_NotOptimized` ('optm') as soon as it reaches the audio, sends
    /// no ReadyToProducePackets, and a seek fails; no hang.
    @Test(arguments: [
        Case(name: "M4A, moov at the end", file: "moov-last.m4a", encode: "-c:a aac -b:a 128k", preroll: "1"),
        Case(name: "CAF Apple Lossless, pakt after data", file: "alac-pakt-last.caf", encode: "-c:a alac", preroll: "0"),
    ]) func packetTableAfterTheAudioIsNotOptimized(_ c: Case) throws {
        let dir = try CAPI.prefix().appendingPathComponent("stream-seek")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent(c.file).path
        let enc = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i \"\(Self.chirp)\" \(c.encode) '\(file)'")
        try #require(enc.status == 0, "\(enc.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/stream_seek.c")
        let r = try CAPI.run(exe, [file, "-", "optm"], environment: ["AQSYNC_DEVICE": "offline", "AQSYNC_SAMPLE_RATE": "44100"])
        #expect(r.status == 0 && r.output.contains(" 0 failed"), "\(c.name):\n\(r.output)")
        #expect(r.output.contains("not streamable: 'optm'"), "\(r.output)")
    }
}
