/* extaudiofile_read.c — issue 23: ExtAudioFile reading. Opens FILE with ExtAudioFileOpenURL, sets
 * a 32-bit float interleaved client format at the file's rate and channels, reads it through in
 * 1000-frame reads into OUT (raw little-endian floats: the test compares them with ffmpeg's
 * decoding), then seeks to frames on both sides of packet boundaries and checks that each read
 * after a seek gives exactly the frames read through, also through a non-interleaved 16-bit
 * client format and a wrapped AudioFileID; and the result codes. Prints "N passed, M failed".
 * Usage: extaudiofile_read FILE OUT */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static AudioStreamBasicDescription floatFormat(Float64 rate, UInt32 channels) {
    AudioStreamBasicDescription f = {0};
    f.mSampleRate = rate;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    f.mBitsPerChannel = 32;
    f.mChannelsPerFrame = channels;
    f.mBytesPerFrame = f.mBytesPerPacket = 4 * channels;
    f.mFramesPerPacket = 1;
    return f;
}

/* Reads `frames` frames (or to the end) as interleaved floats into out; returns the frames read. */
static SInt64 readFloats(ExtAudioFileRef file, UInt32 channels, SInt64 frames, float *out) {
    SInt64 done = 0;
    while (done < frames) {
        UInt32 n = (UInt32)(frames - done < 1000 ? frames - done : 1000);
        AudioBufferList list;
        list.mNumberBuffers = 1;
        list.mBuffers[0].mNumberChannels = channels;
        list.mBuffers[0].mDataByteSize = n * 4 * channels;
        list.mBuffers[0].mData = out + done * channels;
        if (ExtAudioFileRead(file, &n, &list) != noErr || n == 0) break;
        done += n;
    }
    return done;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)argv[1], (CFIndex)strlen(argv[1]), false);
    ExtAudioFileRef file = NULL;
    OSStatus s = ExtAudioFileOpenURL(url, &file);
    EXPECT(s == noErr, "open: %d", (int)s);
    if (s != noErr) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    AudioStreamBasicDescription fileFormat;
    UInt32 size = sizeof fileFormat;
    EXPECT(ExtAudioFileGetProperty(file, kExtAudioFileProperty_FileDataFormat, &size, &fileFormat) == noErr, "file format");
    SInt64 length = 0;
    size = sizeof length;
    EXPECT(ExtAudioFileGetProperty(file, kExtAudioFileProperty_FileLengthFrames, &size, &length) == noErr && length > 0, "length");
    UInt32 channels = fileFormat.mChannelsPerFrame;
    printf("length=%lld\n", (long long)length);

    if (fileFormat.mFormatID != kAudioFormatLinearPCM) {
        UInt32 n = 10;
        float probe[20];
        AudioBufferList list = {1, {{channels, sizeof probe, probe}}};
        EXPECT(ExtAudioFileRead(file, &n, &list) == kExtAudioFileError_NonPCMClientFormat, "a compressed file needs a client format");
    }
    AudioStreamBasicDescription client = floatFormat(fileFormat.mSampleRate, channels);
    /* Another rate is converted (extaudiofile_rate.c); one libsoxr cannot take is refused. */
    AudioStreamBasicDescription wrongRate = floatFormat(500, channels);
    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof wrongRate, &wrongRate) == kExtAudioFileError_InvalidDataFormat, "a 500 Hz client");
    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof client, &client) == noErr, "client format");

    float *all = malloc((size_t)(length + 10) * channels * sizeof(float));
    SInt64 got = readFloats(file, channels, length + 10, all);
    EXPECT(got == length, "read through: %lld of %lld frames", (long long)got, (long long)length);
    FILE *out = fopen(argv[2], "wb");
    fwrite(all, sizeof(float) * channels, (size_t)got, out);
    fclose(out);
    SInt64 tell = -1;
    EXPECT(ExtAudioFileTell(file, &tell) == noErr && tell == length, "at the end: %lld", (long long)tell);
    UInt32 none = 100;
    float tail[400];
    AudioBufferList tailList = {1, {{channels, sizeof tail, tail}}};
    EXPECT(ExtAudioFileRead(file, &none, &tailList) == noErr && none == 0, "0 frames at the end");

    /* Seeks: each read after one gives exactly the frames read through. */
    SInt64 at[] = {0, 1, 575, 1023, 1024, 1025, 1151, 1152, 2047, 4095, 4096, 12345, 30000, length / 2, length - 700, 7};
    float *part = malloc(2000 * channels * sizeof(float));
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        if (at[i] < 0 || at[i] >= length) continue;
        EXPECT(ExtAudioFileSeek(file, at[i]) == noErr, "seek %lld", (long long)at[i]);
        SInt64 want = length - at[i] < 2000 ? length - at[i] : 2000;
        SInt64 n = readFloats(file, channels, want, part);
        EXPECT(n == want && memcmp(part, all + at[i] * channels, (size_t)n * channels * sizeof(float)) == 0,
               "the %lld frames after a seek to %lld are the frames read through", (long long)n, (long long)at[i]);
    }
    EXPECT(ExtAudioFileSeek(file, -1) == kExtAudioFileError_InvalidSeek, "a negative seek");

    /* 16-bit non-interleaved: each channel's buffer holds that channel. */
    AudioStreamBasicDescription planar = {0};
    planar.mSampleRate = fileFormat.mSampleRate;
    planar.mFormatID = kAudioFormatLinearPCM;
    planar.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked | kAudioFormatFlagIsNonInterleaved;
    planar.mBitsPerChannel = 16;
    planar.mChannelsPerFrame = channels;
    planar.mBytesPerFrame = planar.mBytesPerPacket = 2;
    planar.mFramesPerPacket = 1;
    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof planar, &planar) == noErr, "16-bit planar client");
    EXPECT(ExtAudioFileSeek(file, 1000) == noErr, "seek");
    AudioBufferList *lists = malloc(offsetof(AudioBufferList, mBuffers) + channels * sizeof(AudioBuffer));
    SInt16 *planes = malloc(channels * 500 * sizeof(SInt16));
    lists->mNumberBuffers = channels;
    for (UInt32 c = 0; c < channels; c++) {
        lists->mBuffers[c].mNumberChannels = 1;
        lists->mBuffers[c].mDataByteSize = 500 * sizeof(SInt16);
        lists->mBuffers[c].mData = planes + c * 500;
    }
    UInt32 n = 500;
    EXPECT(ExtAudioFileRead(file, &n, lists) == noErr && n == 500 && lists->mBuffers[0].mDataByteSize == 1000, "planar read");
    int close = 1;
    for (UInt32 c = 0; c < channels; c++)
        for (int i = 0; i < 500; i++) {
            float x = all[(1000 + i) * channels + c] * 32768.0f;
            if (x > 32767) x = 32767;
            if (x < -32768) x = -32768;
            if (abs((int)planes[c * 500 + i] - (int)x) > 1) close = 0;
        }
    EXPECT(close, "the 16-bit planar samples are the float ones quantized");
    size = sizeof client;
    AudioStreamBasicDescription now;
    EXPECT(ExtAudioFileGetProperty(file, kExtAudioFileProperty_ClientDataFormat, &size, &now) == noErr && now.mBitsPerChannel == 16, "client format read back");
    AudioFileID underneath = NULL;
    size = sizeof underneath;
    EXPECT(ExtAudioFileGetProperty(file, kExtAudioFileProperty_AudioFile, &size, &underneath) == noErr && underneath != NULL, "the AudioFileID underneath");
    UInt64 packets = 0;
    size = sizeof packets;
    EXPECT(underneath && AudioFileGetProperty(underneath, kAudioFilePropertyAudioDataPacketCount, &size, &packets) == noErr && packets > 0, "usable");
    EXPECT(ExtAudioFileGetProperty(file, 0x7a7a7a7a, &size, &now) == kExtAudioFileError_InvalidProperty, "unknown property");
    EXPECT(ExtAudioFileDispose(file) == noErr && ExtAudioFileDispose(file) == kAudio_ParamError, "dispose");

    /* A wrapped AudioFileID reads the same, and stays the caller's. */
    AudioFileID af = NULL;
    EXPECT(AudioFileOpenURL(url, kAudioFileReadPermission, 0, &af) == noErr, "AudioFileOpenURL");
    EXPECT(ExtAudioFileWrapAudioFileID(af, true, &file) == kExtAudioFileError_InvalidOperationOrder, "wrapping for writing");
    EXPECT(ExtAudioFileWrapAudioFileID(af, false, &file) == noErr, "wrap");
    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof client, &client) == noErr, "client format");
    EXPECT(ExtAudioFileSeek(file, 12345 < length ? 12345 : 0) == noErr, "seek");
    SInt64 first = 12345 < length ? 12345 : 0;
    SInt64 want = length - first < 2000 ? length - first : 2000;
    EXPECT(readFloats(file, channels, want, part) == want && memcmp(part, all + first * channels, (size_t)want * channels * sizeof(float)) == 0, "wrapped read");
    EXPECT(ExtAudioFileDispose(file) == noErr, "dispose the wrapper");
    size = sizeof packets;
    EXPECT(AudioFileGetProperty(af, kAudioFilePropertyAudioDataPacketCount, &size, &packets) == noErr && AudioFileClose(af) == noErr, "the AudioFileID is still open");
    CFRelease(url);
    free(all);
    free(part);
    free(lists);
    free(planes);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
