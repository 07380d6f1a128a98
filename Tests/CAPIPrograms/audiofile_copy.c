/* audiofile_copy.c — issue 23: copies the packets of SRC (any file AudioFileOpenURL reads) into
 * a new CAF with AudioFileCreateWithURL, the magic cookie set with AudioFileSetProperty (before
 * the packets and again after, as recorders do), the packets written with
 * AudioFileWritePackets 100 at a time with their descriptions, the source's priming and
 * remainder with kAudioFilePropertyPacketTableInfo; then opens DST and checks that its format,
 * cookie, packet count and every packet's bytes are the source's. Prints "N passed, M failed".
 * Usage: audiofile_copy SRC DST */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static AudioFileID openFile(const char *path) {
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
    AudioFileID f = NULL;
    OSStatus s = AudioFileOpenURL(url, kAudioFileReadPermission, 0, &f);
    CFRelease(url);
    EXPECT(s == noErr, "open %s: %d", path, (int)s);
    return s == noErr ? f : NULL;
}

static UInt8 *cookieOf(AudioFileID f, UInt32 *size) {
    *size = 0;
    if (AudioFileGetPropertyInfo(f, kAudioFilePropertyMagicCookieData, size, NULL) != noErr || *size == 0) return NULL;
    UInt8 *c = malloc(*size);
    AudioFileGetProperty(f, kAudioFilePropertyMagicCookieData, size, c);
    return c;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    AudioFileID src = openFile(argv[1]);
    if (!src) return 1;
    AudioStreamBasicDescription format;
    UInt32 size = sizeof format;
    EXPECT(AudioFileGetProperty(src, kAudioFilePropertyDataFormat, &size, &format) == noErr, "format");
    UInt32 cookieSize = 0, upper = 0;
    UInt8 *cookie = cookieOf(src, &cookieSize);
    size = sizeof upper;
    AudioFileGetProperty(src, kAudioFilePropertyPacketSizeUpperBound, &size, &upper);
    UInt64 packets = 0;
    size = sizeof packets;
    AudioFileGetProperty(src, kAudioFilePropertyAudioDataPacketCount, &size, &packets);

    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)argv[2], (CFIndex)strlen(argv[2]), false);
    AudioFileID dst = NULL;
    OSStatus s = AudioFileCreateWithURL(url, kAudioFileCAFType, &format, kAudioFileFlags_EraseFile, &dst);
    EXPECT(s == noErr, "create: %d", (int)s);
    if (s != noErr) return 1;
    if (cookie) EXPECT(AudioFileSetProperty(dst, kAudioFilePropertyMagicCookieData, cookieSize, cookie) == noErr, "cookie before");
    UInt8 *buffer = malloc((size_t)upper * 100);
    AudioStreamPacketDescription descriptions[100];
    SInt64 next = 0;
    for (;;) {
        UInt32 n = 100, nb = upper * 100;
        if (AudioFileReadPacketData(src, false, &nb, descriptions, next, &n, buffer) != noErr || n == 0) break;
        UInt32 written = n;
        s = AudioFileWritePackets(dst, false, nb, descriptions, next, &written, buffer);
        EXPECT(s == noErr && written == n, "write %u packets at %lld: %d", n, (long long)next, (int)s);
        if (s != noErr) break;
        next += n;
    }
    EXPECT((UInt64)next == packets, "copied %lld of %llu packets", (long long)next, (unsigned long long)packets);
    UInt32 one = 1;
    EXPECT(AudioFileWritePackets(dst, false, 4, descriptions, next + 5, &one, buffer) == kAudioFileInvalidPacketOffsetError, "a gap");
    EXPECT(AudioFileWritePackets(dst, false, 4, NULL, next, &one, buffer) == kAudio_ParamError, "no descriptions");
    AudioFilePacketTableInfo table;
    size = sizeof table;
    if (AudioFileGetProperty(src, kAudioFilePropertyPacketTableInfo, &size, &table) == noErr) {
        EXPECT(AudioFileSetProperty(dst, kAudioFilePropertyPacketTableInfo, sizeof table, &table) == noErr, "packet table info");
        printf("priming=%d\n", table.mPrimingFrames);
    } else {
        printf("priming=0\n");
    }
    if (cookie) EXPECT(AudioFileSetProperty(dst, kAudioFilePropertyMagicCookieData, cookieSize, cookie) == noErr, "cookie after");
    UInt8 huge[5000] = {0};
    EXPECT(AudioFileSetProperty(dst, kAudioFilePropertyMagicCookieData, sizeof huge, huge) == kAudioFileBadPropertySizeError, "a cookie too large");
    EXPECT(AudioFileClose(dst) == noErr, "close");
    CFRelease(url);

    /* Read it back. */
    AudioFileID back = openFile(argv[2]);
    if (!back) return 1;
    AudioStreamBasicDescription g;
    size = sizeof g;
    EXPECT(AudioFileGetProperty(back, kAudioFilePropertyDataFormat, &size, &g) == noErr && g.mFormatID == format.mFormatID
           && g.mSampleRate == format.mSampleRate && g.mChannelsPerFrame == format.mChannelsPerFrame
           && g.mFramesPerPacket == format.mFramesPerPacket, "format read back");
    UInt32 backCookieSize = 0;
    UInt8 *backCookie = cookieOf(back, &backCookieSize);
    /* The same cookie, or the CAF form holding it (an ADTS file's bare AudioSpecificConfig in an
     * esds, an MP4's 'alac' atom after a 'frma' atom). */
    int sameCookie = backCookieSize == cookieSize && (cookieSize == 0 || memcmp(backCookie, cookie, cookieSize) == 0);
    int wrapped = 0;
    for (UInt32 at = 0; cookieSize > 0 && at + cookieSize <= backCookieSize; at++)
        if (memcmp(backCookie + at, cookie, cookieSize) == 0) wrapped = 1;
    EXPECT(sameCookie || wrapped, "cookie read back (%u bytes, %u written)", backCookieSize, cookieSize);
    UInt64 backPackets = 0;
    size = sizeof backPackets;
    EXPECT(AudioFileGetProperty(back, kAudioFilePropertyAudioDataPacketCount, &size, &backPackets) == noErr && backPackets == packets, "%llu packets read back", (unsigned long long)backPackets);
    UInt8 *other = malloc((size_t)upper * 100);
    AudioStreamPacketDescription otherDescriptions[100];
    int same = 1;
    for (SInt64 p = 0; p < (SInt64)packets; p += 100) {
        UInt32 n = 100, nb = upper * 100, m = 100, mb = upper * 100;
        AudioFileReadPacketData(src, false, &nb, descriptions, p, &n, buffer);
        AudioFileReadPacketData(back, false, &mb, otherDescriptions, p, &m, other);
        if (n != m || nb != mb || memcmp(buffer, other, nb) != 0) same = 0;
        for (UInt32 i = 0; same && i < n; i++)
            if (descriptions[i].mDataByteSize != otherDescriptions[i].mDataByteSize) same = 0;
    }
    EXPECT(same, "every packet's bytes read back");
    AudioFileClose(back);
    AudioFileClose(src);
    free(buffer);
    free(other);
    free(cookie);
    free(backCookie);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
