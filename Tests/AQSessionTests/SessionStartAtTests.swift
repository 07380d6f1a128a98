import AQEngine
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 26: a session started at an instant, on the hand-driven device (host time of frame f
/// is `hostTimeOrigin + f / rate`): the first frame on the instant's frame (rounded to the
/// nearest), through a rate measured between two anchors; an instant already past is refused
/// and nothing plays.
@Suite struct SessionStartAtTests {
    static func player(_ dir: TempDir) throws -> (SessionPlayer, ManualDevice, AudioQueueEngine) {
        _ = try makeImpulseFile(dir, "a.wav", rate: 48000, frames: 4800, impulses: [[0, 1000]], encoding: ["-e", "floating-point", "-b", "32"])
        let url = try dir.write("s.toml", "[output]\nchannels = 1\n[[track]]\nfile = \"a.wav\"\n")
        let session = try SessionLoader.load(url)
        let device = ManualDevice(sampleRate: 48000, channels: 1, framesPerCycle: 256, uid: "start-at")
        let engine = try AudioQueueEngine(device: device)
        return (try SessionPlayer(session: session, engine: engine), device, engine)
    }

    /// Renders `frames` frames in cycles of 256, feeding the player; the output.
    static func render(_ player: SessionPlayer, _ device: ManualDevice, frames: Int) throws -> [Float] {
        var out: [Float] = []
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
        defer { buffer.deallocate(); planes.deallocate() }
        planes[0] = buffer
        var done = 0
        while done < frames {
            try player.waitUntilEnqueued(through: device.currentFrame + 256)
            device.render(frames: 256, into: planes)
            out += UnsafeBufferPointer(start: buffer, count: 256)
            done += 256
        }
        return out
    }

    @Test func firstFrameOnTheInstantsFrame() throws {
        let dir = try TempDir()
        let (player, device, engine) = try Self.player(dir)
        defer { player.close(); engine.close() }
        _ = try Self.render(player, device, frames: 256)
        let references = player.timebases(cycles: 1, window: 0)
        _ = try Self.render(player, device, frames: 9728)  // to frame 9984: 0.2 s of baseline
        // The instant: frame 20 000.4 on CLOCK_REALTIME, with a known offset to host time.
        let offset = SystemClockOffset(clock: .realtime, nanoseconds: 1_700_000_000_000_000_000)
        let host = Int64(device.hostTime(ofFrame: 20_000)) + Int64(0.4 * 1e9 / 48000)
        let instant = SystemInstant(clock: .realtime, nanoseconds: host + offset.nanoseconds)
        let (frame, spread, rate) = try player.start(atInstant: instant, offset: offset, rateSince: references, cycles: 1, window: 0)
        #expect(frame == 20_000 && spread == 0)
        #expect(rate.verdict == .measured && abs(rate.ppm) < 1 && abs(rate.seconds - 0.2) < 0.01, "\(rate)")
        let out = try Self.render(player, device, frames: 12_288)
        let clicks = out.indices.filter { abs(out[$0]) > 0.25 }.map { $0 + 9984 }
        #expect(clicks == [20_000, 21_000], "\(clicks)")
    }

    @Test func aPastInstantIsRefusedAndNothingPlays() throws {
        let dir = try TempDir()
        let (player, device, engine) = try Self.player(dir)
        defer { player.close(); engine.close() }
        _ = try Self.render(player, device, frames: 4096)
        let past = SystemInstant(clock: .monotonic, nanoseconds: Int64(device.hostTime(ofFrame: 2000)))
        do {
            _ = try player.start(atInstant: past, cycles: 1, window: 0)
            Issue.record("a past instant started")
        } catch {
            #expect(error.message.contains("cannot start at the instant") && error.message.contains("before the earliest frame a start can still honour (4096)"), "\(error)")
        }
        let out = try Self.render(player, device, frames: 8192)
        #expect(!out.contains { $0 != 0 })
    }

    /// A device that has run no cycle (a server that stopped calling) gives no timeline: the
    /// start is refused once the sampling window has passed, never waited for without end.
    @Test func noCycleIsRefusedNotWaitedFor() throws {
        let dir = try TempDir()
        let (player, device, engine) = try Self.player(dir)
        defer { player.close(); engine.close() }
        let instant = SystemInstant(clock: .monotonic, nanoseconds: Int64(device.hostTime(ofFrame: 48_000)))
        do {
            _ = try player.start(atInstant: instant, cycles: 9, window: 0.05)
            Issue.record("a start with no device cycle was accepted")
        } catch {
            #expect(error.message.contains("the device ran no cycle"), "\(error)")
        }
    }

    /// References whose line to the latest cycle reads −16 000 ppm (the fallback baseline of
    /// the CI of 18d5d55): the start is refused with the rate and its baseline in the message,
    /// and nothing plays.
    @Test func anImplausibleRateIsRefusedAndNothingPlays() throws {
        let dir = try TempDir()
        let (player, device, engine) = try Self.player(dir)
        defer { player.close(); engine.close() }
        _ = try Self.render(player, device, frames: 2048)
        let real = try #require(player.timebases(cycles: 1, window: 0).first)
        _ = try Self.render(player, device, frames: 7168)  // to frame 9216: 0.15 s on
        let latest = try #require(engine.timebase)
        // The reference moved back so that the line reads 16 000 ppm fewer frames per second.
        let ns = Double(latest.anchorFrame - real.anchorFrame) * 1e9 / (48000 * 0.984)
        var off = real
        off.anchorHostTime = latest.anchorHostTime - UInt64(ns.rounded())
        let instant = SystemInstant(clock: .monotonic, nanoseconds: Int64(device.hostTime(ofFrame: 20_000)))
        do {
            _ = try player.start(atInstant: instant, rateSince: [off], cycles: 1, window: 0)
            Issue.record("a start through a rate 16 000 ppm off nominal was accepted")
        } catch {
            #expect(error.message.contains("cannot start at the instant: the server's clock ran -1") && error.message.contains("ppm off nominal over the 0.15") && error.message.contains("nothing started"), "\(error)")
        }
        let out = try Self.render(player, device, frames: 16_384)
        #expect(!out.contains { $0 != 0 })
    }
}
