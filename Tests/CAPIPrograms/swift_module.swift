// swift_module.swift — the installed headers as the Clang modules AudioToolbox and CoreAudio
// (issue 12): built with `swiftc -I PREFIX/include`, run with AQSYNC_DEVICE=offline. Renders a
// buffer with an impulse at queue frame 100 offline and prints "swift module ok" when the
// impulse is there and nowhere else.
import AudioToolbox
import CoreAudio

func check(_ status: OSStatus, _ what: String) {
    if status != noErr { print("\(what): \(status)"); exit(1) }
}
var format = AudioStreamBasicDescription(
    mSampleRate: 48000, mFormatID: AudioFormatID(kAudioFormatLinearPCM),
    mFormatFlags: AudioFormatFlags(kAudioFormatFlagsNativeFloatPacked), mBytesPerPacket: 8, mFramesPerPacket: 1,
    mBytesPerFrame: 8, mChannelsPerFrame: 2, mBitsPerChannel: 32, mReserved: 0)
var queue: AudioQueueRef?
check(AudioQueueNewOutput(&format, { _, _, _ in }, nil, nil, nil, 0, &queue), "AudioQueueNewOutput")
var buffer: AudioQueueBufferRef?, render: AudioQueueBufferRef?
check(AudioQueueAllocateBuffer(queue!, 8 * 512, &buffer), "AudioQueueAllocateBuffer")
check(AudioQueueAllocateBuffer(queue!, 8 * 512, &render), "AudioQueueAllocateBuffer")
let samples = buffer!.pointee.mAudioData.bindMemory(to: Float.self, capacity: 1024)
samples.initialize(repeating: 0, count: 1024)
samples[200] = 1
samples[201] = 1
buffer!.pointee.mAudioDataByteSize = 8 * 512
check(AudioQueueEnqueueBuffer(queue!, buffer!, 0, nil), "AudioQueueEnqueueBuffer")
check(AudioQueueSetOfflineRenderFormat(queue!, &format, nil), "AudioQueueSetOfflineRenderFormat")
var time = AudioTimeStamp()
time.mFlags = AudioTimeStampFlags(kAudioTimeStampSampleTimeValid)
check(AudioQueueOfflineRender(queue!, &time, render!, 512), "AudioQueueOfflineRender")
let out = render!.pointee.mAudioData.bindMemory(to: Float.self, capacity: 1024)
let hits = (0..<1024).filter { out[$0] != 0 }
check(AudioQueueDispose(queue!, true), "AudioQueueDispose")  // Boolean is Bool, as in Apple's Swift (issue 23)
print(hits == [200, 201] && MemoryLayout<AudioTimeStamp>.size == 64 ? "swift module ok" : "wrong: \(hits)")
