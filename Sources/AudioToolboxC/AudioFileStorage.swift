// Where an AudioFileID's bytes live (issue 23): a file on disk (AudioFileOpenURL,
// AudioFileCreateWithURL) or the caller's callbacks (AudioFileOpenWithCallbacks,
// AudioFileInitializeWithCallbacks). The reader and the writers only read, write, size and cut.
import CAudioToolbox
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An AudioFileID's bytes. Used from the AudioFileID's thread (one at a time).
protocol AudioFileStorage: AnyObject {
    /// The bytes there are.
    var size: Int64 { get }
    /// Reads up to `count` bytes at `offset`; the count read (0 at the end), or -1 on an error.
    func read(_ out: UnsafeMutableRawPointer, _ count: Int, at offset: Int64) -> Int
    /// Writes every byte at `offset`; false on an error.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool
    /// Cuts (or extends) to `size` bytes; false on an error.
    func truncate(_ size: Int64) -> Bool
    /// Releases the storage (the file is closed; callbacks are not called again).
    func close()
}

extension AudioFileStorage {
    /// Reads until `count` bytes or the end.
    func readFully(_ out: UnsafeMutableRawPointer, _ count: Int, at offset: Int64) -> Int {
        var done = 0
        while done < count {
            let n = read(out + done, count - done, at: offset + Int64(done))
            if n <= 0 { break }
            done += n
        }
        return done
    }
}

/// A file on disk.
final class FileStorage: AudioFileStorage {
    private var fd: Int32

    /// Opens `path` with `open(2)`'s `flags`.
    init(path: String, flags: Int32) throws(AudioFileFailure) {
        fd = open(path, flags | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            if errno == EEXIST { throw AudioFileFailure(status: kAudioFilePermissionsError, "\(path) exists (kAudioFileFlags_EraseFile replaces it)") }
            throw AudioFileFailure.opening(errno: errno, path)
        }
    }

    deinit { close() }

    var size: Int64 {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int64(st.st_size) : 0
    }

    func read(_ out: UnsafeMutableRawPointer, _ count: Int, at offset: Int64) -> Int {
        guard fd >= 0 else { return -1 }
        return pread(fd, out, count, off_t(offset))
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + Int64(done)))
            if n <= 0 { return false }
            done += n
        }
        return true
    }

    func truncate(_ size: Int64) -> Bool { ftruncate(fd, off_t(size)) == 0 }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}

/// The caller's callbacks (`AudioFile_ReadProc` and the others of AudioToolbox/AudioFile.h),
/// called on the AudioFileID's thread.
final class CallbackStorage: AudioFileStorage {
    let clientData: UnsafeMutableRawPointer?
    let readProc: AudioFile_ReadProc?
    let writeProc: AudioFile_WriteProc?
    let getSizeProc: AudioFile_GetSizeProc
    let setSizeProc: AudioFile_SetSizeProc?
    private var closed = false

    init(clientData: UnsafeMutableRawPointer?, read: AudioFile_ReadProc?, write: AudioFile_WriteProc?,
         getSize: AudioFile_GetSizeProc, setSize: AudioFile_SetSizeProc?) {
        self.clientData = clientData
        readProc = read
        writeProc = write
        getSizeProc = getSize
        setSizeProc = setSize
    }

    var size: Int64 { closed ? 0 : getSizeProc(clientData) }

    func read(_ out: UnsafeMutableRawPointer, _ count: Int, at offset: Int64) -> Int {
        guard !closed, let readProc else { return -1 }
        var actual: UInt32 = 0
        let status = readProc(clientData, offset, UInt32(clamping: count), out, &actual)
        // Apple's callbacks answer kAudioFileEndOfFileError with the bytes there were.
        if status != 0 && status != kAudioFileEndOfFileError { return -1 }
        return Int(min(actual, UInt32(clamping: count)))
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
        guard !closed, let writeProc else { return false }
        var done = 0
        while done < bytes.count {
            var actual: UInt32 = 0
            let status = writeProc(clientData, offset + Int64(done), UInt32(clamping: bytes.count - done), bytes.baseAddress! + done, &actual)
            if status != 0 || actual == 0 { return false }
            done += Int(actual)
        }
        return true
    }

    func truncate(_ size: Int64) -> Bool {
        guard !closed else { return false }
        guard let setSizeProc else { return self.size == size }
        return setSizeProc(clientData, size) == 0
    }

    func close() { closed = true }
}
