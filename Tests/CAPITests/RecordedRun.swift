import AQTesting
import Foundation

extension CAPI {
    /// Runs the C program `exe` on a private realtime jackd (48 kHz, period 256) with its output
    /// connected to `jack-record`'s inputs 1–2, and a ``FrameCountWitness`` recorded beside it
    /// (its own count on input 3, the server's counter on input 4): the run's result and the
    /// 4-channel recording. Everything it started is stopped before it returns.
    static func runRecorded(_ exe: URL, clientName: String) throws -> (run: Run, wav: WAVFile) {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let rec = try JackRecorder(server: server.name, channels: 4)
        defer { rec.removeFiles() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(clientName)-witness-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server.name
        let witness = try FrameCountWitness(environment: env, directory: dir)
        defer { witness.stop() }
        try witness.waitForPort(server: server.name)
        try JackTools.connect(witness.port, rec.inputPortNames[2], server: server.name)
        try JackTools.connect(witness.serverPort, rec.inputPortNames[3], server: server.name)
        let r = try run(exe, environment: [
            "JACK_DEFAULT_SERVER": server.name, "AQSYNC_CONNECT": rec.inputPortNames.prefix(2).joined(separator: ","),
            "AQSYNC_CLIENT_NAME": clientName,
        ], timeout: 60)
        rec.stop()
        return (r, try rec.read())
    }
}
