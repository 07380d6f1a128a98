import AQJack
import AQJackServer
import AQTesting
import Foundation
import Testing

/// A 32-bit float mono WAV (written here, independently of the reader under test).
func floatWAV(_ samples: [Float], rate: Int) -> Data {
    var d = Data()
    func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { d.append(contentsOf: $0) } }
    func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { d.append(contentsOf: $0) } }
    d.append(contentsOf: Array("RIFF".utf8)); u32(36 + samples.count * 4)
    d.append(contentsOf: Array("WAVEfmt ".utf8)); u32(16); u16(3); u16(1); u32(rate); u32(rate * 4); u16(4); u16(32)
    d.append(contentsOf: Array("data".utf8)); u32(samples.count * 4)
    for s in samples { u32(Int(s.bitPattern)) }
    return d
}

@Suite("WAVReader and ImpulseFinder")
struct WAVReaderTests {
    /// sox writes one stereo signal as float and as 16/24/32-bit integers (no dither); every
    /// integer file reads like the float one within its quantisation step.
    @Test func readsWhatSoxWrites() throws {
        func make(_ encoding: [String]) throws -> WAVFile {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent(
                "aqwav-\(getpid())-\(encoding.joined()).wav")
            defer { try? FileManager.default.removeItem(at: url) }
            let sox = Process()
            sox.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
            sox.arguments = ["-D", "-n", "-r", "44100", "-c", "2"] + encoding
                + [url.path, "synth", "0.01", "sine", "1000", "sine", "250", "vol", "0.5"]
            try sox.run()
            sox.waitUntilExit()
            #expect(sox.terminationStatus == 0)
            return try WAVReader.read(url)
        }
        let reference = try make(["-e", "floating-point", "-b", "32"])
        #expect(reference.isFloat && reference.bitsPerSample == 32)
        #expect(reference.sampleRate == 44100)
        #expect(reference.channels.count == 2)
        #expect(reference.frameCount == 441)
        let peak = reference.channels[0].map(abs).max() ?? 0
        #expect(abs(peak - 0.5) < 0.01, "peak \(peak)")
        for bits in [16, 24, 32] {
            let wav = try make(["-e", "signed", "-b", "\(bits)"])
            #expect(!wav.isFloat && wav.bitsPerSample == bits)
            #expect(wav.frameCount == reference.frameCount && wav.channels.count == 2)
            let step = max(Float(2) / Float(1 << (bits - 1)), 1e-7)  // 32-bit: Float precision
            for c in 0..<2 {
                let err = zip(wav.channels[c], reference.channels[c]).map { abs($0 - $1) }.max() ?? 1
                #expect(err <= step, "\(bits)-bit channel \(c) off by \(err)")
            }
        }
    }

    @Test func rejectsNonWAV() {
        #expect(throws: TestingError.self) { try WAVReader.parse(Data("RIFF0000AVI LIST".utf8)) }
    }

    @Test func findsImpulsesPerChannel() {
        var a = [Float](repeating: 0, count: 100), b = a
        a[3] = 0.9; a[97] = -0.8; b[50] = 0.4; b[51] = 0.6
        #expect(ImpulseFinder.find(channels: [a, b]) == [[3, 97], [51]])
        #expect(ImpulseFinder.find(b, threshold: 0.3) == [50, 51])
    }
}

extension JackDeviceTests {
    /// jack-play plays impulses into jack-record: the spacing between impulses survives exactly.
    @Test(.timeLimit(.minutes(1)))
    func recordsImpulsesAtTheirSpacing() throws {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let offsets = [1000, 1000 + 4801, 1000 + 4801 + 97, 1000 + 4801 + 97 + 1, 1000 + 4801 + 97 + 1 + 255]
        var signal = [Float](repeating: 0, count: 12000)
        for o in offsets { signal[o] = 0.9 }
        let src = FileManager.default.temporaryDirectory.appendingPathComponent("aqimp-\(getpid()).wav")
        try floatWAV(signal, rate: 48000).write(to: src)
        defer { try? FileManager.default.removeItem(at: src) }

        let rec = try JackRecorder(server: server.name, channels: 1, seconds: 2)
        defer { rec.removeFiles() }
        let pattern = rec.inputPortNames[0].replacingOccurrences(of: "in_1", with: "in_%d")
        let play = try JackTools.run(
            "jack-play", ["-u", "-n", "aqplay", "-c", "3", src.path], server: server.name,
            environment: ["JACK_PLAY_CONNECT_TO": pattern], timeout: .seconds(5))
        #expect(play.status == 0, "\(play.output)")
        try rec.wait(timeout: .seconds(5))
        let wav = try rec.read()
        let found = ImpulseFinder.find(wav.channels[0])
        try #require(found.count == offsets.count, "found \(found)")
        #expect(zip(found, offsets).map { $0 - $1 }.allSatisfy { $0 == found[0] - offsets[0] }, "found \(found)")
    }
}
