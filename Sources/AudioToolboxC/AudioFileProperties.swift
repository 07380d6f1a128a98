// Audio File Services' properties (AudioFileGetPropertyInfo, AudioFileGetProperty,
// AudioFileSetProperty), issue 23: an opened file answers from its parser and what opening it
// counted; a file being written from its format and the bytes written so far.
import AQFileStream
import AQTypes
import CAudioToolbox
import Foundation

extension CAudioFile {
    /// A property's value in its C layout; absent or unknown: kAudioFileUnsupportedPropertyError.
    func propertyBytes(_ id: UInt32) throws(AudioFileFailure) -> [UInt8] {
        func of<T>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
        let absent = AudioFileFailure(status: kAudioFileUnsupportedPropertyError, "property '\(FourCharCode(rawValue: id))' is not in this file or not supported")
        switch kind {
        case .writing(let w):
            switch Int(id) {
            case Int(kAudioFilePropertyFileFormat): return of(w.fileType)
            case Int(kAudioFilePropertyDataFormat): return of(w.format.c)
            case Int(kAudioFilePropertyAudioDataByteCount): return of(UInt64(w.dataBytes))
            case Int(kAudioFilePropertyAudioDataPacketCount): return of(UInt64(w.packetCount))
            case Int(kAudioFilePropertyMaximumPacketSize), Int(kAudioFilePropertyPacketSizeUpperBound):
                return of(w.packets.map { $0.sizes.max() ?? 0 } ?? w.format.bytesPerPacket)
            case Int(kAudioFilePropertyDataOffset): return of(w.dataOffset)
            case Int(kAudioFilePropertyEstimatedDuration): return of(Double(w.frameCount) / w.format.sampleRate)
            case Int(kAudioFilePropertyMagicCookieData):
                guard let cookie = w.packets?.cookie, !cookie.isEmpty else { throw absent }
                return cookie
            case Int(kAudioFilePropertyPacketTableInfo):
                guard let p = w.packets else { throw absent }
                return of(CAudioToolbox.AudioFilePacketTableInfo(
                    mNumberValidFrames: max(0, p.totalFrames - Int64(p.priming) - Int64(p.remainder)), mPrimingFrames: p.priming, mRemainderFrames: p.remainder))
            case Int(kAudioFilePropertyIsOptimized): return of(UInt32(0))
            case Int(kAudioFilePropertyDeferSizeUpdates): return of(UInt32(0))
            case Int(kAudioFilePropertyBitRate) where w.packets == nil: return of(UInt32(w.format.sampleRate * Double(w.format.bytesPerFrame) * 8))
            case Int(kAudioFilePropertySourceBitDepth) where w.packets == nil: return of(Int32(w.format.bitsPerChannel))
            default: throw absent
            }
        case .reading(let r):
            let p = r.parser
            func stream(_ property: AudioFileStreamProperty) throws(AudioFileFailure) -> [UInt8] {
                do { return cBytes(try p.value(of: property)) } catch { throw absent }
            }
            switch Int(id) {
            case Int(kAudioFilePropertyFileFormat): return of(r.fileType)
            case Int(kAudioFilePropertyDataFormat): return of(r.format.c)
            case Int(kAudioFilePropertyFormatList): return try stream(.formatList)
            case Int(kAudioFilePropertyMagicCookieData):
                guard let cookie = p.magicCookie, !cookie.isEmpty else { throw absent }
                return cookie
            case Int(kAudioFilePropertyChannelLayout): return try stream(.channelLayout)
            case Int(kAudioFilePropertyPacketTableInfo): return try stream(.packetTableInfo)
            case Int(kAudioFilePropertyAudioDataByteCount): return of(UInt64(r.dataByteCount))
            case Int(kAudioFilePropertyAudioDataPacketCount): return of(UInt64(r.packetCount))
            case Int(kAudioFilePropertyMaximumPacketSize): return of(r.maximumPacketSize)
            case Int(kAudioFilePropertyPacketSizeUpperBound):
                if let b = try? stream(.packetSizeUpperBound), b.count == 4,
                   b.withUnsafeBytes({ $0.load(as: UInt32.self) }) >= r.maximumPacketSize { return b }
                return of(r.maximumPacketSize)
            case Int(kAudioFilePropertyDataOffset): return of(r.dataOffset)
            case Int(kAudioFilePropertyEstimatedDuration): return of(r.duration)
            case Int(kAudioFilePropertyBitRate): return of(r.bitRate)
            case Int(kAudioFilePropertyIsOptimized): return of(UInt32(1))
            case Int(kAudioFilePropertyAudioTrackCount): return of(UInt32(1))
            case Int(kAudioFilePropertyInfoDictionary): return of(r.infoDictionary())
            case Int(kAudioFilePropertySourceBitDepth):
                guard r.format.formatID.rawValue == UInt32(kAudioFormatLinearPCM) else { throw absent }
                return of(Int32(r.format.bitsPerChannel))
            default: throw absent
            }
        }
    }

    /// The sizes of the translation structures (their values need an input).
    static let translations: Set<UInt32> = [
        UInt32(kAudioFilePropertyPacketToFrame), UInt32(kAudioFilePropertyFrameToPacket),
        UInt32(kAudioFilePropertyPacketToByte), UInt32(kAudioFilePropertyByteToPacket),
    ]
}

extension AudioFileReadState {
    /// kAudioFilePropertyInfoDictionary: a new CFDictionary (+1) of CFStrings — the approximate
    /// duration, the nominal bit rate, linear PCM's bit depth (the tags are not read yet).
    func infoDictionary() -> UnsafeRawPointer {
        var entries: [(String, String)] = [
            ("approximate duration in seconds", String(format: "%.3f", duration)),
            ("nominal bit rate", "\(Int((Double(bitRate) / 1000).rounded())) kbps"),
        ]
        if format.formatID.rawValue == UInt32(kAudioFormatLinearPCM) { entries.append(("source bit depth", "\(format.bitsPerChannel)")) }
        let keys = entries.map { CFStrings.make($0.0) }, values = entries.map { CFStrings.make($0.1) }
        var keyPointers: [UnsafeRawPointer?] = keys.map { UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()) }
        var valuePointers: [UnsafeRawPointer?] = values.map { UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()) }
        var keyCallbacks = kCFTypeDictionaryKeyCallBacks, valueCallbacks = kCFTypeDictionaryValueCallBacks
        let made = CFDictionaryCreate(nil, &keyPointers, &valuePointers, entries.count, &keyCallbacks, &valueCallbacks)!
        return UnsafeRawPointer(Unmanaged<CFDictionary>.passRetained(made).toOpaque())
    }

    /// The playable frames (the packet table's valid frames when there is one) over the rate.
    var duration: Double {
        guard format.sampleRate > 0 else { return 0 }
        if let t = parser.packetTableInfo, t.numberValidFrames > 0 { return Double(t.numberValidFrames) / format.sampleRate }
        return Double(totalFrames) / format.sampleRate
    }

    /// Bits per second: the format's for linear PCM, else the audio data's over the duration.
    var bitRate: UInt32 {
        if format.formatID.rawValue == UInt32(kAudioFormatLinearPCM) {
            return UInt32(clamping: Int64(format.sampleRate * Double(format.bytesPerFrame) * 8))
        }
        // Bytes × 8 × rate / frames, in integers (truncated, as ffmpeg computes it).
        let bytes = packets.isEmpty ? dataByteCount : Int64(packets.reduce(0) { $0 + Int($1.dataByteSize) })
        guard totalFrames > 0, format.sampleRate > 0 else { return 0 }
        let (product, overflow) = (bytes * 8).multipliedReportingOverflow(by: Int64(format.sampleRate))
        return UInt32(clamping: overflow ? Int64(Double(bytes) * 8 * format.sampleRate / Double(totalFrames)) : product / totalFrames)
    }
}

/// `AudioFileGetPropertyInfo`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileGetPropertyInfo(_ inAudioFile: OpaquePointer?, _ inPropertyID: UInt32, _ outDataSize: UnsafeMutablePointer<UInt32>?,
                                        _ isWritable: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        if CAudioFile.translations.contains(inPropertyID) {
            guard case .reading = f.kind else { throw AudioFileFailure(status: kAudioFileUnsupportedPropertyError, "translations of a file being written") }
            outDataSize?.pointee = 24
            isWritable?.pointee = 0
            return
        }
        if inPropertyID == UInt32(kAudioFilePropertyInfoDictionary), case .reading = f.kind {
            // A CFDictionaryRef; made when it is read.
            outDataSize?.pointee = UInt32(MemoryLayout<UnsafeRawPointer>.size)
            isWritable?.pointee = 0
            return
        }
        let bytes = try f.propertyBytes(inPropertyID)
        outDataSize?.pointee = UInt32(bytes.count)
        // What AudioFileSetProperty takes (until issue 23 only DeferSizeUpdates said so, and
        // Apple's ConvertFile, which sets the packet table only when it is writable, left it out).
        var writable = inPropertyID == UInt32(kAudioFilePropertyDeferSizeUpdates)
        if case .writing(let w) = f.kind, w.packets != nil {
            writable = writable || inPropertyID == UInt32(kAudioFilePropertyMagicCookieData) || inPropertyID == UInt32(kAudioFilePropertyPacketTableInfo)
        }
        isWritable?.pointee = writable ? 1 : 0
    }
}

/// `AudioFileGetProperty`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileGetProperty(_ inAudioFile: OpaquePointer?, _ inPropertyID: UInt32, _ ioDataSize: UnsafeMutablePointer<UInt32>?,
                                    _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioDataSize, let outPropertyData else { return paramError }
    return withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        let size = Int(ioDataSize.pointee)
        if CAudioFile.translations.contains(inPropertyID) {
            guard case .reading(let r) = f.kind else { throw AudioFileFailure(status: kAudioFileUnsupportedPropertyError, "translations of a file being written") }
            guard size >= 24 else { throw AudioFileFailure(status: kAudioFileBadPropertySizeError, "a translation takes 24 bytes") }
            try translate(r.parser, inPropertyID, outPropertyData)
            ioDataSize.pointee = 24
            return
        }
        if inPropertyID == UInt32(kAudioFilePropertyInfoDictionary) && size < MemoryLayout<UnsafeRawPointer>.size {
            throw AudioFileFailure(status: kAudioFileBadPropertySizeError, "a CFDictionaryRef")  // (before one is made)
        }
        try copyProperty(try f.propertyBytes(inPropertyID), to: outPropertyData, size: ioDataSize, tooSmall: kAudioFileBadPropertySizeError)
    }
}

/// The four translations, through the parser (its answers for the whole file), as Audio File
/// Stream Services answers them (`translate` in AudioFileStreamC.swift; the IDs are the same).
func translate(_ parser: AudioFileStream, _ id: UInt32, _ data: UnsafeMutableRawPointer) throws(AudioFileFailure) {
    guard let property = AudioFileStreamProperty(rawValue: id) else {
        throw AudioFileFailure(status: kAudioFileUnsupportedPropertyError, "not a translation")
    }
    do {
        try translate(parser, property, data)
    } catch {
        throw AudioFileFailure(status: error.code, "translation: \(error)")
    }
}

/// `AudioFileSetProperty`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileSetProperty(_ inAudioFile: OpaquePointer?, _ inPropertyID: UInt32, _ inDataSize: UInt32,
                                    _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    guard inPropertyData != nil else { return paramError }
    return withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        if inPropertyID == UInt32(kAudioFilePropertyDeferSizeUpdates) {
            guard inDataSize == 4 else { throw AudioFileFailure(status: kAudioFileBadPropertySizeError, "a UInt32") }
            return  // sizes are written at AudioFileOptimize and AudioFileClose in any case
        }
        if case .writing(let w) = f.kind, w.packets != nil {
            if inPropertyID == UInt32(kAudioFilePropertyMagicCookieData) {
                try w.setCookie(Array(UnsafeRawBufferPointer(start: inPropertyData, count: Int(inDataSize))))
                return
            }
            if inPropertyID == UInt32(kAudioFilePropertyPacketTableInfo) {
                // Priming and remainder frames (the valid frames follow from them at close).
                guard inDataSize == 16 else { throw AudioFileFailure(status: kAudioFileBadPropertySizeError, "an AudioFilePacketTableInfo") }
                let t = inPropertyData!.loadUnaligned(as: CAudioToolbox.AudioFilePacketTableInfo.self)
                guard t.mPrimingFrames >= 0, t.mRemainderFrames >= 0 else {
                    throw AudioFileFailure(status: kAudioFileInvalidPacketOffsetError, "negative priming or remainder frames")
                }
                w.packets!.priming = t.mPrimingFrames
                w.packets!.remainder = t.mRemainderFrames
                return
            }
        }
        if inPropertyID == UInt32(kAudioFilePropertyInfoDictionary) {
            throw AudioFileFailure(status: kAudioFileOperationNotSupportedError, "the info dictionary cannot be set here")
        }
        _ = try f.propertyBytes(inPropertyID)  // unknown: 'pty?'
        throw AudioFileFailure(status: kAudioFileOperationNotSupportedError, "'\(FourCharCode(rawValue: inPropertyID))' cannot be set here")
    }
}
