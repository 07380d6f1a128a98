// swift_audiofile.swift — Audio File Services and the device and format calls from Swift through
// the installed `AudioToolbox` module (issue 23), written as on Apple's systems: a CFURL, the
// file flags as an option set (`.eraseFile`), the permissions as an enum (`.readPermission`),
// FormatInfo, the default device's rate. Writes a second of a ramp into a CAF, reads it back
// and prints "swift audiofile ok" when every sample and property is right. Run offline.
import AudioToolbox
import CoreAudio

func check(_ status: OSStatus, _ what: String) {
    if status != noErr { print("\(what): \(status)"); exit(1) }
}

// The device's rate, as a recorder asks it.
var address = AudioObjectPropertyAddress(
    mSelector: kAudioHardwarePropertyDefaultInputDevice, mScope: kAudioObjectPropertyScopeGlobal, mElement: kAudioObjectPropertyElementMain)
var device = AudioDeviceID(0)
var size = UInt32(MemoryLayout<AudioDeviceID>.size)
check(AudioObjectGetPropertyData(AudioObjectID(kAudioObjectSystemObject), &address, 0, nil, &size, &device), "default device")
address.mSelector = kAudioDevicePropertyNominalSampleRate
var rate = Float64(0)
size = UInt32(MemoryLayout<Float64>.size)
check(AudioObjectGetPropertyData(device, &address, 0, nil, &size, &rate), "nominal rate")

var format = AudioStreamBasicDescription()
format.mFormatID = kAudioFormatLinearPCM
format.mFormatFlags = kAudioFormatFlagIsSignedInteger
format.mSampleRate = rate
format.mChannelsPerFrame = 1
format.mBitsPerChannel = 16
size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
check(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &size, &format), "FormatInfo")

let path = CommandLine.arguments[1]
let url = CFURLCreateFromFileSystemRepresentation(nil, path, path.utf8.count, false)!
var file: AudioFileID?
check(AudioFileCreateWithURL(url, kAudioFileCAFType, &format, .eraseFile, &file), "AudioFileCreateWithURL")
var samples = (0..<Int(rate)).map { Int16(truncatingIfNeeded: $0 * 3) }
var packets = UInt32(samples.count)
check(AudioFileWritePackets(file!, false, packets * 2, nil, 0, &packets, &samples), "AudioFileWritePackets")
check(AudioFileClose(file!), "AudioFileClose")

check(AudioFileOpenURL(url, .readPermission, 0, &file), "AudioFileOpenURL")
var count = UInt64(0)
size = UInt32(MemoryLayout<UInt64>.size)
check(AudioFileGetProperty(file!, kAudioFilePropertyAudioDataPacketCount, &size, &count), "packet count")
var duration = Float64(0)
size = UInt32(MemoryLayout<Float64>.size)
check(AudioFileGetProperty(file!, kAudioFilePropertyEstimatedDuration, &size, &duration), "duration")
var back = [Int16](repeating: 0, count: samples.count)
var bytes = UInt32(back.count * 2), read = UInt32(back.count)
check(AudioFileReadPacketData(file!, false, &bytes, nil, 0, &read, &back), "AudioFileReadPacketData")
check(AudioFileClose(file!), "AudioFileClose")
let ok = format.mBytesPerFrame == 2 && count == UInt64(samples.count) && duration == 1 && read == UInt32(samples.count) && back == samples
print(ok ? "swift audiofile ok" : "wrong: \(format) \(count) \(duration) \(read)")
