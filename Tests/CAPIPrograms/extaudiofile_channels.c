/* extaudiofile_channels.c — issue 23: ExtAudioFile reading into a client format with another
 * channel count than the file's, as programs written for Apple's systems set it (a stereo float
 * client for whatever file). FILE (stereo) is read as stereo floats (the reference), then as
 * mono (the left channel, as Apple's converter's default map routes it), as 3 channels (left,
 * right, silence) and, after a seek, as mono again (the frames read through from there). Prints
 * "N passed, M failed". Usage: extaudiofile_channels FILE */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static AudioStreamBasicDescription floats(Float64 rate, UInt32 channels) {
    AudioStreamBasicDescription f = {0};
    f.mSampleRate = rate; f.mFormatID = kAudioFormatLinearPCM; f.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    f.mBitsPerChannel = 32; f.mChannelsPerFrame = channels; f.mBytesPerFrame = f.mBytesPerPacket = 4 * channels; f.mFramesPerPacket = 1;
    return f;
}

static SInt64 readAll(ExtAudioFileRef file, UInt32 channels, SInt64 cap, float *out) {
    SInt64 done = 0;
    while (done < cap) {
        UInt32 n = (UInt32)(cap - done < 777 ? cap - done : 777);
        AudioBufferList list = { 1, { { channels, n * 4 * channels, out + done * channels } } };
        if (ExtAudioFileRead(file, &n, &list) != noErr || n == 0) break;
        done += n;
    }
    return done;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: extaudiofile_channels FILE\n"); return 2; }
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)argv[1], (CFIndex)strlen(argv[1]), false);
    ExtAudioFileRef file = NULL;
    EXPECT(ExtAudioFileOpenURL(url, &file) == noErr && file, "open");
    CFRelease(url);
    if (!file) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    AudioStreamBasicDescription ff;
    UInt32 size = sizeof ff;
    ExtAudioFileGetProperty(file, kExtAudioFileProperty_FileDataFormat, &size, &ff);
    EXPECT(ff.mChannelsPerFrame == 2, "a stereo file: %u channels", ff.mChannelsPerFrame);
    const SInt64 cap = 400000;
    float *ref = malloc(sizeof(float) * 2 * cap), *x = malloc(sizeof(float) * 3 * cap);

    AudioStreamBasicDescription c2 = floats(ff.mSampleRate, 2), c1 = floats(ff.mSampleRate, 1), c3 = floats(ff.mSampleRate, 3);
    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof c2, &c2) == noErr, "stereo client");
    SInt64 n = readAll(file, 2, cap, ref);
    EXPECT(n > 1000, "%lld frames", (long long)n);

    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof c1, &c1) == noErr, "mono client");
    EXPECT(ExtAudioFileSeek(file, 0) == noErr, "seek 0");
    SInt64 m = readAll(file, 1, cap, x);
    int same = m == n;
    for (SInt64 i = 0; same && i < n; i++) same = x[i] == ref[2 * i];
    EXPECT(same, "mono client: the left channel (%lld frames)", (long long)m);

    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof c3, &c3) == noErr, "3-channel client");
    EXPECT(ExtAudioFileSeek(file, 0) == noErr, "seek 0");
    m = readAll(file, 3, cap, x);
    same = m == n;
    for (SInt64 i = 0; same && i < n; i++) same = x[3 * i] == ref[2 * i] && x[3 * i + 1] == ref[2 * i + 1] && x[3 * i + 2] == 0;
    EXPECT(same, "3-channel client: left, right, silence");

    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof c1, &c1) == noErr, "mono client");
    EXPECT(ExtAudioFileSeek(file, 12345) == noErr, "seek");
    m = readAll(file, 1, 1000, x);
    same = m == 1000;
    for (SInt64 i = 0; same && i < 1000; i++) same = x[i] == ref[2 * (12345 + i)];
    EXPECT(same, "after a seek: the left channel from there");

    AudioStreamBasicDescription c0 = floats(ff.mSampleRate, 1);
    c0.mChannelsPerFrame = 0; c0.mBytesPerFrame = c0.mBytesPerPacket = 0;
    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof c0, &c0) == kExtAudioFileError_InvalidDataFormat, "0 channels");
    ExtAudioFileDispose(file);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
