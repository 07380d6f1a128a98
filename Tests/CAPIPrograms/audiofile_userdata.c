/* audiofile_userdata.c — issue 23: user data (top-level chunks) through Audio File Services.
 * For each of WAVE, AIFF and CAF it creates a file of 1001 frames of mono 24-bit PCM (3003
 * bytes: an odd data chunk, padded in WAVE and AIFF), sets user data while writing (two 'aqud'
 * items, one replaced, a third added and removed; a 5-byte 'aqu2'; an optimize in between, so
 * that chunks written once are rewritten), closes it, opens it again and reads the user data
 * back (counts, sizes, bytes, at an offset, the result codes of an index past the end and of a
 * change to a file opened for reading), and the audio bytes (unchanged by the chunks after
 * them). An M4A being created answers kAudioFileOperationNotSupportedError. With a third
 * argument, a WAVE written by ffmpeg with metadata: its 'LIST' item holds "INFO". Prints
 * "wrote PATH" for each file (the test decodes them with ffmpeg), then "N passed, M failed".
 * Usage: audiofile_userdata DIR [FFMPEG.wav] */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { kFrames = 1001, kBytes = kFrames * 3 };
/* The items written are of a private type 'aqud' (a WAVE's 'LIST' must hold a list, which
 * ffmpeg checks); and 'aqu2' (ffmpeg also checks 'bext'); 'LIST' read from ffmpeg's file. */
static const UInt32 kItem = 0x61717564, kLIST = 0x4C495354, kBext = 0x61717532, kNone = 0x6E6F6E65;

static CFURLRef urlFor(const char *path) {
    return CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
}

static void check(const char *path, const UInt8 *audio, const char *first, const char *second) {
    CFURLRef url = urlFor(path);
    AudioFileID f = NULL;
    OSStatus r = AudioFileOpenURL(url, kAudioFileReadPermission, 0, &f);
    CFRelease(url);
    EXPECT(r == noErr, "%s: open: %d", path, (int)r);
    if (!f) return;
    UInt32 n = 99;
    EXPECT(AudioFileCountUserData(f, kItem, &n) == noErr && n == 2, "%s: 2 aqud items (%u)", path, (unsigned)n);
    EXPECT(AudioFileCountUserData(f, kBext, &n) == noErr && n == 1, "%s: 1 aqu2 item (%u)", path, (unsigned)n);
    EXPECT(AudioFileCountUserData(f, kNone, &n) == noErr && n == 0, "%s: no 'none' item (%u)", path, (unsigned)n);
    const char *want[2] = {first, second};
    for (UInt32 i = 0; i < 2; i++) {
        UInt32 size = 0;
        UInt64 size64 = 0;
        EXPECT(AudioFileGetUserDataSize(f, kItem, i, &size) == noErr && size == strlen(want[i]), "%s: aqud %u size %u", path, (unsigned)i, (unsigned)size);
        EXPECT(AudioFileGetUserDataSize64(f, kItem, i, &size64) == noErr && size64 == strlen(want[i]), "%s: aqud %u size64", path, (unsigned)i);
        char buf[64] = {0};
        UInt32 io = sizeof buf;
        EXPECT(AudioFileGetUserData(f, kItem, i, &io, buf) == noErr && io == strlen(want[i]) && memcmp(buf, want[i], io) == 0,
               "%s: aqud %u reads \"%s\" (%u bytes)", path, (unsigned)i, buf, (unsigned)io);
        memset(buf, 0, sizeof buf);
        io = 3;
        EXPECT(AudioFileGetUserDataAtOffset(f, kItem, i, 2, &io, buf) == noErr && io == 3 && memcmp(buf, want[i] + 2, 3) == 0,
               "%s: aqud %u at offset 2 reads \"%s\"", path, (unsigned)i, buf);
    }
    char bext[8] = {0};
    UInt32 io = sizeof bext;
    EXPECT(AudioFileGetUserData(f, kBext, 0, &io, bext) == noErr && io == 5 && memcmp(bext, "hello", 5) == 0, "%s: aqu2 reads \"%s\"", path, bext);
    UInt32 size = 0;
    EXPECT(AudioFileGetUserDataSize(f, kItem, 2, &size) == kAudioFileInvalidChunkError, "%s: aqud 2 is not there", path);
    EXPECT(AudioFileSetUserData(f, kItem, 0, 1, "x") == kAudioFilePermissionsError, "%s: a file opened for reading keeps its user data", path);
    EXPECT(AudioFileRemoveUserData(f, kItem, 0) == kAudioFilePermissionsError, "%s: nor can they be removed", path);
    UInt8 back[kBytes + 16];
    UInt32 bytes = sizeof back;
    r = AudioFileReadBytes(f, false, 0, &bytes, back);
    EXPECT((r == noErr || r == kAudioFileEndOfFileError) && bytes == kBytes && memcmp(back, audio, kBytes) == 0,
           "%s: the audio reads back whole (%u bytes, %d)", path, (unsigned)bytes, (int)r);
    AudioFileClose(f);
}

static void writeOne(const char *dir, const char *name, AudioFileTypeID type, int big) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    AudioStreamBasicDescription fmt;
    memset(&fmt, 0, sizeof fmt);
    fmt.mSampleRate = 48000; fmt.mFormatID = kAudioFormatLinearPCM;
    fmt.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked | (big ? kAudioFormatFlagIsBigEndian : 0);
    fmt.mChannelsPerFrame = 1; fmt.mBitsPerChannel = 24; fmt.mBytesPerFrame = fmt.mBytesPerPacket = 3; fmt.mFramesPerPacket = 1;
    UInt8 audio[kBytes];
    for (int i = 0; i < kBytes; i++) audio[i] = (UInt8)(i * 7 + 3);
    CFURLRef url = urlFor(path);
    AudioFileID f = NULL;
    OSStatus r = AudioFileCreateWithURL(url, type, &fmt, kAudioFileFlags_EraseFile, &f);
    CFRelease(url);
    EXPECT(r == noErr, "%s: create: %d", path, (int)r);
    if (!f) return;
    EXPECT(AudioFileSetUserData(f, kItem, 0, 6, "first!") == noErr, "%s: set aqud 0", path);
    EXPECT(AudioFileSetUserData(f, kItem, 2, 1, "x") == kAudioFileInvalidChunkError, "%s: aqud 2 before aqud 1 is refused", path);
    EXPECT(AudioFileSetUserData(f, kItem, 1, 7, "second?") == noErr, "%s: set aqud 1", path);
    EXPECT(AudioFileSetUserData(f, kItem, 2, 5, "third") == noErr, "%s: set aqud 2", path);
    UInt32 n = 0;
    EXPECT(AudioFileCountUserData(f, kItem, &n) == noErr && n == 3, "%s: 3 aqud items while writing (%u)", path, (unsigned)n);
    UInt32 bytes = kBytes / 2;
    EXPECT(AudioFileWriteBytes(f, false, 0, &bytes, audio) == noErr, "%s: write the first half", path);
    EXPECT(AudioFileOptimize(f) == noErr, "%s: optimize (the chunks written after the first half)", path);
    bytes = kBytes - kBytes / 2;
    EXPECT(AudioFileWriteBytes(f, false, kBytes / 2, &bytes, audio + kBytes / 2) == noErr, "%s: write the rest", path);
    EXPECT(AudioFileRemoveUserData(f, kItem, 2) == noErr, "%s: remove aqud 2", path);
    EXPECT(AudioFileRemoveUserData(f, kItem, 5) == kAudioFileInvalidChunkError, "%s: remove aqud 5: not there", path);
    EXPECT(AudioFileSetUserData(f, kItem, 0, 5, "first") == noErr, "%s: replace aqud 0", path);
    EXPECT(AudioFileSetUserData(f, kBext, 0, 5, "hello") == noErr, "%s: set aqu2 0", path);
    char buf[16] = {0};
    UInt32 io = sizeof buf;
    EXPECT(AudioFileGetUserData(f, kItem, 1, &io, buf) == noErr && io == 7 && memcmp(buf, "second?", 7) == 0, "%s: aqud 1 while writing", path);
    EXPECT(AudioFileClose(f) == noErr, "%s: close", path);
    printf("wrote %s\n", path);
    check(path, audio, "first", "second?");
}

int main(int argc, char **argv) {
    if (argc < 2) { printf("usage: audiofile_userdata DIR [FFMPEG.wav]\n"); return 2; }
    writeOne(argv[1], "userdata.wav", kAudioFileWAVEType, 0);
    writeOne(argv[1], "userdata.aif", kAudioFileAIFFType, 1);
    writeOne(argv[1], "userdata.caf", kAudioFileCAFType, 0);

    /* An M4A being created has no chunks for user data. */
    char path[512];
    snprintf(path, sizeof path, "%s/userdata.m4a", argv[1]);
    AudioStreamBasicDescription aac;
    memset(&aac, 0, sizeof aac);
    aac.mSampleRate = 44100; aac.mFormatID = kAudioFormatMPEG4AAC; aac.mChannelsPerFrame = 2; aac.mFramesPerPacket = 1024;
    CFURLRef url = urlFor(path);
    AudioFileID m4a = NULL;
    OSStatus r = AudioFileCreateWithURL(url, kAudioFileM4AType, &aac, kAudioFileFlags_EraseFile, &m4a);
    CFRelease(url);
    EXPECT(r == noErr, "m4a create: %d", (int)r);
    if (m4a) {
        UInt32 n = 0;
        EXPECT(AudioFileSetUserData(m4a, kItem, 0, 1, "x") == kAudioFileOperationNotSupportedError, "m4a: no user data");
        EXPECT(AudioFileCountUserData(m4a, kItem, &n) == kAudioFileOperationNotSupportedError, "m4a: no user data to count");
        AudioFileClose(m4a);
    }
    EXPECT(AudioFileCountUserData(NULL, kLIST, NULL) == kAudio_ParamError, "NULL file");

    if (argc > 2) {
        url = urlFor(argv[2]);
        AudioFileID f = NULL;
        r = AudioFileOpenURL(url, kAudioFileReadPermission, 0, &f);
        CFRelease(url);
        EXPECT(r == noErr, "%s: open: %d", argv[2], (int)r);
        if (f) {
            UInt32 n = 0, size = 0;
            EXPECT(AudioFileCountUserData(f, kLIST, &n) == noErr && n == 1, "ffmpeg's WAVE: 1 LIST item (%u)", (unsigned)n);
            EXPECT(AudioFileGetUserDataSize(f, kLIST, 0, &size) == noErr && size >= 4 && size < 4096, "ffmpeg's LIST size %u", (unsigned)size);
            char buf[4096] = {0};
            UInt32 io = sizeof buf;
            EXPECT(AudioFileGetUserData(f, kLIST, 0, &io, buf) == noErr && io == size && memcmp(buf, "INFO", 4) == 0, "ffmpeg's LIST holds INFO");
            int titled = 0;
            for (UInt32 i = 0; i + 8 <= io; i++) if (memcmp(buf + i, "aqsync-ud", 9) == 0) titled = 1;
            EXPECT(titled, "ffmpeg's LIST holds the title");
            AudioFileClose(f);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
