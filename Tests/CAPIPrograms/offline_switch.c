/* offline_switch.c — one queue switches to offline rendering and back (issue 22), as Apple's
 * AQOfflineRenderTest does: AudioQueueSetOfflineRenderFormat takes the queue off the live device,
 * AudioQueueOfflineRender renders it on this thread, NULL puts it back.
 *
 * `offline_switch live` (a JACK server reachable): a second queue plays a tone live the whole
 * time. The first queue is made on JACK, gets an IsRunning listener, volume 1 and 3 buffers,
 * then an offline render format (32-bit float stereo at 48 kHz); its callback refills the
 * buffers from 2 s of generated PCM (a sine plus noise) while the program renders 1024 frames at
 * a time; the result must equal the source sample for sample. The second queue's time must have
 * advanced meanwhile (it kept playing). Then NULL puts the first queue back: stopped, on JACK;
 * started with buffers of a tone it plays (its time advances, its buffers come back).
 *
 * `offline_switch noserver` (no server reachable and none may start): AudioQueueNewOutput works,
 * AudioQueueStart answers kAudioQueueErr_InvalidDevice, the offline render equals the source,
 * and after NULL AudioQueueStart answers InvalidDevice again. AudioQueueNewInput answers
 * InvalidDevice.
 *
 * Bad input on the way: a format offline rendering cannot write, and a switch from the queue's
 * own callback (kAudioQueueErr_InvalidRunState). The buffers keep their mAudioData across both
 * switches. Prints "N passed, N failed"; exits 1 on any
 * failure. */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

enum { kRate = 48000, kSourceFrames = 2 * kRate, kBufferFrames = 4096, kChunk = 1024 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static float *source;           /* kSourceFrames stereo frames */
static long sourceAt;           /* next source frame to enqueue */
static int phase;               /* 0: offline (refill from source), 1: live (refill a tone), 2: done */
static long livePhase;          /* the live tone's next frame */
static int callbacks, liveCallbacks, switchFromCallback = 1, runningChanges;

static AudioStreamBasicDescription floatStereo(void) {
    AudioStreamBasicDescription f;
    memset(&f, 0, sizeof f);
    f.mSampleRate = kRate;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    f.mBytesPerPacket = f.mBytesPerFrame = 8;
    f.mFramesPerPacket = 1;
    f.mChannelsPerFrame = 2;
    f.mBitsPerChannel = 32;
    return f;
}

/* A tone of 0.1 at 440 Hz from frame `*at` into `b` (whole buffer). */
static void tone(AudioQueueBufferRef b, long *at) {
    float *s = b->mAudioData;
    for (int i = 0; i < kBufferFrames; i++, (*at)++) s[2 * i] = s[2 * i + 1] = (float)(0.1 * sin(2 * M_PI * 440 * *at / kRate));
    b->mAudioDataByteSize = kBufferFrames * 8;
}

/* The next part of the source into `b`; 0 when the source is used up. Under `lock`. */
static int refill(AudioQueueBufferRef b) {
    long n = kSourceFrames - sourceAt;
    if (n <= 0) return 0;
    if (n > kBufferFrames) n = kBufferFrames;
    memcpy(b->mAudioData, source + 2 * sourceAt, n * 8);
    b->mAudioDataByteSize = (UInt32)(n * 8);
    sourceAt += n;
    return 1;
}

static void callback(void *user, AudioQueueRef aq, AudioQueueBufferRef b) {
    (void)user;
    pthread_mutex_lock(&lock);
    callbacks++;
    int p = phase, first = switchFromCallback == 1;
    pthread_mutex_unlock(&lock);
    if (first) {
        /* A switch from the queue's own callback is refused. */
        OSStatus s = AudioQueueSetOfflineRenderFormat(aq, NULL, NULL);
        pthread_mutex_lock(&lock);
        switchFromCallback = s;
        pthread_mutex_unlock(&lock);
    }
    if (p == 0) {
        pthread_mutex_lock(&lock);
        int more = refill(b);
        pthread_mutex_unlock(&lock);
        if (more) AudioQueueEnqueueBuffer(aq, b, 0, NULL);
    } else if (p == 1) {
        pthread_mutex_lock(&lock);
        tone(b, &livePhase);
        pthread_mutex_unlock(&lock);
        AudioQueueEnqueueBuffer(aq, b, 0, NULL);
    }
}

static long otherAt;
static void otherCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b) {
    (void)user;
    pthread_mutex_lock(&lock);
    liveCallbacks++;
    int done = phase == 2;
    pthread_mutex_unlock(&lock);
    if (done) return;
    tone(b, &otherAt);
    AudioQueueEnqueueBuffer(aq, b, 0, NULL);
}

static void inputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b, const AudioTimeStamp *t,
                          UInt32 n, const AudioStreamPacketDescription *d) {
    (void)user; (void)aq; (void)b; (void)t; (void)n; (void)d;
}

static void isRunning(void *user, AudioQueueRef aq, AudioQueuePropertyID id) {
    (void)user; (void)aq; (void)id;
    pthread_mutex_lock(&lock);
    runningChanges++;
    pthread_mutex_unlock(&lock);
}

static void deviceName(AudioQueueRef q, char *name, size_t size) {
    CFStringRef device = NULL;
    UInt32 n = sizeof device;
    snprintf(name, size, "(none)");
    if (AudioQueueGetProperty(q, kAudioQueueProperty_CurrentDevice, &device, &n) == noErr && device) {
        CFStringGetCString(device, name, (CFIndex)size, kCFStringEncodingUTF8);
        CFRelease(device);
    }
}

static double queueTime(AudioQueueRef q) {
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    if (AudioQueueGetCurrentTime(q, NULL, &t, NULL) != noErr) return -1;
    return t.mSampleTime;
}

/* Switches `q` offline, renders the source through it and compares; the queue has 3 buffers. */
static void renderOffline(AudioQueueRef q, AudioQueueBufferRef *buffers) {
    AudioStreamBasicDescription format = floatStereo();
    AudioStreamBasicDescription bigEndian = format;
    bigEndian.mFormatFlags |= kAudioFormatFlagIsBigEndian;
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(q, &bigEndian, NULL), kAudioFormatUnsupportedDataFormatError);
    AudioChannelLayout layout;
    memset(&layout, 0, sizeof layout);
    layout.mChannelLayoutTag = kAudioChannelLayoutTag_Stereo;
    void *data = buffers[0]->mAudioData;
    float *marked = data;
    marked[0] = 0.25f;
    buffers[0]->mAudioDataByteSize = 8;
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(q, &format, &layout), noErr);
    EXPECT(buffers[0]->mAudioData == data && marked[0] == 0.25f && buffers[0]->mAudioDataByteSize == 8,
           "the buffer kept its storage, bytes and size across the switch");
    char name[256];
    deviceName(q, name, sizeof name);
    EXPECT(strncmp(name, "jack:", 5) != 0, "offline, the queue's device is %s", name);
    Float32 volume = 0;
    EXPECT_STATUS(AudioQueueGetParameter(q, kAudioQueueParam_Volume, &volume), noErr);
    EXPECT(volume == 1.0f, "volume carried over: %f", volume);
    AudioQueueBufferRef capture = NULL;
    EXPECT_STATUS(AudioQueueAllocateBuffer(q, kChunk * 8, &capture), noErr);
    if (!capture) return;
    pthread_mutex_lock(&lock);
    phase = 0;
    sourceAt = 0;
    for (int i = 0; i < 3; i++) if (refill(buffers[i])) EXPECT_STATUS(AudioQueueEnqueueBuffer(q, buffers[i], 0, NULL), noErr);
    pthread_mutex_unlock(&lock);
    EXPECT_STATUS(AudioQueueStart(q, NULL), noErr);
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    t.mFlags = kAudioTimeStampSampleTimeValid;
    EXPECT_STATUS(AudioQueueOfflineRender(q, &t, capture, 0), noErr);
    long mismatches = 0, firstBad = -1;
    for (long at = 0; at < kSourceFrames; at += kChunk) {
        t.mSampleTime = (Float64)at;
        OSStatus s = AudioQueueOfflineRender(q, &t, capture, kChunk);
        if (s != noErr) { EXPECT(0, "AudioQueueOfflineRender at %ld: %d", at, (int)s); break; }
        const float *x = capture->mAudioData;
        for (int i = 0; i < kChunk && at + i < kSourceFrames; i++) {
            for (int c = 0; c < 2; c++) {
                if (x[2 * i + c] != source[2 * (at + i) + c]) {
                    if (firstBad < 0) firstBad = at + i;
                    mismatches++;
                }
            }
        }
        usleep(2000); /* long enough for the live queue to be seen playing meanwhile */
    }
    EXPECT(mismatches == 0, "%ld samples differ from the source (the first at frame %ld)", mismatches, firstBad);
    pthread_mutex_lock(&lock);
    int cb = callbacks, from = switchFromCallback, changes = runningChanges;
    pthread_mutex_unlock(&lock);
    EXPECT(cb >= kSourceFrames / kBufferFrames - 3, "%d callbacks while rendering offline", cb);
    EXPECT(from == kAudioQueueErr_InvalidRunState, "a switch from the callback answered %d", from);
    EXPECT(changes >= 1, "the IsRunning listener heard the offline start (%d)", changes);
    EXPECT_STATUS(AudioQueueFreeBuffer(q, capture), noErr);
}

int main(int argc, char **argv) {
    int live = argc > 1 && strcmp(argv[1], "live") == 0;
    source = malloc(sizeof(float) * 2 * kSourceFrames);
    unsigned seed = 12345;
    for (long i = 0; i < kSourceFrames; i++) {
        seed = seed * 1103515245u + 12345u;
        float noise = (float)((seed >> 8) & 0xFFFF) / 65536.0f - 0.5f;
        source[2 * i] = (float)(0.5 * sin(2 * M_PI * 1000 * i / kRate)) + 0.1f * noise;
        source[2 * i + 1] = 0.3f * noise;
    }
    AudioStreamBasicDescription format = floatStereo();
    AudioQueueRef q = NULL, other = NULL, input = NULL;
    AudioQueueBufferRef buffers[3], otherBuffers[3];

    if (live) {
        EXPECT_STATUS(AudioQueueNewOutput(&format, otherCallback, NULL, NULL, NULL, 0, &other), noErr);
        for (int i = 0; i < 3 && other; i++) {
            AudioQueueAllocateBuffer(other, kBufferFrames * 8, &otherBuffers[i]);
            tone(otherBuffers[i], &otherAt);
            AudioQueueEnqueueBuffer(other, otherBuffers[i], 0, NULL);
        }
        if (other) EXPECT_STATUS(AudioQueueStart(other, NULL), noErr);
    }
    EXPECT_STATUS(AudioQueueNewOutput(&format, callback, NULL, NULL, NULL, 0, &q), noErr);
    if (!q) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    char name[256];
    deviceName(q, name, sizeof name);
    if (live) EXPECT(strncmp(name, "jack:", 5) == 0, "made on JACK: %s", name);
    else {
        EXPECT_STATUS(AudioQueueNewInput(&format, inputCallback, NULL, NULL, NULL, 0, &input), kAudioQueueErr_InvalidDevice);
        EXPECT_STATUS(AudioQueueStart(q, NULL), kAudioQueueErr_InvalidDevice);
    }
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(q, NULL, NULL), noErr); /* not offline: nothing to do */
    EXPECT_STATUS(AudioQueueAddPropertyListener(q, kAudioQueueProperty_IsRunning, isRunning, NULL), noErr);
    EXPECT_STATUS(AudioQueueSetParameter(q, kAudioQueueParam_Volume, 1.0f), noErr);
    for (int i = 0; i < 3; i++) EXPECT_STATUS(AudioQueueAllocateBuffer(q, kBufferFrames * 8, &buffers[i]), noErr);

    double otherBefore = live ? queueTime(other) : 0;
    renderOffline(q, buffers);
    if (live) {
        double otherAfter = queueTime(other);
        EXPECT(otherAfter - otherBefore > 0.1 * kRate, "the live queue played on meanwhile: %.0f -> %.0f", otherBefore, otherAfter);
    }

    /* Back: stopped, buffers returned, storage kept. */
    void *data = buffers[1]->mAudioData;
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(q, NULL, NULL), noErr);
    EXPECT(buffers[1]->mAudioData == data, "the buffer kept its storage going back");
    UInt32 running = 1, size = sizeof running;
    EXPECT_STATUS(AudioQueueGetProperty(q, kAudioQueueProperty_IsRunning, &running, &size), noErr);
    EXPECT(running == 0, "back, the queue is stopped (IsRunning %u)", running);
    deviceName(q, name, sizeof name);
    if (live) {
        EXPECT(strncmp(name, "jack:", 5) == 0, "back on JACK: %s", name);
        pthread_mutex_lock(&lock);
        phase = 1;
        int before = callbacks;
        for (int i = 0; i < 3; i++) tone(buffers[i], &livePhase);
        pthread_mutex_unlock(&lock);
        for (int i = 0; i < 3; i++) EXPECT_STATUS(AudioQueueEnqueueBuffer(q, buffers[i], 0, NULL), noErr);
        EXPECT_STATUS(AudioQueueStart(q, NULL), noErr);
        usleep(500000);
        double played = queueTime(q);
        EXPECT(played > 0.3 * kRate, "live again, its time advanced to %.0f", played);
        pthread_mutex_lock(&lock);
        int after = callbacks;
        pthread_mutex_unlock(&lock);
        EXPECT(after - before >= 3, "live again, %d buffers came back", after - before);
        pthread_mutex_lock(&lock);
        phase = 2;
        pthread_mutex_unlock(&lock);
        EXPECT_STATUS(AudioQueueStop(q, true), noErr);
        EXPECT_STATUS(AudioQueueStop(other, true), noErr);
        EXPECT_STATUS(AudioQueueDispose(other, true), noErr);
    } else {
        EXPECT_STATUS(AudioQueueStart(q, NULL), kAudioQueueErr_InvalidDevice);
    }
    EXPECT_STATUS(AudioQueueDispose(q, true), noErr);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
