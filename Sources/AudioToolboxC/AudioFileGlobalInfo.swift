// Audio File Services' global information (AudioFileGetGlobalInfoSize, AudioFileGetGlobalInfo),
// issue 23: which file types are read and written, their names, extensions and MIME types, and
// which formats the writable ones take (the writers' own checks decide that). Plain tables: any
// thread, never blocks.
import AQFileStream
import AQTypes
import CAudioToolbox
import Foundation

enum GlobalInfo {
    /// A file type this library knows: its ID, extensions and MIME types.
    struct FileType {
        let id: UInt32
        let extensions: [String]
        let mimeTypes: [String]
    }

    /// Every type AudioFileOpenURL reads (the parser's containers), in a stable order.
    static let readable: [FileType] = [
        FileType(id: UInt32(kAudioFileWAVEType), extensions: ["wav", "wave"], mimeTypes: ["audio/wav", "audio/x-wav", "audio/vnd.wave"]),
        FileType(id: UInt32(kAudioFileRF64Type), extensions: ["rf64", "wav"], mimeTypes: []),
        FileType(id: UInt32(kAudioFileBW64Type), extensions: ["bw64", "wav"], mimeTypes: []),
        FileType(id: UInt32(kAudioFileWave64Type), extensions: ["w64"], mimeTypes: []),
        FileType(id: UInt32(kAudioFileAIFFType), extensions: ["aiff", "aif"], mimeTypes: ["audio/aiff", "audio/x-aiff"]),
        FileType(id: UInt32(kAudioFileAIFCType), extensions: ["aifc", "aiff", "aif"], mimeTypes: ["audio/aiff", "audio/x-aiff"]),
        FileType(id: UInt32(kAudioFileCAFType), extensions: ["caf"], mimeTypes: ["audio/x-caf"]),
        FileType(id: UInt32(kAudioFileNextType), extensions: ["snd", "au"], mimeTypes: ["audio/basic"]),
        FileType(id: UInt32(kAudioFileMP3Type), extensions: ["mp3"], mimeTypes: ["audio/mpeg", "audio/mpeg3", "audio/mp3", "audio/x-mpeg3"]),
        FileType(id: UInt32(kAudioFileMP2Type), extensions: ["mp2"], mimeTypes: []),
        FileType(id: UInt32(kAudioFileMP1Type), extensions: ["mp1"], mimeTypes: []),
        FileType(id: UInt32(kAudioFileAAC_ADTSType), extensions: ["aac", "adts"], mimeTypes: ["audio/aac", "audio/x-aac"]),
        FileType(id: UInt32(kAudioFileMPEG4Type), extensions: ["mp4"], mimeTypes: ["audio/mp4"]),
        FileType(id: UInt32(kAudioFileM4AType), extensions: ["m4a", "m4r"], mimeTypes: ["audio/x-m4a", "audio/mp4"]),
        FileType(id: UInt32(kAudioFileFLACType), extensions: ["flac"], mimeTypes: ["audio/flac", "audio/x-flac"]),
        FileType(id: AudioFileTypeID.ogg.rawValue, extensions: ["ogg", "oga", "opus"], mimeTypes: ["audio/ogg", "audio/opus"]),
    ]

    /// The types AudioFileCreateWithURL makes.
    static let writable: [UInt32] = [UInt32(kAudioFileWAVEType), UInt32(kAudioFileRF64Type), UInt32(kAudioFileAIFFType), UInt32(kAudioFileAIFCType),
                                     UInt32(kAudioFileCAFType), UInt32(kAudioFileM4AType), UInt32(kAudioFileMPEG4Type)]

    /// The formats a writable type takes.
    static func formats(_ type: UInt32) -> [UInt32] {
        if MP4Writing.isMP4(type) { return [UInt32(kAudioFormatMPEG4AAC), UInt32(kAudioFormatAppleLossless)] }
        guard type == UInt32(kAudioFileCAFType) else { return [UInt32(kAudioFormatLinearPCM)] }
        return [UInt32(kAudioFormatLinearPCM), UInt32(kAudioFormatMPEG4AAC), UInt32(kAudioFormatMPEG4AAC_HE),
                UInt32(kAudioFormatAppleLossless), UInt32(kAudioFormatMPEGLayer3)]
    }

    /// The stream descriptions `type` takes for `format` (rate and channels 0: any), found by
    /// asking the writers' own checks about every packed linear PCM layout.
    static func descriptions(_ type: UInt32, _ format: UInt32) -> [CFormat] {
        guard formats(type).contains(format) else { return [] }
        guard format == UInt32(kAudioFormatLinearPCM) else {
            var f = CFormat()
            f.mFormatID = format
            f.mFramesPerPacket = (try? formatInfo(f).get())?.mFramesPerPacket ?? 0
            return [f]
        }
        var out: [CFormat] = []
        let packed = UInt32(kAudioFormatFlagIsPacked), big = UInt32(kAudioFormatFlagIsBigEndian)
        let kinds: [(flags: UInt32, bits: [UInt32])] = [
            (0, [8]), (UInt32(kAudioFormatFlagIsSignedInteger), [8, 16, 24, 32]), (UInt32(kAudioFormatFlagIsFloat), [32, 64]),
        ]
        for kind in kinds {
            for bits in kind.bits {
                for endian in [0, big] where bits > 8 || endian == 0 {
                    let flags = kind.flags | packed | endian
                    let probe = SFormat(c: CFormat(mSampleRate: 44100, mFormatID: format, mFormatFlags: flags, mBytesPerPacket: bits / 8,
                                                   mFramesPerPacket: 1, mBytesPerFrame: bits / 8, mChannelsPerFrame: 1, mBitsPerChannel: bits, mReserved: 0))
                    guard (try? PCMHeader.check(fileType: type, format: probe)) != nil else { continue }
                    out.append(CFormat(mSampleRate: 0, mFormatID: format, mFormatFlags: flags, mBytesPerPacket: 0, mFramesPerPacket: 1,
                                       mBytesPerFrame: 0, mChannelsPerFrame: 0, mBitsPerChannel: bits, mReserved: 0))
                }
            }
        }
        return out
    }

    /// A new CFArray (+1) of new CFStrings.
    static func array(_ strings: [String]) -> UnsafeRawPointer {
        let items = strings.map { CFStrings.make($0) }
        var pointers: [UnsafeRawPointer?] = items.map { UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()) }
        var callbacks = kCFTypeArrayCallBacks
        let made = CFArrayCreate(nil, &pointers, pointers.count, &callbacks)!
        return UnsafeRawPointer(Unmanaged<CFArray>.passRetained(made).toOpaque())
    }

    /// The value of `id` for `specifier`, in its C layout.
    static func value(_ id: UInt32, _ specifierSize: UInt32, _ specifier: UnsafeMutableRawPointer?) throws(AudioFileFailure) -> [UInt8] {
        func of<T>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
        func list<T>(_ v: [T]) -> [UInt8] { v.withUnsafeBytes { Array($0) } }
        func type() throws(AudioFileFailure) -> FileType {
            guard specifierSize == 4, let specifier else { throw AudioFileFailure(status: kAudioFileBadPropertySizeError, "the specifier is an AudioFileTypeID") }
            let id = specifier.loadUnaligned(as: UInt32.self)
            guard let t = readable.first(where: { $0.id == id }) else {
                throw AudioFileFailure(status: kAudioFileUnsupportedFileTypeError, "file type '\(FourCharCode(rawValue: id))' unknown here")
            }
            return t
        }
        func text() throws(AudioFileFailure) -> String {
            guard specifierSize == UInt32(MemoryLayout<UnsafeRawPointer>.size), let raw = specifier?.loadUnaligned(as: UnsafeRawPointer?.self) else {
                throw AudioFileFailure(status: kAudioFileBadPropertySizeError, "the specifier is a CFStringRef")
            }
            return CFStrings.string(Unmanaged<CFString>.fromOpaque(raw).takeUnretainedValue()).lowercased()
        }
        switch Int(id) {
        case Int(kAudioFileGlobalInfo_ReadableTypes): return list(readable.map(\.id))
        case Int(kAudioFileGlobalInfo_WritableTypes): return list(writable)
        case Int(kAudioFileGlobalInfo_FileTypeName):
            let t = try type()
            return of(UnsafeRawPointer(Unmanaged<CFString>.passRetained(CFStrings.make(fileTypeName(FourCharCode(rawValue: t.id)))).toOpaque()))
        case Int(kAudioFileGlobalInfo_AvailableFormatIDs):
            let t = try type()
            guard writable.contains(t.id) else { throw AudioFileFailure(status: kAudioFileUnsupportedFileTypeError, "not a type written here") }
            return list(formats(t.id))
        case Int(kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat):
            guard specifierSize == 8, let specifier else { throw AudioFileFailure(status: kAudioFileBadPropertySizeError, "the specifier is an AudioFileTypeAndFormatID") }
            let pair = specifier.loadUnaligned(as: AudioFileTypeAndFormatID.self)
            guard writable.contains(pair.mFileType) else { throw AudioFileFailure(status: kAudioFileUnsupportedFileTypeError, "not a type written here") }
            let found = descriptions(pair.mFileType, pair.mFormatID)
            guard !found.isEmpty else { throw AudioFileFailure(status: kAudioFileUnsupportedDataFormatError, "the type does not take that format") }
            return list(found)
        case Int(kAudioFileGlobalInfo_AllExtensions): return of(array(uniqued(readable.flatMap(\.extensions))))
        case Int(kAudioFileGlobalInfo_AllMIMETypes): return of(array(uniqued(readable.flatMap(\.mimeTypes))))
        case Int(kAudioFileGlobalInfo_ExtensionsForType): return of(array(try type().extensions))
        case Int(kAudioFileGlobalInfo_MIMETypesForType): return of(array(try type().mimeTypes))
        case Int(kAudioFileGlobalInfo_TypesForExtension):
            let e = try text()
            return list(readable.filter { $0.extensions.contains(e) }.map(\.id))
        case Int(kAudioFileGlobalInfo_TypesForMIMEType):
            let m = try text()
            return list(readable.filter { $0.mimeTypes.contains(m) }.map(\.id))
        default:
            throw AudioFileFailure(status: kAudioFileUnsupportedPropertyError, "global property '\(FourCharCode(rawValue: id))' not supported")
        }
    }

    /// The CF-valued properties (their size is a pointer's; reading makes a new object).
    static let objects: Set<UInt32> = [
        UInt32(kAudioFileGlobalInfo_FileTypeName), UInt32(kAudioFileGlobalInfo_AllExtensions), UInt32(kAudioFileGlobalInfo_AllMIMETypes),
        UInt32(kAudioFileGlobalInfo_ExtensionsForType), UInt32(kAudioFileGlobalInfo_MIMETypesForType),
    ]

    static func uniqued(_ s: [String]) -> [String] {
        var seen: Set<String> = []
        return s.filter { seen.insert($0).inserted }
    }
}

/// `AudioFileGetGlobalInfoSize`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileGetGlobalInfoSize(_ inPropertyID: UInt32, _ inSpecifierSize: UInt32, _ inSpecifier: UnsafeMutableRawPointer?,
                                          _ outDataSize: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let outDataSize else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        let bytes = try GlobalInfo.value(inPropertyID, inSpecifierSize, inSpecifier)
        if GlobalInfo.objects.contains(inPropertyID) {
            // The value made to learn the size is released again.
            Unmanaged<AnyObject>.fromOpaque(bytes.withUnsafeBytes { $0.load(as: UnsafeRawPointer.self) }).release()
        }
        outDataSize.pointee = UInt32(bytes.count)
    }
}

/// `AudioFileGetGlobalInfo`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileGetGlobalInfo(_ inPropertyID: UInt32, _ inSpecifierSize: UInt32, _ inSpecifier: UnsafeMutableRawPointer?,
                                      _ ioDataSize: UnsafeMutablePointer<UInt32>?, _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioDataSize, let outPropertyData else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        let bytes = try GlobalInfo.value(inPropertyID, inSpecifierSize, inSpecifier)
        let object = GlobalInfo.objects.contains(inPropertyID)
        let room = Int(ioDataSize.pointee)
        if object {
            guard room >= bytes.count else {
                Unmanaged<AnyObject>.fromOpaque(bytes.withUnsafeBytes { $0.load(as: UnsafeRawPointer.self) }).release()
                throw AudioFileFailure(status: kAudioFileBadPropertySizeError, "a CF object takes \(bytes.count) bytes")
            }
        }
        // Arrays: as many whole items as fit (the item is 4 bytes, or 40 for descriptions).
        let item = inPropertyID == UInt32(kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat) ? 40 : 4
        let n = object ? bytes.count : min(bytes.count, room / item * item)
        bytes.withUnsafeBytes { if let b = $0.baseAddress, n > 0 { outPropertyData.copyMemory(from: b, byteCount: n) } }
        ioDataSize.pointee = UInt32(n)
    }
}
