/* offline_runloop.c — issue 23: a queue made on this thread's run loop
 * (CFRunLoopGetCurrent(), kCFRunLoopCommonModes) rendered offline on this thread without ever
 * running the loop, as Apple's aqrender does: one buffer, refilled by the output callback with
 * the next 1500 frames of a ramp (16-bit stereo at 44100 Hz) until 8 buffers were given, then
 * AudioQueueFlush and AudioQueueStop(false) from the callback; the program renders 1024 frames
 * at a time (32-bit float stereo) until the callback has flushed. The callback must run inside
 * AudioQueueOfflineRender, on this thread, for every buffer; the loop must end; the rendered
 * frames hold all 8 × 1500 frames of the ramp, in order, from the first frame rendered and
 * without a gap: a refill made in the callback plays right after the buffer it follows, though
 * the buffers end in the middle of the render calls (as on Apple's systems, where aqrender's
 * one buffer renders without gaps). Prints "N passed, M failed". Run with
 * AQSYNC_DEVICE=offline. */
#include <AudioToolbox/AudioToolbox.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { kRate = 44100, kBufferFrames = 1500, kBuffers = 8, kChunk = 1024 };

typedef struct {
    pthread_t thread;
    int given, calls, offThread, flushed, inRender;
    int callsOutsideRender;
} State;

static void fill(State *s, AudioQueueRef q, AudioQueueBufferRef b) {
    SInt16 *p = b->mAudioData;
    for (int i = 0; i < kBufferFrames; i++) {
        int n = s->given * kBufferFrames + i + 1;  /* 1 … 16384: never 0 */
        p[2 * i] = (SInt16)n;
        p[2 * i + 1] = (SInt16)-n;
    }
    b->mAudioDataByteSize = kBufferFrames * 4;
    EXPECT(AudioQueueEnqueueBuffer(q, b, 0, NULL) == noErr, "enqueue %d", s->given);
    s->given++;
}

static void callback(void *user, AudioQueueRef q, AudioQueueBufferRef b) {
    State *s = user;
    s->calls++;
    if (!pthread_equal(pthread_self(), s->thread)) s->offThread++;
    if (!s->inRender) s->callsOutsideRender++;
    if (s->flushed) return;
    if (s->given < kBuffers) { fill(s, q, b); return; }
    EXPECT(AudioQueueFlush(q) == noErr, "flush");
    EXPECT(AudioQueueStop(q, false) == noErr, "stop(false)");
    s->flushed = 1;
}

int main(void) {
    State s;
    memset(&s, 0, sizeof s);
    s.thread = pthread_self();
    AudioStreamBasicDescription f = {0};
    f.mSampleRate = kRate; f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked;
    f.mBitsPerChannel = 16; f.mChannelsPerFrame = 2; f.mFramesPerPacket = 1; f.mBytesPerFrame = f.mBytesPerPacket = 4;
    AudioQueueRef q = NULL;
    EXPECT(AudioQueueNewOutput(&f, callback, &s, CFRunLoopGetCurrent(), kCFRunLoopCommonModes, 0, &q) == noErr, "new output");
    if (!q) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    AudioStreamBasicDescription render = {0};
    render.mSampleRate = kRate; render.mFormatID = kAudioFormatLinearPCM;
    render.mFormatFlags = kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked;
    render.mBitsPerChannel = 32; render.mChannelsPerFrame = 2; render.mFramesPerPacket = 1; render.mBytesPerFrame = render.mBytesPerPacket = 8;
    AudioChannelLayout layout;
    memset(&layout, 0, sizeof layout);
    layout.mChannelLayoutTag = kAudioChannelLayoutTag_Stereo;
    EXPECT(AudioQueueSetOfflineRenderFormat(q, &render, &layout) == noErr, "offline format");
    AudioQueueBufferRef b = NULL, out = NULL;
    EXPECT(AudioQueueAllocateBuffer(q, kBufferFrames * 4, &b) == noErr, "buffer");
    EXPECT(AudioQueueAllocateBuffer(q, kChunk * 8, &out) == noErr, "render buffer");
    EXPECT(AudioQueueStart(q, NULL) == noErr, "start");
    AudioTimeStamp ts;
    memset(&ts, 0, sizeof ts);
    ts.mFlags = kAudioTimeStampSampleTimeValid;
    s.inRender = 1;
    EXPECT(AudioQueueOfflineRender(q, &ts, out, 0) == noErr, "render 0 frames");
    s.inRender = 0;
    fill(&s, q, b);  /* the first buffer after the start, as aqrender */

    float *all = calloc((size_t)kBuffers * kBufferFrames * 4, 8);
    long frames = 0, renders = 0;
    while (renders < 200) {
        s.inRender = 1;
        OSStatus r = AudioQueueOfflineRender(q, &ts, out, kChunk);
        s.inRender = 0;
        renders++;
        EXPECT(r == noErr, "render: %d", (int)r);
        if (r != noErr) break;
        UInt32 n = out->mAudioDataByteSize / 8;
        if (frames + n <= (long)kBuffers * kBufferFrames * 4) memcpy(all + 2 * frames, out->mAudioData, (size_t)n * 8);
        frames += n;
        ts.mSampleTime += n;
        if (n == 0 || s.flushed) break;
    }
    EXPECT(s.flushed, "the callback flushed after %d buffers (%ld renders, %d calls)", s.given, renders, s.calls);
    EXPECT(s.given == kBuffers && s.calls >= kBuffers, "every buffer came back: %d given, %d calls", s.given, s.calls);
    EXPECT(s.offThread == 0, "callbacks on this thread (%d elsewhere)", s.offThread);
    EXPECT(s.callsOutsideRender == 0, "callbacks inside AudioQueueOfflineRender (%d outside)", s.callsOutsideRender);
    /* The ramp's samples in order from the first frame, with no silence between buffers. */
    long whole = (long)kBuffers * kBufferFrames, wrong = 0, firstWrong = -1;
    for (long i = 0; i < whole && i < frames; i++) {
        long l = lrintf(all[2 * i] * 32768.0f), r = lrintf(all[2 * i + 1] * 32768.0f);
        if (l != i + 1 || r != -(i + 1)) { if (firstWrong < 0) firstWrong = i; wrong++; }
    }
    EXPECT(frames >= whole && wrong == 0, "the ramp rendered whole and without a gap from frame 0: %ld of %ld frames wrong, the first at %ld (%ld frames rendered)", wrong, whole, firstWrong, frames);
    for (long i = whole; i < frames && i < (long)kBuffers * kBufferFrames * 4; i++)
        if (all[2 * i] != 0 || all[2 * i + 1] != 0) { EXPECT(0, "silence after the ramp: frame %ld is not", i); break; }
    AudioQueueDispose(q, true);
    free(all);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
