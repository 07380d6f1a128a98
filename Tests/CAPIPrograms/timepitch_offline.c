/* timepitch_offline.c — time/pitch through the C API (issue 22), run with AQSYNC_DEVICE=offline:
 * kAudioQueueProperty_EnableTimePitch, _TimePitchAlgorithm and _TimePitchBypass and the
 * parameters kAudioQueueParam_PlayRate and kAudioQueueParam_Pitch set and read back through
 * AudioQueueSetProperty/GetProperty and AudioQueueSetParameter/GetParameter, with the result
 * codes of docs/c-api.md ("Time and pitch"); then 1 s of a 440 Hz tone played at PlayRate 2
 * through AudioQueueOfflineRender must last 0.5 s (its non-silent stretch within 1 %) at
 * 440 Hz (within 0.5 %), and the same at Pitch +1200 must last 1 s (within 2 %) at 880 Hz. Prints
 * "N passed, N failed"; exits 1 on any failure. */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

#define RATE 48000
#define BUFFERS 10
#define PER_BUFFER 4800
#define CHUNK 1024
#define MAX_OUT (3 * RATE)

static void outputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef buffer) {
    (void)user; (void)aq; (void)buffer;
}
static void inputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b, const AudioTimeStamp *t, UInt32 n,
                          const AudioStreamPacketDescription *d) {
    (void)user; (void)aq; (void)b; (void)t; (void)n; (void)d;
}

static AudioStreamBasicDescription floatMono(void) {
    AudioStreamBasicDescription f;
    memset(&f, 0, sizeof f);
    f.mSampleRate = RATE;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    f.mBytesPerPacket = 4;
    f.mFramesPerPacket = 1;
    f.mBytesPerFrame = 4;
    f.mChannelsPerFrame = 1;
    f.mBitsPerChannel = 32;
    return f;
}

static UInt32 getU32(AudioQueueRef aq, AudioQueuePropertyID id, OSStatus *status) {
    UInt32 v = 0xFFFFFFFF, size = sizeof v;
    *status = AudioQueueGetProperty(aq, id, &v, &size);
    return v;
}

static float out[MAX_OUT];

/* Enqueues 1 s of a 440 Hz sine at 0.5, flushes, renders until 3 s of output; returns the
 * frames rendered into `out`. */
static int playTone(AudioQueueRef aq, AudioQueueBufferRef *buffers, AudioQueueBufferRef render) {
    for (int b = 0; b < BUFFERS; b++) {
        float *s = buffers[b]->mAudioData;
        for (int i = 0; i < PER_BUFFER; i++) s[i] = 0.5f * (float)sin(2 * M_PI * 440.0 * (b * PER_BUFFER + i) / RATE);
        buffers[b]->mAudioDataByteSize = PER_BUFFER * 4;
        EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, buffers[b], 0, NULL), noErr);
    }
    EXPECT_STATUS(AudioQueueFlush(aq), noErr);
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    t.mFlags = kAudioTimeStampSampleTimeValid;
    int n = 0;
    while (n + CHUNK <= MAX_OUT) {
        t.mSampleTime = n;
        OSStatus s = AudioQueueOfflineRender(aq, &t, render, CHUNK);
        if (s != noErr) { EXPECT(0, "AudioQueueOfflineRender = %d", (int)s); break; }
        memcpy(out + n, render->mAudioData, CHUNK * 4);
        n += CHUNK;
    }
    return n;
}

/* The non-silent stretch (|x| > 0.1) and its frequency by rising zero crossings over its
 * middle half. */
static void measure(int n, int *frames, double *hz) {
    int on = -1, off = -1;
    for (int i = 0; i < n; i++) if (fabsf(out[i]) > 0.1f) { if (on < 0) on = i; off = i; }
    *frames = on < 0 ? 0 : off - on + 1;
    printf("tone from frame %d to %d\n", on, off);
    *hz = 0;
    if (on < 0) return;
    int a = on + (off - on) / 4, b = off - (off - on) / 4, first = -1, last = -1, count = 0;
    for (int i = a + 1; i <= b; i++) if (out[i - 1] < 0 && out[i] >= 0) { if (first < 0) first = i; last = i; count++; }
    if (count > 1) *hz = (double)(count - 1) * RATE / (last - first);
}

int main(void) {
    AudioStreamBasicDescription format = floatMono();
    AudioQueueRef aq = NULL, input = NULL;
    OSStatus st;
    EXPECT_STATUS(AudioQueueNewOutput(&format, outputCallback, NULL, NULL, NULL, 0, &aq), noErr);
    if (!aq) { printf("%d passed, %d failed\n", passed, failed + 1); return 1; }

    /* Defaults, sizes and values. */
    EXPECT(getU32(aq, kAudioQueueProperty_EnableTimePitch, &st) == 0 && st == noErr, "EnableTimePitch defaults to 0");
    EXPECT(getU32(aq, kAudioQueueProperty_TimePitchAlgorithm, &st) == kAudioQueueTimePitchAlgorithm_Spectral && st == noErr, "Spectral by default");
    EXPECT(getU32(aq, kAudioQueueProperty_TimePitchBypass, &st) == 0 && st == noErr, "not bypassed by default");
    UInt32 size = 0;
    EXPECT_STATUS(AudioQueueGetPropertySize(aq, kAudioQueueProperty_EnableTimePitch, &size), noErr);
    EXPECT(size == 4, "EnableTimePitch is %u bytes", size);
    UInt16 small = 1;
    UInt32 on = 1, off = 0, bad = 0x12345678, varispeed = kAudioQueueTimePitchAlgorithm_Varispeed;
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_EnableTimePitch, &small, sizeof small), kAudioQueueErr_InvalidPropertySize);
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_TimePitchAlgorithm, &bad, sizeof bad), kAudioQueueErr_InvalidPropertyValue);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_PlayRate, 2.5f), kAudioQueueErr_InvalidParameter);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_PlayRate, 0.25f), kAudioQueueErr_InvalidParameter);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_PlayRate, NAN), kAudioQueueErr_InvalidParameter);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Pitch, 2401.0f), kAudioQueueErr_InvalidParameter);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Pitch, -2401.0f), kAudioQueueErr_InvalidParameter);
    AudioQueueParameterValue v = -1;
    EXPECT_STATUS(AudioQueueGetParameter(aq, kAudioQueueParam_PlayRate, &v), noErr);
    EXPECT(v == 1.0f, "PlayRate defaults to 1 (%f)", v);
    EXPECT_STATUS(AudioQueueGetParameter(aq, kAudioQueueParam_Pitch, &v), noErr);
    EXPECT(v == 0.0f, "Pitch defaults to 0 (%f)", v);

    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_EnableTimePitch, &on, sizeof on), noErr);
    EXPECT(getU32(aq, kAudioQueueProperty_EnableTimePitch, &st) == 1, "EnableTimePitch reads 1");
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_PlayRate, 2.0f), noErr);
    EXPECT_STATUS(AudioQueueGetParameter(aq, kAudioQueueParam_PlayRate, &v), noErr);
    EXPECT(v == 2.0f, "PlayRate reads 2 (%f)", v);

    AudioQueueBufferRef buffers[BUFFERS], render = NULL;
    for (int b = 0; b < BUFFERS; b++) EXPECT_STATUS(AudioQueueAllocateBuffer(aq, PER_BUFFER * 4, &buffers[b]), noErr);
    EXPECT_STATUS(AudioQueueAllocateBuffer(aq, CHUNK * 4, &render), noErr);
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(aq, &format, NULL), noErr);

    /* PlayRate 2: 1 s plays in 0.5 s at 440 Hz. */
    int frames = 0;
    double hz = 0;
    int n = playTone(aq, buffers, render);
    measure(n, &frames, &hz);
    EXPECT(fabs(frames - 24000.0) < 240, "PlayRate 2: %d frames, want 24000 within 1 %%", frames);
    EXPECT(fabs(hz - 440) < 2.2, "PlayRate 2: %f Hz, want 440", hz);
    /* Started: the unit cannot be changed; the bypass can. */
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_EnableTimePitch, &off, sizeof off), kAudioQueueErr_InvalidRunState);
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_TimePitchAlgorithm, &varispeed, sizeof varispeed), kAudioQueueErr_InvalidRunState);
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_TimePitchBypass, &on, sizeof on), noErr);
    EXPECT(getU32(aq, kAudioQueueProperty_TimePitchBypass, &st) == 1, "bypassed");
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_TimePitchBypass, &off, sizeof off), noErr);

    /* Stopped: Pitch +1200 at rate 1: 1 s at 880 Hz. */
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_PlayRate, 1.0f), noErr);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Pitch, 1200.0f), noErr);
    n = playTone(aq, buffers, render);
    measure(n, &frames, &hz);
    /* SoundTouch's pitch shift gives back its last ~10 ms as silence at the flush (the queue
     * still schedules exactly 48000 frames: the rest is padding): within 2 %. */
    EXPECT(fabs(frames - 48000.0) < 960, "Pitch +1200: %d frames, want 48000 within 2 %%", frames);
    EXPECT(fabs(hz - 880) < 4.4, "Pitch +1200: %f Hz, want 880", hz);
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_TimePitchAlgorithm, &varispeed, sizeof varispeed), noErr);
    EXPECT(getU32(aq, kAudioQueueProperty_TimePitchAlgorithm, &st) == kAudioQueueTimePitchAlgorithm_Varispeed, "Varispeed");
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);

    /* A recording queue has no time/pitch. */
    EXPECT_STATUS(AudioQueueNewInput(&format, inputCallback, NULL, NULL, NULL, 0, &input), noErr);
    if (input) {
        EXPECT(getU32(input, kAudioQueueProperty_EnableTimePitch, &st) == 0xFFFFFFFF && st == kAudioQueueErr_InvalidProperty,
               "recording queue EnableTimePitch: %d", (int)st);
        EXPECT_STATUS(AudioQueueSetParameter(input, kAudioQueueParam_PlayRate, 1.0f), kAudioQueueErr_InvalidQueueType);
        EXPECT_STATUS(AudioQueueDispose(input, true), noErr);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
