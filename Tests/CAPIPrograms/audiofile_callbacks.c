/* audiofile_callbacks.c — issue 23: Audio File Services on the caller's storage. A WAVE of
 * linear PCM written with AudioFileInitializeWithCallbacks into memory, read back with
 * AudioFileOpenWithCallbacks; FILE (any audio file) loaded into memory and opened with the
 * callbacks, answering what AudioFileOpenURL answers for it; the result codes of missing and
 * failing callbacks. Prints "N passed, M failed". Usage: audiofile_callbacks FILE */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

typedef struct { UInt8 *bytes; SInt64 size, capacity; int failReads; } Memory;

static OSStatus readProc(void *client, SInt64 position, UInt32 count, void *buffer, UInt32 *actual) {
    Memory *m = client;
    if (m->failReads) return kAudioFilePositionError;
    *actual = 0;
    if (position >= m->size) return kAudioFileEndOfFileError;
    SInt64 n = m->size - position < (SInt64)count ? m->size - position : (SInt64)count;
    memcpy(buffer, m->bytes + position, (size_t)n);
    *actual = (UInt32)n;
    return n < (SInt64)count ? kAudioFileEndOfFileError : noErr;
}
static OSStatus setSizeProc(void *client, SInt64 size) {
    Memory *m = client;
    if (size > m->capacity) {
        m->capacity = size * 2 + 4096;
        m->bytes = realloc(m->bytes, (size_t)m->capacity);
    }
    if (size > m->size) memset(m->bytes + m->size, 0, (size_t)(size - m->size));
    m->size = size;
    return noErr;
}
static OSStatus writeProc(void *client, SInt64 position, UInt32 count, const void *buffer, UInt32 *actual) {
    Memory *m = client;
    if (position + count > m->size) setSizeProc(m, position + count);
    memcpy(m->bytes + position, buffer, count);
    *actual = count;
    return noErr;
}
static SInt64 getSizeProc(void *client) { return ((Memory *)client)->size; }

static UInt64 packetsOf(AudioFileID f) {
    UInt64 n = 0;
    UInt32 size = sizeof n;
    AudioFileGetProperty(f, kAudioFilePropertyAudioDataPacketCount, &size, &n);
    return n;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    /* Write a WAVE into memory. */
    Memory m = {0};
    AudioStreamBasicDescription f = {0};
    f.mSampleRate = 48000;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked;
    f.mBitsPerChannel = 16;
    f.mChannelsPerFrame = 2;
    f.mBytesPerFrame = f.mBytesPerPacket = 4;
    f.mFramesPerPacket = 1;
    AudioFileID file = NULL;
    OSStatus s = AudioFileInitializeWithCallbacks(&m, readProc, writeProc, getSizeProc, setSizeProc, kAudioFileWAVEType, &f, 0, &file);
    EXPECT(s == noErr, "initialize: %d", (int)s);
    SInt16 samples[2 * 1000];
    for (int i = 0; i < 2000; i++) samples[i] = (SInt16)(i * 13);
    UInt32 packets = 1000;
    EXPECT(AudioFileWritePackets(file, false, sizeof samples, NULL, 0, &packets, samples) == noErr && packets == 1000, "write");
    EXPECT(AudioFileClose(file) == noErr, "close");
    EXPECT(m.size == 44 + (SInt64)sizeof samples && memcmp(m.bytes, "RIFF", 4) == 0 && memcmp(m.bytes + 44, samples, sizeof samples) == 0, "the WAVE in memory: %lld bytes", (long long)m.size);

    /* Read it back from memory. */
    file = NULL;
    EXPECT(AudioFileOpenWithCallbacks(&m, readProc, NULL, getSizeProc, NULL, 0, &file) == noErr, "open from memory");
    EXPECT(file && packetsOf(file) == 1000, "1000 packets");
    SInt16 back[2000];
    UInt32 bytes = sizeof back;
    packets = 1000;
    EXPECT(file && AudioFileReadPacketData(file, false, &bytes, NULL, 0, &packets, back) == noErr && packets == 1000
           && memcmp(back, samples, sizeof samples) == 0, "the samples read back");
    if (file) AudioFileClose(file);

    /* FILE through the callbacks answers as through its URL. */
    FILE *in = fopen(argv[1], "rb");
    if (!in) return 1;
    Memory loaded = {0};
    fseek(in, 0, SEEK_END);
    setSizeProc(&loaded, ftell(in));
    fseek(in, 0, SEEK_SET);
    if (fread(loaded.bytes, 1, (size_t)loaded.size, in) != (size_t)loaded.size) return 1;
    fclose(in);
    AudioFileID viaURL = NULL, viaCallbacks = NULL;
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)argv[1], (CFIndex)strlen(argv[1]), false);
    EXPECT(AudioFileOpenURL(url, kAudioFileReadPermission, 0, &viaURL) == noErr, "open the file");
    CFRelease(url);
    EXPECT(AudioFileOpenWithCallbacks(&loaded, readProc, NULL, getSizeProc, NULL, 0, &viaCallbacks) == noErr, "open its bytes");
    if (viaURL && viaCallbacks) {
        AudioStreamBasicDescription a, b;
        UInt32 size = sizeof a;
        AudioFileGetProperty(viaURL, kAudioFilePropertyDataFormat, &size, &a);
        size = sizeof b;
        AudioFileGetProperty(viaCallbacks, kAudioFilePropertyDataFormat, &size, &b);
        EXPECT(memcmp(&a, &b, sizeof a) == 0 && packetsOf(viaURL) == packetsOf(viaCallbacks) && packetsOf(viaURL) > 0,
               "the same format and %llu packets", (unsigned long long)packetsOf(viaCallbacks));
        AudioFileClose(viaURL);
        AudioFileClose(viaCallbacks);
    }

    /* Missing and failing callbacks. */
    EXPECT(AudioFileOpenWithCallbacks(&loaded, NULL, NULL, getSizeProc, NULL, 0, &file) == kAudio_ParamError, "no read callback");
    EXPECT(AudioFileInitializeWithCallbacks(&m, readProc, writeProc, getSizeProc, NULL, kAudioFileWAVEType, &f, 0, &file) == kAudio_ParamError, "no set-size callback");
    loaded.failReads = 1;
    EXPECT(AudioFileOpenWithCallbacks(&loaded, readProc, NULL, getSizeProc, NULL, 0, &file) != noErr, "a failing read callback");
    free(m.bytes);
    free(loaded.bytes);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
