/* runloop_timer.c — issue 23: an output queue whose callbacks run on the main run loop (Core
 * Foundation's own, the toolchain's), stopped by a CFRunLoopTimer after N seconds, as Apple's
 * samples stop after a fixed time. Plays a 1 kHz tone (48 kHz, int16 stereo) until the timer
 * fires; the timer's callout stops the queue immediately and stops the run loop. Checks: every
 * output callback and the timer ran on the main thread, inside CFRunLoopRun; CFRunLoopRun
 * returned once the timer fired, N seconds after the start (±0.25 s); IsRunning is 0 after the
 * stop; the queue played about N seconds of frames. Built with clang -fblocks (the toolchain's
 * CF headers) and with gcc (AQSyncCFSubset.h); usage: runloop_timer SECONDS. Prints
 * "N passed, M failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <CoreFoundation/CoreFoundation.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

typedef struct {
    pthread_t mainThread;
    double phase;
    int callbacks, offThread, timerFired, timerOffThread;
    AudioQueueRef queue;
    int inRunLoop;
} Player;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fill(Player *p, AudioQueueRef q, AudioQueueBufferRef b) {
    SInt16 *s = (SInt16 *)b->mAudioData;
    UInt32 frames = b->mAudioDataBytesCapacity / 4;
    for (UInt32 i = 0; i < frames; i++) {
        SInt16 v = (SInt16)(8000 * sin(p->phase));
        s[2 * i] = v;
        s[2 * i + 1] = v;
        p->phase += 2 * M_PI * 1000 / 48000;
    }
    b->mAudioDataByteSize = frames * 4;
    AudioQueueEnqueueBuffer(q, b, 0, NULL);
}

static void output(void *user, AudioQueueRef q, AudioQueueBufferRef b) {
    Player *p = user;
    p->callbacks++;
    if (!pthread_equal(pthread_self(), p->mainThread) || !p->inRunLoop) p->offThread++;
    fill(p, q, b);
}

static void stopAfter(CFRunLoopTimerRef timer, void *info) {
    (void)timer;
    Player *p = info;
    p->timerFired++;
    if (!pthread_equal(pthread_self(), p->mainThread)) p->timerOffThread++;
    AudioQueueStop(p->queue, true);
    CFRunLoopStop(CFRunLoopGetCurrent());
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.5;
    Player p = {0};
    p.mainThread = pthread_self();
    AudioStreamBasicDescription f = {0};
    f.mSampleRate = 48000;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked;
    f.mBytesPerPacket = f.mBytesPerFrame = 4;
    f.mFramesPerPacket = 1;
    f.mChannelsPerFrame = 2;
    f.mBitsPerChannel = 16;
    OSStatus s = AudioQueueNewOutput(&f, output, &p, CFRunLoopGetMain(), kCFRunLoopCommonModes, 0, &p.queue);
    EXPECT(s == noErr, "AudioQueueNewOutput: %d", (int)s);
    if (s != noErr) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    for (int i = 0; i < 3; i++) {
        AudioQueueBufferRef b;
        EXPECT(AudioQueueAllocateBuffer(p.queue, 2400 * 4, &b) == noErr, "allocate");
        fill(&p, p.queue, b);  /* priming: before the loop runs, on this thread */
    }
    CFRunLoopTimerContext context = {0, &p, NULL, NULL, NULL};
    CFRunLoopTimerRef timer = CFRunLoopTimerCreate(kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + seconds, 0, 0, 0, stopAfter, &context);
    CFRunLoopAddTimer(CFRunLoopGetMain(), timer, kCFRunLoopCommonModes);
    double started = now();
    EXPECT(AudioQueueStart(p.queue, NULL) == noErr, "start");
    p.inRunLoop = 1;
    CFRunLoopRun();
    p.inRunLoop = 0;
    double ran = now() - started;
    printf("run loop returned after %.3f s; %d callbacks\n", ran, p.callbacks);
    EXPECT(p.timerFired == 1 && p.timerOffThread == 0, "the timer fired once on the main thread (%d, %d off)", p.timerFired, p.timerOffThread);
    EXPECT(ran > seconds - 0.01 && ran < seconds + 0.25, "CFRunLoopRun returned %.3f s after the start (timer at %.3f s)", ran, seconds);
    EXPECT(p.callbacks > 0 && p.offThread == 0, "%d callbacks, %d off the main thread's run loop", p.callbacks, p.offThread);
    /* 48000 / 2400 = 20 buffers a second come back while it plays. */
    EXPECT(p.callbacks >= (int)(seconds * 20) - 6, "%d callbacks in %.1f s", p.callbacks, seconds);
    UInt32 running = 1, size = sizeof running;
    EXPECT(AudioQueueGetProperty(p.queue, kAudioQueueProperty_IsRunning, &running, &size) == noErr && running == 0, "IsRunning after the stop: %u", running);
    CFStringRef device = NULL;
    size = sizeof device;
    EXPECT(AudioQueueGetProperty(p.queue, kAudioQueueProperty_CurrentDevice, &device, &size) == noErr && device != NULL, "CurrentDevice");
    char name[256] = "";
    EXPECT(device != NULL && CFStringGetCString(device, name, sizeof name, kCFStringEncodingUTF8) && strncmp(name, "jack:", 5) == 0,
           "CurrentDevice is a CFString naming the JACK device: '%s'", name);
    if (device) CFRelease(device);
    CFRunLoopTimerInvalidate(timer);
    CFRelease(timer);
    EXPECT(AudioQueueDispose(p.queue, true) == noErr, "dispose");
    /* With the queue disposed of (its source removed) and the timer invalidated, running the loop
     * calls nothing of theirs. */
    int before = p.callbacks;
    CFRunLoopRunResult r = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.2, false);
    EXPECT(p.callbacks == before && p.timerFired == 1 && r != kCFRunLoopRunHandledSource, "nothing after the dispose (result %d)", (int)r);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
