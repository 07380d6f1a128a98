/* processing_tap_offline.c — audio queue processing taps through the C API (issue 22), written
 * from Apple's AudioQueue.h documentation of AudioQueueProcessingTapNew, ...Dispose,
 * ...GetSourceAudio and ...GetQueueTime; run with AQSYNC_DEVICE=offline. A 48 kHz mono Float32
 * queue plays 0.3 s (3 buffers of 4800 frames) through AudioQueueOfflineRender: without a tap
 * (the reference), with a PreEffects tap halving what it pulls (heard halved sample for
 * sample; GetQueueTime continuous), after disposing of it (no call, the reference again), and
 * with a siphon (every frame seen once in order, the reference unchanged); a stereo queue
 * with a PostEffects tap using buffers of its own (left halved, right quartered). Then the result
 * codes of docs/c-api.md ("Processing taps"). Prints "N passed, N failed"; exits 1 on any
 * failure. */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

#define RATE 48000
#define BUFFERS 3
#define PER_BUFFER 4800
#define TOTAL (BUFFERS * PER_BUFFER)
#define CHUNK 1024
#define RENDERED (16 * CHUNK)

static float input[TOTAL], reference[RENDERED], out[RENDERED];

/* What the callbacks saw. */
static int calls, frames, siphonFrames, startFlags, badTime, contextStatus, pullStatus;
static float seen[TOTAL];
static double expectedQueueTime;

static void outputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef buffer) { (void)user; (void)aq; (void)buffer; }
static void inputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b, const AudioTimeStamp *t, UInt32 n,
                          const AudioStreamPacketDescription *d) {
    (void)user; (void)aq; (void)b; (void)t; (void)n; (void)d;
}

/* A non-siphoning tap: pulls inNumberFrames of source (queue-owned pointers), halves them in
 * place and hands them back; checks GetQueueTime after the pull. */
static void halvingTap(void *client, AudioQueueProcessingTapRef tap, UInt32 inNumberFrames, AudioTimeStamp *ioTimeStamp,
                       AudioQueueProcessingTapFlags *ioFlags, UInt32 *outNumberFrames, AudioBufferList *ioData) {
    (void)client;
    calls++;
    if (*ioFlags & kAudioQueueProcessingTap_StartOfStream) startFlags++;
    if (!(*ioFlags & kAudioQueueProcessingTap_PreEffects)) badTime++;
    ioData->mBuffers[0].mData = NULL;
    ioData->mBuffers[0].mDataByteSize = 0;
    AudioQueueProcessingTapFlags pulled = 0;
    UInt32 got = 0;
    OSStatus s = AudioQueueProcessingTapGetSourceAudio(tap, inNumberFrames, ioTimeStamp, &pulled, &got, ioData);
    if (s != noErr) { pullStatus = s; *outNumberFrames = 0; return; }
    Float64 queueTime = -1;
    UInt32 queueFrames = 0;
    s = AudioQueueProcessingTapGetQueueTime(tap, &queueTime, &queueFrames);
    if (s != noErr || queueTime != expectedQueueTime || queueFrames != got || ioTimeStamp->mSampleTime != expectedQueueTime) badTime++;
    expectedQueueTime += got;
    float *p = ioData->mBuffers[0].mData;
    for (UInt32 i = 0; i < got; i++) p[i] *= 0.5f;
    frames += got;
    *outNumberFrames = got;
}

/* A siphon: copies what it is given; GetSourceAudio is refused to it. */
static void siphonTap(void *client, AudioQueueProcessingTapRef tap, UInt32 inNumberFrames, AudioTimeStamp *ioTimeStamp,
                      AudioQueueProcessingTapFlags *ioFlags, UInt32 *outNumberFrames, AudioBufferList *ioData) {
    (void)client; (void)ioTimeStamp;
    calls++;
    if (!(*ioFlags & kAudioQueueProcessingTap_Siphon)) badTime++;
    if (siphonFrames + inNumberFrames <= TOTAL && ioData->mBuffers[0].mData)
        memcpy(seen + siphonFrames, ioData->mBuffers[0].mData, inNumberFrames * 4);
    siphonFrames += inNumberFrames;
    UInt32 got = 0;
    AudioQueueProcessingTapFlags f = 0;
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    contextStatus = AudioQueueProcessingTapGetSourceAudio(tap, inNumberFrames, &t, &f, &got, ioData);
    *outNumberFrames = 0;
}

/* A stereo tap with buffers of its own: GetSourceAudio copies into them; left is halved and
 * right quartered into a second pair it returns. */
static float ownIn[2][2048], ownOut[2][2048];
static void stereoTap(void *client, AudioQueueProcessingTapRef tap, UInt32 inNumberFrames, AudioTimeStamp *ioTimeStamp,
                      AudioQueueProcessingTapFlags *ioFlags, UInt32 *outNumberFrames, AudioBufferList *ioData) {
    (void)client; (void)ioFlags;
    calls++;
    if (ioData->mNumberBuffers != 2 || inNumberFrames > 2048) { badTime++; *outNumberFrames = 0; return; }
    for (int c = 0; c < 2; c++) {
        ioData->mBuffers[c].mData = ownIn[c];
        ioData->mBuffers[c].mDataByteSize = sizeof ownIn[c];
    }
    UInt32 got = 0;
    OSStatus s = AudioQueueProcessingTapGetSourceAudio(tap, inNumberFrames, ioTimeStamp, NULL, &got, ioData);
    if (s != noErr || ioData->mBuffers[0].mData != ownIn[0] || ioData->mBuffers[1].mData != ownIn[1]) { pullStatus = s ? s : -1; *outNumberFrames = 0; return; }
    for (UInt32 i = 0; i < got; i++) { ownOut[0][i] = ownIn[0][i] * 0.5f; ownOut[1][i] = ownIn[1][i] * 0.25f; }
    for (int c = 0; c < 2; c++) {
        ioData->mBuffers[c].mData = ownOut[c];
        ioData->mBuffers[c].mDataByteSize = got * 4;
    }
    frames += got;
    *outNumberFrames = got;
}

/* Stereo: interleaved Float32 at 48 kHz; left the tone, right its negative at a third. */
static float stereoIn[2 * TOTAL], stereoRef[2 * RENDERED], stereoOut[2 * RENDERED];
static void playStereo(AudioQueueRef aq, AudioQueueBufferRef *buffers, AudioQueueBufferRef render, float *dst) {
    for (int b = 0; b < BUFFERS; b++) {
        memcpy(buffers[b]->mAudioData, stereoIn + 2 * b * PER_BUFFER, PER_BUFFER * 8);
        buffers[b]->mAudioDataByteSize = PER_BUFFER * 8;
        EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, buffers[b], 0, NULL), noErr);
    }
    EXPECT_STATUS(AudioQueueFlush(aq), noErr);
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    t.mFlags = kAudioTimeStampSampleTimeValid;
    for (int n = 0; n < RENDERED; n += CHUNK) {
        t.mSampleTime = n;
        OSStatus s = AudioQueueOfflineRender(aq, &t, render, CHUNK);
        if (s != noErr) { EXPECT(0, "AudioQueueOfflineRender = %d", (int)s); break; }
        memcpy(dst + 2 * n, render->mAudioData, CHUNK * 8);
    }
}

static void stereo(void) {
    AudioStreamBasicDescription format;
    memset(&format, 0, sizeof format);
    format.mSampleRate = RATE;
    format.mFormatID = kAudioFormatLinearPCM;
    format.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    format.mBytesPerPacket = format.mBytesPerFrame = 8;
    format.mFramesPerPacket = 1;
    format.mChannelsPerFrame = 2;
    format.mBitsPerChannel = 32;
    for (int i = 0; i < TOTAL; i++) { stereoIn[2 * i] = input[i]; stereoIn[2 * i + 1] = -input[i] / 3; }
    AudioQueueRef aq = NULL;
    EXPECT_STATUS(AudioQueueNewOutput(&format, outputCallback, NULL, NULL, NULL, 0, &aq), noErr);
    if (!aq) return;
    AudioQueueBufferRef buffers[BUFFERS], render = NULL;
    for (int b = 0; b < BUFFERS; b++) EXPECT_STATUS(AudioQueueAllocateBuffer(aq, PER_BUFFER * 8, &buffers[b]), noErr);
    EXPECT_STATUS(AudioQueueAllocateBuffer(aq, CHUNK * 8, &render), noErr);
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(aq, &format, NULL), noErr);
    playStereo(aq, buffers, render, stereoRef);
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    UInt32 maxFrames = 0;
    AudioStreamBasicDescription processing;
    AudioQueueProcessingTapRef tap = NULL;
    EXPECT_STATUS(AudioQueueProcessingTapNew(aq, stereoTap, NULL, kAudioQueueProcessingTap_PostEffects, &maxFrames, &processing, &tap), noErr);
    EXPECT(processing.mChannelsPerFrame == 2 && (processing.mFormatFlags & kAudioFormatFlagIsNonInterleaved) && processing.mBytesPerFrame == 4,
           "stereo processing format: 2 deinterleaved channels, 4 bytes a frame");
    calls = frames = badTime = 0;
    pullStatus = noErr;
    playStereo(aq, buffers, render, stereoOut);
    int same = 1;
    for (int i = 0; i < RENDERED && same; i++)
        if (stereoOut[2 * i] != stereoRef[2 * i] * 0.5f || stereoOut[2 * i + 1] != stereoRef[2 * i + 1] * 0.25f) {
            same = 0;
            printf("stereo frame %d: %f %f, want %f %f\n", i, stereoOut[2 * i], stereoOut[2 * i + 1], stereoRef[2 * i] * 0.5f, stereoRef[2 * i + 1] * 0.25f);
        }
    EXPECT(same, "stereo tap with its own buffers: left halved, right quartered, sample for sample");
    EXPECT(frames == TOTAL && badTime == 0 && pullStatus == noErr, "stereo: %d frames, %d bad, pull %d", frames, badTime, (int)pullStatus);
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);
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

/* Enqueues the input, flushes, renders RENDERED frames into `dst`, stops. */
static void play(AudioQueueRef aq, AudioQueueBufferRef *buffers, AudioQueueBufferRef render, float *dst) {
    for (int b = 0; b < BUFFERS; b++) {
        memcpy(buffers[b]->mAudioData, input + b * PER_BUFFER, PER_BUFFER * 4);
        buffers[b]->mAudioDataByteSize = PER_BUFFER * 4;
        EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, buffers[b], 0, NULL), noErr);
    }
    EXPECT_STATUS(AudioQueueFlush(aq), noErr);
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    t.mFlags = kAudioTimeStampSampleTimeValid;
    for (int n = 0; n < RENDERED; n += CHUNK) {
        t.mSampleTime = n;
        OSStatus s = AudioQueueOfflineRender(aq, &t, render, CHUNK);
        if (s != noErr) { EXPECT(0, "AudioQueueOfflineRender = %d", (int)s); break; }
        memcpy(dst + n, render->mAudioData, CHUNK * 4);
    }
}

int main(void) {
    AudioStreamBasicDescription format = floatMono();
    AudioQueueRef aq = NULL, recorder = NULL;
    for (int i = 0; i < TOTAL; i++) input[i] = 0.5f * (float)sin(2 * M_PI * 440.0 * i / RATE);
    EXPECT_STATUS(AudioQueueNewOutput(&format, outputCallback, NULL, NULL, NULL, 0, &aq), noErr);
    if (!aq) { printf("%d passed, %d failed\n", passed, failed + 1); return 1; }
    AudioQueueBufferRef buffers[BUFFERS], render = NULL;
    for (int b = 0; b < BUFFERS; b++) EXPECT_STATUS(AudioQueueAllocateBuffer(aq, PER_BUFFER * 4, &buffers[b]), noErr);
    EXPECT_STATUS(AudioQueueAllocateBuffer(aq, CHUNK * 4, &render), noErr);
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(aq, &format, NULL), noErr);

    /* Arguments AudioQueueProcessingTapNew refuses. */
    UInt32 maxFrames = 0;
    AudioStreamBasicDescription processing;
    AudioQueueProcessingTapRef tap = NULL, other = NULL;
    EXPECT_STATUS(AudioQueueProcessingTapNew(NULL, halvingTap, NULL, kAudioQueueProcessingTap_PreEffects, &maxFrames, &processing, &tap), kAudio_ParamError);
    EXPECT_STATUS(AudioQueueProcessingTapNew(aq, NULL, NULL, kAudioQueueProcessingTap_PreEffects, &maxFrames, &processing, &tap), kAudio_ParamError);
    EXPECT_STATUS(AudioQueueProcessingTapNew(aq, halvingTap, NULL, 0, &maxFrames, &processing, &tap), kAudio_ParamError);
    EXPECT_STATUS(AudioQueueProcessingTapNew(aq, halvingTap, NULL, kAudioQueueProcessingTap_PreEffects | kAudioQueueProcessingTap_PostEffects,
                                             &maxFrames, &processing, &tap), kAudio_ParamError);
    EXPECT_STATUS(AudioQueueProcessingTapNew(aq, halvingTap, NULL, kAudioQueueProcessingTap_PreEffects | kAudioQueueProcessingTap_StartOfStream,
                                             &maxFrames, &processing, &tap), kAudio_ParamError);
    EXPECT_STATUS(AudioQueueProcessingTapNew(aq, halvingTap, NULL, kAudioQueueProcessingTap_PreEffects, NULL, &processing, &tap), kAudio_ParamError);
    EXPECT(tap == NULL, "no tap made by refused calls");

    /* The reference: no tap. */
    play(aq, buffers, render, reference);
    int loud = 0;
    for (int i = 0; i < RENDERED; i++) if (fabsf(reference[i]) > 0.4f) loud++;
    EXPECT(loud > 1000, "the reference holds the tone (%d loud samples)", loud);
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);

    /* A halving PreEffects tap: its format, its maximum, the output halved exactly. */
    EXPECT_STATUS(AudioQueueProcessingTapNew(aq, halvingTap, NULL, kAudioQueueProcessingTap_PreEffects, &maxFrames, &processing, &tap), noErr);
    EXPECT(maxFrames == 2048, "maxFrames %u, want 2048 (about 50 ms at 48 kHz)", maxFrames);
    EXPECT(processing.mSampleRate == RATE && processing.mFormatID == kAudioFormatLinearPCM && processing.mChannelsPerFrame == 1 &&
           (processing.mFormatFlags & kAudioFormatFlagIsFloat) && (processing.mFormatFlags & kAudioFormatFlagIsNonInterleaved) &&
           processing.mBytesPerFrame == 4 && processing.mBitsPerChannel == 32, "processing format: Float32 deinterleaved at the queue's rate");
    EXPECT_STATUS(AudioQueueProcessingTapNew(aq, siphonTap, NULL, kAudioQueueProcessingTap_PostEffects, &maxFrames, &processing, &other), kAudioQueueErr_TooManyTaps);
    /* Outside the callback. */
    AudioBufferList list;
    list.mNumberBuffers = 1;
    list.mBuffers[0].mNumberChannels = 1;
    list.mBuffers[0].mDataByteSize = 0;
    list.mBuffers[0].mData = NULL;
    UInt32 got = 0;
    AudioQueueProcessingTapFlags f = 0;
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    Float64 qt = 0;
    EXPECT_STATUS(AudioQueueProcessingTapGetSourceAudio(tap, 16, &t, &f, &got, &list), kAudioQueueErr_InvalidTapContext);
    EXPECT_STATUS(AudioQueueProcessingTapGetQueueTime(tap, &qt, &got), kAudioQueueErr_InvalidTapContext);
    EXPECT_STATUS(AudioQueueProcessingTapGetSourceAudio(NULL, 16, &t, &f, &got, &list), kAudio_ParamError);
    EXPECT_STATUS(AudioQueueProcessingTapGetQueueTime(NULL, &qt, &got), kAudio_ParamError);

    calls = frames = startFlags = badTime = 0;
    pullStatus = noErr;
    expectedQueueTime = 0;
    play(aq, buffers, render, out);
    int same = 1;
    for (int i = 0; i < RENDERED; i++) if (out[i] != reference[i] * 0.5f) { same = 0; printf("frame %d: %f, want %f\n", i, out[i], reference[i] * 0.5f); break; }
    EXPECT(same, "the halving tap is heard halved, sample for sample");
    EXPECT(frames == TOTAL, "the tap pulled %d frames, want %d", frames, TOTAL);
    EXPECT(calls == 9, "%d callbacks, want 9 (2048 + 2048 + 704 per buffer)", calls);
    EXPECT(startFlags == 1, "StartOfStream on %d callbacks, want 1", startFlags);
    EXPECT(badTime == 0 && pullStatus == noErr, "time stamps and GetQueueTime continuous (%d wrong, pull %d)", badTime, (int)pullStatus);
    /* Started (offline rendering started it): no dispose, no new tap. */
    EXPECT_STATUS(AudioQueueProcessingTapDispose(tap), kAudioQueueErr_InvalidRunState);
    EXPECT_STATUS(AudioQueuePause(aq), noErr);
    EXPECT_STATUS(AudioQueueProcessingTapDispose(tap), kAudioQueueErr_InvalidRunState);
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    EXPECT_STATUS(AudioQueueProcessingTapDispose(tap), noErr);
    EXPECT_STATUS(AudioQueueProcessingTapDispose(tap), kAudio_ParamError);
    EXPECT_STATUS(AudioQueueProcessingTapDispose(NULL), kAudio_ParamError);

    /* Disposed: no callback, the reference again. */
    calls = 0;
    play(aq, buffers, render, out);
    EXPECT(calls == 0, "%d callbacks after dispose", calls);
    EXPECT(memcmp(out, reference, sizeof out) == 0, "after dispose the audio is the reference");
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);

    /* A siphon: every frame once, in order; the audio unchanged; GetSourceAudio refused. */
    EXPECT_STATUS(AudioQueueProcessingTapNew(aq, siphonTap, NULL, kAudioQueueProcessingTap_PostEffects | kAudioQueueProcessingTap_Siphon,
                                             &maxFrames, &processing, &tap), noErr);
    calls = siphonFrames = badTime = 0;
    contextStatus = noErr;
    play(aq, buffers, render, out);
    EXPECT(siphonFrames == TOTAL, "the siphon saw %d frames, want %d", siphonFrames, TOTAL);
    EXPECT(memcmp(seen, input, sizeof seen) == 0, "the siphon saw the input in order");
    EXPECT(memcmp(out, reference, sizeof out) == 0, "a siphon leaves the audio as it was");
    EXPECT(badTime == 0, "the siphon's flags hold Siphon");
    EXPECT(contextStatus == kAudioQueueErr_InvalidTapContext, "GetSourceAudio from a siphon = %d", (int)contextStatus);
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    /* Disposing of the queue disposes of its tap. */
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);
    EXPECT_STATUS(AudioQueueProcessingTapDispose(tap), kAudio_ParamError);

    stereo();

    /* Recording queues have no taps here. */
    EXPECT_STATUS(AudioQueueNewInput(&format, inputCallback, NULL, NULL, NULL, 0, &recorder), noErr);
    if (recorder) {
        EXPECT_STATUS(AudioQueueProcessingTapNew(recorder, halvingTap, NULL, kAudioQueueProcessingTap_PreEffects, &maxFrames, &processing, &tap),
                      kAudioQueueErr_InvalidQueueType);
        EXPECT_STATUS(AudioQueueDispose(recorder, true), noErr);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
