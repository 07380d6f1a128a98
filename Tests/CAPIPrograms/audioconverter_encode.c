/* audioconverter_encode.c — issue 23: Audio Converter Services encoding linear PCM to AAC and
 * Apple Lossless, as a program written for Apple's systems does it: AudioConverterNew (and
 * AudioConverterNewSpecific) from 16-bit stereo PCM at 44100 Hz (a 1 kHz tone, the right channel
 * at half the left's level, 2 s) to the codec, kAudioConverterCurrentOutputStreamDescription
 * completed, kAudioConverterPropertyMaximumOutputPacketSize for the buffer,
 * kAudioConverterEncodeBitRate set and read back (AAC), kAudioConverterCodecQuality set and read
 * back, kAudioConverterCompressionMagicCookie
 * into a CAF made by AudioFileCreateWithURL, AudioConverterFillComplexBuffer with packet
 * descriptions, 10 packets a call (the first AAC converter's input answering "no data yet"
 * every fifth call), the packets written with AudioFileWritePackets,
 * kAudioConverterPrimeInfo's leading and trailing frames as the file's packet table. Then the
 * file is read back through ExtAudioFile (which applies the packet table): exactly the frames
 * fed (at 48000 Hz: round(n × 48000 / 44100)), ALAC equal to the input, AAC's level and
 * frequency. Also the result codes: no descriptions, no room for a packet, a compressed source,
 * a decompression cookie on an encoder, the bit rate of ALAC, the one-call conversions to AAC. Writes DIR/aac.caf,
 * DIR/aac48.caf, DIR/alac.caf (the test decodes them with ffmpeg). Prints "N passed, M failed".
 * Usage: audioconverter_encode DIR */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { kFrames = 88200, kNotYet = 0x77616974 };

/* notYet: answer "no data yet" every that many calls (0: never). */
typedef struct { SInt16 *pcm; UInt32 next, count, calls, notYet; } Source;

static OSStatus input(AudioConverterRef converter, UInt32 *ioPackets, AudioBufferList *ioData, AudioStreamPacketDescription **outDescriptions, void *user) {
    (void)converter; (void)outDescriptions;
    Source *s = user;
    if (s->notYet && ++s->calls % s->notYet == 0) { *ioPackets = 0; return kNotYet; }
    UInt32 n = s->count - s->next;
    if (n > *ioPackets) n = *ioPackets;
    if (n > 700) n = 700;
    ioData->mBuffers[0].mData = s->pcm + 2 * s->next;
    ioData->mBuffers[0].mDataByteSize = n * 4;
    ioData->mBuffers[0].mNumberChannels = 2;
    s->next += n;
    *ioPackets = n;
    return noErr;
}

static AudioStreamBasicDescription pcm16(void) {
    AudioStreamBasicDescription in = {0};
    in.mSampleRate = 44100; in.mFormatID = kAudioFormatLinearPCM;
    in.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked;
    in.mBitsPerChannel = 16; in.mChannelsPerFrame = 2; in.mFramesPerPacket = 1; in.mBytesPerFrame = in.mBytesPerPacket = 4;
    return in;
}

/* Encodes the tone to `id` at `rate` into DIR/name; returns the frames the file reads back as. */
static void encode(const char *dir, const char *name, AudioFormatID id, Float64 rate, SInt16 *pcm, int specific) {
    AudioStreamBasicDescription in = pcm16(), out = {0};
    out.mSampleRate = rate; out.mFormatID = id; out.mChannelsPerFrame = 2;
    AudioConverterRef c = NULL;
    OSStatus r;
    if (specific) {
        AudioClassDescription d = { kAudioEncoderComponentType, id, kAppleSoftwareAudioCodecManufacturer };
        r = AudioConverterNewSpecific(&in, &out, 1, &d, &c);
    } else {
        r = AudioConverterNew(&in, &out, &c);
    }
    EXPECT(r == noErr && c, "%s: new %d", name, (int)r);
    if (!c) return;
    UInt32 size = sizeof out;
    r = AudioConverterGetProperty(c, kAudioConverterCurrentOutputStreamDescription, &size, &out);
    UInt32 fpp = id == kAudioFormatMPEG4AAC ? 1024 : 4096;
    EXPECT(r == noErr && out.mFramesPerPacket == fpp && out.mSampleRate == rate && out.mBytesPerPacket == 0, "%s: output format %d, %u frames a packet", name, (int)r, out.mFramesPerPacket);
    if (id == kAudioFormatMPEG4AAC) {
        UInt32 bits = 128000;
        EXPECT(AudioConverterSetProperty(c, kAudioConverterEncodeBitRate, sizeof bits, &bits) == noErr, "%s: set the bit rate", name);
        bits = 0; size = sizeof bits;
        EXPECT(AudioConverterGetProperty(c, kAudioConverterEncodeBitRate, &size, &bits) == noErr && bits == 128000, "%s: bit rate %u", name, bits);
    } else {
        UInt32 bits = 0; size = sizeof bits;
        EXPECT(AudioConverterGetProperty(c, kAudioConverterEncodeBitRate, &size, &bits) == kAudioConverterErr_PropertyNotSupported, "%s: ALAC has no bit rate", name);
    }
    UInt32 quality = kAudioConverterQuality_Max;
    EXPECT(AudioConverterSetProperty(c, kAudioConverterCodecQuality, sizeof quality, &quality) == noErr, "%s: set the codec quality", name);
    quality = 0; size = sizeof quality;
    EXPECT(AudioConverterGetProperty(c, kAudioConverterCodecQuality, &size, &quality) == noErr && quality == kAudioConverterQuality_Max, "%s: quality %u", name, quality);
    UInt32 dummy = 0;
    EXPECT(AudioConverterSetProperty(c, kAudioConverterDecompressionMagicCookie, sizeof dummy, &dummy) == kAudioConverterErr_PropertyNotSupported, "%s: no decompression cookie", name);
    UInt32 maxPacket = 0; size = sizeof maxPacket;
    EXPECT(AudioConverterGetProperty(c, kAudioConverterPropertyMaximumOutputPacketSize, &size, &maxPacket) == noErr && maxPacket >= 100, "%s: max packet %u", name, maxPacket);
    AudioConverterPrimeInfo prime = { 9, 9 }; size = sizeof prime;
    EXPECT(AudioConverterGetProperty(c, kAudioConverterPrimeInfo, &size, &prime) == noErr && prime.trailingFrames == 0
           && prime.leadingFrames == (id == kAudioFormatMPEG4AAC ? 1024u : 0u), "%s: prime info %u %u", name, prime.leadingFrames, prime.trailingFrames);
    UInt32 cookieSize = 0;
    Boolean writable = true;
    EXPECT(AudioConverterGetPropertyInfo(c, kAudioConverterCompressionMagicCookie, &cookieSize, &writable) == noErr && cookieSize > 0 && !writable, "%s: cookie size %u", name, cookieSize);
    void *cookie = malloc(cookieSize);
    EXPECT(AudioConverterGetProperty(c, kAudioConverterCompressionMagicCookie, &cookieSize, cookie) == noErr, "%s: cookie", name);

    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
    AudioFileID file = NULL;
    r = AudioFileCreateWithURL(url, kAudioFileCAFType, &out, kAudioFileFlags_EraseFile, &file);
    CFRelease(url);
    EXPECT(r == noErr && file, "%s: create %d", name, (int)r);
    if (!file) return;
    EXPECT(AudioFileSetProperty(file, kAudioFilePropertyMagicCookieData, cookieSize, cookie) == noErr, "%s: cookie into the file", name);

    enum { kPackets = 10 };
    UInt32 room = kPackets * maxPacket;
    char *buffer = malloc(room);
    AudioStreamPacketDescription descs[kPackets];
    Source s = { pcm, 0, kFrames, 0, 0 };
    /* Result codes first: no descriptions, no room for one packet. */
    UInt32 n = kPackets;
    AudioBufferList list = { 1, { { 2, room, buffer } } };
    EXPECT(AudioConverterFillComplexBuffer(c, input, &s, &n, &list, NULL) == kAudioConverterErr_RequiresPacketDescriptionsError, "%s: no descriptions", name);
    n = kPackets;
    list.mBuffers[0].mDataByteSize = 4;
    EXPECT(AudioConverterFillComplexBuffer(c, input, &s, &n, &list, descs) == kAudioConverterErr_InvalidOutputSize, "%s: no room", name);
    EXPECT(AudioConverterReset(c) == noErr, "%s: reset", name);
    /* The AAC converter's input answers "no data yet" every fifth call: the fill returns that
     * code with the packets made so far, and the next fill goes on from there. */
    s.next = 0;
    s.notYet = specific ? 0 : 5;

    SInt64 packets = 0;
    int sane = 1, notYet = 0;
    for (int guard = 0; guard < 10000; guard++) {
        n = kPackets;
        list.mBuffers[0].mDataByteSize = room;
        list.mBuffers[0].mData = buffer;
        r = AudioConverterFillComplexBuffer(c, input, &s, &n, &list, descs);
        if (r == kNotYet) notYet++;
        else EXPECT(r == noErr, "%s: fill %d", name, (int)r);
        if ((r != noErr && r != kNotYet) || (r == noErr && n == 0)) break;
        if (n == 0) continue;
        UInt32 end = 0;
        for (UInt32 i = 0; i < n; i++) {
            sane &= descs[i].mStartOffset == end && descs[i].mDataByteSize > 0 && descs[i].mDataByteSize <= maxPacket && descs[i].mVariableFramesInPacket == 0;
            end += descs[i].mDataByteSize;
        }
        sane &= end == list.mBuffers[0].mDataByteSize;
        r = AudioFileWritePackets(file, false, list.mBuffers[0].mDataByteSize, descs, packets, &n, buffer);
        EXPECT(r == noErr, "%s: write %d", name, (int)r);
        packets += n;
    }
    EXPECT(sane, "%s: descriptions consecutive, within the largest packet, matching the bytes", name);
    EXPECT(s.notYet == 0 || notYet > 10, "%s: %d fills answered \"no data yet\"", name, notYet);
    SInt64 frames = (SInt64)((kFrames * (SInt64)rate * 2 + 44100) / (2 * 44100));
    size = sizeof prime;
    EXPECT(AudioConverterGetProperty(c, kAudioConverterPrimeInfo, &size, &prime) == noErr, "%s: prime info at the end", name);
    EXPECT((SInt64)packets * fpp == prime.leadingFrames + frames + prime.trailingFrames || id == kAudioFormatAppleLossless,
           "%s: %lld packets = %u + %lld + %u frames", name, (long long)packets, prime.leadingFrames, (long long)frames, prime.trailingFrames);
    AudioFilePacketTableInfo table = { frames, (SInt32)prime.leadingFrames, (SInt32)prime.trailingFrames };
    if (id == kAudioFormatAppleLossless) table.mRemainderFrames = (SInt32)(packets * fpp - frames);
    EXPECT(AudioFileSetProperty(file, kAudioFilePropertyPacketTableInfo, sizeof table, &table) == noErr, "%s: packet table", name);
    EXPECT(AudioFileClose(file) == noErr, "%s: close", name);
    EXPECT(AudioConverterDispose(c) == noErr, "%s: dispose", name);
    free(buffer);
    free(cookie);

    /* Read back through ExtAudioFile, which applies the packet table. */
    url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
    ExtAudioFileRef x = NULL;
    EXPECT(ExtAudioFileOpenURL(url, &x) == noErr && x, "%s: open", name);
    CFRelease(url);
    if (!x) return;
    AudioStreamBasicDescription client = pcm16();
    client.mSampleRate = rate;
    ExtAudioFileSetProperty(x, kExtAudioFileProperty_ClientDataFormat, sizeof client, &client);
    SInt16 *back = malloc(sizeof(SInt16) * 2 * (size_t)(frames + 10000));
    SInt64 got = 0;
    for (;;) {
        UInt32 k = 4000;
        AudioBufferList l = { 1, { { 2, k * 4, back + 2 * got } } };
        if (ExtAudioFileRead(x, &k, &l) != noErr || k == 0) break;
        got += k;
    }
    ExtAudioFileDispose(x);
    EXPECT(got == frames, "%s: %lld frames read back, not %lld", name, (long long)got, (long long)frames);
    if (id == kAudioFormatAppleLossless) {
        EXPECT(got == kFrames && memcmp(back, pcm, sizeof(SInt16) * 2 * kFrames) == 0, "%s: ALAC gives back the input exactly", name);
    } else {
        for (int ch = 0; ch < 2; ch++) {
            double sum = 0; int crossings = 0;
            SInt64 from = got / 10, to = got - got / 10;
            for (SInt64 i = from; i < to; i++) {
                double v = back[2 * i + ch] / 32768.0;
                sum += v * v;
                if (back[2 * (i - 1) + ch] < 0 && back[2 * i + ch] >= 0) crossings++;
            }
            double rms = sqrt(sum / (double)(to - from)), hz = crossings * rate / (double)(to - from);
            double want = (ch == 0 ? 0.5 : 0.25) / sqrt(2);
            EXPECT(fabs(rms - want) < 0.02 * want && fabs(hz - 1000) < 1, "%s channel %d: rms %f (%f), %f Hz", name, ch, rms, want, hz);
        }
    }
    free(back);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: audioconverter_encode DIR\n"); return 2; }
    SInt16 *pcm = malloc(sizeof(SInt16) * 2 * kFrames);
    for (UInt32 i = 0; i < kFrames; i++) {
        double v = sin(2 * M_PI * 1000.0 * i / 44100.0);
        pcm[2 * i] = (SInt16)lrint(v * 16384);
        pcm[2 * i + 1] = (SInt16)lrint(v * 8192);
    }
    encode(argv[1], "aac.caf", kAudioFormatMPEG4AAC, 44100, pcm, 0);
    encode(argv[1], "aac48.caf", kAudioFormatMPEG4AAC, 48000, pcm, 1);
    encode(argv[1], "alac.caf", kAudioFormatAppleLossless, 44100, pcm, 1);

    /* Refused: a compressed source, class descriptions missing, an encoder to 9 channels. */
    AudioStreamBasicDescription aac = {0}, in = pcm16();
    aac.mSampleRate = 44100; aac.mFormatID = kAudioFormatMPEG4AAC; aac.mChannelsPerFrame = 2; aac.mFramesPerPacket = 1024;
    AudioConverterRef c = NULL;
    EXPECT(AudioConverterNew(&aac, &aac, &c) == kAudioConverterErr_FormatNotSupported, "AAC to AAC refused");
    EXPECT(AudioConverterNewSpecific(&in, &aac, 1, NULL, &c) == kAudio_ParamError, "descriptions counted but missing");
    EXPECT(AudioConverterNewSpecific(&in, &aac, 0, NULL, &c) == noErr && c, "NewSpecific without descriptions");
    if (c) {
        /* The one-call conversions are linear PCM to linear PCM. */
        char bytes[4096], outBytes[4096];
        memset(bytes, 0, sizeof bytes);
        UInt32 outSize = sizeof outBytes;
        EXPECT(AudioConverterConvertBuffer(c, sizeof bytes, bytes, &outSize, outBytes) == kAudioConverterErr_OperationNotSupported, "ConvertBuffer to AAC");
        AudioBufferList inList = { 1, { { 2, sizeof bytes, bytes } } }, outList = { 1, { { 2, sizeof outBytes, outBytes } } };
        EXPECT(AudioConverterConvertComplexBuffer(c, 1024, &inList, &outList) == kAudioConverterErr_OperationNotSupported, "ConvertComplexBuffer to AAC");
        AudioConverterDispose(c);
    }
    aac.mChannelsPerFrame = 9;
    EXPECT(AudioConverterNew(&in, &aac, &c) == kAudioConverterErr_FormatNotSupported, "9 channels of AAC refused");
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
