import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 24: `aqsync play --transport follow --osc PORT` driven by `oscsend` (liblo-tools, a
/// client no one here wrote) on a private jackd: a marker, a locate in seconds and in frames
/// (each primed on its exact frame, as aqsync's log says), gain, play and stop; a port in use
/// refused before anything plays.
@Suite("OSC on JACK", .serialized)
struct OSCOnJACKTests {
    @Test(.timeLimit(.minutes(2)))
    func oscsendDrivesTheTransport() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/oscsend"), "oscsend (Debian's liblo-tools) is missing")
        let fx = try LoopRenderTests.make(loop: "")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let port = Int.random(in: 20000...60000)
        let log = fx.dir.file("osc.log")
        let p = try startAqsync(["play", fx.url.path, "--transport", "follow", "--transport-offset", "4800", "--server", server.name,
                       "--no-connect", "--no-start-server", "--osc", "\(port)", "--client-name", "aqosc"], log: log)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) }; p.waitUntilExit() }
        let aqLog = AqsyncLog(url: log), send = OSCSend(port: port)
        func waitFor(_ text: String) -> Bool { aqLog.waitFor(text) }
        try #require(waitFor("following the JACK transport"))
        #expect(waitFor("OSC: listening on 127.0.0.1:\(port) (UDP)"))
        try send(["/aqsync/marker", "s", "chorus"])
        #expect(waitFor("primed at session frame 57600 (transport frame 62400)"))
        try send(["/aqsync/locate", "f", "0.5"])
        #expect(waitFor("primed at session frame 24000 (transport frame 28800)"))
        try send(["/aqsync/locate", "i", "1001"])
        #expect(waitFor("primed at session frame 1001 (transport frame 5801)"))
        try send(["/aqsync/gain", "sf", "sweep.mp3", "-6"])
        #expect(waitFor("osc /aqsync/gain: track 'sweep.mp3' at -6.0 dB from the next cycle"))
        try send(["/aqsync/marker", "s", "bridge"])
        #expect(waitFor("osc /aqsync/marker: no such marker (markers: a, chorus, b)"))
        try send(["/aqsync/play"])
        #expect(waitFor("osc /aqsync/play: transport started") && waitFor("transport rolling at transport frame"))
        // A second aqsync on the same port: refused before anything plays.
        let second = try runTool(aqsyncURL().path, ["play", fx.url.path, "--transport", "follow", "--server", server.name,
                                                    "--no-connect", "--no-start-server", "--osc", "\(port)"])
        #expect(second.status == 1 && second.output.contains("--osc \(port): cannot listen on 127.0.0.1:\(port)") && second.output.contains("the port is in use"), "\(second.output)")
        try send(["/aqsync/stop"])
        #expect(waitFor("osc /aqsync/stop: transport stopped"))
        kill(p.processIdentifier, SIGINT)
        #expect(p.waitUntilExit(within: 30), "aqsync did not stop on SIGINT")
        #expect(p.terminationStatus == 130)
    }

    /// `--exit-at-end`: located near the end and started over OSC, aqsync exits 0 by itself
    /// once the transport rolls past the session's end.
    @Test(.timeLimit(.minutes(2)))
    func exitAtEnd() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/oscsend"), "oscsend (Debian's liblo-tools) is missing")
        let fx = try LoopRenderTests.make(loop: "")
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let port = Int.random(in: 20000...60000)
        let log = fx.dir.file("end.log")
        // --allow-loss: what is judged is the exit at the end; a rolling cycle played silent
        // (docs/transport.md, Known defects) would make it status 3.
        let p = try startAqsync(["play", fx.url.path, "--transport", "follow", "--exit-at-end", "--server", server.name,
                       "--no-connect", "--no-start-server", "--osc", "\(port)", "--allow-loss"], log: log)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) }; p.waitUntilExit() }
        func text() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        var deadline = Date().addingTimeInterval(20)
        while !text().contains("OSC: listening") || !text().contains("following the JACK transport") {
            try #require(Date() < deadline && p.isRunning, "\(text())")
            usleep(20_000)
        }
        _ = try runTool("/usr/bin/oscsend", ["127.0.0.1", "\(port)", "/aqsync/locate", "f", "1.9"])
        deadline = Date().addingTimeInterval(20)
        while !text().contains("primed at session frame 91200") {
            try #require(Date() < deadline && p.isRunning, "\(text())")
            usleep(20_000)
        }
        _ = try runTool("/usr/bin/oscsend", ["127.0.0.1", "\(port)", "/aqsync/play"])
        deadline = Date().addingTimeInterval(20)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        #expect(!p.isRunning, "aqsync did not exit at the end: \(text())")
        p.waitUntilExit()
        #expect(p.terminationStatus == 0 && text().contains("the transport rolled past the session's end"), "\(text())")
    }
}
