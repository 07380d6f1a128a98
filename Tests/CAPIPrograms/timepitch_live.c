/* timepitch_live.c — time/pitch, a volume ramp and pan through the C API on the default device
 * (issue 22), written from Apple's AudioQueue.h: output queues played one after the other, with
 * half a second of silence between them, for a recorder connected to the library's outputs
 * (CAPITests.TimePitchLiveJACKTests judges the recording):
 *
 *   1. rate   10 s of a 440 Hz tone at 0.5 (cosine phase: full level from its first frame),
 *             kAudioQueueProperty_EnableTimePitch with kAudioQueueTimePitchAlgorithm_Spectral and
 *             kAudioQueueParam_PlayRate 2: must last 5 s, still at 440 Hz.
 *   2. pitch  2 s of the same tone, kAudioQueueParam_Pitch +1200 cents: 880 Hz.
 *   3. ramp   a constant 0.5 (mono float: every recorded sample is 0.5 × the gain); after about
 *             0.5 s of it, kAudioQueueParam_VolumeRampTime 0.3 then kAudioQueueParam_Volume 0
 *             while it plays. Prints "ramp set between queue frames B and A" (AudioQueueGetCurrentTime
 *             just before and after the two calls).
 *   4. pan    the constant 0.5 on the stereo device at kAudioQueueParam_Pan −1 (set before the
 *             start), then −0.5, 0, 0.5, 1 while it plays, about 0.4 s each.
 *
 * Each queue is a mono Float32 queue at 48 kHz with its callbacks on the queue's own thread;
 * 1 and 2 have all their buffers enqueued before AudioQueueStart and end with
 * AudioQueueStop(q, false) (which flushes), the program waiting for the
 * kAudioQueueProperty_IsRunning listener to report the end; 3 and 4 stop at once. Prints
 * "N passed, N failed"; exits 1 on any failure of the API calls. */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

#define RATE 48000
#define SECOND RATE

static void outputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef buffer) {
    (void)user; (void)aq; (void)buffer;  /* every buffer is enqueued once, before the start */
}

/* kAudioQueueProperty_IsRunning: seen running, then seen stopped. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int sawRunning, sawStopped;

static void isRunningListener(void *user, AudioQueueRef aq, AudioQueuePropertyID id) {
    (void)user;
    UInt32 running = 0, size = sizeof running;
    if (AudioQueueGetProperty(aq, id, &running, &size) != noErr) return;
    pthread_mutex_lock(&lock);
    if (running) sawRunning = 1;
    else if (sawRunning) sawStopped = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

/* Waits (at most `seconds`) for the listener to report the end; true if it did. */
static int waitForEnd(double seconds) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (time_t)seconds;
    pthread_mutex_lock(&lock);
    int timedOut = 0;
    while (!sawStopped && !timedOut) timedOut = pthread_cond_timedwait(&changed, &lock, &deadline) != 0;
    int ended = sawStopped;
    pthread_mutex_unlock(&lock);
    return ended;
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

static AudioQueueRef newQueue(void) {
    AudioStreamBasicDescription format = floatMono();
    AudioQueueRef aq = NULL;
    EXPECT_STATUS(AudioQueueNewOutput(&format, outputCallback, NULL, NULL, NULL, 0, &aq), noErr);
    if (aq) EXPECT_STATUS(AudioQueueAddPropertyListener(aq, kAudioQueueProperty_IsRunning, isRunningListener, NULL), noErr);
    pthread_mutex_lock(&lock);
    sawRunning = sawStopped = 0;
    pthread_mutex_unlock(&lock);
    return aq;
}

/* Enqueues `seconds` of either a 440 Hz tone at 0.5 in cosine phase (tone) or a constant 0.5,
 * in buffers of one second. */
static void enqueue(AudioQueueRef aq, int seconds, int tone) {
    for (int b = 0; b < seconds; b++) {
        AudioQueueBufferRef buffer = NULL;
        EXPECT_STATUS(AudioQueueAllocateBuffer(aq, SECOND * 4, &buffer), noErr);
        if (!buffer) return;
        float *s = buffer->mAudioData;
        for (int i = 0; i < SECOND; i++)
            s[i] = tone ? 0.5f * (float)cos(2 * M_PI * 440.0 * (double)((long)b * SECOND + i) / RATE) : 0.5f;
        buffer->mAudioDataByteSize = SECOND * 4;
        EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, buffer, 0, NULL), noErr);
    }
}

static void enableTimePitch(AudioQueueRef aq) {
    UInt32 on = 1, spectral = kAudioQueueTimePitchAlgorithm_Spectral;
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_EnableTimePitch, &on, sizeof on), noErr);
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_TimePitchAlgorithm, &spectral, sizeof spectral), noErr);
}

/* Plays what is enqueued to its end. */
static void playToTheEnd(AudioQueueRef aq, double seconds) {
    EXPECT_STATUS(AudioQueueStart(aq, NULL), noErr);
    EXPECT_STATUS(AudioQueueStop(aq, false), noErr);
    EXPECT(waitForEnd(seconds), "the IsRunning listener did not report the end within %.0f s", seconds);
}

static double queueTime(AudioQueueRef aq) {
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    OSStatus s = AudioQueueGetCurrentTime(aq, NULL, &t, NULL);
    EXPECT(s == noErr && (t.mFlags & kAudioTimeStampSampleTimeValid), "AudioQueueGetCurrentTime = %d", (int)s);
    return t.mSampleTime;
}

/* Sleeps until the queue's time reaches `frames` (at most 5 s). */
static void waitForQueueTime(AudioQueueRef aq, double frames) {
    for (int i = 0; i < 5000 && queueTime(aq) < frames; i++) usleep(1000);
}

int main(void) {
    /* 1. PlayRate 2: 10 s in 5 s. */
    AudioQueueRef aq = newQueue();
    if (!aq) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    enableTimePitch(aq);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_PlayRate, 2.0f), noErr);
    enqueue(aq, 10, 1);
    playToTheEnd(aq, 20);
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);
    printf("rate done\n");
    usleep(500000);

    /* 2. Pitch +1200 cents: an octave up. */
    aq = newQueue();
    if (!aq) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    enableTimePitch(aq);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Pitch, 1200.0f), noErr);
    enqueue(aq, 2, 1);
    playToTheEnd(aq, 10);
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);
    printf("pitch done\n");
    usleep(500000);

    /* 3. A 0.3 s ramp from 1 to 0, set while the queue plays. */
    aq = newQueue();
    if (!aq) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    enqueue(aq, 2, 0);
    EXPECT_STATUS(AudioQueueStart(aq, NULL), noErr);
    waitForQueueTime(aq, 0.5 * RATE);
    double before = queueTime(aq);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_VolumeRampTime, 0.3f), noErr);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Volume, 0.0f), noErr);
    double after = queueTime(aq);
    printf("ramp set between queue frames %.0f and %.0f\n", before, after);
    waitForQueueTime(aq, after + 0.6 * RATE);
    AudioQueueParameterValue v = -1;
    EXPECT_STATUS(AudioQueueGetParameter(aq, kAudioQueueParam_Volume, &v), noErr);
    EXPECT(v == 0.0f, "Volume reads %f", v);
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);
    printf("ramp done\n");
    usleep(500000);

    /* 4. Pan −1, −0.5, 0, 0.5, 1. */
    aq = newQueue();
    if (!aq) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    enqueue(aq, 3, 0);
    const float pans[] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f};
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Pan, pans[0]), noErr);
    EXPECT_STATUS(AudioQueueStart(aq, NULL), noErr);
    for (int i = 1; i <= 5; i++) {
        waitForQueueTime(aq, 0.4 * RATE * i);
        if (i < 5) EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Pan, pans[i]), noErr);
    }
    EXPECT_STATUS(AudioQueueGetParameter(aq, kAudioQueueParam_Pan, &v), noErr);
    EXPECT(v == 1.0f, "Pan reads %f", v);
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);
    printf("pan done\n");
    usleep(300000);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
