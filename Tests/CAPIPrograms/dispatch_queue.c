/* dispatch_queue.c — issue 22: AudioQueueNewOutputWithDispatchQueue and
 * AudioQueueNewInputWithDispatchQueue, with blocks (clang -fblocks; the toolchain's libdispatch
 * and BlocksRuntime, linked by pkg-config's Libs). Usage: dispatch_queue SECONDS; run with
 * AQSYNC_CONNECT naming a recorder's ports and AQSYNC_INPUT_CONNECT naming a port that clicks at
 * a fixed interval.
 *
 * An output queue plays a 1 kHz tone (48 kHz, int16 stereo) for SECONDS, its block running on
 * a serial dispatch queue of the program's; the block stops the queue asynchronously after the
 * last buffer and the IsRunning listener (on the same dispatch queue) signals the end. An input
 * queue records the clicker through a second dispatch queue, which the program releases right
 * after making the queue (the audio queue keeps it alive); its block prints each click's sample
 * time as "click N" and enqueues the buffer again. Checks: every block and listener ran on its
 * own dispatch queue (dispatch_get_specific), never two at once on the serial queue, the tone's
 * frames all played, the input's start times contiguous, no block after AudioQueueDispose, and
 * the result codes of bad arguments. Prints "N passed, N failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <dispatch/dispatch.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static char outKey, inKey;  /* dispatch_queue_set_specific keys: their addresses */
static atomic_int inOutputBlock, overlaps, offQueue, afterDispose, outputDisposed;

/* The IsRunning listener's state: the semaphore it signals when the queue stopped. */
typedef struct {
    dispatch_semaphore_t drained;
    int changes, offQueue;
} Listening;

static void isRunningChanged(void *user, AudioQueueRef q, AudioQueuePropertyID id) {
    Listening *l = user;
    UInt32 running = 1, size = sizeof running;
    AudioQueueGetProperty(q, id, &running, &size);
    l->changes++;
    if (dispatch_get_specific(&outKey) != &outKey) l->offQueue++;
    if (!running) dispatch_semaphore_signal(l->drained);
}

static AudioStreamBasicDescription pcm(UInt32 flags, UInt32 bytes) {
    AudioStreamBasicDescription f = {0};
    f.mSampleRate = 48000;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = flags | kLinearPCMFormatFlagIsPacked;
    f.mBytesPerPacket = f.mBytesPerFrame = 2 * bytes;
    f.mFramesPerPacket = 1;
    f.mChannelsPerFrame = 2;
    f.mBitsPerChannel = 8 * bytes;
    return f;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    const int totalFrames = (int)(seconds * 48000);
    AudioStreamBasicDescription tone = pcm(kLinearPCMFormatFlagIsSignedInteger, 2);
    AudioStreamBasicDescription floats = pcm(kLinearPCMFormatFlagIsFloat, 4);

    dispatch_queue_t outQueue = dispatch_queue_create("dispatch_queue.out", DISPATCH_QUEUE_SERIAL);
    dispatch_queue_t inQueue = dispatch_queue_create("dispatch_queue.in", DISPATCH_QUEUE_SERIAL);
    dispatch_queue_set_specific(outQueue, &outKey, &outKey, NULL);
    dispatch_queue_set_specific(inQueue, &inKey, &inKey, NULL);
    dispatch_semaphore_t drained = dispatch_semaphore_create(0);

    /* Bad arguments: kAudio_ParamError (-50), nothing made. */
    AudioQueueRef none = NULL;
    AudioQueueOutputCallbackBlock nothing = ^(AudioQueueRef q, AudioQueueBufferRef b) { (void)q; (void)b; };
    EXPECT(AudioQueueNewOutputWithDispatchQueue(&none, &tone, 0, NULL, nothing) == kAudio_ParamError, "NULL queue");
    EXPECT(AudioQueueNewOutputWithDispatchQueue(&none, &tone, 0, outQueue, NULL) == kAudio_ParamError, "NULL block");
    EXPECT(AudioQueueNewOutputWithDispatchQueue(&none, NULL, 0, outQueue, nothing) == kAudio_ParamError, "NULL format");
    EXPECT(AudioQueueNewOutputWithDispatchQueue(NULL, &tone, 0, outQueue, nothing) == kAudio_ParamError, "NULL outAQ");
    EXPECT(AudioQueueNewOutputWithDispatchQueue(&none, &tone, 1, outQueue, nothing) == kAudio_ParamError, "flags");
    EXPECT(AudioQueueNewInputWithDispatchQueue(&none, &floats, 0, inQueue, NULL) == kAudio_ParamError, "NULL input block");
    EXPECT(none == NULL, "no queue made by a refused call");

    /* ---- Playback: the tone, filled by a block on outQueue. ---- */
    __block double phase = 0;
    __block int framesQueued = 0, outputCalls = 0;
    AudioQueueRef out = NULL;
    void (^fill)(AudioQueueRef, AudioQueueBufferRef) = ^(AudioQueueRef q, AudioQueueBufferRef b) {
        int frames = (int)(b->mAudioDataBytesCapacity / 4);
        if (frames > totalFrames - framesQueued) frames = totalFrames - framesQueued;
        if (frames <= 0) return;
        SInt16 *s = b->mAudioData;
        for (int i = 0; i < frames; i++) {
            SInt16 v = (SInt16)(8000 * sin(phase));
            s[2 * i] = s[2 * i + 1] = v;
            phase += 2 * M_PI * 1000 / 48000;
        }
        b->mAudioDataByteSize = (UInt32)frames * 4;
        framesQueued += frames;
        AudioQueueEnqueueBuffer(q, b, 0, NULL);
        if (framesQueued == totalFrames) AudioQueueStop(q, false);  /* after the queued buffers */
    };
    OSStatus s = AudioQueueNewOutputWithDispatchQueue(&out, &tone, 0, outQueue, ^(AudioQueueRef q, AudioQueueBufferRef b) {
        if (atomic_fetch_add(&inOutputBlock, 1) != 0) atomic_fetch_add(&overlaps, 1);
        if (dispatch_get_specific(&outKey) != &outKey) atomic_fetch_add(&offQueue, 1);
        if (atomic_load(&outputDisposed)) atomic_fetch_add(&afterDispose, 1);
        outputCalls++;
        fill(q, b);
        atomic_fetch_sub(&inOutputBlock, 1);
    });
    EXPECT(s == noErr && out != NULL, "AudioQueueNewOutputWithDispatchQueue: %d", (int)s);
    if (s != noErr) { printf("%d passed, %d failed\n", passed, failed); return 1; }

    /* ---- Recording: the clicker, through inQueue, which only the audio queue keeps. ---- */
    __block double nextStart = -1;
    __block int gaps = 0, inputCalls = 0, inOffQueue = 0, recording = 1, clicks = 0;
    AudioQueueRef in = NULL;
    s = AudioQueueNewInputWithDispatchQueue(&in, &floats, 0, inQueue,
        ^(AudioQueueRef q, AudioQueueBufferRef b, const AudioTimeStamp *start, UInt32 packets,
          const AudioStreamPacketDescription *d) {
            (void)d;
            inputCalls++;
            if (dispatch_get_specific(&inKey) != &inKey) inOffQueue++;
            UInt32 frames = b->mAudioDataByteSize / 8;
            if (frames > 0) {
                if (nextStart >= 0 && start->mSampleTime != nextStart) gaps++;
                nextStart = start->mSampleTime + frames;
                if (packets != frames) gaps++;
                const float *x = b->mAudioData;
                for (UInt32 i = 0; i < frames; i++)
                    if (x[2 * i] > 0.5f) { printf("click %.0f\n", start->mSampleTime + i); clicks++; }
            }
            if (recording) AudioQueueEnqueueBuffer(q, b, 0, NULL);
        });
    EXPECT(s == noErr && in != NULL, "AudioQueueNewInputWithDispatchQueue: %d", (int)s);
    if (s != noErr) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    dispatch_release(inQueue);  /* the audio queue retains it */

    /* IsRunning on the output queue: its (C) listener runs on outQueue too. */
    Listening listening = {drained, 0, 0};
    EXPECT(AudioQueueAddPropertyListener(out, kAudioQueueProperty_IsRunning, isRunningChanged, &listening) == noErr, "listener");

    for (int i = 0; i < 3; i++) {
        AudioQueueBufferRef b;
        EXPECT(AudioQueueAllocateBuffer(in, 4096 * 8, &b) == noErr, "input buffer");
        EXPECT(AudioQueueEnqueueBuffer(in, b, 0, NULL) == noErr, "input enqueue");
    }
    EXPECT(AudioQueueStart(in, NULL) == noErr, "input start");
    for (int i = 0; i < 3; i++) {
        AudioQueueBufferRef b = NULL;
        EXPECT(AudioQueueAllocateBuffer(out, 2400 * 4, &b) == noErr, "output buffer");
        dispatch_sync(outQueue, ^{ fill(out, b); });  /* priming, on the queue the block uses */
    }
    EXPECT(AudioQueueStart(out, NULL) == noErr, "output start");

    /* The end: the listener hears IsRunning 0 once the last buffer played (at most the tone's
     * length and 5 s more). */
    long timedOut = dispatch_semaphore_wait(drained, dispatch_time(DISPATCH_TIME_NOW, (int64_t)((seconds + 5) * 1e9)));
    EXPECT(timedOut == 0, "the IsRunning listener heard the drain");
    __block int queued = 0;
    dispatch_sync(outQueue, ^{ queued = framesQueued; });
    EXPECT(queued == totalFrames, "the tone's %d frames were enqueued (%d)", totalFrames, queued);

    /* Stop recording: buffers the immediate stop hands back are submitted to inQueue, after
     * the call returns. Then dispose of both queues; nothing runs after that. */
    dispatch_sync(inQueue, ^{ recording = 0; });  /* alive: the input queue still holds it */
    EXPECT(AudioQueueStop(in, true) == noErr, "input stop");
    dispatch_sync(inQueue, ^{});  /* the buffers handed back have been seen */
    EXPECT(AudioQueueDispose(in, true) == noErr, "input dispose");
    EXPECT(AudioQueueDispose(out, true) == noErr, "output dispose");
    atomic_store(&outputDisposed, 1);
    dispatch_sync(outQueue, ^{});  /* everything submitted before has run */
    EXPECT(atomic_load(&afterDispose) == 0, "%d output blocks after AudioQueueDispose", atomic_load(&afterDispose));

    int calls = outputCalls;
    printf("output blocks %d, input blocks %d, clicks %d\n", calls, inputCalls, clicks);
    EXPECT(calls >= totalFrames / 2400 - 3, "output blocks: %d", calls);
    EXPECT(atomic_load(&offQueue) == 0, "%d output blocks off their dispatch queue", atomic_load(&offQueue));
    EXPECT(atomic_load(&overlaps) == 0, "%d output blocks overlapped", atomic_load(&overlaps));
    EXPECT(listening.changes >= 2 && listening.offQueue == 0, "IsRunning changes %d, %d off the queue", listening.changes, listening.offQueue);
    EXPECT(inputCalls > 0 && inOffQueue == 0, "input blocks %d, %d off their queue", inputCalls, inOffQueue);
    EXPECT(gaps == 0, "%d gaps between recorded buffers", gaps);
    EXPECT(clicks > 0, "clicks recorded");
    dispatch_release(outQueue);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
