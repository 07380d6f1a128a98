/* server_loss.c — run with AQSYNC_RECONNECT=0; the test stops the JACK server while the queue
 * plays. Expected, from the reference: the IsRunning listener hears the stop, and starting again
 * answers kAudioQueueErr_CannotStart. Prints "N passed, N failed" (issue 12). */
#include <AudioToolbox/AudioToolbox.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int started, stopped;

static void callback(void *user, AudioQueueRef aq, AudioQueueBufferRef b) {
    (void)user;
    AudioQueueEnqueueBuffer(aq, b, 0, NULL); /* keep playing until the server goes */
}

static void isRunning(void *user, AudioQueueRef aq, AudioQueuePropertyID id) {
    (void)user;
    UInt32 running = 0, size = 4;
    AudioQueueGetProperty(aq, id, &running, &size);
    pthread_mutex_lock(&lock);
    if (running) started = 1; else if (started) stopped = 1;
    pthread_mutex_unlock(&lock);
}

int main(void) {
    int passed = 0, failed = 0;
    AudioStreamBasicDescription f;
    memset(&f, 0, sizeof f);
    f.mSampleRate = 48000;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked;
    f.mBytesPerPacket = f.mBytesPerFrame = 4;
    f.mFramesPerPacket = 1;
    f.mChannelsPerFrame = 2;
    f.mBitsPerChannel = 16;
    AudioQueueRef q;
    if (AudioQueueNewOutput(&f, callback, NULL, NULL, NULL, 0, &q) != noErr) return 1;
    AudioQueueAddPropertyListener(q, kAudioQueueProperty_IsRunning, isRunning, NULL);
    for (int i = 0; i < 2; i++) {
        AudioQueueBufferRef b;
        AudioQueueAllocateBuffer(q, 4800 * 4, &b);
        memset(b->mAudioData, 0, 4800 * 4);
        b->mAudioDataByteSize = 4800 * 4;
        AudioQueueEnqueueBuffer(q, b, 0, NULL);
    }
    if (AudioQueueStart(q, NULL) != noErr) return 1;
    printf("playing\n");
    fflush(stdout);
    OSStatus s = noErr;
    for (int i = 0; i < 1500 && s != kAudioQueueErr_CannotStart; i++) {
        usleep(20000);
        pthread_mutex_lock(&lock);
        int gone = stopped;
        pthread_mutex_unlock(&lock);
        if (gone) s = AudioQueueStart(q, NULL);
    }
    if (stopped) passed++; else { failed++; printf("FAIL: the IsRunning listener did not hear the stop\n"); }
    if (s == kAudioQueueErr_CannotStart) passed++; else { failed++; printf("FAIL: AudioQueueStart = %d, want %d\n", (int)s, (int)kAudioQueueErr_CannotStart); }
    printf("%d passed, %d failed\n", passed, failed);
    AudioQueueDispose(q, true);
    return failed ? 1 : 0;
}
