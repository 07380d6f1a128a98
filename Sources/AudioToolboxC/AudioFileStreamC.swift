// Audio File Stream Services' C functions (AudioToolbox/AudioFileStream.h) on AQFileStream.
// Issue 12. A stream is used from one thread at a time (the parser is not thread-safe); its
// callbacks run on the thread parsing, inside AudioFileStreamParseBytes.
import AQFileStream
import AQTypes
import CAudioToolbox
import Foundation

/// What an `AudioFileStreamID` points to. Used from one thread at a time.
final class CStream {
    var parser: AudioFileStream?
    let clientData: UnsafeMutableRawPointer?
    let listener: AudioFileStream_PropertyListenerProc
    let packets: AudioFileStream_PacketsProc
    /// Scratch for the descriptions handed to the packets callback (C needs a mutable pointer).
    var descriptions: [CPacketDescription] = []

    init(clientData: UnsafeMutableRawPointer?, listener: AudioFileStream_PropertyListenerProc, packets: AudioFileStream_PacketsProc) {
        self.clientData = clientData
        self.listener = listener
        self.packets = packets
    }
    var ref: AudioFileStreamID { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }
}

enum Streams {
    static let lock = NSLock()
    nonisolated(unsafe) static var live: Set<UnsafeMutableRawPointer> = []
    static func get(_ id: AudioFileStreamID?) -> CStream? {
        guard let id else { return nil }
        let p = UnsafeMutableRawPointer(id)
        guard lock.withLock({ live.contains(p) }) else { return nil }
        return Unmanaged<CStream>.fromOpaque(p).takeUnretainedValue()
    }
}

@inline(__always)
func streamStatus(_ id: AudioFileStreamID?, _ body: (CStream, AudioFileStream) throws(AudioFileStreamError) -> Void) -> OSStatus {
    guard let s = Streams.get(id), let parser = s.parser else { return paramError }
    do {
        try body(s, parser)
        return 0
    } catch {
        return error.code
    }
}

/// `AudioFileStreamOpen`, exported to C: its contract is in `AudioToolbox/AudioFileStream.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioFileStreamOpen(
    _ inClientData: UnsafeMutableRawPointer?, _ inPropertyListenerProc: AudioFileStream_PropertyListenerProc?,
    _ inPacketsProc: AudioFileStream_PacketsProc?, _ inFileTypeHint: UInt32,
    _ outAudioFileStream: UnsafeMutablePointer<AudioFileStreamID?>?
) -> OSStatus {
    guard let inPropertyListenerProc, let inPacketsProc, let outAudioFileStream else { return paramError }
    let s = CStream(clientData: inClientData, listener: inPropertyListenerProc, packets: inPacketsProc)
    do {
        s.parser = try AudioFileStream(
            fileTypeHint: inFileTypeHint == 0 ? nil : FourCharCode(rawValue: inFileTypeHint),
            propertyListener: { [unowned s] _, property, flags in
                var f = flags.rawValue
                s.listener(s.clientData, s.ref, property.rawValue, &f)
                flags = AudioFileStreamPropertyFlags(rawValue: f)
            },
            packets: { [unowned s] data, count, descriptions in
                if let descriptions {
                    s.descriptions.removeAll(keepingCapacity: true)
                    for d in descriptions {
                        s.descriptions.append(CPacketDescription(
                            mStartOffset: d.startOffset, mVariableFramesInPacket: d.variableFramesInPacket, mDataByteSize: d.dataByteSize))
                    }
                    s.descriptions.withUnsafeMutableBufferPointer {
                        s.packets(s.clientData, UInt32(data.count), UInt32(count), data.baseAddress, $0.baseAddress)
                    }
                } else {
                    s.packets(s.clientData, UInt32(data.count), UInt32(count), data.baseAddress, nil)
                }
            })
    } catch {
        return error.code
    }
    let p = Unmanaged.passRetained(s).toOpaque()
    Streams.lock.withLock { _ = Streams.live.insert(p) }
    outAudioFileStream.pointee = OpaquePointer(p)
    return 0
}

/// `AudioFileStreamParseBytes`, exported to C: its contract is in `AudioToolbox/AudioFileStream.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioFileStreamParseBytes(_ inAudioFileStream: AudioFileStreamID?, _ inDataByteSize: UInt32, _ inData: UnsafeRawPointer?, _ inFlags: UInt32) -> OSStatus {
    guard inData != nil || inDataByteSize == 0 else { return paramError }
    return streamStatus(inAudioFileStream) { _, parser throws(AudioFileStreamError) in
        try parser.parse(UnsafeRawBufferPointer(start: inData, count: Int(inDataByteSize)), flags: AudioFileStreamParseFlags(rawValue: inFlags))
    }
}

/// `AudioFileStreamSeek`, exported to C: its contract is in `AudioToolbox/AudioFileStream.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioFileStreamSeek(_ inAudioFileStream: AudioFileStreamID?, _ inPacketOffset: Int64, _ outDataByteOffset: UnsafeMutablePointer<Int64>?, _ ioFlags: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let outDataByteOffset, let ioFlags else { return paramError }
    return streamStatus(inAudioFileStream) { _, parser throws(AudioFileStreamError) in
        let (offset, flags) = try parser.seek(toPacket: inPacketOffset)
        // Apple's parser answers the offset from the start of the audio data; players
        // (AudioStreamer, StreamingKit) add kAudioFileStreamProperty_DataOffset themselves.
        // The parser's seek answers the file offset: the same data offset is taken off, so
        // outDataByteOffset + DataOffset is exactly where the packet starts in the file.
        guard case .int64(let dataOffset) = try parser.value(of: .dataOffset) else {
            throw AudioFileStreamError.unspecifiedError
        }
        outDataByteOffset.pointee = offset - dataOffset
        ioFlags.pointee = flags.rawValue
    }
}

/// A property's value in its C layout.
func cBytes(_ value: AudioFileStreamPropertyValue) -> [UInt8] {
    func of<T>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
    switch value {
    case .uint32(let v): return of(v)
    case .uint64(let v): return of(v)
    case .int64(let v): return of(v)
    case .float64(let v): return of(v)
    case .dataFormat(let f): return of(f.c)
    case .formatList(let items):
        return items.flatMap { of(CAudioToolbox.AudioFormatListItem(mASBD: $0.format.c, mChannelLayoutTag: $0.channelLayoutTag)) }
    case .bytes(let b): return b
    case .channelLayout(let l): return l.cBytes
    case .packetTableInfo(let t):
        return of(CAudioToolbox.AudioFilePacketTableInfo(
            mNumberValidFrames: t.numberValidFrames, mPrimingFrames: t.primingFrames, mRemainderFrames: t.remainderFrames))
    }
}

func knownProperty(_ id: UInt32) throws(AudioFileStreamError) -> AudioFileStreamProperty {
    guard let p = AudioFileStreamProperty(rawValue: id) else { throw AudioFileStreamError.unsupportedProperty }
    return p
}

/// `AudioFileStreamGetPropertyInfo`, exported to C: its contract is in `AudioToolbox/AudioFileStream.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioFileStreamGetPropertyInfo(_ inAudioFileStream: AudioFileStreamID?, _ inPropertyID: UInt32, _ outPropertyDataSize: UnsafeMutablePointer<UInt32>?, _ outWritable: UnsafeMutablePointer<UInt8>?) -> OSStatus {
    streamStatus(inAudioFileStream) { _, parser throws(AudioFileStreamError) in
        let info = try parser.propertyInfo(try knownProperty(inPropertyID))
        outPropertyDataSize?.pointee = UInt32(info.size)
        outWritable?.pointee = info.isWritable ? 1 : 0
    }
}

/// `AudioFileStreamGetProperty`, exported to C: its contract is in `AudioToolbox/AudioFileStream.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioFileStreamGetProperty(_ inAudioFileStream: AudioFileStreamID?, _ inPropertyID: UInt32, _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?, _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioPropertyDataSize, let outPropertyData else { return paramError }
    return streamStatus(inAudioFileStream) { _, parser throws(AudioFileStreamError) in
        let property = try knownProperty(inPropertyID)
        let size = Int(ioPropertyDataSize.pointee)
        switch property {
        case .packetToFrame, .frameToPacket, .packetToByte, .byteToPacket:
            guard size == 24 else { throw AudioFileStreamError.badPropertySize }
            try translate(parser, property, outPropertyData)
        default:
            let bytes = cBytes(try parser.value(of: property))
            // Variable-size values (cookie, format list, layout) may be read into a larger
            // buffer; fixed-size ones must be asked for with their exact size.
            let variable = property == .magicCookieData || property == .formatList || property == .channelLayout
            guard variable ? size >= bytes.count : size == bytes.count else { throw AudioFileStreamError.badPropertySize }
            bytes.withUnsafeBytes { outPropertyData.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            ioPropertyDataSize.pointee = UInt32(bytes.count)
        }
    }
}

/// The four packet/frame/byte translations (24-byte C structures, the input field read from
/// `data` and the answer written back), through the parser; Audio File Services' properties of
/// the same IDs use them too.
func translate(_ parser: AudioFileStream, _ property: AudioFileStreamProperty, _ data: UnsafeMutableRawPointer) throws(AudioFileStreamError) {
    switch property {
    case .packetToFrame, .frameToPacket:
        var t = data.load(as: CAudioToolbox.AudioFramePacketTranslation.self)
        if property == .packetToFrame {
            t.mFrame = try parser.frame(forPacket: t.mPacket)
        } else {
            let r = try parser.packet(forFrame: t.mFrame)
            t.mPacket = r.packet
            t.mFrameOffsetInPacket = r.frameOffsetInPacket
        }
        data.storeBytes(of: t, as: CAudioToolbox.AudioFramePacketTranslation.self)
    case .packetToByte, .byteToPacket:
        var t = data.load(as: CAudioToolbox.AudioBytePacketTranslation.self)
        let r = property == .packetToByte ? try parser.byte(forPacket: t.mPacket) : try parser.packet(forByte: t.mByte)
        if property == .packetToByte { t.mByte = r.byte } else {
            t.mPacket = r.packet
            t.mByteOffsetInPacket = r.byteOffsetInPacket
        }
        t.mFlags = r.isEstimate ? UInt32(kBytePacketTranslationFlag_IsEstimate) : 0
        data.storeBytes(of: t, as: CAudioToolbox.AudioBytePacketTranslation.self)
    default:
        throw AudioFileStreamError.unsupportedProperty
    }
}

/// `AudioFileStreamSetProperty`, exported to C: its contract is in `AudioToolbox/AudioFileStream.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioFileStreamSetProperty(_ inAudioFileStream: AudioFileStreamID?, _ inPropertyID: UInt32, _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    streamStatus(inAudioFileStream) { _, parser throws(AudioFileStreamError) in
        let property = try knownProperty(inPropertyID)
        try parser.setValue(.bytes(Array(UnsafeRawBufferPointer(start: inPropertyData, count: Int(inPropertyDataSize)))), of: property)
    }
}

/// `AudioFileStreamClose`, exported to C: its contract is in `AudioToolbox/AudioFileStream.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioFileStreamClose(_ inAudioFileStream: AudioFileStreamID?) -> OSStatus {
    guard let s = Streams.get(inAudioFileStream) else { return paramError }
    do {
        try s.parser?.close()
    } catch {
        return error.code  // closing from a callback: 'nope', the stream stays open
    }
    s.parser = nil
    let p = UnsafeMutableRawPointer(inAudioFileStream!)
    Streams.lock.withLock { _ = Streams.live.remove(p) }
    Unmanaged<CStream>.fromOpaque(p).release()
    return 0
}
