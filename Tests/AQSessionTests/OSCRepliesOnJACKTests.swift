import AQSession
import AQTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// OSC replies and subscriptions (issue 24, docs/control.md) with clients no one here wrote:
/// liblo's `oscdump` subscribed through `oscsend` receives `/aqsync/position` every 100 ms
/// while `aqsync play` (plain play, a private jackd) plays the session to its end, the last one
/// saying `ended`, each followed by `/aqsync/meters`; `/aqsync/where` from a socket of the
/// test's own is answered to its port.
@Suite("OSC replies on JACK", .serialized)
struct OSCRepliesOnJACKTests {
    @Test(.timeLimit(.minutes(2)))
    func subscribersGetThePosition() throws {
        for tool in ["/usr/bin/oscsend", "/usr/bin/oscdump"] {
            try #require(FileManager.default.isExecutableFile(atPath: tool), "\(tool) (Debian's liblo-tools) is missing")
        }
        let fx = try LoopRenderTests.make(loop: "")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let port = Int.random(in: 20000...40000), dumpPort = port + 1
        // The subscriber: oscdump, line-buffered, into a file.
        let dumped = fx.dir.file("dump.txt")
        _ = FileManager.default.createFile(atPath: dumped.path, contents: nil)
        let dumpHandle = try FileHandle(forWritingTo: dumped)
        let dump = Process()
        dump.executableURL = URL(fileURLWithPath: "/usr/bin/oscdump")
        dump.arguments = ["-L", "\(dumpPort)"]
        dump.standardOutput = dumpHandle
        dump.standardError = dumpHandle
        try dump.run()
        try? dumpHandle.close()
        // oscdump does not end on SIGTERM while it waits for messages: SIGKILL (its output is
        // line-buffered, already in the file).
        defer { if dump.isRunning { kill(dump.processIdentifier, SIGKILL) }; dump.waitUntilExit() }

        let log = fx.dir.file("replies.log")
        // --allow-loss: what is judged is what the subscribers get, not the server's losses.
        let p = try startAqsync(["play", fx.url.path, "--server", server.name, "--no-connect", "--no-start-server", "--osc", "\(port)",
                                 "--client-name", "aqreplies", "--lead", "1", "--allow-loss"], log: log)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) }; p.waitUntilExit() }
        func text() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        func waitFor(_ s: String) -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline && p.isRunning {
                if text().contains(s) { return true }
                usleep(20_000)  // polls aqsync's log: a line has no notification a test can wait on
            }
            return text().contains(s)
        }
        try #require(waitFor("OSC: listening"), "\(text())")
        _ = try runTool("/usr/bin/oscsend", ["127.0.0.1", "\(port)", "/aqsync/subscribe", "i", "\(dumpPort)"])
        try #require(waitFor("127.0.0.1:\(dumpPort) gets /aqsync/position every 100 ms"), "\(text())")
        _ = try runTool("/usr/bin/oscsend", ["127.0.0.1", "\(port)", "/aqsync/subscribe", "i", "70000"])
        #expect(waitFor("a port from 1 to 65535, not 70000"), "\(text())")

        // /aqsync/where from the test's own socket: the reply comes back to its port.
        let reply = try Self.ask(OSCMessage(address: "/aqsync/where"), port: port)
        #expect(reply?.address == "/aqsync/position" && reply?.arguments.count == 3, "\(String(describing: reply))")

        let deadline = Date().addingTimeInterval(30)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        #expect(!p.isRunning && p.terminationStatus == 0, "\(text())")
        kill(dump.processIdentifier, SIGKILL)
        dump.waitUntilExit()
        // "TIMETAG /aqsync/position dhs 1.234000 59232 "playing"" per message.
        let lines = ((try? String(contentsOf: dumped, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains("/aqsync/position dhs") }
        let parsed = lines.compactMap { line -> (seconds: Double, frame: Int64, state: String)? in
            let f = line.split(separator: " ")
            guard f.count == 6, let s = Double(f[3]), let n = Int64(f[4]) else { return nil }
            return (s, n, f[5].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
        }
        #expect(parsed.count == lines.count && parsed.count >= 10, "\(lines.count) position messages: \(lines.prefix(5))")
        #expect(parsed.allSatisfy { abs($0.seconds - Double($0.frame) / 48000) < 1e-5 }, "seconds and frames disagree: \(parsed.prefix(5))")
        let playing = parsed.filter { $0.state == "playing" }.map(\.frame)
        #expect(playing.count >= 5 && zip(playing.dropFirst(), playing).allSatisfy { $0 >= $1 }, "frames while playing: \(playing)")
        #expect(Set(parsed.map(\.state)).isSubset(of: ["playing", "ended"]), "\(Set(parsed.map(\.state)))")
        #expect(parsed.last?.state == "ended", "the last message: \(String(describing: parsed.last))")
        // "TIMETAG /aqsync/meters ffff… avg1 peak1 avg2 peak2 …": two floats a track, every
        // position message while playing followed by one; the tracks are heard (a peak above
        // the -120 dB floor while playing), and no level is above full scale.
        let tracks = try SessionLoader.load(fx.url).tracks.count
        let meters = ((try? String(contentsOf: dumped, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains("/aqsync/meters ") }
        let levels = meters.map { line in line.split(separator: " ").dropFirst(3).compactMap { Float($0) } }
        #expect(meters.count >= playing.count && levels.allSatisfy { $0.count == 2 * tracks }, "\(meters.count) meters messages for \(playing.count) positions: \(meters.prefix(3))")
        let peaks = levels.flatMap { l in stride(from: 1, to: l.count, by: 2).map { l[$0] } }
        #expect(peaks.contains { $0 > -60 } && peaks.allSatisfy { $0 <= 0.01 && $0 >= -120 }, "peaks: \(peaks.prefix(20))")
    }

    /// Sends `message` to 127.0.0.1:`port` from a socket bound to an ephemeral port and waits
    /// (at most 2 s) for one reply on it.
    static func ask(_ message: OSCMessage, port: Int) throws -> OSCMessage? {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &to.sin_addr)
        let bytes = message.encoded()
        let sent = withUnsafePointer(to: &to) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(sent == bytes.count)
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 2000) > 0 else { return nil }
        var buf = [UInt8](repeating: 0, count: 2048)
        let n = recv(fd, &buf, buf.count, 0)
        guard n > 0 else { return nil }
        return OSCMessage.parse(Array(buf[0..<n]))?.first
    }
}
