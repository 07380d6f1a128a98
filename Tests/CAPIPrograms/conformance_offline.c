/* conformance_offline.c — Audio Queue Services conformance without a server (issue 12): run with
 * AQSYNC_DEVICE=offline, so the queue renders only through AudioQueueOfflineRender. Written from
 * the Audio Queue Services Reference: every function is called, the result codes that can be
 * provoked without a device are, and the rendered samples are checked at exact frames (start
 * times, trims, parameter events). Prints "N passed, N failed"; exits 1 on any failure. */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <unistd.h>

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

static AudioQueueBufferRef returned[64];
static int returnedCount;
static void outputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef buffer) {
    (void)aq;
    if (returnedCount < 64) returned[returnedCount++] = buffer;
    (*(int *)user)++;
}
static void inputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b, const AudioTimeStamp *t, UInt32 n,
                          const AudioStreamPacketDescription *d) {
    (void)user; (void)aq; (void)b; (void)t; (void)n; (void)d;
}
static int listenerCalls;
static void listener(void *user, AudioQueueRef aq, AudioQueuePropertyID id) {
    (void)user; (void)aq; (void)id;
    listenerCalls++;
}

static AudioStreamBasicDescription floatStereo(void) {
    AudioStreamBasicDescription f;
    memset(&f, 0, sizeof f);
    f.mSampleRate = 48000;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    f.mBytesPerPacket = 8;
    f.mFramesPerPacket = 1;
    f.mBytesPerFrame = 8;
    f.mChannelsPerFrame = 2;
    f.mBitsPerChannel = 32;
    return f;
}

/* A buffer of `frames` silent stereo frames with one impulse of 1.0 at `at` (-1: none). */
static void fill(AudioQueueBufferRef b, UInt32 frames, int at) {
    float *s = b->mAudioData;
    memset(s, 0, frames * 8);
    if (at >= 0) { s[2 * at] = 1.0f; s[2 * at + 1] = 1.0f; }
    b->mAudioDataByteSize = frames * 8;
}

int main(void) {
    AudioStreamBasicDescription format = floatStereo();
    int calls = 0;
    AudioQueueRef aq = NULL, other = NULL, input = NULL;

    /* Creating. */
    EXPECT_STATUS(AudioQueueNewInput(&format, NULL, NULL, NULL, NULL, 0, &input), kAudio_ParamError);
    EXPECT_STATUS(AudioQueueNewInput(&format, inputCallback, NULL, NULL, NULL, 1, &input), kAudio_ParamError);
    AudioStreamBasicDescription mp3 = format;
    mp3.mFormatID = kAudioFormatMPEGLayer3;
    EXPECT_STATUS(AudioQueueNewInput(&mp3, inputCallback, NULL, NULL, NULL, 0, &input), kAudioFormatUnsupportedDataFormatError);
    /* A recording queue (the offline device has two silent inputs): the playback queues' calls
     * are kAudioQueueErr_InvalidQueueType, the common ones work. */
    EXPECT_STATUS(AudioQueueNewInput(&format, inputCallback, NULL, NULL, NULL, 0, &input), noErr);
    if (input) {
        AudioQueueBufferRef ib = NULL;
        UInt32 prepared = 0;
        AudioQueueParameterValue v = 0;
        AudioTimeStamp at = {0};
        at.mFlags = kAudioTimeStampSampleTimeValid;
        EXPECT_STATUS(AudioQueueAllocateBuffer(input, 4096, &ib), noErr);
        EXPECT_STATUS(AudioQueuePrime(input, 0, &prepared), kAudioQueueErr_InvalidQueueType);
        EXPECT_STATUS(AudioQueueSetParameter(input, kAudioQueueParam_Volume, 0.5f), kAudioQueueErr_InvalidQueueType);
        EXPECT_STATUS(AudioQueueGetParameter(input, kAudioQueueParam_Volume, &v), kAudioQueueErr_InvalidQueueType);
        EXPECT_STATUS(AudioQueueEnqueueBufferWithParameters(input, ib, 0, NULL, 0, 0, 0, NULL, &at, NULL), kAudioQueueErr_InvalidQueueType);
        EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(input, &format, NULL), kAudioQueueErr_InvalidQueueType);
        EXPECT_STATUS(AudioQueueEnqueueBuffer(input, ib, 0, NULL), noErr);
        UInt32 running = 7, size = sizeof running;
        EXPECT_STATUS(AudioQueueGetProperty(input, kAudioQueueProperty_IsRunning, &running, &size), noErr);
        EXPECT(running == 0 && size == 4, "a new recording queue is not running (%u, %u bytes)", running, size);
        UInt32 on = 1;
        EXPECT_STATUS(AudioQueueSetProperty(input, kAudioQueueProperty_EnableLevelMetering, &on, sizeof on), noErr);
        EXPECT_STATUS(AudioQueueSetProperty(input, kAudioQueueProperty_IsRunning, &on, sizeof on), kAudioQueueErr_InvalidProperty);
        EXPECT_STATUS(AudioQueueFreeBuffer(input, ib), kAudioQueueErr_BufferInQueue);
        EXPECT_STATUS(AudioQueueReset(input), noErr);
        EXPECT_STATUS(AudioQueueFreeBuffer(input, ib), noErr);
        EXPECT_STATUS(AudioQueueDispose(input, true), noErr);
        EXPECT_STATUS(AudioQueueStart(input, NULL), kAudio_ParamError); /* a stale handle */
        input = NULL;
    }
    EXPECT_STATUS(AudioQueueNewOutput(NULL, outputCallback, &calls, NULL, NULL, 0, &aq), kAudio_ParamError);
    EXPECT_STATUS(AudioQueueNewOutput(&format, outputCallback, &calls, NULL, NULL, 1, &aq), kAudio_ParamError);
    AudioStreamBasicDescription bad = format;
    bad.mFormatID = 0x78787878; /* 'xxxx' */
    EXPECT_STATUS(AudioQueueNewOutput(&bad, outputCallback, &calls, NULL, NULL, 0, &aq), kAudioFormatUnsupportedDataFormatError);
    EXPECT_STATUS(AudioQueueNewOutput(&format, outputCallback, &calls, NULL, kCFRunLoopCommonModes, 0, &aq), noErr);
    EXPECT_STATUS(AudioQueueNewOutput(&format, outputCallback, &calls, NULL, NULL, 0, &other), noErr);
    if (!aq || !other) { printf("no queue\n%d passed, %d failed\n", passed, failed + 1); return 1; }

    /* Buffers. */
    AudioQueueBufferRef a, b, c, d, foreign, render, withDescriptions;
    EXPECT_STATUS(AudioQueueAllocateBuffer(aq, 0, &a), kAudioQueueErr_InvalidParameter);
    EXPECT_STATUS(AudioQueueAllocateBuffer(aq, 8000, &a), noErr);
    EXPECT(a->mAudioDataBytesCapacity == 8000 && a->mAudioDataByteSize == 0 && a->mAudioData != NULL, "fresh buffer fields");
    EXPECT(a->mPacketDescriptionCapacity == 0 && a->mPacketDescriptions == NULL, "no descriptions");
    EXPECT_STATUS(AudioQueueAllocateBufferWithPacketDescriptions(aq, 800, 4, &withDescriptions), noErr);
    EXPECT(withDescriptions->mPacketDescriptionCapacity == 4 && withDescriptions->mPacketDescriptions != NULL, "descriptions");
    EXPECT_STATUS(AudioQueueAllocateBuffer(aq, 8000, &b), noErr);
    EXPECT_STATUS(AudioQueueAllocateBuffer(aq, 8000, &c), noErr);
    EXPECT_STATUS(AudioQueueAllocateBuffer(aq, 8000, &d), noErr);
    EXPECT_STATUS(AudioQueueAllocateBuffer(aq, 1024 * 8, &render), noErr);
    EXPECT_STATUS(AudioQueueAllocateBuffer(other, 800, &foreign), noErr);
    EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, a, 0, NULL), kAudioQueueErr_BufferEmpty);
    fill(foreign, 100, -1);
    EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, foreign, 0, NULL), kAudioQueueErr_InvalidBuffer);
    EXPECT_STATUS(AudioQueueFreeBuffer(aq, foreign), kAudioQueueErr_InvalidBuffer);
    EXPECT_STATUS(AudioQueueFreeBuffer(other, foreign), noErr);
    EXPECT_STATUS(AudioQueueFreeBuffer(aq, withDescriptions), noErr);

    /* Properties. */
    UInt32 size = 0, u32 = 7;
    Float64 rate = 0;
    EXPECT_STATUS(AudioQueueGetPropertySize(aq, kAudioQueueProperty_IsRunning, &size), noErr);
    EXPECT(size == 4, "IsRunning size %u", size);
    size = 4;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueProperty_IsRunning, &u32, &size), noErr);
    EXPECT(u32 == 0, "not running yet");
    size = 2;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueProperty_IsRunning, &u32, &size), kAudioQueueErr_InvalidPropertySize);
    size = 8;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueDeviceProperty_SampleRate, &rate, &size), noErr);
    EXPECT(rate == 48000, "device rate %f", rate);
    size = 4;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueDeviceProperty_NumberChannels, &u32, &size), noErr);
    EXPECT(u32 == 2, "device channels %u", u32);
    size = 4;
    EXPECT_STATUS(AudioQueueGetProperty(aq, 0x78787878, &u32, &size), kAudioQueueErr_InvalidProperty);
    u32 = 1;
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_IsRunning, &u32, 4), kAudioQueueErr_InvalidProperty);
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_EnableLevelMetering, &u32, 2), kAudioQueueErr_InvalidPropertySize);
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_EnableLevelMetering, &u32, 4), noErr);
    u32 = 0;
    size = 4;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueProperty_EnableLevelMetering, &u32, &size), noErr);
    EXPECT(u32 == 1, "metering on");
    CFStringRef device = NULL;
    size = sizeof device;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueProperty_CurrentDevice, &device, &size), noErr);
    char deviceName[64] = "";
    EXPECT(device != NULL && CFStringGetCString(device, deviceName, sizeof deviceName, kCFStringEncodingUTF8)
           && strcmp(deviceName, "offline") == 0, "current device (a CFString, issue 23): '%s'", deviceName);
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_CurrentDevice, &device, sizeof device), noErr);
    if (device) CFRelease(device);
    AudioChannelLayout layout;
    memset(&layout, 0, sizeof layout);
    layout.mChannelLayoutTag = kAudioChannelLayoutTag_Stereo;
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_ChannelLayout, &layout, sizeof layout), noErr);
    EXPECT_STATUS(AudioQueueGetPropertySize(aq, kAudioQueueProperty_CurrentLevelMeter, &size), noErr);
    EXPECT(size == 2 * sizeof(AudioQueueLevelMeterState), "meter size %u", size);
    AudioQueueLevelMeterState meters[2];
    size = sizeof meters;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueProperty_CurrentLevelMeterDB, meters, &size), noErr);

    /* Parameters. */
    AudioQueueParameterValue volume = 0;
    EXPECT_STATUS(AudioQueueGetParameter(aq, kAudioQueueParam_Volume, &volume), noErr);
    EXPECT(volume == 1.0f, "default volume %f", volume);
    EXPECT_STATUS(AudioQueueGetParameter(aq, 99, &volume), kAudioQueueErr_InvalidParameter);
    EXPECT_STATUS(AudioQueueSetParameter(aq, 99, 0.5f), kAudioQueueErr_InvalidParameter);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Volume, 0.5f), noErr);
    EXPECT_STATUS(AudioQueueGetParameter(aq, kAudioQueueParam_Volume, &volume), noErr);
    EXPECT(volume == 0.5f, "volume %f", volume);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Volume, 1.0f), noErr);
    /* Pan and VolumeRampTime (issue 22): defaults 0, read back as set, out of range refused
     * (their effect on the samples: AQEngineTests.PanAndRampTests). Both back to 0 after. */
    AudioQueueParameterValue pan = 1, rampTime = 1;
    EXPECT_STATUS(AudioQueueGetParameter(aq, kAudioQueueParam_Pan, &pan), noErr);
    EXPECT_STATUS(AudioQueueGetParameter(aq, kAudioQueueParam_VolumeRampTime, &rampTime), noErr);
    EXPECT(pan == 0 && rampTime == 0, "defaults: pan %f, ramp time %f", pan, rampTime);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Pan, -0.25f), noErr);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Pan, 1.5f), kAudioQueueErr_InvalidParameter);
    EXPECT_STATUS(AudioQueueGetParameter(aq, kAudioQueueParam_Pan, &pan), noErr);
    EXPECT(pan == -0.25f, "pan %f", pan);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_VolumeRampTime, 0.5f), noErr);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_VolumeRampTime, -1.0f), kAudioQueueErr_InvalidParameter);
    EXPECT_STATUS(AudioQueueGetParameter(aq, kAudioQueueParam_VolumeRampTime, &rampTime), noErr);
    EXPECT(rampTime == 0.5f, "ramp time %f", rampTime);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_Pan, 0), noErr);
    EXPECT_STATUS(AudioQueueSetParameter(aq, kAudioQueueParam_VolumeRampTime, 0), noErr);

    /* Listeners. */
    EXPECT_STATUS(AudioQueueAddPropertyListener(aq, 0x78787878, listener, NULL), kAudioQueueErr_InvalidProperty);
    EXPECT_STATUS(AudioQueueAddPropertyListener(aq, kAudioQueueProperty_IsRunning, listener, NULL), noErr);
    EXPECT_STATUS(AudioQueueAddPropertyListener(aq, kAudioQueueProperty_EnableLevelMetering, listener, &calls), noErr);
    EXPECT_STATUS(AudioQueueRemovePropertyListener(aq, kAudioQueueProperty_EnableLevelMetering, listener, NULL), kAudioQueueErr_InvalidParameter);
    EXPECT_STATUS(AudioQueueRemovePropertyListener(aq, kAudioQueueProperty_EnableLevelMetering, listener, &calls), noErr);

    /* Offline rendering: refused before a format is set. */
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    t.mFlags = kAudioTimeStampSampleTimeValid;
    EXPECT_STATUS(AudioQueueOfflineRender(aq, &t, render, 1024), kAudioQueueErr_InvalidOfflineMode);
    AudioStreamBasicDescription bad16 = format;
    bad16.mFormatID = kAudioFormatMPEG4AAC;
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(aq, &bad16, NULL), kAudioFormatUnsupportedDataFormatError);
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(aq, &format, &layout), noErr);

    /* Scheduling: A at queue frame 5000 with 10 frames trimmed (its impulse at buffer frame 20
     * plays at 5010); B at 7777 with volume 0.5 from its first frame; C's impulse trimmed off. */
    AudioTimeStamp start, actual;
    memset(&start, 0, sizeof start);
    start.mFlags = kAudioTimeStampSampleTimeValid;
    start.mSampleTime = 5000;
    fill(a, 1000, 20);
    EXPECT_STATUS(AudioQueueEnqueueBufferWithParameters(aq, a, 0, NULL, 10, 0, 0, NULL, &start, &actual), noErr);
    EXPECT((actual.mFlags & kAudioTimeStampSampleTimeValid) && actual.mSampleTime == 5000, "actual start %f", actual.mSampleTime);
    EXPECT_STATUS(AudioQueueFreeBuffer(aq, a), kAudioQueueErr_BufferInQueue);
    fill(b, 500, 0);
    start.mSampleTime = 5500; /* before the end of A (5990) */
    EXPECT_STATUS(AudioQueueEnqueueBufferWithParameters(aq, b, 0, NULL, 0, 0, 0, NULL, &start, NULL), kAudioQueueErr_InvalidParameter);
    AudioQueueParameterEvent half = {kAudioQueueParam_Volume, 0.5f};
    start.mSampleTime = 7777;
    EXPECT_STATUS(AudioQueueEnqueueBufferWithParameters(aq, b, 0, NULL, 0, 0, 1, &half, &start, &actual), noErr);
    EXPECT(actual.mSampleTime == 7777, "B actual %f", actual.mSampleTime);
    fill(c, 400, 399);
    EXPECT_STATUS(AudioQueueEnqueueBufferWithParameters(aq, c, 0, NULL, 0, 400, 0, NULL, NULL, NULL), kAudioQueueErr_BufferEmpty);
    EXPECT_STATUS(AudioQueueEnqueueBufferWithParameters(aq, c, 0, NULL, 0, 1, 0, NULL, NULL, &actual), noErr);
    EXPECT(actual.mSampleTime == 8277, "C follows B: %f", actual.mSampleTime);
    UInt32 prepared = 0;
    EXPECT_STATUS(AudioQueuePrime(aq, 0, &prepared), noErr);
    EXPECT(prepared > 0, "prepared %u", prepared);

    /* Render 10 × 1024 frames from queue time 0 and find every non-zero sample. */
    int impulses = 0, wrong = 0;
    for (int chunk = 0; chunk < 10; chunk++) {
        t.mSampleTime = chunk * 1024;
        EXPECT_STATUS(AudioQueueOfflineRender(aq, &t, render, 1024), noErr);
        EXPECT(render->mAudioDataByteSize == 1024 * 8, "rendered %u bytes", render->mAudioDataByteSize);
        const float *s = render->mAudioData;
        for (int i = 0; i < 1024; i++) {
            long frame = chunk * 1024L + i;
            if (s[2 * i] == 0 && s[2 * i + 1] == 0) continue;
            impulses++;
            if (frame == 5010 && s[2 * i] == 1.0f && s[2 * i + 1] == 1.0f) continue;
            if (frame == 7777 && s[2 * i] == 0.5f && s[2 * i + 1] == 0.5f) continue;
            wrong++;
            printf("unexpected sample at frame %ld: %f %f\n", frame, s[2 * i], s[2 * i + 1]);
        }
    }
    EXPECT(impulses == 2 && wrong == 0, "impulses %d, wrong %d", impulses, wrong);
    EXPECT(returnedCount == 3 && returned[0] == a && returned[1] == b && returned[2] == c, "returned in enqueue order (%d)", returnedCount);
    size = sizeof meters;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueProperty_CurrentLevelMeter, meters, &size), noErr);

    /* Time. */
    AudioQueueTimelineRef timeline = NULL;
    Boolean discontinuity = 2;
    AudioTimeStamp now;
    EXPECT_STATUS(AudioQueueCreateTimeline(aq, &timeline), noErr);
    EXPECT_STATUS(AudioQueueGetCurrentTime(aq, timeline, &now, &discontinuity), noErr);
    EXPECT(discontinuity == 0 || discontinuity == 1, "discontinuity flag %d", discontinuity);
    EXPECT((now.mFlags & kAudioTimeStampSampleTimeValid) && now.mSampleTime >= 10240, "queue time %f", now.mSampleTime);
    EXPECT_STATUS(AudioQueueDisposeTimeline(aq, timeline), noErr);
    AudioTimeStamp deviceNow, host, back, nearest;
    EXPECT_STATUS(AudioQueueDeviceGetCurrentTime(aq, &deviceNow), noErr);
    EXPECT(deviceNow.mFlags & kAudioTimeStampHostTimeValid, "device time has a host time");
    memset(&t, 0, sizeof t);
    t.mFlags = kAudioTimeStampSampleTimeValid;
    t.mSampleTime = deviceNow.mSampleTime + 123457;
    EXPECT_STATUS(AudioQueueDeviceTranslateTime(aq, &t, &host), noErr);
    EXPECT(host.mFlags & kAudioTimeStampHostTimeValid, "translated to host time");
    memset(&back, 0, sizeof back);
    back.mFlags = kAudioTimeStampHostTimeValid;
    back.mHostTime = host.mHostTime;
    EXPECT_STATUS(AudioQueueDeviceTranslateTime(aq, &back, &back), noErr);
    /* Host time is whole nanoseconds, so the way back is the frame to a fraction of a frame. */
    EXPECT(floor(back.mSampleTime + 0.5) == t.mSampleTime, "round trip %f -> %f", t.mSampleTime, back.mSampleTime);
    nearest = t;
    EXPECT_STATUS(AudioQueueDeviceGetNearestStartTime(aq, &nearest, 0), noErr);
    EXPECT(nearest.mSampleTime >= t.mSampleTime, "nearest %f >= %f", nearest.mSampleTime, t.mSampleTime);
    EXPECT_STATUS(AudioQueueDeviceGetNearestStartTime(aq, &nearest, 1), kAudio_ParamError);

    /* Control. */
    EXPECT_STATUS(AudioQueueStart(aq, NULL), noErr);
    EXPECT_STATUS(AudioQueuePause(aq), noErr);
    EXPECT_STATUS(AudioQueueStart(aq, NULL), noErr);
    fill(d, 100, -1);
    EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, d, 0, NULL), noErr);
    EXPECT_STATUS(AudioQueueFlush(aq), noErr);
    int before = returnedCount;
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    EXPECT(returnedCount == before + 1 && returned[returnedCount - 1] == d, "immediate stop returned the buffer synchronously");
    EXPECT_STATUS(AudioQueueReset(aq), noErr);
    EXPECT_STATUS(AudioQueueRemovePropertyListener(aq, kAudioQueueProperty_IsRunning, listener, NULL), noErr);
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(aq, NULL, NULL), noErr);

    /* Disposal: the handle is gone afterwards. */
    EXPECT_STATUS(AudioQueueFreeBuffer(aq, d), noErr);
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);
    EXPECT_STATUS(AudioQueueStart(aq, NULL), kAudio_ParamError);
    EXPECT_STATUS(AudioQueueDispose(aq, true), kAudio_ParamError);
    /* An asynchronous disposal of a queue with audio to play: calls meanwhile are
     * DisposalPending; rendering drains it, and then the handle is gone. */
    AudioQueueBufferRef o;
    EXPECT_STATUS(AudioQueueAllocateBuffer(other, 800, &o), noErr);
    fill(o, 100, -1);
    EXPECT_STATUS(AudioQueueEnqueueBuffer(other, o, 0, NULL), noErr);
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(other, &format, NULL), noErr);
    EXPECT_STATUS(AudioQueueStart(other, NULL), noErr);
    AudioQueueBufferRef otherRender;
    EXPECT_STATUS(AudioQueueAllocateBuffer(other, 1024 * 8, &otherRender), noErr);
    EXPECT_STATUS(AudioQueueDispose(other, false), noErr);
    EXPECT_STATUS(AudioQueueStart(other, NULL), kAudioQueueErr_DisposalPending);
    EXPECT_STATUS(AudioQueueDispose(other, false), kAudioQueueErr_DisposalPending);
    t.mSampleTime = 0;
    OSStatus drained = AudioQueueOfflineRender(other, &t, otherRender, 1024);
    EXPECT(drained == noErr, "render while disposing: %d", (int)drained);
    OSStatus gone = noErr;
    for (int i = 0; i < 200 && gone != kAudio_ParamError; i++) {
        gone = AudioQueueStart(other, NULL);
        if (gone != kAudio_ParamError) usleep(10000);
    }
    EXPECT(gone == kAudio_ParamError, "the drained queue's handle is gone: %d", (int)gone);
    EXPECT_STATUS(AudioQueueStart(NULL, NULL), kAudio_ParamError);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
