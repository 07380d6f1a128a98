/* audiofile_rf64.c — issue 23: RF64 written through AudioFileCreateWithURL(kAudioFileRF64Type).
 * DIR/small.rf64: one second of 16-bit stereo at 44.1 kHz (the pattern f*7 + c*1000 - 20000)
 * written with AudioFileWritePackets; its header is RF64 with a ds64 chunk holding the sizes, and
 * AudioFileOpenURL reads it back as RF64 with every byte. DIR/big.rf64: 4 bytes written with
 * AudioFileWriteBytes 5 GiB into the data (a sparse file: nothing is written before them), so the
 * ds64 chunk holds sizes past 4 GiB and AudioFileOpenURL counts the packets (left for ffprobe to
 * read; the caller removes it).
 * A WAVE file refuses the same write with kAudioFileDoesNotAllow64BitDataSizeError.
 * Prints "N passed, M failed". Usage: audiofile_rf64 DIR */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static AudioFileID create(const char *path, AudioFileTypeID type, const AudioStreamBasicDescription *format) {
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
    AudioFileID f = NULL;
    OSStatus s = AudioFileCreateWithURL(url, type, format, kAudioFileFlags_EraseFile, &f);
    CFRelease(url);
    EXPECT(s == noErr, "create %s: %d", path, (int)s);
    return f;
}

static AudioFileID openFile(const char *path) {
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
    AudioFileID f = NULL;
    OSStatus s = AudioFileOpenURL(url, kAudioFileReadPermission, 0, &f);
    CFRelease(url);
    EXPECT(s == noErr, "open %s: %d", path, (int)s);
    return f;
}

static UInt64 le64(const UInt8 *b) {
    UInt64 v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

static UInt32 le32(const UInt8 *b) { return (UInt32)b[0] | (UInt32)b[1] << 8 | (UInt32)b[2] << 16 | (UInt32)b[3] << 24; }

/* The first 64 bytes of `path`. */
static void header(const char *path, UInt8 *out) {
    memset(out, 0, 64);
    FILE *f = fopen(path, "rb");
    if (f) {
        EXPECT(fread(out, 1, 64, f) == 64, "read the header of %s", path);
        fclose(f);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    char small[512], big[512], wave[512];
    snprintf(small, sizeof small, "%s/small.rf64", argv[1]);
    snprintf(big, sizeof big, "%s/big.rf64", argv[1]);
    snprintf(wave, sizeof wave, "%s/big.wav", argv[1]);
    AudioStreamBasicDescription format = {44100, kAudioFormatLinearPCM, kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked, 4, 1, 4, 2, 16, 0};
    enum { frames = 44100 };
    SInt16 *samples = malloc(frames * 4);
    for (int f = 0; f < frames; f++)
        for (int c = 0; c < 2; c++) samples[f * 2 + c] = (SInt16)(f * 7 + c * 1000 - 20000);

    AudioFileID file = create(small, kAudioFileRF64Type, &format);
    if (!file) return 1;
    for (int at = 0; at < frames; at += 4096) {
        UInt32 n = frames - at < 4096 ? frames - at : 4096;
        EXPECT(AudioFileWritePackets(file, false, n * 4, NULL, at, &n, samples + at * 2) == noErr, "write at %d", at);
    }
    EXPECT(AudioFileClose(file) == noErr, "close");
    UInt8 h[64];
    header(small, h);
    EXPECT(memcmp(h, "RF64", 4) == 0 && le32(h + 4) == 0xFFFFFFFF && memcmp(h + 8, "WAVEds64", 8) == 0, "RF64 and ds64");
    EXPECT(le64(h + 20) == 4 + 36 + 24 + 8 + (UInt64)frames * 4 && le64(h + 28) == (UInt64)frames * 4 && le64(h + 36) == frames,
           "ds64 sizes: riff %llu, data %llu, frames %llu", (unsigned long long)le64(h + 20), (unsigned long long)le64(h + 28), (unsigned long long)le64(h + 36));
    AudioFileID back = openFile(small);
    if (back) {
        AudioFileTypeID type = 0;
        UInt32 size = sizeof type;
        EXPECT(AudioFileGetProperty(back, kAudioFilePropertyFileFormat, &size, &type) == noErr && type == kAudioFileRF64Type, "type %x", type);
        UInt64 packets = 0;
        size = sizeof packets;
        EXPECT(AudioFileGetProperty(back, kAudioFilePropertyAudioDataPacketCount, &size, &packets) == noErr && packets == frames, "%llu packets", (unsigned long long)packets);
        SInt16 *read = malloc(frames * 4);
        UInt32 bytes = frames * 4;
        EXPECT(AudioFileReadBytes(back, false, 0, &bytes, read) == noErr && bytes == frames * 4 && memcmp(read, samples, frames * 4) == 0, "the bytes read back");
        free(read);
        AudioFileClose(back);
    }

    /* Past 4 GiB, without writing 4 GiB: 4 bytes at 5 GiB. */
    const SInt64 far = 5LL << 30;
    file = create(big, kAudioFileRF64Type, &format);
    if (file) {
        UInt32 n = 4;
        EXPECT(AudioFileWriteBytes(file, false, far, &n, samples) == noErr && n == 4, "write at 5 GiB");
        EXPECT(AudioFileClose(file) == noErr, "close the big one");
        header(big, h);
        EXPECT(le64(h + 20) == 4 + 36 + 24 + 8 + (UInt64)far + 4 && le64(h + 28) == (UInt64)far + 4 && le64(h + 36) == ((UInt64)far + 4) / 4,
               "ds64 past 4 GiB: riff %llu, data %llu, frames %llu", (unsigned long long)le64(h + 20), (unsigned long long)le64(h + 28), (unsigned long long)le64(h + 36));
        back = openFile(big);
        if (back) {
            UInt64 packets = 0;
            UInt32 size = sizeof packets;
            EXPECT(AudioFileGetProperty(back, kAudioFilePropertyAudioDataPacketCount, &size, &packets) == noErr && packets == ((UInt64)far + 4) / 4,
                   "%llu packets past 4 GiB", (unsigned long long)packets);
            SInt16 last[2] = {0, 0};
            UInt32 bytes = 4;
            EXPECT(AudioFileReadBytes(back, false, far, &bytes, last) == noErr && bytes == 4 && memcmp(last, samples, 4) == 0, "the last frame read back");
            AudioFileClose(back);
        }
    }
    file = create(wave, kAudioFileWAVEType, &format);
    if (file) {
        UInt32 n = 4;
        EXPECT(AudioFileWriteBytes(file, false, far, &n, samples) == kAudioFileDoesNotAllow64BitDataSizeError, "WAVE past 4 GiB");
        AudioFileClose(file);
        unlink(wave);
    }
    free(samples);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
