import AQBench
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Render-thread allocation counting for `aqsync bench`. The counter (Sources/CAllocCounter,
/// built as `libAQAllocCounter.so` beside this executable) defines `malloc` and friends and
/// forwards every call to glibc; it is never linked into `aqsync`, which would put a second
/// definition of `malloc` on its link line. Instead `aqsync bench` runs itself again with the
/// library preloaded (`LD_PRELOAD`), then finds its counting functions by name.
///
/// Thread safety: ``preload()`` on the main thread before the benchmark starts anything;
/// ``counter()`` any thread.
enum AllocationCounting {
    /// The preloaded library's file name, beside the executable.
    static let library = "libAQAllocCounter.so"
    /// Set in the re-executed process: its preload was tried (no loop), and what `LD_PRELOAD`
    /// was before (restored, so that the benchmark's children, C reference clients included,
    /// run without the counter).
    static let marker = "AQSYNC_ALLOC_COUNTER_PRELOADED"

    /// Runs this process again with the counter preloaded; returns without doing so when the
    /// counter is already there, the library is missing, or the preload was tried already (it
    /// then puts `LD_PRELOAD` back as it was, for the children).
    static func preload() {
        if let before = getenv(marker) {
            let previous = String(cString: before)
            if previous.isEmpty { unsetenv("LD_PRELOAD") } else { setenv("LD_PRELOAD", previous, 1) }
            return
        }
        guard symbol("aq_alloc_count") == nil,
              let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        else { return }
        let lib = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent(library).path
        guard FileManager.default.fileExists(atPath: lib) else { return }
        let previous = ProcessInfo.processInfo.environment["LD_PRELOAD"] ?? ""
        setenv(marker, previous, 1)
        setenv("LD_PRELOAD", previous.isEmpty ? lib : "\(lib):\(previous)", 1)
        var argv: [UnsafeMutablePointer<CChar>?] = CommandLine.arguments.map { strdup($0) } + [nil]
        execv(exe, &argv)
        // execv failed: carry on without counting.
        unsetenv(marker)
        if previous.isEmpty { unsetenv("LD_PRELOAD") } else { setenv("LD_PRELOAD", previous, 1) }
    }

    /// The counter, when the library is in the process and its `malloc` is the one in use
    /// (every library's calls reach it); nil otherwise (figures then say "not counted").
    static func counter() -> AllocationCounter? {
        typealias Active = @convention(c) () -> Int32
        typealias Watch = @convention(c) (pthread_t) -> Void
        typealias Count = @convention(c) () -> Int
        typealias Stop = @convention(c) () -> Void
        guard let a = symbol("aq_alloc_counter_active"), let w = symbol("aq_alloc_watch"),
              let c = symbol("aq_alloc_count"), let s = symbol("aq_alloc_stop")
        else { return nil }
        let active = unsafeBitCast(a, to: Active.self), watch = unsafeBitCast(w, to: Watch.self)
        let count = unsafeBitCast(c, to: Count.self), stop = unsafeBitCast(s, to: Stop.self)
        guard active() != 0 else { return nil }
        return AllocationCounter(watch: { watch($0) }, count: { count() }, stop: { stop() })
    }

    /// A function of the process's global scope (the executable and what was loaded and
    /// preloaded with it), by name.
    private static func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        guard let global = dlopen(nil, RTLD_NOW) else { return nil }
        return dlsym(global, name)
    }
}
