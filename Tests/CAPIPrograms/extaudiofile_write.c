/* extaudiofile_write.c — issue 23: ExtAudioFile writing. Writes a second of a 1 kHz tone (44.1
 * kHz stereo) through ExtAudioFileCreateWithURL and ExtAudioFileWrite in 1000-frame writes, from
 * a 32-bit float interleaved client, into DIR/tone.wav (16-bit), DIR/tone-alac.caf and
 * DIR/tone-aac.caf (the file formats given as ID, rate and channels), the same two into
 * DIR/tone-alac.m4a and DIR/tone-aac.m4a, and from a 16-bit
 * non-interleaved client into DIR/tone.aiff (24-bit); reads each back with ExtAudioFile and
 * checks the samples (PCM and ALAC to the 16-bit step, AAC close to the tone) and the length
 * (the encoders' priming and remainder left out); the result codes. Prints "wrote PATH" for each
 * file, then "N passed, M failed". Usage: extaudiofile_write DIR */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { kFrames = 44100, kChannels = 2 };
static float tone[kFrames * kChannels];

static AudioStreamBasicDescription floats(void) {
    AudioStreamBasicDescription f = {44100, kAudioFormatLinearPCM, kAudioFormatFlagsNativeFloatPacked, 8, 1, 8, kChannels, 32, 0};
    return f;
}

static CFURLRef urlFor(const char *dir, const char *name, char *path) {
    sprintf(path, "%s/%s", dir, name);
    return CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
}

/* Reads the whole file back as interleaved floats; returns the frames. */
static SInt64 readBack(CFURLRef url, float *out, SInt64 room) {
    ExtAudioFileRef f = NULL;
    if (ExtAudioFileOpenURL(url, &f) != noErr) return -1;
    AudioStreamBasicDescription c = floats();
    ExtAudioFileSetProperty(f, kExtAudioFileProperty_ClientDataFormat, sizeof c, &c);
    SInt64 done = 0;
    while (done < room) {
        UInt32 n = (UInt32)(room - done < 4096 ? room - done : 4096);
        AudioBufferList l = {1, {{kChannels, n * 8, out + done * kChannels}}};
        if (ExtAudioFileRead(f, &n, &l) != noErr || n == 0) break;
        done += n;
    }
    ExtAudioFileDispose(f);
    return done;
}

static void writeFloats(const char *dir, const char *name, AudioFileTypeID type, AudioStreamBasicDescription fileFormat, double tolerance) {
    char path[512];
    CFURLRef url = urlFor(dir, name, path);
    ExtAudioFileRef f = NULL;
    OSStatus s = ExtAudioFileCreateWithURL(url, type, &fileFormat, NULL, kAudioFileFlags_EraseFile, &f);
    EXPECT(s == noErr, "%s: create %d", name, (int)s);
    if (s != noErr) { CFRelease(url); return; }
    AudioStreamBasicDescription c = floats();
    EXPECT(ExtAudioFileSetProperty(f, kExtAudioFileProperty_ClientDataFormat, sizeof c, &c) == noErr, "%s: client format", name);
    EXPECT(ExtAudioFileWriteAsync(f, 0, NULL) == noErr, "%s: WriteAsync's priming call", name);
    for (int at = 0; at < kFrames; at += 1000) {
        UInt32 n = kFrames - at < 1000 ? kFrames - at : 1000;
        AudioBufferList l = {1, {{kChannels, n * 8, tone + at * kChannels}}};
        s = ExtAudioFileWrite(f, n, &l);
        if (s != noErr) { EXPECT(0, "%s: write at %d: %d", name, at, (int)s); break; }
    }
    SInt64 tell = 0;
    EXPECT(ExtAudioFileTell(f, &tell) == noErr && tell == kFrames, "%s: %lld frames written", name, (long long)tell);
    EXPECT(ExtAudioFileDispose(f) == noErr, "%s: dispose", name);
    float *back = malloc(sizeof tone + 4096 * 8);
    SInt64 n = readBack(url, back, kFrames + 4096);
    EXPECT(n == kFrames, "%s: %lld frames read back", name, (long long)n);
    double worst = 0;
    for (SInt64 i = 0; i < (n < kFrames ? n : kFrames) * kChannels; i++) {
        double d = back[i] - tone[i];
        if (d < 0) d = -d;
        if (d > worst) worst = d;
    }
    EXPECT(n > 0 && worst <= tolerance, "%s: samples within %g of the tone's (worst %g)", name, tolerance, worst);
    free(back);
    CFRelease(url);
    printf("wrote %s\n", path);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    for (int i = 0; i < kFrames; i++)
        for (int c = 0; c < kChannels; c++) tone[i * kChannels + c] = (float)(0.5 * sin(2 * M_PI * 1000 * i / 44100.0) * (c ? -1 : 1));

    AudioStreamBasicDescription wav = {44100, kAudioFormatLinearPCM, kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked, 4, 1, 4, kChannels, 16, 0};
    writeFloats(argv[1], "tone.wav", kAudioFileWAVEType, wav, 1.0 / 32768 + 1e-7);
    AudioStreamBasicDescription alac = {0};
    alac.mFormatID = kAudioFormatAppleLossless;
    alac.mSampleRate = 44100;
    alac.mChannelsPerFrame = kChannels;
    writeFloats(argv[1], "tone-alac.caf", kAudioFileCAFType, alac, 1.0 / 32768 + 1e-7);
    AudioStreamBasicDescription aac = alac;
    aac.mFormatID = kAudioFormatMPEG4AAC;
    writeFloats(argv[1], "tone-aac.caf", kAudioFileCAFType, aac, 0.1);  /* lossy: close to the tone */
    /* The same into M4A (the priming and remainder in its edit list). */
    writeFloats(argv[1], "tone-alac.m4a", kAudioFileM4AType, alac, 1.0 / 32768 + 1e-7);
    writeFloats(argv[1], "tone-aac.m4a", kAudioFileM4AType, aac, 0.1);

    /* From a 16-bit non-interleaved client into a 24-bit AIFF: exact. */
    char path[512];
    CFURLRef url = urlFor(argv[1], "tone.aiff", path);
    AudioStreamBasicDescription aiff = {44100, kAudioFormatLinearPCM, kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked | kAudioFormatFlagIsBigEndian, 6, 1, 6, kChannels, 24, 0};
    ExtAudioFileRef f = NULL;
    EXPECT(ExtAudioFileCreateWithURL(url, kAudioFileAIFFType, &aiff, NULL, kAudioFileFlags_EraseFile, &f) == noErr, "create the AIFF");
    AudioStreamBasicDescription planar = {44100, kAudioFormatLinearPCM,
        kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked | kAudioFormatFlagIsNonInterleaved, 2, 1, 2, kChannels, 16, 0};
    EXPECT(ExtAudioFileSetProperty(f, kExtAudioFileProperty_ClientDataFormat, sizeof planar, &planar) == noErr, "16-bit planar client");
    SInt16 *left = malloc(kFrames * 2), *right = malloc(kFrames * 2);
    for (int i = 0; i < kFrames; i++) { left[i] = (SInt16)(i * 7); right[i] = (SInt16)(-i * 5); }
    AudioBufferList *l = malloc(offsetof(AudioBufferList, mBuffers) + 2 * sizeof(AudioBuffer));
    l->mNumberBuffers = 2;
    l->mBuffers[0] = (AudioBuffer){1, kFrames * 2, left};
    l->mBuffers[1] = (AudioBuffer){1, kFrames * 2, right};
    EXPECT(ExtAudioFileWrite(f, kFrames, l) == noErr, "write planar");
    UInt32 one = 1;
    EXPECT(ExtAudioFileRead(f, &one, l) == kExtAudioFileError_InvalidOperationOrder, "reading a file being written");
    EXPECT(ExtAudioFileDispose(f) == noErr, "dispose the AIFF");
    float *back = malloc(sizeof tone + 4096 * 8);
    SInt64 n = readBack(url, back, kFrames + 4096);
    int exact = n == kFrames;
    for (int i = 0; exact && i < kFrames; i++)
        exact = back[2 * i] == left[i] / 32768.0f && back[2 * i + 1] == right[i] / 32768.0f;
    EXPECT(exact, "the AIFF reads back the 16-bit samples exactly (%lld frames)", (long long)n);
    printf("wrote %s\n", path);
    CFRelease(url);

    /* Result codes. */
    url = urlFor(argv[1], "refused.caf", path);
    AudioStreamBasicDescription mp3 = alac;
    mp3.mFormatID = kAudioFormatMPEGLayer3;
    EXPECT(ExtAudioFileCreateWithURL(url, kAudioFileCAFType, &mp3, NULL, kAudioFileFlags_EraseFile, &f) == kAudioFileUnsupportedDataFormatError, "MP3 is not encoded");
    EXPECT(ExtAudioFileCreateWithURL(url, kAudioFileWAVEType, &aac, NULL, kAudioFileFlags_EraseFile, &f) == kAudioFileUnsupportedDataFormatError, "AAC in WAVE");
    EXPECT(ExtAudioFileCreateWithURL(url, kAudioFileCAFType, &aac, NULL, kAudioFileFlags_EraseFile, &f) == noErr, "AAC in CAF");
    AudioBufferList l1 = {1, {{kChannels, 8000, tone}}};
    EXPECT(ExtAudioFileWrite(f, 1000, &l1) == kExtAudioFileError_NonPCMClientFormat, "no client format yet");
    AudioStreamBasicDescription mono = floats();
    mono.mChannelsPerFrame = 1;
    mono.mBytesPerFrame = mono.mBytesPerPacket = 4;
    EXPECT(ExtAudioFileSetProperty(f, kExtAudioFileProperty_ClientDataFormat, sizeof mono, &mono) == kExtAudioFileError_InvalidDataFormat, "another channel count");
    EXPECT(ExtAudioFileDispose(f) == noErr, "dispose");
    CFRelease(url);
    free(back); free(left); free(right); free(l);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
