import Foundation
import Testing

/// The allocation counter `aqsync bench` preloads (libAQAllocCounter.so, Sources/CAllocCounter):
/// preloaded into a plain C program, it counts exactly the allocations of the watched thread and
/// none of another's; and `aqsync bench` preloads it into itself, so that its figures are
/// counted (0), not "not counted" (-1).
@Suite struct AllocationCounterTests {
    static let buildDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()

    /// Runs `exe` with `arguments` and `environment` added; status and standard output.
    static func run(_ exe: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = arguments
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.standardError
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func countsTheWatchedThreadsAllocationsOnly() throws {
        let lib = Self.buildDirectory.appendingPathComponent("libAQAllocCounter.so").path
        try #require(FileManager.default.fileExists(atPath: lib), "\(lib) is built by swift build")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("alloc-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("probe.c")
        try """
            #include <dlfcn.h>
            #include <pthread.h>
            #include <stdio.h>
            #include <stdlib.h>
            static void *other(void *p) { for (int i = 0; i < 7; i++) free(malloc(32)); return p; }
            int main(void) {
                void (*watch)(pthread_t) = (void (*)(pthread_t))dlsym(RTLD_DEFAULT, "aq_alloc_watch");
                long (*count)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "aq_alloc_count");
                int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "aq_alloc_counter_active");
                if (!watch || !count || !active) { printf("missing\\n"); return 1; }
                watch(pthread_self());
                void *a = malloc(10); void *b = calloc(2, 8); a = realloc(a, 100);
                void *c = NULL; if (posix_memalign(&c, 64, 64) != 0) return 1;
                free(a); free(b); free(c);
                long mine = count();
                pthread_t t; pthread_create(&t, NULL, other, NULL); pthread_join(t, NULL);
                printf("%d %ld %ld\\n", active(), mine, count());
                return 0;
            }
            """.write(to: source, atomically: true, encoding: .utf8)
        let exe = dir.appendingPathComponent("probe").path
        let (cc, _) = try Self.run("/usr/bin/cc", ["-O0", "-o", exe, source.path, "-ldl", "-lpthread"])
        try #require(cc == 0)
        let (status, plain) = try Self.run(exe, [])
        #expect(status == 1 && plain == "missing\n", "without the preload there is no counter: \(plain)")
        let (status2, counted) = try Self.run(exe, [], environment: ["LD_PRELOAD": lib])
        // malloc, calloc, realloc, posix_memalign on the watched thread (frees are not counted;
        // pthread_create's own allocations happen on this thread too, so the total after the
        // other thread may grow by those, never by the other thread's seven).
        let f = counted.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(status2 == 0 && f.count == 3, "\(counted)")
        if f.count == 3 {
            #expect(f[0] == 1 && f[1] == 4, "active \(f[0]), counted \(f[1]) of 4")
            #expect(f[2] - f[1] < 7, "another thread's allocations were counted: \(f[2] - f[1]) more")
        }
    }

    @Test func aqsyncBenchPreloadsItIntoItself() throws {
        let aqsync = Self.buildDirectory.appendingPathComponent("aqsync").path
        try #require(FileManager.default.isExecutableFile(atPath: aqsync))
        let (status, out) = try Self.run(aqsync, ["bench", "--offline", "--queues", "4", "--frames", "64", "--seconds", "0.1", "--json"])
        #expect(status == 0)
        #expect(out.contains("\"render_allocations\" : 0"), "\(out)")
    }
}
