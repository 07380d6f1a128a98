import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writes all of `raw` to `fd` at its offset, again after a signal interrupted it. Returns nil
/// when everything was written, else the bytes written before the error and its `errno`.
/// The writers' one loop (WAV, CAF packets, takes). Any thread; blocks for the write.
func writeFully(_ fd: Int32, _ raw: UnsafeRawBufferPointer) -> (written: Int, errno: Int32)? {
    var done = 0
    while done < raw.count {
        let n = write(fd, raw.baseAddress! + done, raw.count - done)
        if n < 0 {
            if errno == EINTR { continue }
            return (done, errno)
        }
        done += n
    }
    return nil
}

/// A write error for people: the system's text, with disk full and the file size limit named.
func writeErrorText(_ e: Int32) -> String {
    String(cString: strerror(e)) + (e == ENOSPC ? " (disk full)" : e == EFBIG ? " (file size limit)" : "")
}

/// ``writeFully(_:_:)``, a failure thrown as ``SessionError`` `.output` naming `path`.
func writeAll(_ fd: Int32, _ raw: UnsafeRawBufferPointer, path: String) throws(SessionError) {
    if let failure = writeFully(fd, raw) {
        throw SessionError(.output, file: path, "write error: \(writeErrorText(failure.errno))")
    }
}

/// ``writeAll(_:_:path:)`` for bytes in an array.
func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(SessionError) {
    if let failure = bytes.withUnsafeBytes({ writeFully(fd, $0) }) {
        throw SessionError(.output, file: path, "write error: \(writeErrorText(failure.errno))")
    }
}
