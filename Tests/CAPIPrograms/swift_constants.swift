// swift_constants.swift — Swift written as for Apple's platforms, through the installed Clang
// module (issue 22): every constant used without a cast, as the headers give each its Apple type
// (CF_ENUM(Type)). The `let _: Type = constant` lines are the check: they compile only when the
// constant imports with that type (an untyped enum's constant imports as Int). Built with
// `swiftc -I PREFIX/include -L PREFIX/lib -lAudioToolbox`, run with AQSYNC_DEVICE=offline; prints
// "swift constants ok".
import AudioToolbox
import CoreAudio

let _: OSStatus = noErr
let _: OSStatus = kAudio_ParamError
let _: OSStatus = kAudioQueueErr_InvalidBuffer
let _: OSStatus = kAudioQueueErr_InvalidDevice
let _: OSStatus = kAudioFormatUnsupportedDataFormatError
let _: OSStatus = kAudioFileStreamError_UnsupportedFileType
let _: AudioQueuePropertyID = kAudioQueueProperty_IsRunning
let _: AudioQueuePropertyID = kAudioQueueDeviceProperty_SampleRate
let _: AudioQueuePropertyID = kAudioQueueProperty_ChannelAssignments
let _: AudioQueueParameterID = kAudioQueueParam_Volume
let _: OSStatus = kAudioQueueErr_TooManyTaps
let _: AudioQueueProcessingTapFlags = kAudioQueueProcessingTap_PreEffects
let _: AudioQueueProcessingTapFlags = kAudioQueueProcessingTap_EndOfStream
let _: AudioFormatID = kAudioFormatLinearPCM
let _: AudioFormatID = kAudioFormatMPEG4AAC
let _: AudioFormatFlags = kAudioFormatFlagIsFloat
let _: AudioFormatFlags = kAudioFormatFlagsNativeFloatPacked
let _: AudioFormatFlags = kAppleLosslessFormatFlag_16BitSourceData
let _: AudioFileStreamPropertyID = kAudioFileStreamProperty_DataFormat
let _: AudioFileStreamPropertyFlags = kAudioFileStreamPropertyFlag_CacheProperty
let _: AudioFileStreamParseFlags = kAudioFileStreamParseFlag_Discontinuity
let _: AudioFileStreamSeekFlags = kAudioFileStreamSeekFlag_OffsetIsEstimated
let _: AudioFileTypeID = kAudioFileAAC_ADTSType
let _: AudioTimeStampFlags = kAudioTimeStampSampleTimeValid
let _: SMPTETimeType = kSMPTETimeType25
let _: AudioChannelLayoutTag = kAudioChannelLayoutTag_Stereo
let _: AudioChannelLabel = kAudioChannelLabel_Left
let _: AudioChannelBitmap = kAudioChannelBit_Left
let _: AudioChannelFlags = kAudioChannelFlags_Meters
let _: CFRunLoopRunResult = .timedOut  // Core Foundation's own enum (issue 23), as in Apple's Swift

func check(_ status: OSStatus, _ what: String) {
    if status != noErr { print("\(what): \(status)"); exit(1) }
}

var asbd = AudioStreamBasicDescription(
    mSampleRate: 44100, mFormatID: kAudioFormatLinearPCM,
    mFormatFlags: kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked,
    mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 2, mBitsPerChannel: 16, mReserved: 0)
var q: AudioQueueRef?
check(AudioQueueNewOutput(&asbd, { _, _, _ in }, nil, nil, nil, 0, &q), "AudioQueueNewOutput")
var v: UInt32 = 1
var size = UInt32(MemoryLayout<UInt32>.size)
check(AudioQueueGetProperty(q!, kAudioQueueProperty_IsRunning, &v, &size), "AudioQueueGetProperty")
check(AudioQueueSetParameter(q!, kAudioQueueParam_Volume, 0.5), "AudioQueueSetParameter")
var volume: AudioQueueParameterValue = 0
check(AudioQueueGetParameter(q!, kAudioQueueParam_Volume, &volume), "AudioQueueGetParameter")
var format = AudioStreamBasicDescription()
size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
check(AudioQueueGetProperty(q!, kAudioQueueProperty_StreamDescription, &format, &size), "StreamDescription")
// Channel assignments as Swift on Apple's platforms writes them (issue 22): the device's UID from
// CurrentDevice, the channels swapped, read back (each UID a +1 CFString, released).
var device: Unmanaged<CFString>?
size = UInt32(MemoryLayout<Unmanaged<CFString>?>.size)
check(AudioQueueGetProperty(q!, kAudioQueueProperty_CurrentDevice, &device, &size), "CurrentDevice")
let assignments = (UInt32(1)...2).map { AudioQueueChannelAssignment(mDeviceUID: device!, mChannelNumber: 3 - $0) }
check(assignments.withUnsafeBufferPointer {
    AudioQueueSetProperty(q!, kAudioQueueProperty_ChannelAssignments, $0.baseAddress!,
                          UInt32($0.count * MemoryLayout<AudioQueueChannelAssignment>.stride))
}, "set ChannelAssignments")
let got = UnsafeMutablePointer<AudioQueueChannelAssignment>.allocate(capacity: 2)
size = UInt32(2 * MemoryLayout<AudioQueueChannelAssignment>.stride)
check(AudioQueueGetProperty(q!, kAudioQueueProperty_ChannelAssignments, got, &size), "get ChannelAssignments")
let swapped = got[0].mChannelNumber == 2 && got[1].mChannelNumber == 1
    && CFEqual(got[0].mDeviceUID.takeUnretainedValue(), device!.takeUnretainedValue())
got[0].mDeviceUID.release()
got[1].mDeviceUID.release()
got.deallocate()
device?.release()
// A result compared with a result code, as Apple's samples do.
let unknown = AudioQueueGetProperty(q!, 0x7a7a7a7a, &v, &size)
var time = AudioTimeStamp()
time.mFlags = kAudioTimeStampSampleTimeValid | kAudioTimeStampHostTimeValid
check(AudioQueueDispose(q!, true), "AudioQueueDispose")  // Boolean is Bool, as in Apple's Swift (issue 23)
let ok = v == 0 && volume == 0.5 && format.mFormatID == kAudioFormatLinearPCM && swapped
    && format.mFormatFlags & kLinearPCMFormatFlagIsSignedInteger != 0 && unknown == kAudioQueueErr_InvalidProperty
print(ok ? "swift constants ok" : "wrong: running \(v) volume \(volume) format \(format) unknown \(unknown) swapped \(swapped)")
exit(ok ? 0 : 1)
