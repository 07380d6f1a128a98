import AQFileStream
import AQTypes
import Foundation
import Testing

/// One PCM-like file written by sox or ffmpeg from a raw file of known samples.
struct PCMCase: Sendable, CustomStringConvertible {
    enum Kind: Sendable { case signed, unsigned8, float, ulaw, alaw }
    enum Tool: Sendable {
        case sox, ffmpeg(codec: String, muxer: String), ffmpegPipe(codec: String, muxer: String)
        /// ffmpeg's wav muxer writing RF64 (`-rf64 always`), to a file or a pipe.
        case ffmpegRF64(codec: String, pipe: Bool)
    }
    var name: String
    var ext: String
    var tool: Tool
    var kind: Kind
    var width: Int
    var bigEndian: Bool
    var fileType: FourCharCode
    var channels = 2
    var description: String { name }

    static let rate = 8000
    static let frames = 800

    init(_ name: String, _ ext: String, _ tool: Tool, _ kind: Kind, _ width: Int, be: Bool, _ type: FourCharCode, channels: Int = 2) {
        self.name = name; self.ext = ext; self.tool = tool; self.kind = kind; self.width = width
        bigEndian = be; fileType = type; self.channels = channels
    }

    var expectedFormat: AudioStreamBasicDescription {
        let r = Double(Self.rate), ch = UInt32(channels)
        switch kind {
        case .signed: return .linearPCM(sampleRate: r, channels: ch, bits: UInt32(width * 8), bigEndian: bigEndian)
        case .unsigned8: return .linearPCM(sampleRate: r, channels: ch, bits: 8, signed: false)
        case .float: return .linearPCM(sampleRate: r, channels: ch, bits: UInt32(width * 8), isFloat: true, bigEndian: bigEndian)
        case .ulaw, .alaw:
            return AudioStreamBasicDescription(
                sampleRate: r, formatID: kind == .ulaw ? AudioFormatID.uLaw : AudioFormatID.aLaw, formatFlags: [],
                bytesPerPacket: ch, framesPerPacket: 1, bytesPerFrame: ch, channelsPerFrame: ch, bitsPerChannel: 8)
        }
    }

    var sourceSamples: [UInt8] {
        let n = Self.frames * channels
        switch kind {
        case .signed, .unsigned8: return randomBytes(n * width, seed: UInt64(width * 31 + channels))
        case .float: return floatSamples(n, width: width, bigEndian: bigEndian, seed: 7)
        case .ulaw: return randomBytes(n, seed: 11, excluding: [0x7F])
        case .alaw: return randomBytes(n, seed: 13)
        }
    }

    var ffmpegRawFormat: String {
        let e = bigEndian ? "be" : "le"
        switch kind {
        case .signed: return width == 1 ? "s8" : "s\(width * 8)\(e)"
        case .unsigned8: return "u8"
        case .float: return "f\(width * 8)\(e)"
        case .ulaw: return "mulaw"
        case .alaw: return "alaw"
        }
    }

    var soxEncoding: [String] {
        switch kind {
        case .signed: return ["-e", "signed-integer", "-b", "\(width * 8)"]
        case .unsigned8: return ["-e", "unsigned-integer", "-b", "8"]
        case .float: return ["-e", "floating-point", "-b", "\(width * 8)"]
        case .ulaw: return ["-e", "u-law", "-b", "8"]
        case .alaw: return ["-e", "a-law", "-b", "8"]
        }
    }

    var sizeIsKnown: Bool {
        switch tool {
        case .ffmpegPipe, .ffmpegRF64(_, true): return false
        default: return true
        }
    }

    /// Writes the raw source and converts it; returns (file bytes, raw samples).
    func make(_ fx: Fixtures) throws -> (file: [UInt8], samples: [UInt8]) {
        let samples = sourceSamples
        let raw = try fx.write("\(name).raw", samples)
        let out = fx.path("\(name).\(ext)")
        switch tool {
        case .sox:
            try fx.sox(["-t", "raw", "-r", "\(Self.rate)", "-c", "\(channels)"] + soxEncoding
                + [bigEndian ? "-B" : "-L", raw] + soxEncoding + [out])
        case .ffmpeg(let codec, let muxer):
            try fx.ffmpeg(["-f", ffmpegRawFormat, "-ar", "\(Self.rate)", "-ac", "\(channels)", "-i", raw,
                           "-c:a", codec, "-f", muxer, out])
        case .ffmpegPipe(let codec, let muxer):
            try fx.run("ffmpeg", ["-v", "error", "-f", ffmpegRawFormat, "-ar", "\(Self.rate)", "-ac", "\(channels)",
                                  "-i", raw, "-c:a", codec, "-f", muxer, "pipe:1"], stdoutFile: out)
        case .ffmpegRF64(let codec, let pipe):
            let args = ["-v", "error", "-y", "-f", ffmpegRawFormat, "-ar", "\(Self.rate)", "-ac", "\(channels)",
                        "-i", raw, "-c:a", codec, "-rf64", "always", "-f", "wav"]
            if pipe { try fx.run("ffmpeg", args + ["pipe:1"], stdoutFile: out) } else { try fx.run("ffmpeg", args + [out]) }
        }
        return (try fx.read(out), samples)
    }

    static let all: [PCMCase] = [
        PCMCase("wav-u8", "wav", .sox, .unsigned8, 1, be: false, AudioFileTypeID.wave),
        PCMCase("wav-s16", "wav", .sox, .signed, 2, be: false, AudioFileTypeID.wave),
        PCMCase("wav-s24", "wav", .sox, .signed, 3, be: false, AudioFileTypeID.wave),
        PCMCase("wav-s32", "wav", .sox, .signed, 4, be: false, AudioFileTypeID.wave),
        PCMCase("wav-f32", "wav", .sox, .float, 4, be: false, AudioFileTypeID.wave),
        PCMCase("wav-f64", "wav", .ffmpeg(codec: "pcm_f64le", muxer: "wav"), .float, 8, be: false, AudioFileTypeID.wave),
        PCMCase("wav-ulaw", "wav", .sox, .ulaw, 1, be: false, AudioFileTypeID.wave),
        PCMCase("wav-alaw", "wav", .sox, .alaw, 1, be: false, AudioFileTypeID.wave),
        PCMCase("wav-extensible-4ch", "wav", .sox, .signed, 2, be: false, AudioFileTypeID.wave, channels: 4),
        PCMCase("wav-pipe-s16", "wav", .ffmpegPipe(codec: "pcm_s16le", muxer: "wav"), .signed, 2, be: false, AudioFileTypeID.wave),
        PCMCase("aiff-s8", "aiff", .sox, .signed, 1, be: true, AudioFileTypeID.aiff),
        PCMCase("aiff-s16", "aiff", .sox, .signed, 2, be: true, AudioFileTypeID.aiff),
        PCMCase("aiff-s24", "aiff", .sox, .signed, 3, be: true, AudioFileTypeID.aiff),
        PCMCase("aiff-s32", "aiff", .sox, .signed, 4, be: true, AudioFileTypeID.aiff),
        PCMCase("aifc-none-s16", "aifc", .sox, .signed, 2, be: true, AudioFileTypeID.aifc),
        PCMCase("aifc-sowt-s16", "aiff", .ffmpeg(codec: "pcm_s16le", muxer: "aiff"), .signed, 2, be: false, AudioFileTypeID.aifc),
        PCMCase("aifc-fl32", "aiff", .ffmpeg(codec: "pcm_f32be", muxer: "aiff"), .float, 4, be: true, AudioFileTypeID.aifc),
        PCMCase("aifc-fl64", "aiff", .ffmpeg(codec: "pcm_f64be", muxer: "aiff"), .float, 8, be: true, AudioFileTypeID.aifc),
        PCMCase("aifc-ulaw", "aiff", .ffmpeg(codec: "pcm_mulaw", muxer: "aiff"), .ulaw, 1, be: true, AudioFileTypeID.aifc),
        PCMCase("aifc-alaw", "aiff", .ffmpeg(codec: "pcm_alaw", muxer: "aiff"), .alaw, 1, be: true, AudioFileTypeID.aifc),
        PCMCase("au-s8", "au", .sox, .signed, 1, be: true, AudioFileTypeID.next),
        PCMCase("au-s16", "au", .sox, .signed, 2, be: true, AudioFileTypeID.next),
        PCMCase("au-s24", "au", .sox, .signed, 3, be: true, AudioFileTypeID.next),
        PCMCase("au-s32", "au", .sox, .signed, 4, be: true, AudioFileTypeID.next),
        PCMCase("au-f32", "au", .sox, .float, 4, be: true, AudioFileTypeID.next),
        PCMCase("au-f64", "au", .sox, .float, 8, be: true, AudioFileTypeID.next),
        PCMCase("au-ulaw", "au", .sox, .ulaw, 1, be: true, AudioFileTypeID.next),
        PCMCase("au-alaw", "au", .sox, .alaw, 1, be: true, AudioFileTypeID.next),
        PCMCase("au-pipe-s16", "au", .ffmpegPipe(codec: "pcm_s16be", muxer: "au"), .signed, 2, be: true, AudioFileTypeID.next),
        PCMCase("caf-s16le", "caf", .ffmpeg(codec: "pcm_s16le", muxer: "caf"), .signed, 2, be: false, AudioFileTypeID.caf),
        PCMCase("caf-s24be", "caf", .ffmpeg(codec: "pcm_s24be", muxer: "caf"), .signed, 3, be: true, AudioFileTypeID.caf),
        PCMCase("caf-f32le", "caf", .ffmpeg(codec: "pcm_f32le", muxer: "caf"), .float, 4, be: false, AudioFileTypeID.caf),
        PCMCase("caf-f64be", "caf", .ffmpeg(codec: "pcm_f64be", muxer: "caf"), .float, 8, be: true, AudioFileTypeID.caf),
        PCMCase("caf-ulaw", "caf", .ffmpeg(codec: "pcm_mulaw", muxer: "caf"), .ulaw, 1, be: true, AudioFileTypeID.caf),
        PCMCase("caf-alaw", "caf", .ffmpeg(codec: "pcm_alaw", muxer: "caf"), .alaw, 1, be: true, AudioFileTypeID.caf),
        PCMCase("caf-pipe-s16le", "caf", .ffmpegPipe(codec: "pcm_s16le", muxer: "caf"), .signed, 2, be: false, AudioFileTypeID.caf),
        // Issue 14: RF64 (64-bit sizes in ds64) and Wave64 (GUID chunks), what long recordings use.
        PCMCase("rf64-s16", "wav", .ffmpegRF64(codec: "pcm_s16le", pipe: false), .signed, 2, be: false, AudioFileTypeID.rf64),
        PCMCase("rf64-s24", "wav", .ffmpegRF64(codec: "pcm_s24le", pipe: false), .signed, 3, be: false, AudioFileTypeID.rf64),
        PCMCase("rf64-f32-6ch", "wav", .ffmpegRF64(codec: "pcm_f32le", pipe: false), .float, 4, be: false, AudioFileTypeID.rf64, channels: 6),
        PCMCase("rf64-pipe-s16", "wav", .ffmpegRF64(codec: "pcm_s16le", pipe: true), .signed, 2, be: false, AudioFileTypeID.rf64),
        PCMCase("w64-s16", "w64", .ffmpeg(codec: "pcm_s16le", muxer: "w64"), .signed, 2, be: false, AudioFileTypeID.wave64),
        PCMCase("w64-f64", "w64", .ffmpeg(codec: "pcm_f64le", muxer: "w64"), .float, 8, be: false, AudioFileTypeID.wave64),
        PCMCase("w64-pipe-s16", "w64", .ffmpegPipe(codec: "pcm_s16le", muxer: "w64"), .signed, 2, be: false, AudioFileTypeID.wave64),
        PCMCase("w64-sox-s24", "w64", .sox, .signed, 3, be: false, AudioFileTypeID.wave64),
        PCMCase("w64-sox-u8", "w64", .sox, .unsigned8, 1, be: false, AudioFileTypeID.wave64),
    ]
}

@Suite struct PCMFormatTests {
    /// Every sample the parser delivers equals the source sample, and the header properties
    /// match what was written.
    @Test(arguments: PCMCase.all)
    func samplesAndProperties(_ c: PCMCase) throws {
        let fx = try Fixtures()
        let (file, samples) = try c.make(fx)
        let r = parse(file)
        #expect(r.error == nil, "\(r.error.map { String(describing: $0) } ?? "")")
        #expect(r.uint32(.fileFormat) == c.fileType.rawValue)
        #expect(r.format == c.expectedFormat)
        #expect(r.packetCount == PCMCase.frames)
        #expect(r.data.count == samples.count)
        #expect(same(r.data, samples), "sample bytes differ")
        #expect(r.uint32(.readyToProducePackets) == 1)
        #expect(r.announced.last == .readyToProducePackets)
        if c.sizeIsKnown {
            #expect(r.uint64(.audioDataPacketCount) == UInt64(PCMCase.frames))
            #expect(r.uint64(.audioDataByteCount) == UInt64(samples.count))
        } else {
            #expect(r.uint64(.audioDataPacketCount) == nil)
        }
        let offset = try #require(r.int64(.dataOffset))
        #expect(same(file[Int(offset)..<Int(offset) + samples.count], samples), "data offset \(offset) is wrong")
        let bpf = c.expectedFormat.bytesPerFrame
        #expect(r.uint32(.maximumPacketSize) == bpf)
        #expect(r.uint32(.packetSizeUpperBound) == bpf)
        #expect(r.uint32(.bitRate) == UInt32(PCMCase.rate) * bpf * 8)
        if c.channels > 2 {
            // WAVE_FORMAT_EXTENSIBLE carries a channel mask.
            if case .channelLayout(let l)? = r.values[.channelLayout] {
                #expect(l.tag == AudioChannelLayoutTag.useChannelBitmap)
                #expect(l.bitmap.nonzeroBitCount == c.channels)
            } else {
                Issue.record("no channel layout for an extensible WAVE")
            }
        }
    }

    /// Same file whole, one byte at a time, in fixed and random splits: identical results.
    @Test(arguments: PCMCase.all)
    func splitsAgree(_ c: PCMCase) throws {
        let fx = try Fixtures()
        let (file, _) = try c.make(fx)
        verifySplits(file)
    }
}

/// The ByteToMessageDecoderVerifier idea: any split of the input gives the same output.
func verifySplits(
    _ file: [UInt8], hint: FourCharCode? = nil, maxBuffered: Int = 16_400, sourceLocation: SourceLocation = #_sourceLocation
) {
    saveToFuzzCorpus(file, hint: hint)
    let whole = parse(file, hint: hint)
    #expect(whole.error == nil, sourceLocation: sourceLocation)
    #expect(whole.packetCount > 0, sourceLocation: sourceLocation)
    for split in [Split.bytewise, .chunks(3), .chunks(4096), .random(1), .random(2), .random(3)] {
        var other = parse(file, split: split, hint: hint)
        #expect(other.bufferedHighWater <= maxBuffered, "\(split) buffered \(other.bufferedHighWater)", sourceLocation: sourceLocation)
        other.bufferedHighWater = whole.bufferedHighWater
        let equal = other == whole
        #expect(equal, "\(split) differs from whole", sourceLocation: sourceLocation)
    }
}

/// With AQFS_FUZZ_CORPUS=dir set, every verified fixture is written there as a seed for the fuzz
/// target (first byte: control byte — hint index and split size, see Tests/Fuzz).
func saveToFuzzCorpus(_ file: [UInt8], hint: FourCharCode?) {
    guard let dir = ProcessInfo.processInfo.environment["AQFS_FUZZ_CORPUS"] else { return }
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let control: UInt8 = hint == AudioFileTypeID.mp3 ? 2 : hint == AudioFileTypeID.aacADTS ? 3 : 0
    var h: UInt64 = 0xCBF2_9CE4_8422_2325
    for b in file { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
    // Keep seeds small: the head of the file holds the headers.
    let seed = [control | 0x1C] + file.prefix(8192)
    try? Data(seed).write(to: URL(fileURLWithPath: "\(dir)/seed-\(String(h, radix: 16))"))
}
