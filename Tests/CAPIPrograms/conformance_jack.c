/* conformance_jack.c — Audio Queue Services timing through a JACK server (issue 12), written from
 * the reference. Run with AQSYNC_CONNECT naming two recorder inputs; the test finds in the
 * recording, relative to queue 1's first impulse: +7777 (queue 2, started 7777 device frames
 * after queue 1 with AudioQueueStart's start time), +10009 (EnqueueBufferWithParameters start
 * time 10007, 3 frames trimmed at the start, impulse at buffer frame 5), +20011 (start 20011;
 * a second impulse in the 100 frames trimmed at the end is not played), +30000 at half
 * amplitude (a volume parameter event), and nothing else. Checks here: translate-time round
 * trips, nearest start times, the asynchronous IsRunning listener after a start and after a
 * drain, buffers returned in enqueue order, queue time advancing while starved, immediate stop
 * returning buffers synchronously. Prints "N passed, N failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static AudioQueueBufferRef returned[16];
static int returnedCount;
static int runningChanges[8], runningChangeCount;
static pthread_t mainThread;
static int listenerOnMainThread;

static AudioQueueRef firstQueue;
static AudioQueueBufferRef returnedByFirst[16];
static int returnedByFirstCount;
static void callback(void *user, AudioQueueRef aq, AudioQueueBufferRef b) {
    (void)user;
    pthread_mutex_lock(&lock);
    if (returnedCount < 16) returned[returnedCount++] = b;
    if (aq == firstQueue && returnedByFirstCount < 16) returnedByFirst[returnedByFirstCount++] = b;
    pthread_mutex_unlock(&lock);
}

static void isRunning(void *user, AudioQueueRef aq, AudioQueuePropertyID id) {
    (void)user;
    UInt32 running = 0, size = 4;
    AudioQueueGetProperty(aq, id, &running, &size);
    pthread_mutex_lock(&lock);
    if (runningChangeCount < 8) runningChanges[runningChangeCount++] = (int)running;
    if (pthread_equal(pthread_self(), mainThread)) listenerOnMainThread = 1;
    pthread_mutex_unlock(&lock);
}

static int changes(void) {
    pthread_mutex_lock(&lock);
    int n = runningChangeCount;
    pthread_mutex_unlock(&lock);
    return n;
}

static int runLoopCalls, runLoopCallsOffThread;
static void runLoopCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b) {
    (void)user; (void)aq; (void)b;
    runLoopCalls++;
    if (!pthread_equal(pthread_self(), mainThread)) runLoopCallsOffThread++;
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *stopLater(void *loop) {
    usleep(100000);
    CFRunLoopStop((CFRunLoopRef)loop);
    return NULL;
}

static AudioQueueBufferRef impulses(AudioQueueRef aq, UInt32 frames, int at1, int at2) {
    AudioQueueBufferRef b = NULL;
    if (AudioQueueAllocateBuffer(aq, frames * 8, &b) != noErr) return NULL;
    float *s = b->mAudioData;
    memset(s, 0, frames * 8);
    if (at1 >= 0) s[2 * at1] = s[2 * at1 + 1] = 1.0f;
    if (at2 >= 0) s[2 * at2] = s[2 * at2 + 1] = 1.0f;
    b->mAudioDataByteSize = frames * 8;
    return b;
}

static AudioTimeStamp sampleTime(Float64 t) {
    AudioTimeStamp ts;
    memset(&ts, 0, sizeof ts);
    ts.mFlags = kAudioTimeStampSampleTimeValid;
    ts.mSampleTime = t;
    return ts;
}

int main(void) {
    mainThread = pthread_self();
    AudioStreamBasicDescription f;
    memset(&f, 0, sizeof f);
    f.mSampleRate = 48000;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    f.mBytesPerPacket = f.mBytesPerFrame = 8;
    f.mFramesPerPacket = 1;
    f.mChannelsPerFrame = 2;
    f.mBitsPerChannel = 32;
    AudioQueueRef q1 = NULL, q2 = NULL;
    EXPECT_STATUS(AudioQueueNewOutput(&f, callback, NULL, NULL, NULL, 0, &q1), noErr);
    EXPECT_STATUS(AudioQueueNewOutput(&f, callback, NULL, NULL, NULL, 0, &q2), noErr);
    firstQueue = q1;
    if (!q1 || !q2) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    EXPECT_STATUS(AudioQueueAddPropertyListener(q1, kAudioQueueProperty_IsRunning, isRunning, NULL), noErr);

    /* The device's time: valid once it rendered a cycle. */
    AudioTimeStamp now;
    memset(&now, 0, sizeof now);
    for (int i = 0; i < 200 && !(now.mFlags & kAudioTimeStampSampleTimeValid); i++) {
        EXPECT_STATUS(AudioQueueDeviceGetCurrentTime(q1, &now), noErr);
        if (!(now.mFlags & kAudioTimeStampSampleTimeValid)) usleep(10000);
    }
    EXPECT((now.mFlags & kAudioTimeStampSampleHostTimeValid) == kAudioTimeStampSampleHostTimeValid, "device time flags %u", now.mFlags);

    /* Translate: sample → host → sample is the same frame. */
    for (int k = 0; k < 5; k++) {
        AudioTimeStamp in = sampleTime(floor(now.mSampleTime) + 12345 + 1001 * k), host, back;
        EXPECT_STATUS(AudioQueueDeviceTranslateTime(q1, &in, &host), noErr);
        AudioTimeStamp h;
        memset(&h, 0, sizeof h);
        h.mFlags = kAudioTimeStampHostTimeValid;
        h.mHostTime = host.mHostTime;
        EXPECT_STATUS(AudioQueueDeviceTranslateTime(q1, &h, &back), noErr);
        EXPECT(floor(back.mSampleTime + 0.5) == in.mSampleTime, "round trip %f -> %f", in.mSampleTime, back.mSampleTime);
    }

    /* Nearest start times: never earlier than asked; a time in the past moves to the future. */
    AudioTimeStamp past = sampleTime(floor(now.mSampleTime) - 1000), ahead = sampleTime(floor(now.mSampleTime) + 9600);
    EXPECT_STATUS(AudioQueueDeviceGetNearestStartTime(q1, &past, 0), noErr);
    EXPECT(past.mSampleTime > now.mSampleTime, "nearest for the past: %f (now %f)", past.mSampleTime, now.mSampleTime);
    EXPECT_STATUS(AudioQueueDeviceGetNearestStartTime(q1, &ahead, 0), noErr);
    EXPECT(ahead.mSampleTime == floor(now.mSampleTime) + 9600, "a time far enough ahead is kept: %f", ahead.mSampleTime);

    /* Queue 1's buffers, enqueued before the start. */
    AudioQueueBufferRef a = impulses(q1, 1000, 0, -1), b = impulses(q1, 1000, 5, -1), c = impulses(q1, 1000, 0, 950),
                        d = impulses(q1, 1000, 0, -1), e = impulses(q2, 1000, 0, -1);
    AudioTimeStamp actual;
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q1, a, 0, NULL), noErr);
    AudioTimeStamp t = sampleTime(10007);
    EXPECT_STATUS(AudioQueueEnqueueBufferWithParameters(q1, b, 0, NULL, 3, 0, 0, NULL, &t, &actual), noErr);
    EXPECT(actual.mSampleTime == 10007, "B at %f", actual.mSampleTime);
    t = sampleTime(20011);
    EXPECT_STATUS(AudioQueueEnqueueBufferWithParameters(q1, c, 0, NULL, 0, 100, 0, NULL, &t, &actual), noErr);
    AudioQueueParameterEvent half = {kAudioQueueParam_Volume, 0.5f};
    t = sampleTime(30000);
    EXPECT_STATUS(AudioQueueEnqueueBufferWithParameters(q1, d, 0, NULL, 0, 0, 1, &half, &t, &actual), noErr);
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q2, e, 0, NULL), noErr);

    /* Both starts at exact device frames: queue 2 7777 frames after queue 1. */
    AudioTimeStamp start1 = sampleTime(0), start2;
    EXPECT_STATUS(AudioQueueDeviceGetCurrentTime(q1, &now), noErr);
    start1 = sampleTime(floor(now.mSampleTime) + 9600);
    EXPECT_STATUS(AudioQueueDeviceGetNearestStartTime(q1, &start1, 0), noErr);
    start2 = sampleTime(start1.mSampleTime + 7777);
    EXPECT_STATUS(AudioQueueStart(q1, &start1), noErr);
    EXPECT_STATUS(AudioQueueStart(q2, &start2), noErr);
    EXPECT(changes() == 0, "IsRunning is reported asynchronously, not inside AudioQueueStart");
    for (int i = 0; i < 300 && changes() < 1; i++) usleep(10000);
    EXPECT(changes() >= 1 && runningChanges[0] == 1, "IsRunning listener after the start");

    /* Everything plays by 31000 frames after the start; then the queue is starved. */
    AudioTimeStamp qt;
    for (int i = 0; i < 300; i++) {
        EXPECT_STATUS(AudioQueueGetCurrentTime(q1, NULL, &qt, NULL), noErr);
        if (qt.mSampleTime > 36000) break;
        usleep(10000);
    }
    usleep(100000);
    AudioQueueTimelineRef timeline;
    Boolean discontinuity = 0;
    EXPECT_STATUS(AudioQueueCreateTimeline(q1, &timeline), noErr);
    AudioTimeStamp t1, t2;
    EXPECT_STATUS(AudioQueueGetCurrentTime(q1, timeline, &t1, &discontinuity), noErr);
    usleep(200000);
    EXPECT_STATUS(AudioQueueGetCurrentTime(q1, timeline, &t2, &discontinuity), noErr);
    EXPECT(t2.mSampleTime - t1.mSampleTime > 0.15 * 48000, "queue time advances while starved: %f -> %f", t1.mSampleTime, t2.mSampleTime);
    EXPECT_STATUS(AudioQueueDisposeTimeline(q1, timeline), noErr);
    pthread_mutex_lock(&lock);
    int n = returnedByFirstCount, total = returnedCount;
    int inOrder = n == 4 && returnedByFirst[0] == a && returnedByFirst[1] == b && returnedByFirst[2] == c && returnedByFirst[3] == d;
    pthread_mutex_unlock(&lock);
    EXPECT(inOrder && total == 5, "queue 1's buffers returned in enqueue order (%d of %d returned)", n, total);

    /* A drain: the asynchronous stop's end is reported by the listener. */
    EXPECT_STATUS(AudioQueueStop(q1, false), noErr);
    for (int i = 0; i < 300 && changes() < 2; i++) usleep(10000);
    EXPECT(changes() == 2 && runningChanges[1] == 0, "IsRunning listener after the drain");
    EXPECT(!listenerOnMainThread, "listeners ran on the internal thread");

    /* An immediate stop hands back the enqueued buffer before it returns. */
    t = sampleTime(1e7);
    EXPECT_STATUS(AudioQueueEnqueueBufferWithParameters(q2, e, 0, NULL, 0, 0, 0, NULL, &t, NULL), noErr);
    pthread_mutex_lock(&lock);
    int before = returnedCount;
    pthread_mutex_unlock(&lock);
    EXPECT_STATUS(AudioQueueStop(q2, true), noErr);
    EXPECT(returnedCount == before + 1 && returned[before] == e, "immediate stop is synchronous");
    EXPECT_STATUS(AudioQueueDispose(q1, true), noErr);
    EXPECT_STATUS(AudioQueueDispose(q2, true), noErr);

    /* A queue on this thread's run loop: its callbacks wait for the loop to run, and run on
     * this thread inside it; CFRunLoopRunInMode waits for its whole timeout; CFRunLoopStop from
     * another thread ends CFRunLoopRun; returnAfterSourceHandled returns after a callback. */
    AudioQueueRef q3 = NULL;
    EXPECT_STATUS(AudioQueueNewOutput(&f, runLoopCallback, NULL, CFRunLoopGetCurrent(), kCFRunLoopDefaultMode, 0, &q3), noErr);
    AudioQueueBufferRef r1 = impulses(q3, 480, -1, -1);
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q3, r1, 0, NULL), noErr);
    EXPECT_STATUS(AudioQueueStart(q3, NULL), noErr);
    usleep(300000);
    EXPECT(runLoopCalls == 0, "no callback while the run loop does not run (%d)", runLoopCalls);
    double t0 = seconds();
    CFRunLoopRunResult rr = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.3, false);
    double waited = seconds() - t0;
    EXPECT(rr == kCFRunLoopRunTimedOut && waited >= 0.29 && waited < 2, "RunInMode: %d after %f s", (int)rr, waited);
    EXPECT(runLoopCalls == 1 && runLoopCallsOffThread == 0, "the callback ran inside the loop, on this thread (%d, %d)",
           runLoopCalls, runLoopCallsOffThread);
    pthread_t stopper;
    pthread_create(&stopper, NULL, stopLater, CFRunLoopGetCurrent());
    t0 = seconds();
    CFRunLoopRun();
    waited = seconds() - t0;
    pthread_join(stopper, NULL);
    EXPECT(waited >= 0.09 && waited < 2, "CFRunLoopRun until CFRunLoopStop: %f s", waited);
    r1->mAudioDataByteSize = 480 * 8;
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q3, r1, 0, NULL), noErr);
    t0 = seconds();
    rr = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 10, true);
    waited = seconds() - t0;
    EXPECT(rr == kCFRunLoopRunHandledSource && waited < 2 && runLoopCalls == 2, "returnAfterSourceHandled: %d after %f s", (int)rr, waited);
    EXPECT_STATUS(AudioQueueDispose(q3, true), noErr);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
