import Foundation

/// The frequency of `x` (at `rate` frames per second) from its rising zero crossings; 0 when
/// there are fewer than three. Periods more than 20 % away from the median period are left
/// out: a recording in which the machine lost a cycle (an xrun) has one broken period there,
/// which says nothing about the tone. For tests that measure a tone in a recording. Any thread.
package func risingZeroCrossingFrequency(_ x: [Float], rate: Double) -> Double {
    var crossings: [Int] = []
    for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 { crossings.append(i) }
    guard crossings.count > 2 else { return 0 }
    let periods = zip(crossings.dropFirst(), crossings).map { Double($0 - $1) }
    let median = periods.sorted()[periods.count / 2]
    let kept = periods.filter { abs($0 - median) <= 0.2 * median }
    guard !kept.isEmpty else { return 0 }
    return Double(kept.count) * rate / kept.reduce(0, +)
}

/// An executable of this package built beside the running test bundle (`swift build
/// --build-tests` builds them), else in `.build/debug` of the package this file belongs to.
/// Any thread.
package func builtProduct(_ name: String) -> URL {
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/\(name)")
}

/// Compiles a C JACK client (`NAME.c` in `directory`) against jackd2's headers
/// (`pkg-config jack`); it runs on either libjack. Returns the executable.
func compileJackClient(_ source: String, name: String, directory: URL) throws(TestingError) -> URL {
    let src = directory.appendingPathComponent("\(name).c"), bin = directory.appendingPathComponent(name)
    do { try source.write(to: src, atomically: true, encoding: .utf8) } catch {
        throw TestingError("cannot write \(src.path): \(error)")
    }
    let log = directory.appendingPathComponent("\(name).cc.log")
    let cc = try ChildProcess(
        path: "/bin/sh", arguments: ["-c", "cc -O2 -o '\(bin.path)' '\(src.path)' $(pkg-config --cflags --libs jack)"],
        environment: ProcessInfo.processInfo.environment, output: log)
    guard cc.wait(timeout: .seconds(60)), cc.terminationStatus == 0 else {
        throw TestingError("cc \(name).c failed: " + ((try? String(contentsOf: log, encoding: .utf8)) ?? ""))
    }
    return bin
}

/// A plain C JACK client compiled from `source` (``compileJackClient(_:name:directory:)``) and
/// run as a child process, its output in `NAME.log` beside it; stopped with SIGKILL (such a
/// client holds nothing worth finishing). The witnesses and test clients of AQTesting run on it.
///
/// Thread safety: `init` and `stop` from the test's thread.
package final class JackClientProgram: @unchecked Sendable {
    /// The running client.
    package let process: ChildProcess

    /// Compiles and starts the client with `arguments` on the server that `environment` names.
    /// Blocks while the compiler runs.
    package init(source: String, name: String, arguments: [String], environment: [String: String], directory: URL) throws(TestingError) {
        let bin = try compileJackClient(source, name: name, directory: directory)
        process = try ChildProcess(
            path: bin.path, arguments: arguments, environment: environment, output: directory.appendingPathComponent("\(name).log"))
    }

    /// True while the client runs.
    package var isRunning: Bool { process.isRunning }

    /// Stops the client. Idempotent.
    package func stop() {
        process.send(SIGKILL)
        _ = process.wait(timeout: .seconds(5))
    }

    deinit { stop() }
}
