import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24: OSC messages read as `oscsend` (liblo-tools) writes them, and a track's gain set
/// while following, on the exact cycle.
@Suite("OSC messages and live gain")
struct OSCTests {
    /// A message encodes as OSC 1.0 says (padded strings, big-endian numbers) and parses back.
    @Test func encodesAndParsesBack() {
        let m = OSCMessage(address: "/aqsync/position", arguments: [.double(1.5), .int64(72000), .string("playing"), .int(-3), .float(0.25)])
        let bytes = m.encoded()
        #expect(bytes.count % 4 == 0)
        #expect(OSCMessage.parse(bytes) == [m])
        #expect(OSCMessage(address: "/a", arguments: [.int(1)]).encoded() == [0x2F, 0x61, 0, 0, 0x2C, 0x69, 0, 0, 0, 0, 0, 1])
        #expect(OSCMessage(address: "/where").encoded() == Array("/where\0\0,\0\0\0".utf8))
    }

    static func padded(_ s: String) -> [UInt8] {
        var b = Array(s.utf8) + [0]
        while b.count % 4 != 0 { b.append(0) }
        return b
    }
    static func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    @Test func parsing() {
        let locate = Self.padded("/aqsync/locate") + Self.padded(",f") + Self.be(Float(1.5).bitPattern)
        #expect(OSCMessage.parse(locate) == [OSCMessage(address: "/aqsync/locate", arguments: [.float(1.5)])])
        let gain = Self.padded("/aqsync/gain") + Self.padded(",sfi") + Self.padded("drums") + Self.be(Float(-6).bitPattern) + Self.be(UInt32(bitPattern: -3))
        #expect(OSCMessage.parse(gain) == [OSCMessage(address: "/aqsync/gain", arguments: [.string("drums"), .float(-6), .int(-3)])])
        #expect(OSCMessage.parse(Self.padded("/aqsync/play")) == [OSCMessage(address: "/aqsync/play")])
        #expect(OSCMessage.parse(Self.padded("/aqsync/play") + Self.padded(",")) == [OSCMessage(address: "/aqsync/play")])
        // A bundle of two messages (time tag ignored).
        let m1 = Self.padded("/aqsync/stop"), m2 = Self.padded("/aqsync/marker") + Self.padded(",s") + Self.padded("verse")
        let bundle = Self.padded("#bundle") + [0, 0, 0, 0, 0, 0, 0, 1] + Self.be(UInt32(m1.count)) + m1 + Self.be(UInt32(m2.count)) + m2
        #expect(OSCMessage.parse(bundle) == [OSCMessage(address: "/aqsync/stop"), OSCMessage(address: "/aqsync/marker", arguments: [.string("verse")])])
        // Cut short, unknown types, not OSC.
        #expect(OSCMessage.parse(Array(locate.dropLast(2))) == nil)
        #expect(OSCMessage.parse(Self.padded("/x") + Self.padded(",b") + Self.be(0)) == nil)
        #expect(OSCMessage.parse(Array("hello".utf8)) == nil)
        #expect(OSCMessage.parse([]) == nil)
    }

    /// `setGain` while rolling: the cycles after it are the render's samples × the new gain,
    /// exactly; the other tracks are untouched; bad tracks and values are refused.
    @Test func gainWhileFollowing() throws {
        let fx = try LoopRenderTests.make(loop: "")
        let session = try SessionLoader.load(fx.url)
        let refURL = fx.dir.file("ref.wav")
        try OfflineRenderer.render(session: session, to: refURL)
        let full = try WAVReader.read(refURL)
        let follower = try TransportFollower(session: session, deviceRate: 48000, outputs: 4, offset: 0)
        defer { follower.close() }
        let cb = follower.callbacks
        _ = TransportFollowerTests.cycle(cb, rolling: false, frame: 30_000)
        #expect(follower.waitUntilPrimed(at: 30_000, timeout: 10))
        #expect(TransportFollowerTests.cycle(cb, rolling: true, frame: 30_000)[2] == Array(full.channels[2][30_000..<30_256]))
        #expect(follower.setGain(track: 2, decibels: -6))
        #expect(!follower.setGain(track: 4, decibels: 0) && !follower.setGain(track: 0, decibels: 30) && !follower.setGain(track: -1, decibels: 0))
        let g = Float(pow(10, -6.0 / 20))
        for k in 1...8 {
            let f = 30_000 + 256 * k
            let out = TransportFollowerTests.cycle(cb, rolling: true, frame: Int64(f))
            #expect(out[2] == full.channels[2][f..<(f + 256)].map { $0 * g }, "cycle \(k)")
            #expect(out[0] == Array(full.channels[0][f..<(f + 256)]) && out[1] == Array(full.channels[1][f..<(f + 256)]))
        }
        #expect(full.channels[2][30_256..<32_304].contains { abs($0) > 0.01 }, "the MP3 sounds there")
    }
}
