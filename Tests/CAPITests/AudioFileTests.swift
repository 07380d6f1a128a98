import AQTesting
import Foundation
import Testing

/// Audio File Services through C (issue 23): what `AudioFileGetProperty` answers for every
/// container ffmpeg writes here against what ffprobe reports, every packet read back; files
/// written by `AudioFileWritePackets`/`AudioFileWriteBytes` decoded by ffmpeg to the samples
/// written. No server.
@Suite struct CAPIAudioFileTests {
    /// How the test compares the duration with ffprobe's.
    enum Duration { case estimated, framesRead, notCompared }

    /// A file ffmpeg makes: its name, encoder arguments, and how its duration compares.
    struct Fixture: CustomStringConvertible, Sendable {
        let name: String
        let ffmpeg: String
        let duration: Duration
        /// ffprobe's stream bit rate is the exact one (else an estimate, not compared).
        let exactBitRate: Bool
        var description: String { name }
    }

    static let fixtures: [Fixture] = [
        Fixture(name: "s16.wav", ffmpeg: "-c:a pcm_s16le", duration: .estimated, exactBitRate: true),
        Fixture(name: "f32.wav", ffmpeg: "-c:a pcm_f32le", duration: .estimated, exactBitRate: true),
        Fixture(name: "s24.aiff", ffmpeg: "-c:a pcm_s24be", duration: .estimated, exactBitRate: true),
        Fixture(name: "s16.caf", ffmpeg: "-c:a pcm_s16be -f caf", duration: .estimated, exactBitRate: true),
        // ffprobe's MP3 duration is every frame's (the LAME tag's gapless lengths not applied):
        // the frames read; EstimatedDuration is the gapless one (the packet table's valid frames).
        Fixture(name: "t.mp3", ffmpeg: "-c:a libmp3lame -b:a 128k", duration: .framesRead, exactBitRate: false),
        // ffprobe estimates an ADTS file's duration from its bit rate.
        Fixture(name: "t.aac", ffmpeg: "-c:a aac -b:a 128k -f adts", duration: .notCompared, exactBitRate: false),
        Fixture(name: "t.m4a", ffmpeg: "-c:a aac -b:a 128k", duration: .estimated, exactBitRate: true),
        Fixture(name: "faststart.m4a", ffmpeg: "-c:a aac -b:a 96k -movflags +faststart", duration: .estimated, exactBitRate: true),
        Fixture(name: "alac.caf", ffmpeg: "-c:a alac -f caf", duration: .estimated, exactBitRate: false),
        Fixture(name: "alac.m4a", ffmpeg: "-c:a alac", duration: .estimated, exactBitRate: false),
        Fixture(name: "t.flac", ffmpeg: "-c:a flac", duration: .estimated, exactBitRate: false),
        // ffprobe's Ogg duration is the last granule position, pre-skip included; the parser
        // gives no end trimming for Ogg (docs/c-api.md): not compared.
        Fixture(name: "t.opus", ffmpeg: "-c:a libopus -ar 48000", duration: .notCompared, exactBitRate: false),
        // Apple IMA4 (issue 23): constant-size packets of 64 frames, in AIFC and CAF.
        Fixture(name: "ima4.aiff", ffmpeg: "-c:a adpcm_ima_qt", duration: .estimated, exactBitRate: true),
        Fixture(name: "ima4.caf", ffmpeg: "-c:a adpcm_ima_qt -f caf", duration: .estimated, exactBitRate: true),
    ]

    @Test(arguments: fixtures)
    func propertiesMatchFFprobe(_ fixture: Fixture) throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audiofile")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent(fixture.name).path
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=2 -ac 2 \(fixture.ffmpeg) '\(file)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/audiofile_probe.c", name: "audiofile_probe-\(fixture.name)")
        let r = try CAPI.run(exe, [file])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        var ours: [String: String] = [:]
        for line in r.output.split(separator: "\n") {
            if let eq = line.firstIndex(of: "=") { ours[String(line[..<eq])] = String(line[line.index(after: eq)...]) }
        }
        let probe = try CAPI.shell("ffprobe -v error -count_packets -show_entries stream=codec_name,sample_rate,channels,nb_read_packets,duration_ts,duration,bit_rate -of json '\(file)'")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(probe.output.utf8)) as? [String: Any])
        let stream = try #require((json["streams"] as? [[String: Any]])?.first, "\(probe.output)")
        func theirs(_ key: String) -> Double? {
            if let s = stream[key] as? String { return Double(s) }
            return (stream[key] as? NSNumber)?.doubleValue
        }
        func mine(_ key: String) -> Double? { ours[key].flatMap(Double.init) }
        let rate = try #require(mine("sampleRate"))
        #expect(rate == theirs("sample_rate"), "sample rate")
        #expect(mine("channels") == theirs("channels"), "channels")
        let isPCM = ours["formatID"] == "lpcm"
        if isPCM {
            // ffprobe's packets are the demuxer's blocks; its duration_ts counts frames.
            #expect(mine("packets") == theirs("duration_ts"), "frames: ours \(ours["packets"] ?? "-"), ffprobe \(stream)")
        } else {
            #expect(mine("packets") == theirs("nb_read_packets"), "packets: ours \(ours["packets"] ?? "-"), ffprobe \(stream)")
        }
        let frames = try #require(mine("framesRead"))
        switch fixture.duration {
        case .estimated:
            let d = try #require(mine("duration")), t = try #require(theirs("duration"))
            #expect(abs(d - t) < 0.0005, "EstimatedDuration \(d) s, ffprobe \(t) s")
        case .framesRead:
            let t = try #require(theirs("duration"))
            #expect(abs(frames / rate - t) < 0.0005, "frames read \(frames / rate) s, ffprobe \(t) s")
        case .notCompared:
            break
        }
        if fixture.exactBitRate, let b = theirs("bit_rate") {
            #expect(mine("bitRate") == b, "bit rate: ours \(ours["bitRate"] ?? "-"), ffprobe \(b)")
        }
        // The magic cookie: ffmpeg's extradata and the cookie hold the same codec configuration
        // (the cookie may wrap it: an MP4 ES descriptor, an 'alac' atom).
        let extradata = try Self.extradata(file)
        let cookie = ours["cookie"] ?? ""
        if !extradata.isEmpty {
            #expect(!cookie.isEmpty && (cookie.contains(extradata) || extradata.contains(cookie)),
                    "cookie \(cookie) vs ffprobe's extradata \(extradata)")
        }
        #expect(mine("packetsRead") == mine("packets"), "every packet read")
        if !isPCM { #expect(mine("bytesRead") ?? 0 > 0) }
    }

    /// Files that are not audio, not there, or cut short answer Apple's result codes
    /// (`audiofile_probe.c` prints AudioFileOpenURL's) or read what is there.
    @Test func badAndTruncatedFiles() throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audiofile-bad")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let exe = try CAPI.build("Tests/CAPIPrograms/audiofile_probe.c", name: "audiofile_probe-bad")
        let empty = dir.appendingPathComponent("empty.wav").path, text = dir.appendingPathComponent("text.mp3").path
        try Data().write(to: URL(fileURLWithPath: empty))
        try Data(String(repeating: "not audio at all\n", count: 500).utf8).write(to: URL(fileURLWithPath: text))
        let typ = "open=\(Int32(bitPattern: 0x7479703F))", prm = "open=\(Int32(bitPattern: 0x70726D3F))"
        for (path, expected) in [(empty, typ), (text, typ), (dir.appendingPathComponent("missing.caf").path, "open=-43"), (dir.path, prm)] {
            let r = try CAPI.run(exe, [path])
            #expect(r.status == 1 && r.output.contains(expected + "\n"), "\(path): \(r.output)")
        }
        // An MP3 and a WAVE cut short: the packets that are there, the byte count the file holds.
        for (name, encoder, keep) in [("cut.mp3", "-c:a libmp3lame -b:a 128k", 5000), ("cut.wav", "-c:a pcm_s16le", 20000)] {
            let whole = dir.appendingPathComponent("whole-" + name).path, cut = dir.appendingPathComponent(name).path
            let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=2 -ac 2 \(encoder) '\(whole)' && head -c \(keep) '\(whole)' > '\(cut)'")
            try #require(ff.status == 0, "\(ff.output)")
            let r = try CAPI.run(exe, [cut])
            #expect(r.status == 0 && r.output.contains(" 0 failed"), "\(name): \(r.output)")
            let bytes = r.output.split(separator: "\n").first { $0.hasPrefix("bytes=") }.flatMap { Int($0.dropFirst(6)) } ?? -1
            #expect(bytes > 0 && bytes < keep, "\(name): \(bytes) bytes of audio data in \(keep)")
        }
    }

    /// ffprobe's extradata as lowercase hex ("" when the stream has none).
    static func extradata(_ file: String) throws -> String {
        let r = try CAPI.shell("ffprobe -v error -show_streams -show_data '\(file)'")
        var hex = ""
        var inside = false
        for line in r.output.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("extradata=") { inside = true; continue }
            guard inside else { continue }
            // "00000000: 1210 56e5 00      ..V.." : eight groups of four hex digits after the offset.
            guard line.count > 10, line.dropFirst(8).hasPrefix(": ") else { break }
            hex += line.dropFirst(10).prefix(40).filter(\.isHexDigit).lowercased()
        }
        return hex
    }

    /// Linear PCM written by AudioFileCreateWithURL and AudioFileWritePackets/WriteBytes in every
    /// container and byte order it takes: ffmpeg decodes exactly the samples written, and the
    /// file reads back through AudioFileOpenURL (the program checks that and the result codes).
    @Test(arguments: ["WAVE", "AIFF", "AIFC", "caff"])
    func pcmWrittenDecodesExactly(type: String) throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audiofile-written")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let exe = try CAPI.build("Tests/CAPIPrograms/audiofile_write.c", name: "audiofile_write-\(type)")
        let r = try CAPI.run(exe, [type, dir.path])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        // Each file the program wrote: its name says the samples' format; ffmpeg decodes it to
        // the same format and the bytes are the program's (its frame f, channel c: f * 7 + c * 1000).
        let written = r.output.split(separator: "\n").filter { $0.hasPrefix("wrote ") }
        #expect(!written.isEmpty, "\(r.output)")
        for line in written {
            let parts = line.split(separator: " ")  // wrote PATH FFMPEGFORMAT CHANNELS FRAMES
            try #require(parts.count == 5)
            let path = String(parts[1]), sample = String(parts[2])
            let channels = Int(parts[3])!, frames = Int(parts[4])!
            let raw = path + ".decoded.raw"
            let ff = try CAPI.shell("ffmpeg -loglevel error -y -i '\(path)' -f \(sample) -c:a pcm_\(sample) '\(raw)'")
            try #require(ff.status == 0, "\(path): \(ff.output)")
            let data = try Data(contentsOf: URL(fileURLWithPath: raw))
            let expected = Self.samples(sample, channels: channels, frames: frames)
            #expect(data == expected, "\(path): ffmpeg decoded \(data.count) bytes, \(expected.count) written; first differing byte \(zip(data, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")
        }
    }

    /// The caller's storage (`audiofile_callbacks.c`): a WAVE written into memory with
    /// AudioFileInitializeWithCallbacks and read back with AudioFileOpenWithCallbacks; an M4A
    /// (moov last) and an MP3 loaded into memory answer as through their URLs.
    @Test(arguments: [("cb.m4a", "-c:a aac -b:a 128k"), ("cb.mp3", "-c:a libmp3lame -b:a 128k")])
    func callbacks(name: String, encoder: String) throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audiofile-callbacks")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent(name).path
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=2 -ac 2 \(encoder) '\(file)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/audiofile_callbacks.c", name: "audiofile_callbacks-\(name)")
        let r = try CAPI.run(exe, [file])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// Global information (`audiofile_global.c`): readable and writable types, names, extensions,
    /// MIME types, each writable type's formats, and every stream description offered accepted
    /// by AudioFileCreateWithURL.
    @Test func globalInfo() throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audiofile-global")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let exe = try CAPI.build("Tests/CAPIPrograms/audiofile_global.c")
        let r = try CAPI.run(exe, [dir.path])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }

    /// Compressed packets copied into a CAF (`audiofile_copy.c`: AudioFileCreateWithURL, the
    /// cookie and the packet table's priming set with AudioFileSetProperty, AudioFileWritePackets
    /// with descriptions): ffprobe counts the same packets, and ffmpeg decodes the copy to the
    /// source's samples. (ffmpeg applies an MP4's and an MP3's priming but not a CAF's packet
    /// table: the copy's first `priming` frames are skipped before comparing.)
    @Test(arguments: [
        ("adts.aac", "-c:a aac -b:a 128k -f adts"), ("aac.m4a", "-c:a aac -b:a 128k"), ("alac.caf", "-c:a alac -f caf"),
        ("alac.m4a", "-c:a alac"), ("t.mp3", "-c:a libmp3lame -b:a 128k"),
    ])
    func compressedPacketsCopiedIntoCAF(name: String, encoder: String) throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audiofile-copied")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let source = dir.appendingPathComponent(name).path, copy = source + ".caf"
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=2 -ac 2 \(encoder) '\(source)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/audiofile_copy.c", name: "audiofile_copy-\(name)")
        let r = try CAPI.run(exe, [source, copy])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        let priming = r.output.split(separator: "\n").first { $0.hasPrefix("priming=") }.flatMap { Int($0.dropFirst(8)) } ?? 0
        func packets(_ file: String) throws -> String {
            try CAPI.shell("ffprobe -v error -count_packets -show_entries stream=nb_read_packets -of csv=p=0 '\(file)'").output
        }
        let copied = try packets(copy), original = try packets(source)
        #expect(copied == original, "packets: \(copied) vs \(original)")
        let decodedSource = source + ".raw", decodedCopy = copy + ".raw"
        let d1 = try CAPI.shell("ffmpeg -loglevel error -y -i '\(source)' -f s16le '\(decodedSource)'")
        let d2 = try CAPI.shell("ffmpeg -loglevel error -y -i '\(copy)' -f s16le '\(decodedCopy)'")
        try #require(d1.status == 0 && d2.status == 0, "\(d1.output)\(d2.output)")
        let a = try Data(contentsOf: URL(fileURLWithPath: decodedSource)), b = try Data(contentsOf: URL(fileURLWithPath: decodedCopy))
        let skip = priming * 4  // s16le stereo
        try #require(a.count > 40000 && b.count >= skip + a.count, "decoded \(a.count) and \(b.count) bytes, priming \(priming)")
        #expect(b.subdata(in: skip..<(skip + a.count)) == a, "the copy decodes to the source's samples (priming \(priming) frames)")
    }

    /// AAC and ALAC packets copied into an M4A (`audiofile_m4a_write.c`: AudioFileCreateWithURL
    /// with kAudioFileM4AType, the cookie and packet table set with AudioFileSetProperty,
    /// AudioFileWritePackets with descriptions; read back through AudioFileOpenURL with the same
    /// packets, cookie and packet table). ffprobe sees the codec, rate, channels and packets; the
    /// copy of an MP4 has its duration (and an AAC one iTunes' `iTunSMPB`); ffmpeg decodes the copy to exactly the source's samples
    /// (the edit list carries the priming and remainder as the source's did).
    @Test(arguments: [
        ("aac.m4a", "-c:a aac -b:a 128k", "aac"), ("alac.m4a", "-c:a alac", "alac"), ("alac.caf", "-c:a alac -f caf", "alac"),
        ("adts.aac", "-c:a aac -b:a 128k -f adts", "aac"),
    ])
    func packetsWrittenIntoM4A(name: String, encoder: String, codec: String) throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audiofile-m4a")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let source = dir.appendingPathComponent(name).path, copy = source + ".m4a"
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=2 -ac 2 \(encoder) '\(source)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/audiofile_m4a_write.c", name: "audiofile_m4a_write-\(name)")
        let r = try CAPI.run(exe, [source, copy])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        func probe(_ file: String, _ entries: String) throws -> String {
            try CAPI.shell("ffprobe -v error -count_packets -show_entries \(entries) -of csv=p=0 '\(file)'").output
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try probe(copy, "format=format_name").contains("m4a"))
        #expect(try probe(copy, "stream=codec_name,sample_rate,channels") == "\(codec),44100,2")
        #expect(try probe(copy, "stream=nb_read_packets") == (try probe(source, "stream=nb_read_packets")))
        if name.hasSuffix(".m4a") {
            #expect(try probe(copy, "stream=duration_ts,duration") == (try probe(source, "stream=duration_ts,duration")))
        }
        if name == "aac.m4a" {
            // iTunes' gapless tag: 1024 priming frames, 888 remainder, 88,200 valid.
            #expect(try probe(copy, "format_tags=iTunSMPB").hasPrefix("00000000 00000400 00000378 0000000000015888"))
        }
        let decodedSource = source + ".raw", decodedCopy = copy + ".raw"
        let d1 = try CAPI.shell("ffmpeg -loglevel error -y -i '\(source)' -f s16le '\(decodedSource)'")
        let d2 = try CAPI.shell("ffmpeg -loglevel error -y -i '\(copy)' -f s16le '\(decodedCopy)'")
        try #require(d1.status == 0 && d2.status == 0, "\(d1.output)\(d2.output)")
        let a = try Data(contentsOf: URL(fileURLWithPath: decodedSource)), b = try Data(contentsOf: URL(fileURLWithPath: decodedCopy))
        #expect(a.count > 300_000 && a == b, "decoded \(a.count) and \(b.count) bytes")
    }

    /// RF64 (`audiofile_rf64.c`): 16-bit stereo written with kAudioFileRF64Type has the `ds64`
    /// chunk's sizes, reads back through AudioFileOpenURL, and ffmpeg reads it (its `wav` demuxer
    /// takes RF64) as pcm_s16le, decoding exactly the samples written; a file whose data passes
    /// 4 GiB (4 bytes written 5 GiB in: a sparse file) has 64-bit sizes ffprobe reads, and WAVE
    /// refuses it.
    @Test func rf64Written() throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audiofile-rf64")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let exe = try CAPI.build("Tests/CAPIPrograms/audiofile_rf64.c")
        let r = try CAPI.run(exe, [dir.path])
        let big = dir.appendingPathComponent("big.rf64").path
        defer { try? FileManager.default.removeItem(atPath: big) }
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        let small = dir.appendingPathComponent("small.rf64").path
        let probe = try CAPI.shell("ffprobe -v error -show_entries stream=codec_name,sample_rate,channels,duration_ts -of csv=p=0 '\(small)'")
        #expect(probe.output.trimmingCharacters(in: .whitespacesAndNewlines) == "pcm_s16le,44100,2,44100", "\(probe.output)")
        let decoded = small + ".raw"
        let d = try CAPI.shell("ffmpeg -loglevel error -y -i '\(small)' -f s16le '\(decoded)'")
        try #require(d.status == 0, "\(d.output)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: decoded)) == Self.samples("s16le", channels: 2, frames: 44100))
        let far = try CAPI.shell("ffprobe -v error -show_entries stream=duration_ts -of csv=p=0 '\(big)'")
        #expect(far.output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(((5 << 30) + 4) / 4)", "\(far.output)")
    }

    /// An M4A whose data passes 4 GiB (`audiofile_m4a_large.c`: 4200 ALAC packets of 1 MiB through
    /// AudioFileInitializeWithCallbacks, whose write callback leaves the packets' bytes out, so the
    /// file is sparse): a 64-bit `mdat` header and `co64` chunk offsets, and ffprobe reads the track.
    @Test func m4aPast4GiB() throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("audiofile-m4a")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("large.m4a").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let exe = try CAPI.build("Tests/CAPIPrograms/audiofile_m4a_large.c")
        let r = try CAPI.run(exe, [file])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        let probe = try CAPI.shell("ffprobe -v error -show_entries stream=codec_name,sample_rate,channels,nb_frames,duration_ts -of csv=p=0 '\(file)'")
        #expect(probe.output.trimmingCharacters(in: .whitespacesAndNewlines) == "alac,44100,2,\(4200 * 4096),4200", "\(probe.output)")
    }

    /// The samples audiofile_write.c writes, in ffmpeg's raw format `sample` (s16le, s16be,
    /// s24le, s32be, f32le, …).
    static func samples(_ sample: String, channels: Int, frames: Int) -> Data {
        var out = Data()
        let bits = Int(sample.dropFirst().prefix(2))!
        let big = sample.hasSuffix("be")
        for f in 0..<frames {
            for c in 0..<channels {
                let v = Int64(f * 7 + c * 1000 - 20000)
                var bytes: [UInt8]
                if sample.hasPrefix("f") {
                    bytes = bits == 32 ? withUnsafeBytes(of: (Float(v) / 32768).bitPattern.littleEndian) { Array($0) }
                        : withUnsafeBytes(of: (Double(v) / 32768).bitPattern.littleEndian) { Array($0) }
                } else {
                    let scaled = v << (bits - 16)
                    bytes = (0..<(bits / 8)).map { UInt8(truncatingIfNeeded: scaled >> (8 * $0)) }
                }
                out.append(contentsOf: big ? bytes.reversed() : bytes)
            }
        }
        return out
    }
}
