// Audio Format Services' C functions (AudioToolbox/AudioFormat.h), issue 23:
// kAudioFormatProperty_FormatInfo, which completes a stream description the way recorders ask
// for it, and kAudioFormatProperty_DecodeFormatIDs / EncodeFormatIDs, the formats an
// AudioConverter decodes and encodes here (asked by Apple's ConvertFile). Plain computation:
// any thread, never blocks.
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
    case UInt32(kAudioFormatMPEG4AAC_HE): out.mFramesPerPacket = 2048
    case UInt32(kAudioFormatAppleLossless): out.mFramesPerPacket = 4096
    case UInt32(kAudioFormatMPEGLayer3): out.mFramesPerPacket = 1152
    case UInt32(kAudioFormatOpus): out.mFramesPerPacket = 960
    case UInt32(kAudioFormatFLAC): out.mFramesPerPacket = 0
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
        return [UInt32(kAudioFormatLinearPCM)] + PacketDecoder.decodableFormatIDs().map(\.rawValue)
    case UInt32(kAudioFormatProperty_EncodeFormatIDs):
        return [UInt32(kAudioFormatLinearPCM)] + PacketEncoder.encodableFormatIDs().map(\.rawValue)
    default: return nil
    }
}

/// `AudioFormatGetPropertyInfo`, exported to C: its contract is in `AudioToolbox/AudioFormat.h`.
@c public func AudioFormatGetPropertyInfo(_ inPropertyID: UInt32, _ inSpecifierSize: UInt32, _ inSpecifier: UnsafeRawPointer?,
                                          _ outPropertyDataSize: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let outPropertyDataSize else { return paramError }
    if let ids = formatIDList(inPropertyID) {
        outPropertyDataSize.pointee = UInt32(ids.count * MemoryLayout<UInt32>.size)
        return 0
    }
    guard inPropertyID == UInt32(kAudioFormatProperty_FormatInfo) else { return kAudioFormatUnsupportedPropertyError }
    outPropertyDataSize.pointee = UInt32(MemoryLayout<CFormat>.size)
    return 0
}

/// `AudioFormatGetProperty`, exported to C: its contract is in `AudioToolbox/AudioFormat.h`.
@c public func AudioFormatGetProperty(_ inPropertyID: UInt32, _ inSpecifierSize: UInt32, _ inSpecifier: UnsafeRawPointer?,
                                      _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?, _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioPropertyDataSize, let outPropertyData else { return paramError }
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
