/* autostart.c — no JACK server reachable (issue 22): run with JACK_DEFAULT_SERVER naming a server
 * that does not exist. The library starts one of that name; this plays 0.5 s of a 440 Hz tone,
 * waits until the IsRunning listener hears the drain, prints the queue's device and how far its
 * time advanced, and exits 0. With JACK_NO_START_SERVER set nothing is started: the output queue
 * is made all the same (it could render offline: offline_switch.c), but AudioQueueStart prints
 * "AudioQueueStart: -66680" (kAudioQueueErr_InvalidDevice); it tries AudioQueueNewInput too
 * ("AudioQueueNewInput: -66680") and exits 1. */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

enum { kRate = 48000, kFrames = kRate / 2 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int started, drained;

static void callback(void *user, AudioQueueRef aq, AudioQueueBufferRef b) {
    (void)user; (void)aq; (void)b; /* one buffer, played once */
}

static void isRunning(void *user, AudioQueueRef aq, AudioQueuePropertyID id) {
    (void)user;
    UInt32 running = 0, size = sizeof running;
    AudioQueueGetProperty(aq, id, &running, &size);
    pthread_mutex_lock(&lock);
    if (running) started = 1; else if (started) drained = 1;
    pthread_mutex_unlock(&lock);
}

static void inputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b, const AudioTimeStamp *t,
                          UInt32 n, const AudioStreamPacketDescription *d) {
    (void)user; (void)aq; (void)b; (void)t; (void)n; (void)d;
}

static void noInput(const AudioStreamBasicDescription *f) {
    AudioQueueRef in = NULL;
    OSStatus s = AudioQueueNewInput(f, inputCallback, NULL, NULL, NULL, 0, &in);
    printf("AudioQueueNewInput: %d\n", (int)s);
}

int main(void) {
    AudioStreamBasicDescription f;
    memset(&f, 0, sizeof f);
    f.mSampleRate = kRate;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked;
    f.mBytesPerPacket = f.mBytesPerFrame = 4;
    f.mFramesPerPacket = 1;
    f.mChannelsPerFrame = 2;
    f.mBitsPerChannel = 16;
    AudioQueueRef q = NULL;
    OSStatus s = AudioQueueNewOutput(&f, callback, NULL, NULL, NULL, 0, &q);
    if (s != noErr) {
        printf("AudioQueueNewOutput: %d\n", (int)s);
        noInput(&f);
        return 1;
    }
    AudioQueueAddPropertyListener(q, kAudioQueueProperty_IsRunning, isRunning, NULL);
    AudioQueueBufferRef b;
    if (AudioQueueAllocateBuffer(q, kFrames * 4, &b) != noErr) return 2;
    SInt16 *x = b->mAudioData;
    for (int i = 0; i < kFrames; i++) x[2 * i] = x[2 * i + 1] = (SInt16)(8000 * sin(2 * M_PI * 440 * i / kRate));
    b->mAudioDataByteSize = kFrames * 4;
    if (AudioQueueEnqueueBuffer(q, b, 0, NULL) != noErr) return 3;
    s = AudioQueueStart(q, NULL);
    if (s != noErr) {
        /* No server and none may start: the queue was made for offline rendering only. */
        printf("AudioQueueStart: %d\n", (int)s);
        noInput(&f);
        AudioQueueDispose(q, true);
        return 1;
    }
    if (AudioQueueStop(q, false) != noErr) return 5; /* plays what is enqueued, then stops */
    int done = 0;
    for (int i = 0; i < 500 && !done; i++) {
        usleep(10000);
        pthread_mutex_lock(&lock);
        done = drained;
        pthread_mutex_unlock(&lock);
    }
    CFStringRef device = NULL;
    UInt32 size = sizeof device;
    AudioQueueGetProperty(q, kAudioQueueProperty_CurrentDevice, &device, &size);
    char name[256] = "(none)";
    if (device) {
        CFStringGetCString(device, name, sizeof name, kCFStringEncodingUTF8);
        CFRelease(device);
    }
    printf("device %s\n", name);
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    AudioQueueGetCurrentTime(q, NULL, &t, NULL);
    printf("queue time %.0f\n", t.mSampleTime);
    AudioQueueDispose(q, true);
    if (!done) { printf("FAIL: the tone did not drain\n"); return 6; }
    printf("played\n");
    return 0;
}
