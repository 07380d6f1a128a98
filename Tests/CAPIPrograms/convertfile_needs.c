/* convertfile_needs.c — issue 23: what Apple's ConvertFile sample (UseAC-AF.cpp, utils.cpp) asks
 * of Audio Format Services, Audio Converter Services and Audio File Services, done the way it
 * does it, in a program of our own:
 *  - kAudioFormatProperty_DecodeFormatIDs / EncodeFormatIDs: the size first, then the IDs
 *    (linear PCM, AAC, MP3, Apple Lossless among the decoders; linear PCM, AAC, ALAC among the
 *    encoders); a short size gets as many as fit;
 *  - an AAC encoder's kAudioConverterOutputChannelLayout asked (answered 'prop': the program
 *    then takes the layout from its file), its PrimeInfo not settable, and (as
 *    iPhoneACFileConvertTest asks) kAudioConverterPropertyCanResumeFromInterruption answered
 *    'prop': a software codec;
 *  - 1 s of a 1 kHz stereo tone (left 0.5, right 0.25) at 44100 Hz encoded into a CAF
 *    (AudioFileCreateWithURL), whose packet table AudioFileGetPropertyInfo calls writable, set
 *    from the converter's PrimeInfo after the last packet;
 *  - that file decoded by an AAC converter given the file's cookie and, as PrimeInfo, the packet
 *    table's priming: the output starts at the tone's frame 0 (the samples within AAC's error of
 *    the source at lag 0), and again after AudioConverterReset; without PrimeInfo it starts
 *    with the encoder's 1024 frames of priming (the source matches at lag 1024);
 *  - UseExtAF.cpp with a bit rate: ExtAudioFileCreateWithURL of AAC at rate 0, the client
 *    format (22050 Hz here) giving the file its rate, kExtAudioFileProperty_AudioConverter,
 *    kAudioConverterEncodeBitRate set on it, kExtAudioFileProperty_ConverterConfig set to NULL:
 *    the file is at the client's rate and at 32 kb/s smaller than at 128 kb/s;
 *  - CFURLCopyPath of a file URL (gcc: the Core Foundation subset declares it).
 * Prints "N passed, M failed". Usage: convertfile_needs DIR */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { kRate = 44100, kFrames = 44100 };

static int contains(const UInt32 *ids, UInt32 n, UInt32 id) {
    for (UInt32 i = 0; i < n; i++) if (ids[i] == id) return 1;
    return 0;
}

typedef struct { const SInt16 *pcm; UInt32 next; } Tone;

static OSStatus toneInput(AudioConverterRef c, UInt32 *ioPackets, AudioBufferList *io, AudioStreamPacketDescription **d, void *user) {
    (void)c; (void)d;
    Tone *t = user;
    UInt32 n = kFrames - t->next;
    if (n > *ioPackets) n = *ioPackets;
    if (n > 1000) n = 1000;
    io->mBuffers[0].mData = (void *)(t->pcm + 2 * t->next);
    io->mBuffers[0].mDataByteSize = n * 4;
    io->mBuffers[0].mNumberChannels = 2;
    t->next += n;
    *ioPackets = n;
    return noErr;
}

typedef struct { AudioFileID file; SInt64 packet, packets; char bytes[8192]; AudioStreamPacketDescription d; } Packets;

static OSStatus fileInput(AudioConverterRef c, UInt32 *ioPackets, AudioBufferList *io, AudioStreamPacketDescription **d, void *user) {
    (void)c;
    Packets *p = user;
    if (p->packet >= p->packets) { *ioPackets = 0; return noErr; }
    UInt32 bytes = sizeof p->bytes, n = 1;
    OSStatus r = AudioFileReadPacketData(p->file, false, &bytes, &p->d, p->packet, &n, p->bytes);
    if (r != noErr && r != kAudioFileEndOfFileError) return r;
    p->packet += n;
    io->mBuffers[0].mData = p->bytes;
    io->mBuffers[0].mDataByteSize = bytes;
    io->mBuffers[0].mNumberChannels = 2;
    if (d) *d = &p->d;
    *ioPackets = n;
    return noErr;
}

static AudioStreamBasicDescription pcm16(void) {
    AudioStreamBasicDescription f = {0};
    f.mSampleRate = kRate; f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked;
    f.mBitsPerChannel = 16; f.mChannelsPerFrame = 2; f.mFramesPerPacket = 1; f.mBytesPerFrame = f.mBytesPerPacket = 4;
    return f;
}

/* The signal-to-error ratio (dB) of `out` against the tone `src` delayed by `lag` frames, over
 * frames 2048…32767 of the source. */
static double snrAt(const SInt16 *out, UInt32 outFrames, const SInt16 *src, UInt32 lag) {
    double s = 0, e = 0;
    for (UInt32 i = 2048; i < 32768 && i + lag < outFrames; i++) {
        for (int ch = 0; ch < 2; ch++) {
            double a = src[2 * i + ch], b = out[2 * (i + lag) + ch];
            s += a * a;
            e += (a - b) * (a - b);
        }
    }
    return e > 0 ? 10 * log10(s / e) : 200;
}

/* Decodes DIR/t.caf; prime < 0: PrimeInfo not set. Returns the frames decoded into out. */
static UInt32 decode(CFURLRef url, int prime, int resetAndAgain, SInt16 *out, UInt32 room) {
    AudioFileID f = NULL;
    EXPECT(AudioFileOpenURL(url, kAudioFileReadPermission, 0, &f) == noErr, "open t.caf");
    if (!f) return 0;
    AudioStreamBasicDescription in = {0}, pcm = pcm16();
    UInt32 size = sizeof in;
    AudioFileGetProperty(f, kAudioFilePropertyDataFormat, &size, &in);
    AudioConverterRef c = NULL;
    EXPECT(AudioConverterNew(&in, &pcm, &c) == noErr, "a decoder");
    UInt32 cookieSize = 0;
    if (AudioFileGetPropertyInfo(f, kAudioFilePropertyMagicCookieData, &cookieSize, NULL) == noErr && cookieSize) {
        void *cookie = malloc(cookieSize);
        AudioFileGetProperty(f, kAudioFilePropertyMagicCookieData, &cookieSize, cookie);
        EXPECT(AudioConverterSetProperty(c, kAudioConverterDecompressionMagicCookie, cookieSize, cookie) == noErr, "the cookie");
        free(cookie);
    }
    if (prime >= 0) {
        Boolean writable = false;
        size = 0;
        EXPECT(AudioConverterGetPropertyInfo(c, kAudioConverterPrimeInfo, &size, &writable) == noErr && writable && size == sizeof(AudioConverterPrimeInfo),
               "a decoder's PrimeInfo is writable (%u bytes, %d)", (unsigned)size, writable);
        AudioConverterPrimeInfo pi = { (UInt32)prime, 0 };
        EXPECT(AudioConverterSetProperty(c, kAudioConverterPrimeInfo, 3, &pi) == kAudioConverterErr_BadPropertySizeError, "PrimeInfo of 3 bytes");
        EXPECT(AudioConverterSetProperty(c, kAudioConverterPrimeInfo, sizeof pi, &pi) == noErr, "PrimeInfo set");
        AudioConverterPrimeInfo back = {0, 0};
        size = sizeof back;
        EXPECT(AudioConverterGetProperty(c, kAudioConverterPrimeInfo, &size, &back) == noErr && back.leadingFrames == (UInt32)prime && back.trailingFrames == 0,
               "PrimeInfo read back: %u %u", (unsigned)back.leadingFrames, (unsigned)back.trailingFrames);
    }
    Packets p = { f, 0, 0, {0}, {0, 0, 0} };
    UInt64 count = 0;
    size = sizeof count;
    AudioFileGetProperty(f, kAudioFilePropertyAudioDataPacketCount, &size, &count);
    p.packets = (SInt64)count;
    UInt32 total = 0;
    for (int pass = 0; pass < (resetAndAgain ? 2 : 1); pass++) {
        if (pass == 1) {
            EXPECT(AudioConverterReset(c) == noErr, "reset");
            p.packet = 0;
            total = 0;
        }
        for (;;) {
            UInt32 frames = 4096;
            if (frames > room - total) frames = room - total;
            AudioBufferList list;
            list.mNumberBuffers = 1;
            list.mBuffers[0].mNumberChannels = 2;
            list.mBuffers[0].mDataByteSize = frames * 4;
            list.mBuffers[0].mData = out + 2 * total;
            OSStatus r = AudioConverterFillComplexBuffer(c, fileInput, &p, &frames, &list, NULL);
            EXPECT(r == noErr, "fill: %d", (int)r);
            if (r != noErr || frames == 0) break;
            total += frames;
        }
    }
    AudioConverterDispose(c);
    AudioFileClose(f);
    return total;
}

/* UseExtAF.cpp's way with a bit rate: DIR/NAME written from the tone (as 22050 Hz PCM, every
 * other frame) at `bitRate`; returns the file's size in bytes. */
static long extAudioFileAt(const char *dir, const char *name, UInt32 bitRate, const SInt16 *pcm) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
    AudioStreamBasicDescription aac = {0}, client = pcm16();
    aac.mFormatID = kAudioFormatMPEG4AAC; aac.mChannelsPerFrame = 2; aac.mFramesPerPacket = 1024;  /* rate 0 */
    client.mSampleRate = 22050;
    ExtAudioFileRef f = NULL;
    EXPECT(ExtAudioFileCreateWithURL(url, kAudioFileCAFType, &aac, NULL, kAudioFileFlags_EraseFile, &f) == noErr, "create %s at rate 0", name);
    if (!f) { CFRelease(url); return 0; }
    AudioConverterRef c = NULL;
    UInt32 size = sizeof c;
    EXPECT(ExtAudioFileGetProperty(f, kExtAudioFileProperty_AudioConverter, &size, &c) == kExtAudioFileError_InvalidProperty, "no converter before the client format");
    EXPECT(ExtAudioFileSetProperty(f, kExtAudioFileProperty_ClientDataFormat, sizeof client, &client) == noErr, "client format");
    AudioStreamBasicDescription ff = {0};
    size = sizeof ff;
    EXPECT(ExtAudioFileGetProperty(f, kExtAudioFileProperty_FileDataFormat, &size, &ff) == noErr && ff.mSampleRate == 22050, "the file's rate is the client's: %.0f", ff.mSampleRate);
    size = sizeof c;
    EXPECT(ExtAudioFileGetProperty(f, kExtAudioFileProperty_AudioConverter, &size, &c) == noErr && c != NULL && size == sizeof c, "the converter");
    AudioStreamBasicDescription co = {0};
    size = sizeof co;
    EXPECT(AudioConverterGetProperty(c, kAudioConverterCurrentOutputStreamDescription, &size, &co) == noErr && co.mFormatID == kAudioFormatMPEG4AAC && co.mSampleRate == 22050,
           "the converter's output: the file's format");
    EXPECT(AudioConverterSetProperty(c, kAudioConverterEncodeBitRate, sizeof bitRate, &bitRate) == noErr, "bit rate");
    CFArrayRef config = NULL;
    EXPECT(ExtAudioFileSetProperty(f, kExtAudioFileProperty_ConverterConfig, sizeof config, &config) == noErr, "ConverterConfig NULL");
    SInt16 *half = malloc(kFrames * 2);
    for (UInt32 i = 0; i < kFrames / 2; i++) { half[2 * i] = pcm[4 * i]; half[2 * i + 1] = pcm[4 * i + 1]; }
    AudioBufferList list;
    list.mNumberBuffers = 1;
    list.mBuffers[0].mNumberChannels = 2;
    list.mBuffers[0].mDataByteSize = kFrames * 2;
    list.mBuffers[0].mData = half;
    EXPECT(ExtAudioFileWrite(f, kFrames / 2, &list) == noErr, "write");
    EXPECT(ExtAudioFileDispose(f) == noErr, "dispose");
    free(half);
    ExtAudioFileRef r = NULL;
    EXPECT(ExtAudioFileOpenURL(url, &r) == noErr, "reopen %s", name);
    if (r) {
        size = sizeof ff;
        SInt64 frames = 0;
        ExtAudioFileGetProperty(r, kExtAudioFileProperty_FileDataFormat, &size, &ff);
        size = sizeof frames;
        ExtAudioFileGetProperty(r, kExtAudioFileProperty_FileLengthFrames, &size, &frames);
        EXPECT(ff.mSampleRate == 22050 && ff.mFormatID == kAudioFormatMPEG4AAC && frames == kFrames / 2, "%s: %.0f Hz, %lld frames", name, ff.mSampleRate, (long long)frames);
        size = sizeof c;
        EXPECT(ExtAudioFileGetProperty(r, kExtAudioFileProperty_AudioConverter, &size, &c) == kExtAudioFileError_InvalidProperty, "a reader's converter is not given here");
        ExtAudioFileDispose(r);
    }
    CFRelease(url);
    FILE *fp = fopen(path, "rb");
    long bytes = 0;
    if (fp) { fseek(fp, 0, SEEK_END); bytes = ftell(fp); fclose(fp); }
    return bytes;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: convertfile_needs DIR\n"); return 2; }

    /* Audio Format Services: the codec lists, asked as utils.cpp asks them. */
    UInt32 size = 0;
    EXPECT(AudioFormatGetPropertyInfo(kAudioFormatProperty_DecodeFormatIDs, 0, NULL, &size) == noErr && size >= 16 && size % 4 == 0, "decoders' size %u", (unsigned)size);
    UInt32 ids[32] = {0};
    UInt32 n = size / 4;
    EXPECT(size <= sizeof ids && AudioFormatGetProperty(kAudioFormatProperty_DecodeFormatIDs, 0, NULL, &size, ids) == noErr && size == n * 4, "decoders");
    EXPECT(ids[0] == kAudioFormatLinearPCM && contains(ids, n, kAudioFormatMPEG4AAC) && contains(ids, n, kAudioFormatMPEGLayer3)
           && contains(ids, n, kAudioFormatAppleLossless), "the decoders: linear PCM first, AAC, MP3, ALAC (%u IDs)", (unsigned)n);
    size = 8;
    memset(ids, 0, sizeof ids);
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_DecodeFormatIDs, 0, NULL, &size, ids) == noErr && size == 8 && ids[0] == kAudioFormatLinearPCM && ids[2] == 0,
           "a short size gets as many as fit (%u)", (unsigned)size);
    EXPECT(AudioFormatGetPropertyInfo(kAudioFormatProperty_EncodeFormatIDs, 0, NULL, &size) == noErr && size >= 12, "encoders' size %u", (unsigned)size);
    n = size / 4;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_EncodeFormatIDs, 0, NULL, &size, ids) == noErr && ids[0] == kAudioFormatLinearPCM
           && contains(ids, n, kAudioFormatMPEG4AAC) && contains(ids, n, kAudioFormatAppleLossless) && !contains(ids, n, kAudioFormatMPEGLayer3),
           "the encoders: linear PCM, AAC, ALAC, not MP3");
    EXPECT(AudioFormatGetPropertyInfo(0x7a7a7a7a, 0, NULL, &size) == kAudioFormatUnsupportedPropertyError, "an unknown property");

    /* The tone. */
    SInt16 *pcm = malloc(kFrames * 4);
    for (UInt32 i = 0; i < kFrames; i++) {
        double v = sin(2 * M_PI * 1000.0 * i / kRate);
        pcm[2 * i] = (SInt16)lrint(0.5 * 32767 * v);
        pcm[2 * i + 1] = (SInt16)lrint(0.25 * 32767 * v);
    }

    /* Encoding into a CAF, as UseAC-AF.cpp does. */
    char path[1024];
    snprintf(path, sizeof path, "%s/t.caf", argv[1]);
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
    CFStringRef urlPath = CFURLCopyPath(url);
    char got[1024] = "";
    EXPECT(urlPath && CFStringGetCString(urlPath, got, sizeof got, kCFStringEncodingUTF8) && strcmp(got, path) == 0, "CFURLCopyPath: '%s'", got);
    if (urlPath) CFRelease(urlPath);

    AudioStreamBasicDescription in = pcm16(), aac = {0};
    aac.mSampleRate = kRate; aac.mFormatID = kAudioFormatMPEG4AAC; aac.mChannelsPerFrame = 2;
    size = sizeof aac;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, NULL, &size, &aac) == noErr && aac.mFramesPerPacket == 1024, "FormatInfo");
    AudioConverterRef enc = NULL;
    EXPECT(AudioConverterNew(&in, &aac, &enc) == noErr, "an AAC encoder");
    size = 0;
    EXPECT(AudioConverterGetPropertyInfo(enc, kAudioConverterOutputChannelLayout, &size, NULL) == kAudioConverterErr_PropertyNotSupported, "no output layout here");
    EXPECT(AudioConverterGetPropertyInfo(enc, kAudioConverterInputChannelLayout, &size, NULL) == kAudioConverterErr_PropertyNotSupported, "no input layout here");
    UInt32 canResume = 7;
    size = sizeof canResume;
    EXPECT(AudioConverterGetProperty(enc, kAudioConverterPropertyCanResumeFromInterruption, &size, &canResume) == kAudioConverterErr_PropertyNotSupported
           && kAudioConverterErr_HardwareInUse == 0x68776975, "CanResumeFromInterruption: a software codec");
    AudioConverterPrimeInfo pi = {5, 5};
    EXPECT(AudioConverterSetProperty(enc, kAudioConverterPrimeInfo, sizeof pi, &pi) == kAudioConverterErr_PropertyNotSupported, "an encoder's PrimeInfo is its own");
    size = sizeof aac;
    AudioConverterGetProperty(enc, kAudioConverterCurrentOutputStreamDescription, &size, &aac);
    AudioFileID out = NULL;
    EXPECT(AudioFileCreateWithURL(url, kAudioFileCAFType, &aac, kAudioFileFlags_EraseFile, &out) == noErr, "create t.caf");
    UInt32 cookieSize = 0;
    AudioConverterGetPropertyInfo(enc, kAudioConverterCompressionMagicCookie, &cookieSize, NULL);
    void *cookie = malloc(cookieSize ? cookieSize : 1);
    AudioConverterGetProperty(enc, kAudioConverterCompressionMagicCookie, &cookieSize, cookie);
    EXPECT(AudioFileSetProperty(out, kAudioFilePropertyMagicCookieData, cookieSize, cookie) == noErr, "the cookie into the file");
    UInt32 writable = 7;
    EXPECT(AudioFileGetPropertyInfo(out, kAudioFilePropertyMagicCookieData, &size, &writable) == noErr && writable == 1 && size == cookieSize,
           "the cookie is writable (%u)", (unsigned)writable);
    free(cookie);
    UInt32 maxPacket = 0;
    size = sizeof maxPacket;
    AudioConverterGetProperty(enc, kAudioConverterPropertyMaximumOutputPacketSize, &size, &maxPacket);
    enum { kPackets = 8 };
    char *buffer = malloc(maxPacket * kPackets);
    AudioStreamPacketDescription descs[kPackets];
    Tone tone = { pcm, 0 };
    SInt64 written = 0;
    for (;;) {
        AudioBufferList list;
        list.mNumberBuffers = 1;
        list.mBuffers[0].mNumberChannels = 2;
        list.mBuffers[0].mDataByteSize = maxPacket * kPackets;
        list.mBuffers[0].mData = buffer;
        UInt32 packets = kPackets;
        OSStatus r = AudioConverterFillComplexBuffer(enc, toneInput, &tone, &packets, &list, descs);
        EXPECT(r == noErr, "encode: %d", (int)r);
        if (r != noErr || packets == 0) break;
        EXPECT(AudioFileWritePackets(out, false, list.mBuffers[0].mDataByteSize, descs, written, &packets, buffer) == noErr, "write packets");
        written += packets;
    }
    free(buffer);
    writable = 7;
    EXPECT(AudioFileGetPropertyInfo(out, kAudioFilePropertyPacketTableInfo, &size, &writable) == noErr && writable == 1 && size == sizeof(AudioFilePacketTableInfo),
           "the packet table is writable (%u)", (unsigned)writable);
    size = sizeof pi;
    EXPECT(AudioConverterGetProperty(enc, kAudioConverterPrimeInfo, &size, &pi) == noErr && pi.leadingFrames == 1024, "the encoder's priming: %u", (unsigned)pi.leadingFrames);
    AudioFilePacketTableInfo t = {0, 0, 0};
    size = sizeof t;
    AudioFileGetProperty(out, kAudioFilePropertyPacketTableInfo, &size, &t);
    SInt64 all = t.mNumberValidFrames + t.mPrimingFrames + t.mRemainderFrames;
    t.mPrimingFrames = (SInt32)pi.leadingFrames;
    t.mRemainderFrames = (SInt32)pi.trailingFrames;
    t.mNumberValidFrames = all - t.mPrimingFrames - t.mRemainderFrames;
    EXPECT(AudioFileSetProperty(out, kAudioFilePropertyPacketTableInfo, sizeof t, &t) == noErr, "the packet table set");
    EXPECT(t.mNumberValidFrames == kFrames, "valid frames %lld", (long long)t.mNumberValidFrames);
    AudioFileClose(out);
    AudioConverterDispose(enc);

    /* Decoding it back, with and without the priming as PrimeInfo. */
    AudioFileID back = NULL;
    AudioFileOpenURL(url, kAudioFileReadPermission, 0, &back);
    size = sizeof t;
    EXPECT(back && AudioFileGetProperty(back, kAudioFilePropertyPacketTableInfo, &size, &t) == noErr && t.mPrimingFrames == 1024 && t.mNumberValidFrames == kFrames,
           "the file's packet table: %d priming, %lld valid", (int)t.mPrimingFrames, (long long)t.mNumberValidFrames);
    if (back) AudioFileClose(back);
    UInt32 room = (UInt32)written * 1024 + 4096;
    SInt16 *dec = calloc(room, 4);
    UInt32 frames = decode(url, t.mPrimingFrames, 0, dec, room);
    double at0 = snrAt(dec, frames, pcm, 0), at1024 = snrAt(dec, frames, pcm, 1024);
    EXPECT(frames == (UInt32)written * 1024 - 1024, "primed: %u frames decoded, %lld packets", (unsigned)frames, (long long)written);
    EXPECT(at0 > 20 && at1024 < 3, "primed: the tone at lag 0 (%.1f dB; lag 1024: %.1f dB)", at0, at1024);
    memset(dec, 0, (size_t)room * 4);
    frames = decode(url, t.mPrimingFrames, 1, dec, room);
    at0 = snrAt(dec, frames, pcm, 0);
    EXPECT(frames == (UInt32)written * 1024 - 1024 && at0 > 20, "after a reset: %u frames, %.1f dB at lag 0", (unsigned)frames, at0);
    memset(dec, 0, (size_t)room * 4);
    frames = decode(url, -1, 0, dec, room);
    at0 = snrAt(dec, frames, pcm, 0);
    at1024 = snrAt(dec, frames, pcm, 1024);
    EXPECT(frames == (UInt32)written * 1024 && at1024 > 20 && at0 < 3, "unprimed: %u frames, the tone at lag 1024 (%.1f dB; lag 0: %.1f dB)", (unsigned)frames, at1024, at0);
    free(dec);

    long low = extAudioFileAt(argv[1], "b32.caf", 32000, pcm), high = extAudioFileAt(argv[1], "b128.caf", 128000, pcm);
    EXPECT(low > 0 && high > 0 && low * 2 < high, "32 kb/s: %ld bytes, 128 kb/s: %ld bytes", low, high);
    free(pcm);
    CFRelease(url);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
