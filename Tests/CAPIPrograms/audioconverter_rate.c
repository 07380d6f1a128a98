/* audioconverter_rate.c — issue 23: Audio Converter Services converting linear PCM's rate and
 * channels, as a program written for Apple's systems asks for it. A 1 kHz sine generated here
 * (44100 Hz, 16-bit stereo interleaved, the right channel at half the left's level) goes
 * through AudioConverterFillComplexBuffer, 512 frames an input call and a "no data yet" answer
 * every fourth call, into 48000 Hz 32-bit float: once to stereo, once to mono with the default
 * map (the left channel), once to mono with kAudioConverterChannelMap [1] (the right) and once
 * to 3 channels with [0, 0, -1]. Checked here: the frames made (exactly round(n × 48000 /
 * 44100)), the level and frequency of each channel, silence where the map says so, the
 * properties, AudioConverterReset starting a new stream, AudioConverterConvertBuffer and
 * AudioConverterConvertComplexBuffer (16-bit to float, exactly x / 32768) and their result
 * codes. Prints "N passed, M failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { kNotYet = 0x77616974, kFrames = 44100 };

typedef struct { SInt16 *pcm; UInt32 next, count, calls; } Source;

static OSStatus input(AudioConverterRef converter, UInt32 *ioPackets, AudioBufferList *ioData, AudioStreamPacketDescription **outDescriptions, void *user) {
    (void)converter; (void)outDescriptions;
    Source *s = user;
    if (++s->calls % 4 == 0) { *ioPackets = 0; return kNotYet; }
    UInt32 n = s->count - s->next;
    if (n > *ioPackets) n = *ioPackets;
    if (n > 512) n = 512;
    ioData->mBuffers[0].mData = s->pcm + 2 * s->next;
    ioData->mBuffers[0].mDataByteSize = n * 4;
    ioData->mBuffers[0].mNumberChannels = 2;
    s->next += n;
    *ioPackets = n;
    return noErr;
}

static AudioStreamBasicDescription floats(Float64 rate, UInt32 channels) {
    AudioStreamBasicDescription d = {0};
    d.mSampleRate = rate; d.mFormatID = kAudioFormatLinearPCM;
    d.mFormatFlags = kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked;
    d.mBitsPerChannel = 32; d.mChannelsPerFrame = channels; d.mFramesPerPacket = 1;
    d.mBytesPerFrame = d.mBytesPerPacket = 4 * channels;
    return d;
}

/* Converts the sine to `channels` at 48 kHz; returns the frames made into out (room: cap). */
static UInt32 convert(AudioConverterRef c, SInt16 *pcm, float *out, UInt32 cap, UInt32 channels) {
    Source s = { pcm, 0, kFrames, 0 };
    UInt32 made = 0;
    for (int guard = 0; guard < 10000; guard++) {
        UInt32 n = 1000;
        if (made + n > cap) n = cap - made;
        AudioBufferList list = { 1, { { channels, n * 4 * channels, out + made * channels } } };
        OSStatus r = AudioConverterFillComplexBuffer(c, input, &s, &n, &list, NULL);
        made += n;
        if (r == kNotYet) continue;
        EXPECT(r == noErr, "fill: %d", (int)r);
        if (n == 0 || r != noErr) break;
    }
    return made;
}

/* RMS and rising zero crossings a second of channel `ch` of `frames` interleaved frames. */
static void measure(const float *x, UInt32 frames, UInt32 channels, UInt32 ch, double *rms, double *hz) {
    double sum = 0; int crossings = 0;
    UInt32 from = 2000, to = frames - 2000;
    for (UInt32 i = from; i < to; i++) {
        double v = x[i * channels + ch];
        sum += v * v;
        if (x[(i - 1) * channels + ch] < 0 && v >= 0) crossings++;
    }
    *rms = sqrt(sum / (to - from));
    *hz = crossings * 48000.0 / (to - from);
}

int main(void) {
    SInt16 *pcm = malloc(sizeof(SInt16) * 2 * kFrames);
    for (UInt32 i = 0; i < kFrames; i++) {
        double v = sin(2 * M_PI * 1000.0 * i / 44100.0);
        pcm[2 * i] = (SInt16)lrint(v * 16000);
        pcm[2 * i + 1] = (SInt16)lrint(v * 8000);
    }
    AudioStreamBasicDescription in = {0};
    in.mSampleRate = 44100; in.mFormatID = kAudioFormatLinearPCM;
    in.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked;
    in.mBitsPerChannel = 16; in.mChannelsPerFrame = 2; in.mFramesPerPacket = 1; in.mBytesPerFrame = in.mBytesPerPacket = 4;
    const UInt32 expected = 48000;  /* round(44100 × 48000 / 44100) */
    const double left = 16000 / 32768.0 / sqrt(2), right = 8000 / 32768.0 / sqrt(2);
    float *out = malloc(sizeof(float) * 3 * 60000);

    struct { UInt32 channels; SInt32 map[3]; int mapped; double want[3]; } cases[] = {
        { 2, {0}, 0, { left, right } },
        { 1, {0}, 0, { left } },
        { 1, { 1 }, 1, { right } },
        { 3, { 0, 0, -1 }, 1, { left, left, 0 } },
    };
    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        AudioStreamBasicDescription o = floats(48000, cases[k].channels);
        AudioConverterRef c = NULL;
        OSStatus r = AudioConverterNew(&in, &o, &c);
        EXPECT(r == noErr && c, "case %u: AudioConverterNew %d", k, (int)r);
        if (!c) continue;
        if (cases[k].mapped) {
            r = AudioConverterSetProperty(c, kAudioConverterChannelMap, cases[k].channels * sizeof(SInt32), cases[k].map);
            EXPECT(r == noErr, "case %u: channel map %d", k, (int)r);
        }
        SInt32 map[3] = { 9, 9, 9 };
        UInt32 size = sizeof map;
        r = AudioConverterGetProperty(c, kAudioConverterChannelMap, &size, map);
        EXPECT(r == noErr && size == cases[k].channels * sizeof(SInt32), "case %u: map read back %d, %u bytes", k, (int)r, size);
        UInt32 made = convert(c, pcm, out, 60000, cases[k].channels);
        EXPECT(made == expected, "case %u: %u frames made, not %u", k, made, expected);
        for (UInt32 ch = 0; ch < cases[k].channels; ch++) {
            double rms, hz;
            measure(out, made, cases[k].channels, ch, &rms, &hz);
            EXPECT(fabs(rms - cases[k].want[ch]) < 0.002, "case %u channel %u: rms %f, not %f", k, ch, rms, cases[k].want[ch]);
            if (cases[k].want[ch] > 0) EXPECT(fabs(hz - 1000) < 2, "case %u channel %u: %f Hz", k, ch, hz);
        }
        /* A new stream after a reset: the same frames again. */
        EXPECT(AudioConverterReset(c) == noErr, "reset");
        EXPECT(convert(c, pcm, out, 60000, cases[k].channels) == expected, "case %u: frames after a reset", k);
        AudioConverterDispose(c);
    }

    /* Properties and bad values. */
    AudioStreamBasicDescription o2 = floats(48000, 2);
    AudioConverterRef c = NULL;
    EXPECT(AudioConverterNew(&in, &o2, &c) == noErr, "new");
    UInt32 q = kAudioConverterQuality_Max, size = sizeof q;
    EXPECT(AudioConverterSetProperty(c, kAudioConverterSampleRateConverterQuality, sizeof q, &q) == noErr, "quality");
    q = 0;
    EXPECT(AudioConverterGetProperty(c, kAudioConverterSampleRateConverterQuality, &size, &q) == noErr && q == kAudioConverterQuality_Max, "quality read back %u", q);
    UInt32 complexity = kAudioConverterSampleRateConverterComplexity_Mastering;
    EXPECT(AudioConverterSetProperty(c, kAudioConverterSampleRateConverterComplexity, sizeof complexity, &complexity) == noErr, "complexity");
    complexity = 0x78787878;
    EXPECT(AudioConverterSetProperty(c, kAudioConverterSampleRateConverterComplexity, sizeof complexity, &complexity) != noErr, "unknown complexity taken");
    SInt32 bad[2] = { 0, 5 };
    EXPECT(AudioConverterSetProperty(c, kAudioConverterChannelMap, sizeof bad, bad) != noErr, "a map naming channel 5 of 2 taken");
    EXPECT(AudioConverterSetProperty(c, kAudioConverterChannelMap, sizeof(SInt32), bad) == kAudioConverterErr_BadPropertySizeError, "a map of one entry for two channels");
    Boolean writable = false;
    EXPECT(AudioConverterGetPropertyInfo(c, kAudioConverterChannelMap, &size, &writable) == noErr && writable && size == 8, "map info");
    /* ConvertBuffer refuses a rate conversion. */
    float tiny[8];
    UInt32 outSize = sizeof tiny;
    EXPECT(AudioConverterConvertBuffer(c, 8, pcm, &outSize, tiny) == kAudioConverterErr_OperationNotSupported, "ConvertBuffer across rates");
    AudioConverterDispose(c);
    AudioStreamBasicDescription in48 = in;
    in48.mSampleRate = 48000;
    in48.mSampleRate = 48000;
    EXPECT(AudioConverterNew(&in48, &o2, &c) == noErr, "new 48k");
    EXPECT(AudioConverterNew(&in48, &(AudioStreamBasicDescription){ .mSampleRate = 10, .mFormatID = kAudioFormatLinearPCM, .mFormatFlags = kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked, .mBitsPerChannel = 32, .mChannelsPerFrame = 2, .mFramesPerPacket = 1, .mBytesPerFrame = 8, .mBytesPerPacket = 8 }, &(AudioConverterRef){0}) == kAudioConverterErr_OutputSampleRateOutOfRange, "10 Hz output");
    /* ConvertBuffer: 1000 frames, 16-bit to float, exactly. */
    float *f = malloc(sizeof(float) * 2000);
    outSize = 2000 * 4;
    EXPECT(AudioConverterConvertBuffer(c, 4000, pcm, &outSize, f) == noErr && outSize == 8000, "ConvertBuffer: %u bytes", outSize);
    int exact = 1;
    for (int i = 0; i < 2000; i++) if (f[i] != pcm[i] / 32768.0f) exact = 0;
    EXPECT(exact, "ConvertBuffer's floats are x / 32768");
    outSize = 100;
    EXPECT(AudioConverterConvertBuffer(c, 4000, pcm, &outSize, f) == kAudioConverterErr_InvalidOutputSize, "ConvertBuffer without room");
    EXPECT(AudioConverterConvertBuffer(c, 3, pcm, &outSize, f) == kAudioConverterErr_InvalidInputSize, "ConvertBuffer of a part of a frame");
    /* ConvertComplexBuffer: the same into two planes. */
    AudioStreamBasicDescription planar = floats(48000, 2);
    planar.mFormatFlags |= kAudioFormatFlagIsNonInterleaved;
    planar.mBytesPerFrame = planar.mBytesPerPacket = 4;
    AudioConverterRef p = NULL;
    EXPECT(AudioConverterNew(&in48, &planar, &p) == noErr, "new planar");
    float *l = calloc(1000, sizeof(float)), *rr = calloc(1000, sizeof(float));
    AudioBufferList inList = { 1, { { 2, 4000, pcm } } };
    struct { UInt32 n; AudioBuffer b[2]; } outList = { 2, { { 1, 4000, l }, { 1, 4000, rr } } };
    EXPECT(AudioConverterConvertComplexBuffer(p, 1000, &inList, (AudioBufferList *)&outList) == noErr, "ConvertComplexBuffer");
    exact = 1;
    for (int i = 0; i < 1000; i++) if (l[i] != pcm[2 * i] / 32768.0f || rr[i] != pcm[2 * i + 1] / 32768.0f) exact = 0;
    EXPECT(exact, "ConvertComplexBuffer's planes are x / 32768");
    AudioConverterDispose(p);
    AudioConverterDispose(c);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
