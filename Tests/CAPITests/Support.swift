import AQTesting
import Foundation

/// The C API's test harness (issue 12): installs the headers and the libAudioToolbox.so that
/// `swift build --build-tests` made into a temporary prefix with `make install-files` (the
/// layout `make install` makes), builds C programs against it through pkg-config, and runs them.
enum CAPI {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Where the test binary's libAudioToolbox.so is.
    static var libraryDirectory: URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for dir in [beside, beside.deletingLastPathComponent()] where FileManager.default.fileExists(atPath: dir.appendingPathComponent("libAudioToolbox.so").path) {
            return dir
        }
        return root.appendingPathComponent(".build/debug")
    }

    private static let installLock = NSLock()
    nonisolated(unsafe) private static var installed: URL?

    /// The prefix, installed on first use (once per test process).
    static func prefix() throws -> URL {
        installLock.lock()
        defer { installLock.unlock() }
        if let installed { return installed }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqsync-capi-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        let r = try shell("make -s -C '\(root.path)' install-files PREFIX='\(dir.path)' LIBDIR_SRC='\(libraryDirectory.path)'")
        guard r.status == 0 else { throw TestingError("make install-files failed: \(r.output)") }
        installed = dir
        return dir
    }

    /// `cc` (or `compiler`) on `source` (relative to the package root) with pkg-config's flags
    /// for AudioToolbox; returns the executable. Warnings are errors.
    static func build(_ source: String, compiler: String = "cc", flags: String = "", name: String? = nil) throws -> URL {
        let p = try prefix()
        let out = p.appendingPathComponent("bin/\(name ?? URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent)")
        try FileManager.default.createDirectory(at: out.deletingLastPathComponent(), withIntermediateDirectories: true)
        let cmd = "PKG_CONFIG_PATH='\(p.path)/lib/pkgconfig' \(compiler) -Wall -Wextra -Werror \(flags) -o '\(out.path)' "
            + "'\(root.appendingPathComponent(source).path)' $(PKG_CONFIG_PATH='\(p.path)/lib/pkgconfig' pkg-config --cflags --libs AudioToolbox) -lm -lpthread"
        let r = try shell(cmd)
        guard r.status == 0 else { throw TestingError("\(cmd)\n\(r.output)") }
        return out
    }

    struct Run {
        var status: Int32
        var output: String
        var seconds: Double
    }

    /// Runs `/bin/sh -c command`, output and errors together.
    static func shell(_ command: String, environment: [String: String] = [:], timeout: Double = 120) throws -> Run {
        try run(URL(fileURLWithPath: "/bin/sh"), ["-c", command], environment: environment, timeout: timeout)
    }

    /// Runs a program with extra environment variables; killed (SIGKILL: test threads block
    /// SIGTERM, and children inherit the mask) after `timeout` seconds.
    static func run(_ exe: URL, _ args: [String] = [], environment: [String: String] = [:], timeout: Double = 60) throws -> Run {
        let p = Process()
        p.executableURL = exe
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        let started = Date()
        try p.run()
        let collected = OutputBox()
        let read = DispatchSemaphore(value: 0)
        let reader = Thread {
            collected.data = pipe.fileHandleForReading.readDataToEndOfFile()
            read.signal()
        }
        reader.start()
        if !p.exited(within: timeout) { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        read.wait()  // the pipe's end: the child (and any child of its holding the pipe) exited
        let output = String(decoding: collected.data ?? Data(), as: UTF8.self)
        return Run(status: p.terminationStatus, output: output, seconds: Date().timeIntervalSince(started))
    }

    final class OutputBox: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Data?
        var data: Data? {
            get { lock.withLock { value } }
            set { lock.withLock { value = newValue } }
        }
    }
}

