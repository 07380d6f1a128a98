// Audio Format Services' C functions (AudioToolbox/AudioFormat.h), issue 23:
// kAudioFormatProperty_FormatInfo, which completes a stream description the way recorders ask
// for it; kAudioFormatProperty_FormatList and FirstPlayableFormatFromList (issue 23); and
// kAudioFormatProperty_DecodeFormatIDs / EncodeFormatIDs, the formats an AudioConverter decodes
// and encodes here (asked by Apple's ConvertFile). Plain computation: any thread, never blocks.
import AQConvert
import AQTypes
import CAudioToolbox
import Foundation

/// The description `f` completed (FormatInfo), or the result code refusing it.
func formatInfo(_ f: CFormat) -> Result<CFormat, AudioFileFailure> {
    var out = f
    switch f.mFormatID {
    case UInt32(kAudioFormatLinearPCM):
        guard f.mBitsPerChannel > 0, f.mChannelsPerFrame > 0 else {
            return .failure(AudioFileFailure(status: kAudioFormatUnsupportedDataFormatError, "linear PCM needs its bits and channels"))
        }
        let bytes = (f.mBitsPerChannel + 7) / 8
        let nonInterleaved = f.mFormatFlags & UInt32(kAudioFormatFlagIsNonInterleaved) != 0
        out.mBytesPerFrame = nonInterleaved ? bytes : bytes * f.mChannelsPerFrame
        out.mFramesPerPacket = 1
        out.mBytesPerPacket = out.mBytesPerFrame
        if f.mBitsPerChannel % 8 == 0 { out.mFormatFlags |= UInt32(kAudioFormatFlagIsPacked) }
    case UInt32(kAudioFormatMPEG4AAC): out.mFramesPerPacket = 1024
    case UInt32(kAudioFormatMPEG4AAC_HE), UInt32(kAudioFormatMPEG4AAC_HE_V2): out.mFramesPerPacket = 2048
    case UInt32(kAudioFormatMPEGLayer1): out.mFramesPerPacket = 384
    case UInt32(kAudioFormatMPEGLayer2): out.mFramesPerPacket = 1152
    case UInt32(kAudioFormatAppleLossless): out.mFramesPerPacket = 4096
    case UInt32(kAudioFormatMPEGLayer3): out.mFramesPerPacket = 1152
    case UInt32(kAudioFormatOpus): out.mFramesPerPacket = 960
    case UInt32(kAudioFormatFLAC): out.mFramesPerPacket = 0
    case UInt32(kAudioFormatAppleIMA4):
        // Constant-size packets: 64 frames, a 34-byte block per channel.
        guard f.mChannelsPerFrame > 0 else {
            return .failure(AudioFileFailure(status: kAudioFormatUnsupportedDataFormatError, "Apple IMA4 needs its channel count"))
        }
        out.mFormatFlags = 0
        out.mFramesPerPacket = 64
        out.mBytesPerPacket = 34 * f.mChannelsPerFrame
        out.mBytesPerFrame = 0
        out.mBitsPerChannel = 0
        return .success(out)
    default:
        return .failure(AudioFileFailure(status: kAudioFormatUnsupportedDataFormatError, "format '\(FourCharCode(rawValue: f.mFormatID))' unknown here"))
    }
    if f.mFormatID != UInt32(kAudioFormatLinearPCM) {
        out.mBytesPerPacket = 0
        out.mBytesPerFrame = 0
        if f.mFormatID != UInt32(kAudioFormatAppleLossless) && f.mFormatID != UInt32(kAudioFormatFLAC) { out.mBitsPerChannel = 0 }
    }
    return .success(out)
}

/// The format IDs of DecodeFormatIDs or EncodeFormatIDs (linear PCM first: a converter takes it
/// in and gives it out), nil for another property.
func formatIDList(_ property: UInt32) -> [UInt32]? {
    switch property {
    case UInt32(kAudioFormatProperty_DecodeFormatIDs):
        return [UInt32(kAudioFormatLinearPCM), UInt32(kAudioFormatULaw), UInt32(kAudioFormatALaw)] + PacketDecoder.decodableFormatIDs().map(\.rawValue)
    case UInt32(kAudioFormatProperty_EncodeFormatIDs):
        return [UInt32(kAudioFormatLinearPCM)] + PacketEncoder.encodableFormatIDs().map(\.rawValue)
    default: return nil
    }
}

/// `AudioFormatGetPropertyInfo`, exported to C: its contract is in `AudioToolbox/AudioFormat.h`.
@c public func AudioFormatGetPropertyInfo(_ inPropertyID: UInt32, _ inSpecifierSize: UInt32, _ inSpecifier: UnsafeRawPointer?,
                                          _ outPropertyDataSize: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let outPropertyDataSize else { return paramError }
    if inPropertyID == UInt32(kAudioFormatProperty_FormatList) {
        guard let list = formatList(inSpecifierSize, inSpecifier) else { return kAudioFormatBadSpecifierSizeError }
        outPropertyDataSize.pointee = UInt32(list.count * MemoryLayout<CAudioToolbox.AudioFormatListItem>.stride)
        return 0
    }
    if inPropertyID == UInt32(kAudioFormatProperty_FirstPlayableFormatFromList) {
        outPropertyDataSize.pointee = 4
        return 0
    }
    if let ids = formatIDList(inPropertyID) {
        outPropertyDataSize.pointee = UInt32(ids.count * MemoryLayout<UInt32>.size)
        return 0
    }
    guard inPropertyID == UInt32(kAudioFormatProperty_FormatInfo) else { return kAudioFormatUnsupportedPropertyError }
    outPropertyDataSize.pointee = UInt32(MemoryLayout<CFormat>.size)
    return 0
}

/// kAudioFormatProperty_FirstPlayableFormatFromList: the index of the first item an output
/// queue plays (a decodable compressed format, or linear PCM / G.711 the deinterleaver takes).
func firstPlayable(_ size: UInt32, _ specifier: UnsafeRawPointer?) -> Result<UInt32, AudioFileFailure> {
    let stride = MemoryLayout<CAudioToolbox.AudioFormatListItem>.stride
    guard let specifier, size > 0, Int(size) % stride == 0 else {
        return .failure(AudioFileFailure(status: kAudioFormatBadSpecifierSizeError, "not a list of AudioFormatListItem"))
    }
    for k in 0..<(Int(size) / stride) {
        let f = SFormat(c: specifier.loadUnaligned(fromByteOffset: k * stride, as: CAudioToolbox.AudioFormatListItem.self).mASBD)
        if PacketDecoder.canDecode(f) {
            if (try? PacketDecoder.validate(f)) != nil { return .success(UInt32(k)) }
        } else if (try? PCMDeinterleaver(format: f)) != nil {
            return .success(UInt32(k))
        }
    }
    return .failure(AudioFileFailure(status: kAudioFormatUnsupportedDataFormatError, "no playable format in the list"))
}

/// kAudioFormatProperty_FormatList's items for an AudioFormatInfo specifier (nil: a specifier
/// of the wrong size). AAC with a cookie: the HE layers first (AACStreamConfig.formatList).
func formatList(_ size: UInt32, _ specifier: UnsafeRawPointer?) -> [CAudioToolbox.AudioFormatListItem]? {
    guard let specifier, Int(size) >= MemoryLayout<AudioFormatInfo>.size else { return nil }
    let info = specifier.loadUnaligned(as: AudioFormatInfo.self)
    let f = info.mASBD
    func tag(_ n: UInt32) -> UInt32 {
        n == 1 ? AQTypes.AudioChannelLayoutTag.mono : n == 2 ? AQTypes.AudioChannelLayoutTag.stereo : (0xFFFF << 16) | n
    }
    let aac = [UInt32(kAudioFormatMPEG4AAC), UInt32(kAudioFormatMPEG4AAC_HE), UInt32(kAudioFormatMPEG4AAC_HE_V2)]
    if aac.contains(f.mFormatID), let cookie = info.mMagicCookie, info.mMagicCookieSize > 0,
       let asc = PacketDecoder.audioSpecificConfig(fromCookie: Array(UnsafeRawBufferPointer(start: cookie, count: Int(info.mMagicCookieSize)))),
       let config = AACStreamConfig(audioSpecificConfig: asc)
    {
        let cc = config.channelConfiguration
        let channels: UInt32 = (1...6).contains(cc) ? UInt32(cc) : cc == 7 ? 8 : max(f.mChannelsPerFrame, 1)
        let core = SFormat(
            sampleRate: Double(config.coreSampleRate), formatID: AudioFormatID.mpeg4AAC,
            formatFlags: AQTypes.AudioFormatFlags(rawValue: UInt32(config.coreObjectType)), bytesPerPacket: 0,
            framesPerPacket: 1024, bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 0)
        return config.formatList(core: core, coreTag: tag(channels)).map {
            CAudioToolbox.AudioFormatListItem(mASBD: $0.format.c, mChannelLayoutTag: $0.channelLayoutTag)
        }
    }
    return [CAudioToolbox.AudioFormatListItem(mASBD: f, mChannelLayoutTag: tag(f.mChannelsPerFrame))]
}

/// `AudioFormatGetProperty`, exported to C: its contract is in `AudioToolbox/AudioFormat.h`.
@c public func AudioFormatGetProperty(_ inPropertyID: UInt32, _ inSpecifierSize: UInt32, _ inSpecifier: UnsafeRawPointer?,
                                      _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?, _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioPropertyDataSize, let outPropertyData else { return paramError }
    if inPropertyID == UInt32(kAudioFormatProperty_FormatList) {
        guard let list = formatList(inSpecifierSize, inSpecifier) else { return kAudioFormatBadSpecifierSizeError }
        let stride = MemoryLayout<CAudioToolbox.AudioFormatListItem>.stride
        let n = min(list.count, Int(ioPropertyDataSize.pointee) / stride)
        guard n > 0 else { return kAudioFormatBadPropertySizeError }
        for k in 0..<n { outPropertyData.storeBytes(of: list[k], toByteOffset: k * stride, as: CAudioToolbox.AudioFormatListItem.self) }
        ioPropertyDataSize.pointee = UInt32(n * stride)
        return 0
    }
    if inPropertyID == UInt32(kAudioFormatProperty_FirstPlayableFormatFromList) {
        guard ioPropertyDataSize.pointee >= 4 else { return kAudioFormatBadPropertySizeError }
        return fileStatus { () throws(AudioFileFailure) in
            outPropertyData.storeBytes(of: try firstPlayable(inSpecifierSize, inSpecifier).get(), as: UInt32.self)
            ioPropertyDataSize.pointee = 4
        }
    }
    if let ids = formatIDList(inPropertyID) {
        // As many IDs as the size holds; the size set to the bytes written.
        let n = min(ids.count, Int(ioPropertyDataSize.pointee) / MemoryLayout<UInt32>.size)
        for i in 0..<n { outPropertyData.storeBytes(of: ids[i], toByteOffset: i * 4, as: UInt32.self) }
        ioPropertyDataSize.pointee = UInt32(n * MemoryLayout<UInt32>.size)
        return 0
    }
    guard inPropertyID == UInt32(kAudioFormatProperty_FormatInfo) else { return kAudioFormatUnsupportedPropertyError }
    guard ioPropertyDataSize.pointee >= UInt32(MemoryLayout<CFormat>.size) else { return kAudioFormatBadPropertySizeError }
    return fileStatus { () throws(AudioFileFailure) in
        let filled = try formatInfo(outPropertyData.loadUnaligned(as: CFormat.self)).get()
        outPropertyData.storeBytes(of: filled, as: CFormat.self)
        ioPropertyDataSize.pointee = UInt32(MemoryLayout<CFormat>.size)
    }
}
