/* audioconverter.c — issue 23: Audio Converter Services as a file converter uses them. FILE's
 * packets (AudioFileReadPacketData in the input procedure, with their descriptions) decoded by
 * AudioConverterFillComplexBuffer into 32-bit float interleaved frames at the file's rate,
 * written raw to OUT (the test compares them with ffmpeg's decoding, untrimmed). Every third
 * call the procedure answers "no data yet" (a code of its own, no packets): the fill returns
 * that code with the frames made, and the next fill goes on. Also the result codes. Prints
 * "N passed, M failed". Usage: audioconverter FILE OUT */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { kNotYet = 0x77616974 /* 'wait' */ };

typedef struct {
    AudioFileID file;
    SInt64 next, count;
    UInt32 maxPacket;
    UInt8 *bytes;
    AudioStreamPacketDescription description;
    int calls, notYet;
} Source;

static OSStatus input(AudioConverterRef converter, UInt32 *ioPackets, AudioBufferList *ioData, AudioStreamPacketDescription **outDescriptions, void *user) {
    (void)converter;
    Source *s = user;
    if (++s->calls % 3 == 0) { *ioPackets = 0; s->notYet++; return kNotYet; }
    if (s->next >= s->count) { *ioPackets = 0; return noErr; }
    UInt32 n = *ioPackets < 1 ? *ioPackets : 1, bytes = s->maxPacket;
    OSStatus r = AudioFileReadPacketData(s->file, false, &bytes, &s->description, s->next, &n, s->bytes);
    if (r != noErr) return r;
    s->next += n;
    *ioPackets = n;
    ioData->mBuffers[0].mData = s->bytes;
    ioData->mBuffers[0].mDataByteSize = bytes;
    if (outDescriptions) *outDescriptions = &s->description;
    return noErr;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    Source s = {0};
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)argv[1], (CFIndex)strlen(argv[1]), false);
    EXPECT(AudioFileOpenURL(url, kAudioFileReadPermission, 0, &s.file) == noErr, "open");
    CFRelease(url);
    AudioStreamBasicDescription in;
    UInt32 size = sizeof in;
    AudioFileGetProperty(s.file, kAudioFilePropertyDataFormat, &size, &in);
    size = sizeof s.count;
    AudioFileGetProperty(s.file, kAudioFilePropertyAudioDataPacketCount, &size, &s.count);
    size = sizeof s.maxPacket;
    AudioFileGetProperty(s.file, kAudioFilePropertyMaximumPacketSize, &size, &s.maxPacket);
    s.bytes = malloc(s.maxPacket);

    AudioStreamBasicDescription out = {in.mSampleRate, kAudioFormatLinearPCM, kAudioFormatFlagsNativeFloatPacked,
                                       4 * in.mChannelsPerFrame, 1, 4 * in.mChannelsPerFrame, in.mChannelsPerFrame, 32, 0};
    AudioStreamBasicDescription half = out;
    half.mSampleRate /= 2;
    AudioConverterRef converter = NULL;
    EXPECT(AudioConverterNew(&in, &half, &converter) == noErr && converter, "another rate (decoded, then resampled)");
    AudioConverterDispose(converter);
    half.mSampleRate = 10;
    EXPECT(AudioConverterNew(&in, &half, &converter) == kAudioConverterErr_OutputSampleRateOutOfRange, "a rate of 10 Hz");
    EXPECT(AudioConverterNew(&in, &out, &converter) == noErr, "AudioConverterNew");
    UInt32 cookieSize = 0;
    if (AudioFileGetPropertyInfo(s.file, kAudioFilePropertyMagicCookieData, &cookieSize, NULL) == noErr && cookieSize > 0) {
        void *cookie = malloc(cookieSize);
        AudioFileGetProperty(s.file, kAudioFilePropertyMagicCookieData, &cookieSize, cookie);
        EXPECT(AudioConverterSetProperty(converter, kAudioConverterDecompressionMagicCookie, cookieSize, cookie) == noErr, "cookie");
        free(cookie);
    }
    AudioStreamBasicDescription got;
    size = sizeof got;
    EXPECT(AudioConverterGetProperty(converter, kAudioConverterCurrentOutputStreamDescription, &size, &got) == noErr && got.mBitsPerChannel == 32, "output description");
    UInt32 maxOut = 0;
    size = sizeof maxOut;
    EXPECT(AudioConverterGetProperty(converter, kAudioConverterPropertyMaximumOutputPacketSize, &size, &maxOut) == noErr && maxOut == out.mBytesPerPacket, "maximum output packet size");
    EXPECT(AudioConverterGetProperty(converter, 0x7a7a7a7a, &size, &maxOut) == kAudioConverterErr_PropertyNotSupported, "unknown property");

    FILE *o = fopen(argv[2], "wb");
    float buffer[4096 * 8];
    SInt64 total = 0;
    int fills = 0, notYetAnswers = 0;
    for (;;) {
        UInt32 frames = 4096;
        AudioBufferList list = {1, {{in.mChannelsPerFrame, sizeof buffer, buffer}}};
        OSStatus r = AudioConverterFillComplexBuffer(converter, input, &s, &frames, &list, NULL);
        fills++;
        if (r == kNotYet) notYetAnswers++;
        else if (r != noErr) { EXPECT(0, "fill: %d", (int)r); break; }
        EXPECT(list.mBuffers[0].mDataByteSize == frames * out.mBytesPerFrame, "bytes of the frames made");
        fwrite(buffer, out.mBytesPerFrame, frames, o);
        total += frames;
        if (r == noErr && frames == 0) break;
        if (fills > 100000) break;
    }
    fclose(o);
    EXPECT(notYetAnswers > 0 && notYetAnswers == s.notYet, "every 'no data yet' came back (%d of %d)", notYetAnswers, s.notYet);
    EXPECT(s.next == s.count && total > 0, "every packet used (%lld of %lld), %lld frames", (long long)s.next, (long long)s.count, (long long)total);
    EXPECT(AudioConverterReset(converter) == noErr && AudioConverterDispose(converter) == noErr, "reset and dispose");
    EXPECT(AudioConverterDispose(converter) == kAudio_ParamError, "disposed twice");
    AudioFileClose(s.file);
    free(s.bytes);
    printf("frames=%lld\n%d passed, %d failed\n", (long long)total, passed, failed);
    return failed ? 1 : 0;
}
