import AQTesting
import Foundation
import Testing

/// A VGM file (a register log of a Sega Master System's SN76489 PSG, clock 3 579 545 Hz) that
/// plays tone channel 0 at full volume with period `period` for `seconds`, then silences it:
/// a square wave of 3 579 545 / (32 × period) Hz. VGM 1.50: a 64-byte header, then commands
/// (0x50 dd: a PSG write; 0x61 nnnn: wait n samples at 44.1 kHz; 0x66: end).
func sn76489ToneVGM(period: Int, seconds: Double) -> [UInt8] {
    var commands: [UInt8] = [
        0x50, 0x80 | UInt8(period & 0x0F),  // latch channel 0 tone, low 4 bits
        0x50, UInt8((period >> 4) & 0x3F),  // high 6 bits
        0x50, 0x90,  // channel 0 attenuation 0 (loudest)
    ]
    let total = Int(seconds * 44100)
    var left = total
    while left > 0 {
        let n = min(left, 65535)
        commands += [0x61, UInt8(n & 0xFF), UInt8(n >> 8)]
        left -= n
    }
    commands += [0x50, 0x9F, 0x66]  // channel 0 off, end of data
    var header = [UInt8](repeating: 0, count: 0x40)
    func put32(_ v: Int, at o: Int) { for k in 0..<4 { header[o + k] = UInt8((v >> (8 * k)) & 0xFF) } }
    header[0..<4] = [0x56, 0x67, 0x6D, 0x20]  // "Vgm "
    put32(0x40 + commands.count - 4, at: 0x04)  // end of file, relative to 0x04
    put32(0x150, at: 0x08)  // version 1.50
    put32(3_579_545, at: 0x0C)  // SN76489 clock
    put32(total, at: 0x18)  // total samples
    header[0x28] = 0x09  // SN76489 feedback pattern (Sega)
    header[0x2A] = 16  // shift register width
    put32(0x40 - 0x34, at: 0x34)  // data offset, relative to 0x34
    return header + commands
}

/// The talk's chiptune player (`chiptune FILE`) on a private server.
@Suite("Chiptune on JACK", .serialized)
struct ChiptuneOnJACKTests {
    /// A VGM file this test writes (a 440.4 Hz square for 3 s) plays through Game_Music_Emu
    /// and the output queue: a jack-record recording of the program's ports holds that tone;
    /// the program ends by itself when the track ends (an asynchronous stop heard by its
    /// IsRunning listener), exit status 0, after showing the volume and the meters.
    @Test(.timeLimit(.minutes(1)))
    func playsAGeneratedVGMTrackToItsEnd() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("chiptune-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let vgm = dir.appendingPathComponent("tone.vgm")
        try Data(sn76489ToneVGM(period: 254, seconds: 3)).write(to: vgm)
        let expected = 3_579_545.0 / (32 * 254)  // 440.40 Hz

        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let log = dir.appendingPathComponent("out.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let out = try FileHandle(forWritingTo: log)
        let p = Process()
        p.executableURL = builtProduct("chiptune")
        p.arguments = [vgm.path, "--volume", "0.5"]
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server.name
        p.environment = env
        p.standardOutput = out
        p.standardError = out
        try p.run()
        // SIGKILL: the test's threads block SIGTERM, and the child inherits that mask.
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) }; p.waitUntilExit() }
        let ports = ["chiptune:out_1", "chiptune:out_2"]
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, !Set(try JackTools.ports(server: server.name)).isSuperset(of: ports) { usleep(20_000) }
        let rec = try JackRecorder(server: server.name, ports: ports, seconds: 1)
        defer { rec.removeFiles() }
        try rec.wait()
        let wav = try rec.read()
        for c in 0..<2 {
            let f = risingZeroCrossingFrequency(wav.channels[c], rate: 48000)
            #expect(abs(f - expected) < 1, "channel \(c + 1): \(f) Hz, expected \(expected) Hz")
            #expect(wav.channels[c].map(abs).max() ?? 0 > 0.05, "channel \(c + 1) is (nearly) silent")
        }
        #expect(p.waitUntilExit(within: 30), "the program did not exit on its own")
        try? out.close()
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(p.terminationReason == .exit && p.terminationStatus == 0, "\(text)")
        #expect(text.contains("the track ended"), "\(text)")
        #expect(text.contains("volume 0.50") && text.contains("dBFS"), "no meter line: \(text)")
    }
}

/// The README's complete program (`Sources/aqengine-example/main.swift`) on a private server.
@Suite("Embedding example on JACK", .serialized)
struct EmbeddingExampleOnJACKTests {
    /// It plays its 440 Hz tone (measured in a jack-record recording), then ends by itself
    /// (its IsRunning listener hears the asynchronous stop) with status 0, after its 2 s.
    @Test(.timeLimit(.minutes(1)))
    func playsItsToneAndEnds() throws {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let p = Process()
        p.executableURL = builtProduct("aqengine-example")
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server.name
        p.environment = env
        p.standardOutput = FileHandle.nullDevice
        let started = Date()
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) }; p.waitUntilExit() }
        let ports = ["example:out_1", "example:out_2"]
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, !Set(try JackTools.ports(server: server.name)).isSuperset(of: ports) { usleep(20_000) }
        let rec = try JackRecorder(server: server.name, ports: ports, seconds: 1)
        defer { rec.removeFiles() }
        try rec.wait()
        let wav = try rec.read()
        for c in 0..<2 {
            let f = risingZeroCrossingFrequency(wav.channels[c], rate: 48000)
            #expect(abs(f - 440) < 1, "channel \(c + 1): \(f) Hz")
        }
        #expect(p.waitUntilExit(within: 30), "the program did not exit on its own")
        #expect(p.terminationReason == .exit && p.terminationStatus == 0)
        #expect(Date().timeIntervalSince(started) >= 2, "it ended before its two seconds had played")
    }
}
