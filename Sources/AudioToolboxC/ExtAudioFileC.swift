// Extended Audio File Services' C functions (AudioToolbox/ExtendedAudioFile.h), issue 23: reading
// on ExtAudioFileReading.swift, writing on ExtAudioFileWriting.swift. An ExtAudioFileRef is used
// from one thread at a time, any thread; reads and writes block on the file and decode or encode
// on the calling thread.
import AQConvert
import AQTypes
import CAudioToolbox
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What an `ExtAudioFileRef` points to: its reader or writer and the AudioFileID underneath
/// (`owned`: opened or created by ExtAudioFile, closed with it; else the caller's, wrapped).
final class CExtAudioFile {
    enum Kind {
        case reading(ExtAudioFileReader)
        case writing(ExtAudioFileWriter)
    }
    let kind: Kind
    let audioFile: OpaquePointer
    let owned: Bool
    init(_ kind: Kind, audioFile: OpaquePointer, owned: Bool) {
        self.kind = kind
        self.audioFile = audioFile
        self.owned = owned
    }

    /// The reader; a file being written answers kExtAudioFileError_InvalidOperationOrder.
    var reader: ExtAudioFileReader {
        get throws(AudioFileFailure) {
            guard case .reading(let r) = kind else {
                throw AudioFileFailure(status: kExtAudioFileError_InvalidOperationOrder, "reading a file being written")
            }
            return r
        }
    }
    var ref: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }
}

/// Live ExtAudioFileRefs: one not in the table (never made, or disposed of) is kAudio_ParamError.
enum ExtAudioFiles {
    static let lock = NSLock()
    nonisolated(unsafe) static var live: [UnsafeMutableRawPointer: CExtAudioFile] = [:]
    static func get(_ id: OpaquePointer?) -> CExtAudioFile? {
        guard let id else { return nil }
        return lock.withLock { live[UnsafeMutableRawPointer(id)] }
    }
    static func add(_ f: CExtAudioFile) -> OpaquePointer {
        lock.withLock { live[UnsafeMutableRawPointer(f.ref)] = f }
        return f.ref
    }
    static func remove(_ id: OpaquePointer) -> CExtAudioFile? {
        lock.withLock { live.removeValue(forKey: UnsafeMutableRawPointer(id)) }
    }
}

func withExtAudioFile(_ id: OpaquePointer?, _ body: (CExtAudioFile) throws(AudioFileFailure) -> Void) -> OSStatus {
    guard let f = ExtAudioFiles.get(id) else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in try body(f) }
}

/// `ExtAudioFileOpenURL`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`.
@c public func ExtAudioFileOpenURL(_ inURL: OpaquePointer?, _ outExtAudioFile: UnsafeMutablePointer<OpaquePointer?>?) -> OSStatus {
    guard let outExtAudioFile, let path = filePath(inURL) else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        let state = try AudioFileReadState(storage: try FileStorage(path: path, flags: O_RDONLY), hint: 0)
        let reader = try ExtAudioFileReader(file: state)
        let audioFile = AudioFiles.add(CAudioFile(.reading(state)))
        outExtAudioFile.pointee = ExtAudioFiles.add(CExtAudioFile(.reading(reader), audioFile: audioFile, owned: true))
    }
}

/// `ExtAudioFileWrapAudioFileID`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`.
@c public func ExtAudioFileWrapAudioFileID(_ inFileID: OpaquePointer?, _ inForWriting: Bool, _ outExtAudioFile: UnsafeMutablePointer<OpaquePointer?>?) -> OSStatus {
    guard let outExtAudioFile, let inFileID, let f = AudioFiles.get(inFileID) else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        guard !inForWriting, case .reading(let state) = f.kind else {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidOperationOrder, "only files opened for reading are wrapped here")
        }
        let reader = try ExtAudioFileReader(file: state)
        outExtAudioFile.pointee = ExtAudioFiles.add(CExtAudioFile(.reading(reader), audioFile: inFileID, owned: false))
    }
}

/// `ExtAudioFileCreateWithURL`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`.
@c public func ExtAudioFileCreateWithURL(_ inURL: OpaquePointer?, _ inFileType: UInt32, _ inStreamDesc: UnsafePointer<CFormat>?,
                                         _ inChannelLayout: UnsafeRawPointer?, _ inFlags: UInt32,
                                         _ outExtAudioFile: UnsafeMutablePointer<OpaquePointer?>?) -> OSStatus {
    guard let inStreamDesc, let outExtAudioFile, let path = filePath(inURL), inFlags & ~0x03 == 0 else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        var format = SFormat(c: inStreamDesc.pointee)
        // A compressed format at rate 0 takes the client format's rate (set before the first
        // write; until then the file says 44100).
        let rateFollowsClient = format.formatID != AudioFormatID.linearPCM && format.sampleRate == 0
        if rateFollowsClient { format.sampleRate = 44100 }
        if format.formatID != AudioFormatID.linearPCM {
            // A compressed format as recorders give it (rate, channels, the ID): completed.
            do { format = try PacketEncoder.completed(format) } catch {
                throw AudioFileFailure(status: kAudioFileUnsupportedDataFormatError, "\(error)")
            }
        }
        _ = try AudioFileWriteState.check(fileType: inFileType, format: format)
        let erase = inFlags & AudioFileFlags.eraseFile.rawValue != 0
        let storage = try FileStorage(path: path, flags: O_RDWR | O_CREAT | (erase ? O_TRUNC : O_EXCL))
        let state = try AudioFileWriteState(storage: storage, fileType: inFileType, format: format)
        let writer: ExtAudioFileWriter
        switch Result(catching: { () throws(AudioFileFailure) in try ExtAudioFileWriter(file: state, rateFollowsClient: rateFollowsClient) }) {
        case .success(let w): writer = w
        case .failure(let e):
            try? state.finish()
            unlink(path)
            throw e
        }
        let audioFile = AudioFiles.add(CAudioFile(.writing(state)))
        outExtAudioFile.pointee = ExtAudioFiles.add(CExtAudioFile(.writing(writer), audioFile: audioFile, owned: true))
    }
}

/// `ExtAudioFileDispose`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`.
@c public func ExtAudioFileDispose(_ inExtAudioFile: OpaquePointer?) -> OSStatus {
    guard let inExtAudioFile, let f = ExtAudioFiles.remove(inExtAudioFile) else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        if case .writing(let w) = f.kind {
            defer { if f.owned { _ = AudioFiles.remove(f.audioFile) } }
            try w.finish()
            try w.file.finish()
            return
        }
        if f.owned { _ = AudioFiles.remove(f.audioFile) }
    }
}

/// `ExtAudioFileWrite`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`.
@c public func ExtAudioFileWrite(_ inExtAudioFile: OpaquePointer?, _ inNumberFrames: UInt32, _ ioData: UnsafePointer<CAudioToolbox.AudioBufferList>?) -> OSStatus {
    guard let ioData else { return paramError }
    return withExtAudioFile(inExtAudioFile) { f throws(AudioFileFailure) in
        guard case .writing(let w) = f.kind else {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidOperationOrder, "writing a file opened for reading")
        }
        try w.write(Int(inNumberFrames), from: ioData)
    }
}

/// `ExtAudioFileWriteAsync`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`
/// (here it writes before it returns).
@c public func ExtAudioFileWriteAsync(_ inExtAudioFile: OpaquePointer?, _ inNumberFrames: UInt32, _ ioData: UnsafePointer<CAudioToolbox.AudioBufferList>?) -> OSStatus {
    // Apple's first call may pass no buffer to prepare the writer: nothing to do here.
    guard ioData != nil || inNumberFrames != 0 else { return withExtAudioFile(inExtAudioFile) { _ throws(AudioFileFailure) in } }
    return ExtAudioFileWrite(inExtAudioFile, inNumberFrames, ioData)
}

/// `ExtAudioFileRead`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`.
@c public func ExtAudioFileRead(_ inExtAudioFile: OpaquePointer?, _ ioNumberFrames: UnsafeMutablePointer<UInt32>?,
                                _ ioData: UnsafeMutablePointer<CAudioToolbox.AudioBufferList>?) -> OSStatus {
    guard let ioNumberFrames, let ioData else { return paramError }
    return withExtAudioFile(inExtAudioFile) { f throws(AudioFileFailure) in
        ioNumberFrames.pointee = UInt32(try f.reader.read(Int(ioNumberFrames.pointee), into: ioData))
    }
}

/// `ExtAudioFileSeek`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`.
@c public func ExtAudioFileSeek(_ inExtAudioFile: OpaquePointer?, _ inFrameOffset: Int64) -> OSStatus {
    withExtAudioFile(inExtAudioFile) { f throws(AudioFileFailure) in try f.reader.seek(inFrameOffset) }
}

/// `ExtAudioFileTell`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`.
@c public func ExtAudioFileTell(_ inExtAudioFile: OpaquePointer?, _ outFrameOffset: UnsafeMutablePointer<Int64>?) -> OSStatus {
    guard let outFrameOffset else { return paramError }
    return withExtAudioFile(inExtAudioFile) { f throws(AudioFileFailure) in
        switch f.kind {
        case .reading(let r): outFrameOffset.pointee = r.tell
        case .writing(let w): outFrameOffset.pointee = w.framesWritten
        }
    }
}

/// A property's value in its C layout.
func extProperty(_ f: CExtAudioFile, _ id: UInt32) throws(AudioFileFailure) -> [UInt8] {
    func of<T>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
    let fileFormat: CFormat, client: CFormat?
    switch f.kind {
    case .reading(let r): (fileFormat, client) = (r.file.format.c, r.client)
    case .writing(let w): (fileFormat, client) = (w.file.format.c, w.client)
    }
    switch Int(id) {
    case Int(kExtAudioFileProperty_FileDataFormat): return of(fileFormat)
    case Int(kExtAudioFileProperty_ClientDataFormat): return of(client ?? fileFormat)
    case Int(kExtAudioFileProperty_AudioFile): return of(UInt(bitPattern: UnsafeRawPointer(f.audioFile)))
    case Int(kExtAudioFileProperty_ClientMaxPacketSize): return of((client ?? fileFormat).mBytesPerPacket)
    default: break
    }
    guard case .reading(let r) = f.kind else {
        if id == UInt32(kExtAudioFileProperty_FileLengthFrames), case .writing(let w) = f.kind { return of(w.framesWritten) }
        if id == UInt32(kExtAudioFileProperty_AudioConverter), case .writing(let w) = f.kind {
            return of(UInt(bitPattern: UnsafeRawPointer(try w.audioConverter().ref)))
        }
        throw AudioFileFailure(status: kExtAudioFileError_InvalidProperty, "property '\(FourCharCode(rawValue: id))' not supported while writing")
    }
    switch Int(id) {
    case Int(kExtAudioFileProperty_FileLengthFrames): return of(r.length)
    case Int(kExtAudioFileProperty_FileMaxPacketSize): return of(r.file.maximumPacketSize)
    case Int(kExtAudioFileProperty_PacketTable):
        return of(CAudioToolbox.AudioFilePacketTableInfo(mNumberValidFrames: r.length, mPrimingFrames: Int32(clamping: r.priming), mRemainderFrames: Int32(clamping: r.remainder)))
    case Int(kExtAudioFileProperty_FileChannelLayout):
        guard let layout = r.file.parser.channelLayout else {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidProperty, "the file has no channel layout")
        }
        return layout.cBytes
    default:
        throw AudioFileFailure(status: kExtAudioFileError_InvalidProperty, "property '\(FourCharCode(rawValue: id))' not supported")
    }
}

/// `ExtAudioFileGetPropertyInfo`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`.
@c public func ExtAudioFileGetPropertyInfo(_ inExtAudioFile: OpaquePointer?, _ inPropertyID: UInt32, _ outSize: UnsafeMutablePointer<UInt32>?,
                                           _ outWritable: UnsafeMutablePointer<Bool>?) -> OSStatus {
    withExtAudioFile(inExtAudioFile) { f throws(AudioFileFailure) in
        if inPropertyID == UInt32(kExtAudioFileProperty_ConverterConfig), takesConverterConfig(f) {
            outSize?.pointee = UInt32(MemoryLayout<UnsafeRawPointer>.size)
            outWritable?.pointee = true
            return
        }
        outSize?.pointee = UInt32(try extProperty(f, inPropertyID).count)
        outWritable?.pointee = inPropertyID == UInt32(kExtAudioFileProperty_ClientDataFormat)
    }
}

/// Whether `f` takes kExtAudioFileProperty_ConverterConfig (a writer with a converter).
private func takesConverterConfig(_ f: CExtAudioFile) -> Bool {
    if case .writing(let w) = f.kind { return w.converter != nil }
    return false
}

/// `ExtAudioFileGetProperty`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`.
@c public func ExtAudioFileGetProperty(_ inExtAudioFile: OpaquePointer?, _ inPropertyID: UInt32, _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?,
                                       _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioPropertyDataSize, let outPropertyData else { return paramError }
    return withExtAudioFile(inExtAudioFile) { f throws(AudioFileFailure) in
        try copyProperty(try extProperty(f, inPropertyID), to: outPropertyData, size: ioPropertyDataSize, tooSmall: kExtAudioFileError_InvalidPropertySize)
    }
}

/// `ExtAudioFileSetProperty`, exported to C: its contract is in `AudioToolbox/ExtendedAudioFile.h`.
@c public func ExtAudioFileSetProperty(_ inExtAudioFile: OpaquePointer?, _ inPropertyID: UInt32, _ inPropertyDataSize: UInt32,
                                       _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    guard let inPropertyData else { return paramError }
    return withExtAudioFile(inExtAudioFile) { f throws(AudioFileFailure) in
        if inPropertyID == UInt32(kExtAudioFileProperty_ConverterConfig), case .writing(let w) = f.kind, w.converter != nil {
            // A CFArrayRef (NULL here, as programs pass it): the writer takes the converter's settings.
            guard inPropertyDataSize == UInt32(MemoryLayout<UnsafeRawPointer>.size) else {
                throw AudioFileFailure(status: kExtAudioFileError_InvalidPropertySize, "a CFArrayRef")
            }
            try w.syncConverter()
            return
        }
        guard inPropertyID == UInt32(kExtAudioFileProperty_ClientDataFormat) else {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidProperty, "only the client data format is settable")
        }
        guard inPropertyDataSize == UInt32(MemoryLayout<CFormat>.size) else {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidPropertySize, "an AudioStreamBasicDescription")
        }
        let c = inPropertyData.loadUnaligned(as: CFormat.self)
        switch f.kind {
        case .reading(let r): try r.setClient(c)
        case .writing(let w): try w.setClient(c)
        }
    }
}
