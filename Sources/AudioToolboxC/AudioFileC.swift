// Audio File Services' C functions (AudioToolbox/AudioFile.h), issue 23: opening (reading) on
// AudioFileReading.swift, creating (linear PCM) on AudioFileWriting.swift, properties in
// AudioFileProperties.swift. An AudioFileID is used from one thread at a time, any thread; every
// call blocks on the file system and none is for a realtime thread. docs/c-api.md.
import AQTypes
import CAudioToolbox
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A failed Audio File call: its result code and, under AQSYNC_DEBUG, why.
struct AudioFileFailure: Error {
    let status: OSStatus
    let message: String
    init(status: OSStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    /// `open(2)` failed with `errno`.
    static func opening(errno e: Int32, _ path: String) -> AudioFileFailure {
        switch e {
        case ENOENT, ENOTDIR: AudioFileFailure(status: kAudioFileFileNotFoundError, "\(path): no such file")
        case EISDIR: AudioFileFailure(status: kAudioFileInvalidFileError, "\(path) is a directory")
        default: AudioFileFailure(status: kAudioFilePermissionsError, "\(path): errno \(e)")
        }
    }
}

/// What an `AudioFileID` points to: a file opened for reading or one being written.
final class CAudioFile {
    enum Kind {
        case reading(AudioFileReadState)
        case writing(AudioFileWriteState)
    }
    let kind: Kind
    init(_ kind: Kind) { self.kind = kind }
    var ref: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }
}

/// Live AudioFileIDs: one not in the table (never made, or closed) is kAudio_ParamError.
enum AudioFiles {
    static let lock = NSLock()
    nonisolated(unsafe) static var live: [UnsafeMutableRawPointer: CAudioFile] = [:]
    static func get(_ id: OpaquePointer?) -> CAudioFile? {
        guard let id else { return nil }
        return lock.withLock { live[UnsafeMutableRawPointer(id)] }
    }
    static func add(_ f: CAudioFile) -> OpaquePointer {
        lock.withLock { live[UnsafeMutableRawPointer(f.ref)] = f }
        return f.ref
    }
    static func remove(_ id: OpaquePointer) -> CAudioFile? {
        lock.withLock { live.removeValue(forKey: UnsafeMutableRawPointer(id)) }
    }
}

/// Copies a property's `bytes` to `data` and sets `size` to their count; `tooSmall` (the
/// service's "bad property size" code) when `size` says there is less room. Any thread.
func copyProperty(_ bytes: [UInt8], to data: UnsafeMutableRawPointer, size: UnsafeMutablePointer<UInt32>, tooSmall: OSStatus) throws(AudioFileFailure) {
    guard Int(size.pointee) >= bytes.count else {
        throw AudioFileFailure(status: tooSmall, "the property takes \(bytes.count) bytes; \(size.pointee) given")
    }
    bytes.withUnsafeBytes { if let b = $0.baseAddress { data.copyMemory(from: b, byteCount: bytes.count) } }
    size.pointee = UInt32(bytes.count)
}

/// Runs `body` and turns an `AudioFileFailure` into its result code.
func fileStatus(_ body: () throws(AudioFileFailure) -> Void) -> OSStatus {
    do {
        try body()
        return 0
    } catch {
        if ProcessInfo.processInfo.environment["AQSYNC_DEBUG"] != nil {
            FileHandle.standardError.write(Data("AudioToolbox: AudioFile: \(error.message) (\(error.status))\n".utf8))
        }
        return error.status
    }
}

/// Looks the AudioFileID up and runs `body` with it; an unknown one is kAudio_ParamError.
func withAudioFile(_ id: OpaquePointer?, _ body: (CAudioFile) throws(AudioFileFailure) -> Void) -> OSStatus {
    guard let f = AudioFiles.get(id) else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in try body(f) }
}

/// The file-system path of a file CFURL (nil for a URL that is not a file's).
func filePath(_ url: OpaquePointer?) -> String? {
    guard let url else { return nil }
    let cf = Unmanaged<CFURL>.fromOpaque(UnsafeRawPointer(url)).takeUnretainedValue()
    var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
    guard CFURLGetFileSystemRepresentation(cf, true, &buffer, buffer.count) else { return nil }
    return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}

/// `AudioFileOpenURL`, exported to C: its contract is in `AudioToolbox/AudioFile.h`; threads and
/// blocking in docs/c-api.md.
@c public func AudioFileOpenURL(_ inFileRef: OpaquePointer?, _ inPermissions: Int8, _ inFileTypeHint: UInt32,
                                _ outAudioFile: UnsafeMutablePointer<OpaquePointer?>?) -> OSStatus {
    guard let outAudioFile, inPermissions & 0x03 != 0, inPermissions & ~0x03 == 0 else { return paramError }
    guard let path = filePath(inFileRef) else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        if inPermissions & 0x02 != 0 && access(path, W_OK) != 0 && access(path, F_OK) == 0 {
            throw AudioFileFailure(status: kAudioFilePermissionsError, "\(path) is not writable")
        }
        let state = try AudioFileReadState(storage: try FileStorage(path: path, flags: O_RDONLY), hint: inFileTypeHint)
        outAudioFile.pointee = AudioFiles.add(CAudioFile(.reading(state)))
    }
}

/// `AudioFileCreateWithURL`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileCreateWithURL(_ inFileRef: OpaquePointer?, _ inFileType: UInt32, _ inFormat: UnsafePointer<CFormat>?,
                                      _ inFlags: UInt32, _ outAudioFile: UnsafeMutablePointer<OpaquePointer?>?) -> OSStatus {
    guard let inFormat, let outAudioFile, inFlags & ~0x03 == 0 else { return paramError }
    guard let path = filePath(inFileRef) else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        let format = SFormat(c: inFormat.pointee)
        _ = try AudioFileWriteState.check(fileType: inFileType, format: format)  // before the file is made
        let erase = inFlags & AudioFileFlags.eraseFile.rawValue != 0
        let storage = try FileStorage(path: path, flags: O_RDWR | O_CREAT | (erase ? O_TRUNC : O_EXCL))
        let state = try AudioFileWriteState(storage: storage, fileType: inFileType, format: format)
        outAudioFile.pointee = AudioFiles.add(CAudioFile(.writing(state)))
    }
}

/// `AudioFileOpenWithCallbacks`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileOpenWithCallbacks(_ inClientData: UnsafeMutableRawPointer?, _ inReadFunc: AudioFile_ReadProc?, _ inWriteFunc: AudioFile_WriteProc?,
                                          _ inGetSizeFunc: AudioFile_GetSizeProc?, _ inSetSizeFunc: AudioFile_SetSizeProc?,
                                          _ inFileTypeHint: UInt32, _ outAudioFile: UnsafeMutablePointer<OpaquePointer?>?) -> OSStatus {
    guard let inReadFunc, let inGetSizeFunc, let outAudioFile else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        let storage = CallbackStorage(clientData: inClientData, read: inReadFunc, write: inWriteFunc, getSize: inGetSizeFunc, setSize: inSetSizeFunc)
        let state = try AudioFileReadState(storage: storage, hint: inFileTypeHint)
        outAudioFile.pointee = AudioFiles.add(CAudioFile(.reading(state)))
    }
}

/// `AudioFileInitializeWithCallbacks`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileInitializeWithCallbacks(_ inClientData: UnsafeMutableRawPointer?, _ inReadFunc: AudioFile_ReadProc?, _ inWriteFunc: AudioFile_WriteProc?,
                                                _ inGetSizeFunc: AudioFile_GetSizeProc?, _ inSetSizeFunc: AudioFile_SetSizeProc?,
                                                _ inFileType: UInt32, _ inFormat: UnsafePointer<CFormat>?, _ inFlags: UInt32,
                                                _ outAudioFile: UnsafeMutablePointer<OpaquePointer?>?) -> OSStatus {
    guard let inWriteFunc, let inGetSizeFunc, let inSetSizeFunc, let inFormat, let outAudioFile, inFlags & ~0x03 == 0 else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        let format = SFormat(c: inFormat.pointee)
        _ = try AudioFileWriteState.check(fileType: inFileType, format: format)
        let storage = CallbackStorage(clientData: inClientData, read: inReadFunc, write: inWriteFunc, getSize: inGetSizeFunc, setSize: inSetSizeFunc)
        // The callbacks' data starts empty, as a created file does.
        guard storage.truncate(0) else { throw AudioFileFailure(status: kAudioFilePermissionsError, "the set-size callback failed") }
        let state = try AudioFileWriteState(storage: storage, fileType: inFileType, format: format)
        outAudioFile.pointee = AudioFiles.add(CAudioFile(.writing(state)))
    }
}

/// `AudioFileClose`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileClose(_ inAudioFile: OpaquePointer?) -> OSStatus {
    guard let inAudioFile, let f = AudioFiles.remove(inAudioFile) else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        if case .writing(let w) = f.kind { try w.finish() }
    }
}

/// `AudioFileOptimize`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileOptimize(_ inAudioFile: OpaquePointer?) -> OSStatus {
    withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        if case .writing(let w) = f.kind { try w.updateHeader() }
    }
}

/// `AudioFileReadBytes`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileReadBytes(_ inAudioFile: OpaquePointer?, _ inUseCache: Bool, _ inStartingByte: Int64,
                                  _ ioNumBytes: UnsafeMutablePointer<UInt32>?, _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioNumBytes, let outBuffer else { return paramError }
    return withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        guard case .reading(let r) = f.kind else {
            throw AudioFileFailure(status: kAudioFileOperationNotSupportedError, "reading a file being written")
        }
        let asked = Int(ioNumBytes.pointee)
        let got = try r.readBytes(start: inStartingByte, count: asked, out: outBuffer)
        ioNumBytes.pointee = UInt32(got)
        if got < asked { throw AudioFileFailure(status: kAudioFileEndOfFileError, "the end of the audio data") }
    }
}

/// `AudioFileReadPacketData`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileReadPacketData(_ inAudioFile: OpaquePointer?, _ inUseCache: Bool, _ ioNumBytes: UnsafeMutablePointer<UInt32>?,
                                       _ outPacketDescriptions: UnsafeMutablePointer<CPacketDescription>?, _ inStartingPacket: Int64,
                                       _ ioNumPackets: UnsafeMutablePointer<UInt32>?, _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioNumBytes, let ioNumPackets, let outBuffer else { return paramError }
    return readPackets(inAudioFile, capacity: Int(ioNumBytes.pointee), outPacketDescriptions, inStartingPacket, ioNumPackets, outBuffer) {
        ioNumBytes.pointee = UInt32($0)
    }
}

/// `AudioFileReadPackets`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileReadPackets(_ inAudioFile: OpaquePointer?, _ inUseCache: Bool, _ outNumBytes: UnsafeMutablePointer<UInt32>?,
                                    _ outPacketDescriptions: UnsafeMutablePointer<CPacketDescription>?, _ inStartingPacket: Int64,
                                    _ ioNumPackets: UnsafeMutablePointer<UInt32>?, _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let outNumBytes, let ioNumPackets, let outBuffer else { return paramError }
    // The caller sized the buffer for *ioNumPackets packets of the largest size.
    return readPackets(inAudioFile, capacity: Int.max, outPacketDescriptions, inStartingPacket, ioNumPackets, outBuffer) {
        outNumBytes.pointee = UInt32($0)
    }
}

func readPackets(_ id: OpaquePointer?, capacity: Int, _ descriptions: UnsafeMutablePointer<CPacketDescription>?, _ start: Int64,
                 _ ioNumPackets: UnsafeMutablePointer<UInt32>, _ out: UnsafeMutableRawPointer, bytes: (Int) -> Void) -> OSStatus {
    withAudioFile(id) { f throws(AudioFileFailure) in
        guard case .reading(let r) = f.kind else {
            throw AudioFileFailure(status: kAudioFileOperationNotSupportedError, "reading a file being written")
        }
        let (packets, n) = try r.readPackets(start: start, maxPackets: Int(ioNumPackets.pointee), capacity: capacity, out: out, descriptions: descriptions)
        ioNumPackets.pointee = UInt32(packets)
        bytes(n)
    }
}

/// `AudioFileWriteBytes`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileWriteBytes(_ inAudioFile: OpaquePointer?, _ inUseCache: Bool, _ inStartingByte: Int64,
                                   _ ioNumBytes: UnsafeMutablePointer<UInt32>?, _ inBuffer: UnsafeRawPointer?) -> OSStatus {
    guard let ioNumBytes, let inBuffer else { return paramError }
    return withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        try writer(f).writeBytes(start: inStartingByte, count: Int(ioNumBytes.pointee), from: inBuffer)
    }
}

/// `AudioFileWritePackets`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileWritePackets(_ inAudioFile: OpaquePointer?, _ inUseCache: Bool, _ inNumBytes: UInt32,
                                     _ inPacketDescriptions: UnsafePointer<CPacketDescription>?, _ inStartingPacket: Int64,
                                     _ ioNumPackets: UnsafeMutablePointer<UInt32>?, _ inBuffer: UnsafeRawPointer?) -> OSStatus {
    guard let ioNumPackets, let inBuffer else { return paramError }
    return withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        let w = try writer(f)
        guard inStartingPacket >= 0 else { throw AudioFileFailure(status: kAudioFileInvalidPacketOffsetError, "negative packet") }
        if w.packets != nil {
            ioNumPackets.pointee = UInt32(try w.writePackets(
                start: inStartingPacket, count: Int(ioNumPackets.pointee), descriptions: inPacketDescriptions, byteCount: Int(inNumBytes), from: inBuffer))
            return
        }
        // Constant-size packets: *ioNumPackets of them, whatever inNumBytes says (as Apple's:
        // Learning Core Audio's converter passes its frame count there).
        let size = Int64(w.format.bytesPerPacket)
        let packets = Int64(ioNumPackets.pointee)
        try w.writeBytes(start: inStartingPacket * size, count: Int(packets * size), from: inBuffer)
        ioNumPackets.pointee = UInt32(packets)
    }
}

/// The writer of a file made by AudioFileCreateWithURL; an opened file refuses writes.
func writer(_ f: CAudioFile) throws(AudioFileFailure) -> AudioFileWriteState {
    guard case .writing(let w) = f.kind else {
        throw AudioFileFailure(status: kAudioFileOperationNotSupportedError, "files opened by AudioFileOpenURL are read only here")
    }
    return w
}
