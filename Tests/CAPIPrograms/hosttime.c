/* hosttime.c — issue 23: Core Audio's host-time functions (CoreAudio/HostTime.h, through
 * CoreAudio/CoreAudio.h as programs include it) and the host times the queue API gives. The
 * host time is nanoseconds on CLOCK_MONOTONIC: the frequency 10^9, the conversions the
 * identity, the clock moving with CLOCK_MONOTONIC; an offline queue's
 * AudioQueueDeviceGetCurrentTime carries a host time on that clock. Prints "N passed, M
 * failed". Run with AQSYNC_DEVICE=offline. */
#include <AudioToolbox/AudioToolbox.h>
#include <CoreAudio/CoreAudio.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static UInt64 monotonicNanos(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (UInt64)ts.tv_sec * 1000000000ull + (UInt64)ts.tv_nsec;
}

static void callback(void *user, AudioQueueRef q, AudioQueueBufferRef b) { (void)user; (void)q; (void)b; }

int main(void) {
    EXPECT(AudioGetHostClockFrequency() == 1e9, "frequency %f", AudioGetHostClockFrequency());
    EXPECT(AudioGetHostClockMinimumTimeDelta() == 1, "minimum delta %u", (unsigned)AudioGetHostClockMinimumTimeDelta());
    EXPECT(AudioConvertHostTimeToNanos(123456789012345ull) == 123456789012345ull, "host time to nanos");
    EXPECT(AudioConvertNanosToHostTime(987654321ull) == 987654321ull, "nanos to host time");

    UInt64 before = monotonicNanos();
    UInt64 h = AudioGetCurrentHostTime();
    UInt64 after = monotonicNanos();
    EXPECT(before <= h && h <= after, "the host time %llu lies between CLOCK_MONOTONIC's %llu and %llu",
           (unsigned long long)h, (unsigned long long)before, (unsigned long long)after);
    UInt64 h2 = AudioGetCurrentHostTime();
    EXPECT(h2 >= h, "the host time does not go back");
    /* 20 ms of sleep is 20 ms of host time (within 20 ms of scheduling slack). */
    struct timespec nap = {0, 20000000};
    UInt64 s0 = AudioGetCurrentHostTime();
    nanosleep(&nap, NULL);
    double ms = (double)AudioConvertHostTimeToNanos(AudioGetCurrentHostTime() - s0) / 1e6;
    EXPECT(ms >= 20 && ms < 40, "a 20 ms sleep took %.3f ms of host time", ms);

    /* A queue's time stamps carry host times on the same clock. */
    AudioStreamBasicDescription f;
    memset(&f, 0, sizeof f);
    f.mSampleRate = 48000; f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked;
    f.mBitsPerChannel = 16; f.mChannelsPerFrame = 1; f.mFramesPerPacket = 1; f.mBytesPerFrame = f.mBytesPerPacket = 2;
    AudioQueueRef q = NULL;
    EXPECT(AudioQueueNewOutput(&f, callback, NULL, NULL, NULL, 0, &q) == noErr, "new output");
    if (q) {
        AudioTimeStamp t;
        memset(&t, 0, sizeof t);
        UInt64 b0 = AudioGetCurrentHostTime();
        OSStatus r = AudioQueueDeviceGetCurrentTime(q, &t);
        UInt64 b1 = AudioGetCurrentHostTime();
        EXPECT(r == noErr, "AudioQueueDeviceGetCurrentTime: %d", (int)r);
        EXPECT((t.mFlags & kAudioTimeStampHostTimeValid) != 0, "the device time has a host time (flags %u)", (unsigned)t.mFlags);
        /* The hand-driven device's time is that of its latest cycle (none rendered yet: when
         * it was made), so on the same clock between the program's start and now. */
        EXPECT(t.mHostTime >= before && t.mHostTime <= b1, "the device's host time %llu lies between %llu and %llu",
               (unsigned long long)t.mHostTime, (unsigned long long)before, (unsigned long long)b1);
        (void)b0;
        AudioQueueDispose(q, true);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
