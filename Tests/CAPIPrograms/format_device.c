/* format_device.c — issue 23, offline (AQSYNC_DEVICE=offline, AQSYNC_SAMPLE_RATE=44100): what a
 * recorder asks before it records — AudioFormatGetProperty(kAudioFormatProperty_FormatInfo) to
 * complete a format, the default input device and its nominal sample rate (AudioObject… and
 * their AudioHardwareService… names), and a queue's converter properties
 * (kAudioConverterCurrentOutputStreamDescription, kAudioConverterCompressionMagicCookie) — with
 * the result codes. Prints "N passed, M failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static void input(void *u, AudioQueueRef q, AudioQueueBufferRef b, const AudioTimeStamp *t, UInt32 n, const AudioStreamPacketDescription *d) {
    (void)u; (void)q; (void)b; (void)t; (void)n; (void)d;
}
static void output(void *u, AudioQueueRef q, AudioQueueBufferRef b) { (void)u; (void)q; (void)b; }

int main(void) {
    /* FormatInfo. */
    AudioStreamBasicDescription f;
    memset(&f, 0, sizeof f);
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kAudioFormatFlagIsSignedInteger;
    f.mBitsPerChannel = 24;
    f.mChannelsPerFrame = 2;
    f.mSampleRate = 48000;
    UInt32 size = sizeof f;
    EXPECT(AudioFormatGetPropertyInfo(kAudioFormatProperty_FormatInfo, 0, NULL, &size) == noErr && size == sizeof f, "info size");
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, NULL, &size, &f) == noErr && f.mBytesPerFrame == 6
           && f.mBytesPerPacket == 6 && f.mFramesPerPacket == 1 && (f.mFormatFlags & kAudioFormatFlagIsPacked), "linear PCM filled: %u %u", f.mBytesPerFrame, f.mBytesPerPacket);
    memset(&f, 0, sizeof f);
    f.mFormatID = kAudioFormatMPEG4AAC;
    f.mChannelsPerFrame = 2;
    f.mSampleRate = 44100;
    size = sizeof f;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, NULL, &size, &f) == noErr && f.mFramesPerPacket == 1024
           && f.mBytesPerPacket == 0 && f.mSampleRate == 44100, "AAC filled: %u frames a packet", f.mFramesPerPacket);
    f.mFormatID = kAudioFormatAppleLossless;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, NULL, &size, &f) == noErr && f.mFramesPerPacket == 4096, "ALAC");
    memset(&f, 0, sizeof f);
    f.mFormatID = kAudioFormatAppleIMA4;
    f.mChannelsPerFrame = 2;
    f.mSampleRate = 44100;
    f.mBitsPerChannel = 16;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, NULL, &size, &f) == noErr && f.mFramesPerPacket == 64
           && f.mBytesPerPacket == 68 && f.mBytesPerFrame == 0 && f.mBitsPerChannel == 0 && f.mFormatFlags == 0,
           "IMA4 filled: %u bytes and %u frames a packet", f.mBytesPerPacket, f.mFramesPerPacket);
    f.mFormatID = 0x7a7a7a7a;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, NULL, &size, &f) == kAudioFormatUnsupportedDataFormatError, "unknown format");
    size = 8;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, NULL, &size, &f) == kAudioFormatBadPropertySizeError, "short size");
    size = sizeof f;
    EXPECT(AudioFormatGetProperty(0x7a7a7a7a, 0, NULL, &size, &f) == kAudioFormatUnsupportedPropertyError, "unknown property");

    /* The default input device and its rate, as Learning Core Audio's recorder asks. */
    AudioObjectPropertyAddress a = {kAudioHardwarePropertyDefaultInputDevice, kAudioObjectPropertyScopeGlobal, kAudioObjectPropertyElementMain};
    AudioDeviceID device = 0;
    size = sizeof device;
    EXPECT(AudioHardwareServiceGetPropertyData(kAudioObjectSystemObject, &a, 0, NULL, &size, &device) == noErr && device != kAudioObjectUnknown, "default input device");
    a.mSelector = kAudioHardwarePropertyDefaultOutputDevice;
    AudioDeviceID out = 0;
    size = sizeof out;
    EXPECT(AudioObjectGetPropertyData(kAudioObjectSystemObject, &a, 0, NULL, &size, &out) == noErr && out == device, "default output device");
    a.mSelector = kAudioDevicePropertyNominalSampleRate;
    Float64 rate = 0;
    size = sizeof rate;
    EXPECT(AudioObjectHasProperty(device, &a) && AudioObjectGetPropertyData(device, &a, 0, NULL, &size, &rate) == noErr && rate == 44100, "nominal rate %f", rate);
    a.mSelector = kAudioDevicePropertyBufferFrameSize;
    UInt32 frames = 0;
    size = sizeof frames;
    EXPECT(AudioObjectGetPropertyData(device, &a, 0, NULL, &size, &frames) == noErr && frames > 0, "buffer frame size %u", frames);
    a.mSelector = kAudioObjectPropertyName;
    CFStringRef name = NULL;
    size = sizeof name;
    char text[64] = "";
    EXPECT(AudioObjectGetPropertyData(device, &a, 0, NULL, &size, &name) == noErr && name
           && CFStringGetCString(name, text, sizeof text, kCFStringEncodingUTF8) && strcmp(text, "offline") == 0, "name '%s'", text);
    if (name) CFRelease(name);
    a.mSelector = kAudioDevicePropertyNominalSampleRate;
    size = 4;
    EXPECT(AudioObjectGetPropertyData(device, &a, 0, NULL, &size, &rate) == kAudioHardwareBadPropertySizeError, "short size");
    size = sizeof rate;
    EXPECT(AudioObjectGetPropertyData(77, &a, 0, NULL, &size, &rate) == kAudioHardwareBadObjectError, "bad object");
    a.mSelector = 0x7a7a7a7a;
    EXPECT(AudioObjectGetPropertyDataSize(device, &a, 0, NULL, &size) == kAudioHardwareUnknownPropertyError && !AudioObjectHasProperty(device, &a), "unknown property");

    /* A recording queue's converter properties: its encoded format and its cookie. */
    memset(&f, 0, sizeof f);
    f.mFormatID = kAudioFormatMPEG4AAC;
    f.mChannelsPerFrame = 2;
    f.mSampleRate = rate;
    size = sizeof f;
    AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, NULL, &size, &f);
    AudioQueueRef q = NULL;
    EXPECT(AudioQueueNewInput(&f, input, NULL, NULL, NULL, 0, &q) == noErr, "AAC recording queue");
    AudioStreamBasicDescription viaConverter, viaQueue;
    size = sizeof viaConverter;
    EXPECT(AudioQueueGetProperty(q, kAudioConverterCurrentOutputStreamDescription, &viaConverter, &size) == noErr, "acod");
    size = sizeof viaQueue;
    EXPECT(AudioQueueGetProperty(q, kAudioQueueProperty_StreamDescription, &viaQueue, &size) == noErr
           && memcmp(&viaConverter, &viaQueue, sizeof viaQueue) == 0 && viaQueue.mFormatID == kAudioFormatMPEG4AAC, "the same format");
    UInt32 cookieSize = 0, queueCookieSize = 0;
    EXPECT(AudioQueueGetPropertySize(q, kAudioConverterCompressionMagicCookie, &cookieSize) == noErr && cookieSize > 0, "cmgc size %u", cookieSize);
    EXPECT(AudioQueueGetPropertySize(q, kAudioQueueProperty_MagicCookie, &queueCookieSize) == noErr && queueCookieSize == cookieSize, "the same cookie");
    UInt32 maximum = 0;
    size = sizeof maximum;
    EXPECT(AudioQueueGetProperty(q, kAudioConverterPropertyMaximumOutputPacketSize, &maximum, &size) == noErr && maximum > 0, "xops %u", maximum);
    AudioQueueDispose(q, true);
    /* A playback queue's: its input format. */
    memset(&f, 0, sizeof f);
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kAudioFormatFlagIsSignedInteger;
    f.mBitsPerChannel = 16;
    f.mChannelsPerFrame = 2;
    f.mSampleRate = rate;
    size = sizeof f;
    AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, NULL, &size, &f);
    EXPECT(AudioQueueNewOutput(&f, output, NULL, NULL, NULL, 0, &q) == noErr, "PCM playback queue");
    size = sizeof viaConverter;
    EXPECT(AudioQueueGetProperty(q, kAudioConverterCurrentInputStreamDescription, &viaConverter, &size) == noErr
           && viaConverter.mBytesPerFrame == 4 && viaConverter.mSampleRate == rate, "acid");
    size = sizeof viaConverter;
    EXPECT(AudioQueueGetProperty(q, kAudioConverterCurrentOutputStreamDescription, &viaConverter, &size) == kAudioQueueErr_InvalidProperty, "acod on a playback queue");
    AudioQueueDispose(q, true);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
