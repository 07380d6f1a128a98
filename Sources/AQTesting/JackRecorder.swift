import Foundation
import Synchronization

/// Records JACK ports to a WAV file with jack-tools' `jack-record`, an independent recorder
/// (32-bit float WAV). `jack-record` has no server option, so the server name is passed as
/// `JACK_DEFAULT_SERVER` in its own environment.
///
/// Connections: `jack-record -p PATTERN` connects its input i to `PATTERN` with `%d` replaced
/// by i + 1 + offset; given explicit ports instead, the recorder connects them itself with
/// `jack_connect` once `jack-record`'s ports exist (so the first few milliseconds may be
/// missed). The file's length is only about the duration asked for (jack-record stops on a
/// disk-transfer boundary).
///
/// Thread safety: any control thread.
package final class JackRecorder: @unchecked Sendable {
    /// Where the WAV goes.
    package let url: URL
    /// The server recorded from.
    package let server: String
    /// Channels recorded.
    package let channelCount: Int
    private let process: ChildProcess
    private let logURL: URL

    /// Starts recording `channels` channels connected by `pattern` (e.g. `"aq:out_%d"`), for
    /// `seconds` (nil: until ``stop()``).
    package init(
        server: String, pattern: String, channels: Int, offset: Int = 0, seconds: Double? = nil, url: URL? = nil
    ) throws(TestingError) {
        self.server = server
        self.channelCount = channels
        self.url = url ?? Self.temporaryURL()
        (process, logURL) = try Self.launch(
            server: server, args: ["-n", "\(channels)", "-p", pattern, "-o", "\(offset)"], seconds: seconds, url: self.url)
    }

    /// Starts recording `channels` unconnected inputs (see ``inputPortNames``; connect them
    /// yourself), for `seconds` (nil: until ``stop()``). Waits up to 5 s for the ports.
    package init(server: String, channels: Int, seconds: Double? = nil, url: URL? = nil) throws(TestingError) {
        self.server = server
        self.channelCount = channels
        self.url = url ?? Self.temporaryURL()
        (process, logURL) = try Self.launch(server: server, args: ["-n", "\(channels)"], seconds: seconds, url: self.url)
        try waitForPorts()
    }

    /// jack-record's process id (its JACK client is `jack-record-PID`).
    package var processIdentifier: Int32 { process.processIdentifier }

    /// Full names of jack-record's input ports (`jack-record-PID:in_1…`).
    package var inputPortNames: [String] {
        (0..<channelCount).map { "jack-record-\(process.processIdentifier):in_\($0 + 1)" }
    }

    private func waitForPorts() throws(TestingError) {
        guard let last = inputPortNames.last else { return }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while true {
            let all = (try? JackTools.ports(server: server)) ?? []
            if all.contains(last) { return }
            if clock.now >= deadline || !process.isRunning {
                stop()
                throw TestingError("jack-record did not register its ports on “\(server)”: \(log)")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// Starts recording the full port names `ports` (input i from port i), for `seconds` (nil:
    /// until ``stop()``). Waits up to 5 s for the connections.
    package init(server: String, ports: [String], seconds: Double? = nil, url: URL? = nil) throws(TestingError) {
        self.server = server
        self.channelCount = ports.count
        self.url = url ?? Self.temporaryURL()
        (process, logURL) = try Self.launch(server: server, args: ["-n", "\(ports.count)"], seconds: seconds, url: self.url)
        try waitForPorts()
        for (p, mine) in zip(ports, inputPortNames) {
            do { try JackTools.connect(p, mine, server: server) } catch {
                stop()
                throw error
            }
        }
    }

    private static func temporaryURL() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("aqrec-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).wav")
    }

    /// Starts jack-record through ``ChildProcess`` (posix_spawn with every signal unblocked and
    /// at its default): a child started by Foundation's `Process` from a test thread inherits
    /// that thread's blocked SIGINT, and jack-record then cannot be asked to finish its file.
    private static func launch(server: String, args: [String], seconds: Double?, url: URL) throws(TestingError) -> (ChildProcess, URL) {
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server
        let log = url.appendingPathExtension("log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        // A ring of 2 s (-b, default 4096 frames): on a loaded machine its disk thread fell
        // behind the 4096-frame default ("overflow error") and the recording was lost.
        let p = try ChildProcess(
            path: "/usr/bin/jack-record", arguments: ["-b", "96000"] + args + (seconds.map { ["-t", "\($0)"] } ?? []) + [url.path],
            environment: env, output: log)
        return (p, log)
    }

    /// jack-record's output so far.
    package var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// True while jack-record runs.
    package var isRecording: Bool { process.isRunning }

    /// Waits up to `timeout` for a timed recording to end.
    /// - Throws: ``TestingError`` when it does not end in time (the recorder is then stopped)
    ///   or exits with an error.
    package func wait(timeout: Duration = .seconds(10)) throws(TestingError) {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while process.isRunning && clock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            stop()
            throw TestingError("jack-record did not finish within \(timeout)")
        }
        guard process.terminationStatus == 0 else {
            throw TestingError("jack-record failed (\(process.terminationStatus)): \(log)")
        }
    }

    /// Stops the recording (SIGINT, which makes jack-record finish the file; SIGKILL after 3 s).
    package func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGINT)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(3)
        while process.isRunning && clock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        _ = process.wait(timeout: .seconds(5))
    }

    /// Reads the recorded file (call after ``wait(timeout:)`` or ``stop()``).
    package func read() throws(TestingError) -> WAVFile { try WAVReader.read(url) }

    /// Deletes the WAV and the log.
    package func removeFiles() {
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.removeItem(at: logURL)
    }

    deinit {
        stop()
    }
}
