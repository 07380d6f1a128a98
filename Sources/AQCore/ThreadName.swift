#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Names the calling thread for the kernel (what `top -H`, `ps -L`, gdb and
/// `/proc/thread-self/comm` show), at most 15 bytes. A new Linux thread otherwise keeps the
/// name of the thread that created it (for example a dispatch worker's), which misleads anyone
/// looking for the engine's threads. Any thread but the render thread (it writes a file).
public func setCurrentThreadName(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    defer { close(fd) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}
