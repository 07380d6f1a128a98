/* audiofile_write.c — issue 23: linear PCM written with AudioFileCreateWithURL,
 * AudioFileWritePackets (the second half first, then the first: packets go where they are asked
 * for) and AudioFileWriteBytes, closed, then opened again with AudioFileOpenURL and read back.
 * Frame f, channel c holds f * 7 + c * 1000 - 20000 at 16-bit scale (shifted left for wider
 * integers, / 32768 for floats), in the order the format says. Prints "wrote PATH FFMPEGFORMAT
 * CHANNELS FRAMES" for each file (the test decodes it with ffmpeg), then "N passed, M failed".
 * Usage: audiofile_write TYPE DIR, TYPE one of WAVE AIFF AIFC caff. */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { kFrames = 4410 };

typedef struct { const char *ffmpeg; UInt32 bits; int isFloat; int big; UInt32 channels; } Sample;

static CFURLRef urlFor(const char *path) {
    return CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
}

static AudioStreamBasicDescription formatOf(Sample s) {
    AudioStreamBasicDescription f;
    memset(&f, 0, sizeof f);
    f.mSampleRate = 44100;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = (s.isFloat ? kAudioFormatFlagIsFloat : kAudioFormatFlagIsSignedInteger) | kAudioFormatFlagIsPacked
                     | (s.big ? kAudioFormatFlagIsBigEndian : 0);
    f.mChannelsPerFrame = s.channels;
    f.mBitsPerChannel = s.bits;
    f.mBytesPerFrame = f.mBytesPerPacket = s.channels * s.bits / 8;
    f.mFramesPerPacket = 1;
    return f;
}

static void fill(Sample s, UInt8 *out) {
    UInt32 width = s.bits / 8;
    for (int fr = 0; fr < kFrames; fr++) {
        for (UInt32 c = 0; c < s.channels; c++) {
            long long v = (long long)fr * 7 + (long long)c * 1000 - 20000;
            UInt8 b[8];
            if (s.isFloat && s.bits == 32) { float x = (float)v / 32768.0f; memcpy(b, &x, 4); }
            else if (s.isFloat) { double x = (double)v / 32768.0; memcpy(b, &x, 8); }
            else { long long x = v * (1LL << (s.bits - 16)); for (UInt32 i = 0; i < width; i++) b[i] = (UInt8)(x >> (8 * i)); }
            UInt8 *dst = out + ((size_t)fr * s.channels + c) * width;
            for (UInt32 i = 0; i < width; i++) dst[i] = s.big ? b[width - 1 - i] : b[i];
        }
    }
}

static void writeOne(const char *dir, const char *typeName, AudioFileTypeID type, Sample s, int index) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s-%d-%s.%s", dir, typeName, index, s.ffmpeg, type == kAudioFileWAVEType ? "wav" : type == kAudioFileCAFType ? "caf" : "aif");
    AudioStreamBasicDescription f = formatOf(s);
    UInt32 frameBytes = f.mBytesPerFrame;
    UInt8 *data = malloc((size_t)kFrames * frameBytes);
    fill(s, data);
    CFURLRef url = urlFor(path);
    AudioFileID file = NULL;
    OSStatus st = AudioFileCreateWithURL(url, type, &f, kAudioFileFlags_EraseFile, &file);
    EXPECT(st == noErr, "%s: create %d", path, (int)st);
    if (st != noErr) { CFRelease(url); free(data); return; }
    /* The second half as packets first, then the first half: 1000 packets as packets, the rest as bytes. */
    UInt32 half = kFrames / 2, n = kFrames - half;
    EXPECT(AudioFileWritePackets(file, false, n * frameBytes, NULL, half, &n, data + (size_t)half * frameBytes) == noErr && n == kFrames - half, "second half");
    n = 1000;
    EXPECT(AudioFileWritePackets(file, false, n * frameBytes, NULL, 0, &n, data) == noErr && n == 1000, "first packets");
    UInt32 bytes = (half - 1000) * frameBytes;
    EXPECT(AudioFileWriteBytes(file, false, 1000 * (SInt64)frameBytes, &bytes, data + 1000 * frameBytes) == noErr, "bytes");
    UInt64 count = 0;
    UInt32 size = sizeof count;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyAudioDataPacketCount, &size, &count) == noErr && count == kFrames, "packets while writing: %llu", (unsigned long long)count);
    n = 1;
    EXPECT(AudioFileWritePackets(file, false, frameBytes, NULL, -1, &n, data) == kAudioFileInvalidPacketOffsetError, "negative packet");
    UInt32 one = 1;
    EXPECT(AudioFileReadBytes(file, false, 0, &one, data) == kAudioFileOperationNotSupportedError, "reading a file being written");
    EXPECT(AudioFileClose(file) == noErr, "close");

    /* Back through the reader. */
    file = NULL;
    EXPECT(AudioFileOpenURL(url, kAudioFileReadPermission, 0, &file) == noErr, "%s: reopen", path);
    CFRelease(url);
    if (!file) { free(data); return; }
    AudioStreamBasicDescription g;
    size = sizeof g;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyDataFormat, &size, &g) == noErr && g.mSampleRate == 44100
           && g.mChannelsPerFrame == s.channels && g.mBitsPerChannel == s.bits && g.mBytesPerPacket == frameBytes, "%s: format read back", path);
    AudioFileTypeID t = 0;
    size = sizeof t;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyFileFormat, &size, &t) == noErr
           && (t == type || (type == kAudioFileAIFFType && t == kAudioFileAIFFType)), "%s: file type %x", path, t);
    size = sizeof count;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyAudioDataPacketCount, &size, &count) == noErr && count == kFrames, "%s: %llu packets read back", path, (unsigned long long)count);
    UInt8 *back = malloc((size_t)kFrames * frameBytes);
    UInt32 packets = kFrames, got = kFrames * frameBytes;
    EXPECT(AudioFileReadPacketData(file, false, &got, NULL, 0, &packets, back) == noErr && packets == kFrames
           && memcmp(back, data, (size_t)kFrames * frameBytes) == 0, "%s: the bytes read back", path);
    AudioFileClose(file);
    free(back);
    free(data);
    printf("wrote %s %s %u %d\n", path, s.ffmpeg, s.channels, kFrames);
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    const char *typeName = argv[1], *dir = argv[2];
    AudioFileTypeID type = 0;
    Sample list[4];
    int count = 0;
    if (strcmp(typeName, "WAVE") == 0) {
        type = kAudioFileWAVEType;
        list[count++] = (Sample){"s16le", 16, 0, 0, 2};
        list[count++] = (Sample){"s24le", 24, 0, 0, 2};
        list[count++] = (Sample){"f32le", 32, 1, 0, 2};
        list[count++] = (Sample){"s16le", 16, 0, 0, 6};
    } else if (strcmp(typeName, "AIFF") == 0) {
        type = kAudioFileAIFFType;
        list[count++] = (Sample){"s16be", 16, 0, 1, 2};
        list[count++] = (Sample){"s24be", 24, 0, 1, 1};
        list[count++] = (Sample){"s32be", 32, 0, 1, 2};
    } else if (strcmp(typeName, "AIFC") == 0) {
        type = kAudioFileAIFCType;
        list[count++] = (Sample){"s16be", 16, 0, 1, 2};
        list[count++] = (Sample){"s16le", 16, 0, 0, 2};
        list[count++] = (Sample){"f32be", 32, 1, 1, 2};
    } else if (strcmp(typeName, "caff") == 0) {
        type = kAudioFileCAFType;
        list[count++] = (Sample){"s16le", 16, 0, 0, 2};
        list[count++] = (Sample){"s24be", 24, 0, 1, 2};
        list[count++] = (Sample){"f32le", 32, 1, 0, 1};
        list[count++] = (Sample){"f64be", 64, 1, 1, 2};
    } else {
        return 2;
    }
    for (int i = 0; i < count; i++) writeOne(dir, typeName, type, list[i], i);

    /* What cannot be written, and an existing file without EraseFile. */
    char path[512];
    snprintf(path, sizeof path, "%s/%s-refused", dir, typeName);
    CFURLRef url = urlFor(path);
    AudioStreamBasicDescription f = formatOf(list[0]);
    AudioFileID file = NULL;
    unlink(path);
    EXPECT(AudioFileCreateWithURL(url, type, &f, 0, &file) == noErr && AudioFileClose(file) == noErr, "create a new file without EraseFile");
    EXPECT(AudioFileCreateWithURL(url, type, &f, 0, &file) == kAudioFilePermissionsError, "an existing file without EraseFile");
    AudioStreamBasicDescription aac;
    memset(&aac, 0, sizeof aac);
    aac.mSampleRate = 44100;
    aac.mFormatID = kAudioFormatMPEG4AAC;
    aac.mChannelsPerFrame = 2;
    aac.mFramesPerPacket = 1024;
    if (type == kAudioFileCAFType) {
        /* CAF takes AAC packets (audiofile_copy.c writes them); not a format without frames per packet. */
        EXPECT(AudioFileCreateWithURL(url, type, &aac, kAudioFileFlags_EraseFile, &file) == noErr && AudioFileClose(file) == noErr, "AAC in CAF");
        aac.mFramesPerPacket = 0;
    }
    EXPECT(AudioFileCreateWithURL(url, type, &aac, kAudioFileFlags_EraseFile, &file) == kAudioFileUnsupportedDataFormatError, "AAC in %s", typeName);
    EXPECT(AudioFileCreateWithURL(url, kAudioFileMP3Type, &f, kAudioFileFlags_EraseFile, &file) == kAudioFileUnsupportedFileTypeError, "an MP3 file");
    if (type == kAudioFileWAVEType) {
        AudioStreamBasicDescription big = formatOf((Sample){"s16be", 16, 0, 1, 2});
        EXPECT(AudioFileCreateWithURL(url, type, &big, kAudioFileFlags_EraseFile, &file) == kAudioFileUnsupportedDataFormatError, "big-endian WAVE");
    }
    if (type == kAudioFileAIFFType) {
        AudioStreamBasicDescription little = formatOf((Sample){"s16le", 16, 0, 0, 2});
        EXPECT(AudioFileCreateWithURL(url, type, &little, kAudioFileFlags_EraseFile, &file) == kAudioFileUnsupportedDataFormatError, "little-endian AIFF");
    }
    EXPECT(AudioFileCreateWithURL(url, type, NULL, kAudioFileFlags_EraseFile, &file) == kAudio_ParamError, "no format");
    CFRelease(url);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
