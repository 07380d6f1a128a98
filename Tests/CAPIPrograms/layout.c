/* layout.c — checks every structure of the installed headers against the x86-64 layout the
 * references imply (sizes, offsets). Prints "N passed, N failed"; exits 1 on any failure.
 * Issue 12. */
#include <AudioToolbox/AudioToolbox.h>
#include <CoreAudioTypes/CoreAudioTypes.h>
#include <stddef.h>
#include <stdio.h>

static int passed, failed;
static void check(const char *what, size_t got, size_t want) {
    if (got == want) { passed++; return; }
    failed++;
    printf("FAIL %s: %zu, want %zu\n", what, got, want);
}
#define SIZE(T, n) check("sizeof(" #T ")", sizeof(T), n)
#define OFF(T, f, n) check("offsetof(" #T ", " #f ")", offsetof(T, f), n)

int main(void) {
    SIZE(UInt8, 1); SIZE(SInt16, 2); SIZE(UInt32, 4); SIZE(SInt32, 4); SIZE(UInt64, 8); SIZE(SInt64, 8);
    SIZE(Float32, 4); SIZE(Float64, 8); SIZE(Boolean, 1); SIZE(OSStatus, 4); SIZE(FourCharCode, 4);
    /* LP64, as Apple's headers: longs (issue 22). */
    SIZE(ByteCount, sizeof(long)); SIZE(ItemCount, sizeof(long)); SIZE(ByteOffset, sizeof(long)); SIZE(CFIndex, sizeof(long));
    check("CFIndex is signed", (CFIndex)-1 < 0, 1);
    check("ByteCount is unsigned", (ByteCount)-1 > 0, 1);

    SIZE(AudioStreamBasicDescription, 40);
    OFF(AudioStreamBasicDescription, mSampleRate, 0); OFF(AudioStreamBasicDescription, mFormatID, 8);
    OFF(AudioStreamBasicDescription, mFormatFlags, 12); OFF(AudioStreamBasicDescription, mBytesPerPacket, 16);
    OFF(AudioStreamBasicDescription, mFramesPerPacket, 20); OFF(AudioStreamBasicDescription, mBytesPerFrame, 24);
    OFF(AudioStreamBasicDescription, mChannelsPerFrame, 28); OFF(AudioStreamBasicDescription, mBitsPerChannel, 32);
    OFF(AudioStreamBasicDescription, mReserved, 36);

    SIZE(AudioStreamPacketDescription, 16);
    OFF(AudioStreamPacketDescription, mStartOffset, 0); OFF(AudioStreamPacketDescription, mVariableFramesInPacket, 8);
    OFF(AudioStreamPacketDescription, mDataByteSize, 12);

    SIZE(AudioBuffer, 16); OFF(AudioBuffer, mDataByteSize, 4); OFF(AudioBuffer, mData, 8);
    SIZE(AudioBufferList, 24); OFF(AudioBufferList, mBuffers, 8);
    SIZE(AudioObjectPropertyAddress, 12); OFF(AudioObjectPropertyAddress, mElement, 8);
    SIZE(AudioFileTypeAndFormatID, 8);
    SIZE(AudioConverterPrimeInfo, 8); OFF(AudioConverterPrimeInfo, trailingFrames, 4);
    SIZE(AudioClassDescription, 12); OFF(AudioClassDescription, mSubType, 4); OFF(AudioClassDescription, mManufacturer, 8);

    SIZE(SMPTETime, 24);
    OFF(SMPTETime, mSubframes, 0); OFF(SMPTETime, mSubframeDivisor, 2); OFF(SMPTETime, mCounter, 4);
    OFF(SMPTETime, mType, 8); OFF(SMPTETime, mFlags, 12); OFF(SMPTETime, mHours, 16); OFF(SMPTETime, mMinutes, 18);
    OFF(SMPTETime, mSeconds, 20); OFF(SMPTETime, mFrames, 22);

    SIZE(AudioTimeStamp, 64);
    OFF(AudioTimeStamp, mSampleTime, 0); OFF(AudioTimeStamp, mHostTime, 8); OFF(AudioTimeStamp, mRateScalar, 16);
    OFF(AudioTimeStamp, mWordClockTime, 24); OFF(AudioTimeStamp, mSMPTETime, 32); OFF(AudioTimeStamp, mFlags, 56);
    OFF(AudioTimeStamp, mReserved, 60);

    SIZE(AudioChannelDescription, 20);
    OFF(AudioChannelDescription, mChannelLabel, 0); OFF(AudioChannelDescription, mChannelFlags, 4);
    OFF(AudioChannelDescription, mCoordinates, 8);
    SIZE(AudioChannelLayout, 32);
    OFF(AudioChannelLayout, mChannelLayoutTag, 0); OFF(AudioChannelLayout, mChannelBitmap, 4);
    OFF(AudioChannelLayout, mNumberChannelDescriptions, 8); OFF(AudioChannelLayout, mChannelDescriptions, 12);

    SIZE(AudioQueueBuffer, 56);
    OFF(AudioQueueBuffer, mAudioDataBytesCapacity, 0); OFF(AudioQueueBuffer, mAudioData, 8);
    OFF(AudioQueueBuffer, mAudioDataByteSize, 16); OFF(AudioQueueBuffer, mUserData, 24);
    OFF(AudioQueueBuffer, mPacketDescriptionCapacity, 32); OFF(AudioQueueBuffer, mPacketDescriptions, 40);
    OFF(AudioQueueBuffer, mPacketDescriptionCount, 48);

    SIZE(AudioQueueParameterEvent, 8);
    OFF(AudioQueueParameterEvent, mID, 0); OFF(AudioQueueParameterEvent, mValue, 4);
    SIZE(AudioQueueLevelMeterState, 8);
    OFF(AudioQueueLevelMeterState, mAveragePower, 0); OFF(AudioQueueLevelMeterState, mPeakPower, 4);
    SIZE(AudioQueueChannelAssignment, 16);
    OFF(AudioQueueChannelAssignment, mDeviceUID, 0); OFF(AudioQueueChannelAssignment, mChannelNumber, 8);

    SIZE(AudioFilePacketTableInfo, 16);
    OFF(AudioFilePacketTableInfo, mNumberValidFrames, 0); OFF(AudioFilePacketTableInfo, mPrimingFrames, 8);
    OFF(AudioFilePacketTableInfo, mRemainderFrames, 12);
    SIZE(AudioFramePacketTranslation, 24);
    OFF(AudioFramePacketTranslation, mFrame, 0); OFF(AudioFramePacketTranslation, mPacket, 8);
    OFF(AudioFramePacketTranslation, mFrameOffsetInPacket, 16);
    SIZE(AudioBytePacketTranslation, 24);
    OFF(AudioBytePacketTranslation, mByte, 0); OFF(AudioBytePacketTranslation, mPacket, 8);
    OFF(AudioBytePacketTranslation, mByteOffsetInPacket, 16); OFF(AudioBytePacketTranslation, mFlags, 20);
    SIZE(AudioFormatListItem, 48);
    OFF(AudioFormatListItem, mASBD, 0); OFF(AudioFormatListItem, mChannelLayoutTag, 40);

    /* Four-char codes written as numbers must spell their characters. */
#define FCC(a, b, c, d) (((UInt32)(a) << 24) | ((UInt32)(b) << 16) | ((UInt32)(c) << 8) | (UInt32)(d))
    check("kAudioQueueProperty_IsRunning", kAudioQueueProperty_IsRunning, FCC('a', 'q', 'r', 'n'));
    check("kAudioQueueDeviceProperty_SampleRate", kAudioQueueDeviceProperty_SampleRate, FCC('a', 'q', 's', 'r'));
    check("kAudioQueueProperty_CurrentLevelMeterDB", kAudioQueueProperty_CurrentLevelMeterDB, FCC('a', 'q', 'm', 'd'));
    check("kAudioQueueProperty_ChannelAssignments", kAudioQueueProperty_ChannelAssignments, FCC('a', 'q', 'c', 'a'));
    check("kAudioFormatLinearPCM", kAudioFormatLinearPCM, FCC('l', 'p', 'c', 'm'));
    check("kAudioFormatMPEG4AAC", kAudioFormatMPEG4AAC, FCC('a', 'a', 'c', ' '));
    check("kAudioFormatMPEGLayer3", kAudioFormatMPEGLayer3, FCC('.', 'm', 'p', '3'));
    check("kAudioFileAAC_ADTSType", kAudioFileAAC_ADTSType, FCC('a', 'd', 't', 's'));
    check("kAudioFileStreamProperty_MagicCookieData", kAudioFileStreamProperty_MagicCookieData, FCC('m', 'g', 'i', 'c'));
    check("kAudioFileStreamError_BadPropertySize", (UInt32)kAudioFileStreamError_BadPropertySize, FCC('!', 's', 'i', 'z'));
    check("kAudioFormatUnsupportedDataFormatError", (UInt32)kAudioFormatUnsupportedDataFormatError, 1718449215u);
    check("kAudioQueueErr_InvalidQueueType", (size_t)(-kAudioQueueErr_InvalidQueueType), 66677);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
