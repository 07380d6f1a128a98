/* record_jack.c — Audio Queue Services recording through a JACK server (issues 11, 12), written
 * from the reference. Run with AQSYNC_INPUT_CONNECT naming a port that clicks every INTERVAL
 * frames (argv[1]) of its own frame count. Records about 2 s of stereo float with three
 * buffers, re-enqueueing each from the input callback; prints each click's device sample time
 * (the buffer's start time + its index) as "click N", then checks: start times valid (sample
 * and host time flags), each buffer starting where the previous ended, no packet descriptions
 * for linear PCM, the IsRunning listener after start and after an immediate stop, the buffers
 * returned synchronously by the immediate stop, metering of what came in, the queue's time. Prints
 * "N passed, N failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

enum { kBuffers = 3, kFrames = 4096 };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int recording = 1, buffersIn, badFlags, gaps, descriptions, emptyWhileRecording;
static double nextStart = -1, lastSampleTime;
static int runningChanges[8], runningChangeCount;

static void inputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b, const AudioTimeStamp *start,
                          UInt32 packets, const AudioStreamPacketDescription *d) {
    (void)user;
    UInt32 frames = b->mAudioDataByteSize / 8;
    pthread_mutex_lock(&lock);
    buffersIn++;
    if ((start->mFlags & kAudioTimeStampSampleHostTimeValid) != kAudioTimeStampSampleHostTimeValid || start->mHostTime == 0) badFlags++;
    if (d != NULL) descriptions++;
    if (frames > 0) {
        if (nextStart >= 0 && start->mSampleTime != nextStart) {
            gaps++;
            printf("gap: buffer at %.0f, expected %.0f\n", start->mSampleTime, nextStart);
        }
        nextStart = start->mSampleTime + frames;
        lastSampleTime = start->mSampleTime;
        if (packets != frames) descriptions++;  /* linear PCM: one packet per frame */
        const float *s = b->mAudioData;
        for (UInt32 i = 0; i < frames; i++)
            if (s[2 * i] > 0.5f && s[2 * i + 1] > 0.5f) printf("click %.0f\n", start->mSampleTime + i);
    } else if (recording) {
        emptyWhileRecording++;
    }
    int again = recording;
    pthread_mutex_unlock(&lock);
    if (again) AudioQueueEnqueueBuffer(aq, b, 0, NULL);
}

static void isRunning(void *user, AudioQueueRef aq, AudioQueuePropertyID id) {
    (void)user;
    UInt32 running = 0, size = 4;
    AudioQueueGetProperty(aq, id, &running, &size);
    pthread_mutex_lock(&lock);
    if (runningChangeCount < 8) runningChanges[runningChangeCount++] = (int)running;
    pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv) {
    (void)argc; (void)argv;
    setvbuf(stdout, NULL, _IOLBF, 0);
    AudioStreamBasicDescription f = {0};
    f.mSampleRate = 48000;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kLinearPCMFormatFlagIsFloat | kLinearPCMFormatFlagIsPacked;
    f.mBytesPerPacket = 8;
    f.mFramesPerPacket = 1;
    f.mBytesPerFrame = 8;
    f.mChannelsPerFrame = 2;
    f.mBitsPerChannel = 32;

    AudioQueueRef aq = NULL;
    EXPECT_STATUS(AudioQueueNewInput(&f, inputCallback, NULL, NULL, NULL, 0, &aq), noErr);
    if (!aq) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    EXPECT_STATUS(AudioQueueAddPropertyListener(aq, kAudioQueueProperty_IsRunning, isRunning, NULL), noErr);
    AudioQueueBufferRef buffers[kBuffers];
    for (int i = 0; i < kBuffers; i++) {
        EXPECT_STATUS(AudioQueueAllocateBuffer(aq, kFrames * 8, &buffers[i]), noErr);
        EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, buffers[i], 0, NULL), noErr);
    }
    UInt32 on = 1;
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_EnableLevelMetering, &on, sizeof on), noErr);
    EXPECT_STATUS(AudioQueueStart(aq, NULL), noErr);
    sleep(2);

    AudioQueueTimelineRef timeline = NULL;
    EXPECT_STATUS(AudioQueueCreateTimeline(aq, &timeline), noErr);
    AudioTimeStamp now = {0};
    Boolean discontinuity = 1;
    EXPECT_STATUS(AudioQueueGetCurrentTime(aq, timeline, &now, &discontinuity), noErr);
    EXPECT((now.mFlags & kAudioTimeStampSampleTimeValid) && now.mSampleTime > 1.5 * 48000 && now.mSampleTime < 3 * 48000,
           "queue time after about 2 s: %.0f frames", now.mSampleTime);
    EXPECT_STATUS(AudioQueueDisposeTimeline(aq, timeline), noErr);

    AudioQueueLevelMeterState meters[2];
    UInt32 size = sizeof meters;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueProperty_CurrentLevelMeter, meters, &size), noErr);
    EXPECT(size == sizeof meters, "meters for two channels (%u bytes)", size);

    pthread_mutex_lock(&lock);
    recording = 0;
    int before = buffersIn;
    pthread_mutex_unlock(&lock);
    /* Immediate stop is synchronous: every enqueued buffer is back before it returns. */
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    pthread_mutex_lock(&lock);
    int returnedByStop = buffersIn - before;
    pthread_mutex_unlock(&lock);
    EXPECT(returnedByStop >= 1, "the immediate stop handed back the enqueued buffers (%d)", returnedByStop);
    for (int i = 0; i < kBuffers; i++) EXPECT_STATUS(AudioQueueFreeBuffer(aq, buffers[i]), noErr);

    usleep(100000);  /* the start's listener call is asynchronous; the stop's came before it returned */
    pthread_mutex_lock(&lock);
    EXPECT(runningChangeCount == 2 && runningChanges[0] == 1 && runningChanges[1] == 0,
           "IsRunning heard 1 then 0 (%d calls)", runningChangeCount);
    EXPECT(buffersIn >= 2 * 48000 / kFrames - 2, "about 2 s recorded (%d buffers)", buffersIn);
    EXPECT(badFlags == 0, "%d start times without sample and host time", badFlags);
    EXPECT(gaps == 0, "%d buffers did not start where the previous ended", gaps);
    EXPECT(descriptions == 0, "linear PCM: no packet descriptions, packets = frames (%d wrong)", descriptions);
    EXPECT(emptyWhileRecording == 0, "%d empty buffers while recording", emptyWhileRecording);
    pthread_mutex_unlock(&lock);
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
