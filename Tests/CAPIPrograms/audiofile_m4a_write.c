/* audiofile_m4a_write.c — issue 23: copies the AAC or Apple Lossless packets of SRC (any file
 * AudioFileOpenURL reads) into a new M4A with AudioFileCreateWithURL(kAudioFileM4AType), as a
 * program ported from Apple's would: the magic cookie set with AudioFileSetProperty (before the
 * packets and again after), the packets written with AudioFileWritePackets 64 at a time with their
 * descriptions, the source's packet table (priming, remainder) set before AudioFileClose. Then it
 * opens DST and checks its file type, format, cookie (the source's, or the MP4 form holding it),
 * packet count, packet table and every packet's bytes; and that formats an M4A cannot hold are
 * refused; and that the cookie in its other forms (AAC's ES descriptor alone, ALAC's bare config)
 * gives the same file cookie (in an MPEG-4 file, kAudioFileMPEG4Type). Prints "priming=N", then "N passed, M failed".
 * Usage: audiofile_m4a_write SRC DST */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static CFURLRef urlOf(const char *path) {
    return CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
}

static AudioFileID openFile(const char *path) {
    CFURLRef url = urlOf(path);
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

/* True when `inner` lies inside `outer`. */
static int within(const UInt8 *outer, UInt32 outerSize, const UInt8 *inner, UInt32 innerSize) {
    for (UInt32 at = 0; innerSize > 0 && at + innerSize <= outerSize; at++)
        if (memcmp(outer + at, inner, innerSize) == 0) return 1;
    return 0;
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
    AudioFilePacketTableInfo table = {0, 0, 0};
    size = sizeof table;
    int hasTable = AudioFileGetProperty(src, kAudioFilePropertyPacketTableInfo, &size, &table) == noErr;
    printf("priming=%d\n", hasTable ? table.mPrimingFrames : 0);

    /* What an M4A cannot hold. */
    CFURLRef url = urlOf(argv[2]);
    AudioFileID dst = NULL;
    AudioStreamBasicDescription pcm = {44100, kAudioFormatLinearPCM, kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked, 4, 1, 4, 2, 16, 0};
    EXPECT(AudioFileCreateWithURL(url, kAudioFileM4AType, &pcm, kAudioFileFlags_EraseFile, &dst) == kAudioFileUnsupportedDataFormatError, "linear PCM in M4A");
    AudioStreamBasicDescription mp3 = {44100, kAudioFormatMPEGLayer3, 0, 0, 1152, 0, 2, 0, 0};
    EXPECT(AudioFileCreateWithURL(url, kAudioFileM4AType, &mp3, kAudioFileFlags_EraseFile, &dst) == kAudioFileUnsupportedDataFormatError, "MP3 in M4A");

    OSStatus s = AudioFileCreateWithURL(url, kAudioFileM4AType, &format, kAudioFileFlags_EraseFile, &dst);
    CFRelease(url);
    EXPECT(s == noErr, "create: %d", (int)s);
    if (s != noErr) return 1;
    if (cookie) EXPECT(AudioFileSetProperty(dst, kAudioFilePropertyMagicCookieData, cookieSize, cookie) == noErr, "cookie before");
    UInt8 *buffer = malloc((size_t)upper * 64);
    AudioStreamPacketDescription descriptions[64];
    SInt64 next = 0;
    for (;;) {
        UInt32 n = 64, nb = upper * 64;
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
    if (hasTable) EXPECT(AudioFileSetProperty(dst, kAudioFilePropertyPacketTableInfo, sizeof table, &table) == noErr, "packet table info");
    if (cookie) EXPECT(AudioFileSetProperty(dst, kAudioFilePropertyMagicCookieData, cookieSize, cookie) == noErr, "cookie after");
    EXPECT(AudioFileOptimize(dst) == noErr, "optimize");  /* a moov now, then again at close */
    EXPECT(AudioFileClose(dst) == noErr, "close");

    /* Read it back. */
    AudioFileID back = openFile(argv[2]);
    if (!back) return 1;
    AudioFileTypeID type = 0;
    size = sizeof type;
    EXPECT(AudioFileGetProperty(back, kAudioFilePropertyFileFormat, &size, &type) == noErr && type == kAudioFileM4AType, "file type %x", type);
    AudioStreamBasicDescription g;
    size = sizeof g;
    EXPECT(AudioFileGetProperty(back, kAudioFilePropertyDataFormat, &size, &g) == noErr && g.mFormatID == format.mFormatID
           && g.mSampleRate == format.mSampleRate && g.mChannelsPerFrame == format.mChannelsPerFrame
           && g.mFramesPerPacket == format.mFramesPerPacket, "format read back");
    UInt32 backCookieSize = 0;
    UInt8 *backCookie = cookieOf(back, &backCookieSize);
    /* The same cookie, or one holding the other (an ADTS file's AudioSpecificConfig in an esds;
     * a CAF's 'frma' + 'alac' atoms around the MP4's 'alac' atom). */
    EXPECT(backCookie && (within(backCookie, backCookieSize, cookie, cookieSize) || within(cookie, cookieSize, backCookie, backCookieSize)),
           "cookie read back (%u bytes, %u written)", backCookieSize, cookieSize);
    UInt64 backPackets = 0;
    size = sizeof backPackets;
    EXPECT(AudioFileGetProperty(back, kAudioFilePropertyAudioDataPacketCount, &size, &backPackets) == noErr && backPackets == packets,
           "%llu packets read back", (unsigned long long)backPackets);
    AudioFilePacketTableInfo backTable = {0, 0, 0};
    size = sizeof backTable;
    OSStatus ts = AudioFileGetProperty(back, kAudioFilePropertyPacketTableInfo, &size, &backTable);
    if (hasTable)
        EXPECT(ts == noErr && backTable.mNumberValidFrames == table.mNumberValidFrames && backTable.mPrimingFrames == table.mPrimingFrames
               && backTable.mRemainderFrames == table.mRemainderFrames,
               "packet table read back: %lld valid, %d priming, %d remainder (wrote %lld, %d, %d)", (long long)backTable.mNumberValidFrames,
               backTable.mPrimingFrames, backTable.mRemainderFrames, (long long)table.mNumberValidFrames, table.mPrimingFrames, table.mRemainderFrames);
    UInt8 *other = malloc((size_t)upper * 64);
    AudioStreamPacketDescription otherDescriptions[64];
    int same = 1;
    for (SInt64 p = 0; p < (SInt64)packets; p += 64) {
        UInt32 n = 64, nb = upper * 64, m = 64, mb = upper * 64;
        AudioFileReadPacketData(src, false, &nb, descriptions, p, &n, buffer);
        AudioFileReadPacketData(back, false, &mb, otherDescriptions, p, &m, other);
        if (n != m || nb != mb || memcmp(buffer, other, nb) != 0) same = 0;
        for (UInt32 i = 0; same && i < n; i++)
            if (descriptions[i].mDataByteSize != otherDescriptions[i].mDataByteSize) same = 0;
    }
    EXPECT(same, "every packet's bytes read back");
    AudioFileClose(back);

    /* The cookie in Apple's other forms (AAC: the ES descriptor alone, as Apple's encoder gives
     * it; ALAC: the bare 24-byte ALACSpecificConfig) gives the same file cookie; this one is
     * made as kAudioFileMPEG4Type (brand 'mp42') and reads back as that. */
    UInt8 *alt = NULL;
    UInt32 altSize = 0;
    if (format.mFormatID == kAudioFormatMPEG4AAC && backCookieSize > 5 && backCookie[4] == 0x03) {
        alt = backCookie + 4;
        altSize = backCookieSize - 4;
    } else if (format.mFormatID == kAudioFormatAppleLossless && backCookieSize >= 36) {
        alt = backCookie + 12;
        altSize = 24;
    }
    if (alt) {
        char path[600];
        snprintf(path, sizeof path, "%s.alt.mp4", argv[2]);
        url = urlOf(path);
        s = AudioFileCreateWithURL(url, kAudioFileMPEG4Type, &format, kAudioFileFlags_EraseFile, &dst);
        CFRelease(url);
        EXPECT(s == noErr && AudioFileSetProperty(dst, kAudioFilePropertyMagicCookieData, altSize, alt) == noErr, "the cookie's other form");
        UInt32 n = 10, nb = upper * 64;
        AudioFileReadPacketData(src, false, &nb, descriptions, 0, &n, buffer);
        EXPECT(AudioFileWritePackets(dst, false, nb, descriptions, 0, &n, buffer) == noErr && AudioFileClose(dst) == noErr, "ten packets");
        AudioFileID alternate = openFile(path);
        UInt32 altBackSize = 0;
        UInt8 *altBack = alternate ? cookieOf(alternate, &altBackSize) : NULL;
        type = 0;
        size = sizeof type;
        EXPECT(alternate && AudioFileGetProperty(alternate, kAudioFilePropertyFileFormat, &size, &type) == noErr && type == kAudioFileMPEG4Type, "MPEG-4 type %x", type);
        EXPECT(altBack && altBackSize == backCookieSize && memcmp(altBack, backCookie, altBackSize) == 0, "the same cookie from its other form (%u bytes)", altBackSize);
        free(altBack);
        if (alternate) AudioFileClose(alternate);
    }
    AudioFileClose(src);
    free(buffer);
    free(other);
    free(cookie);
    free(backCookie);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
