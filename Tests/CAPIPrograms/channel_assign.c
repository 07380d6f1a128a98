/* channel_assign.c — kAudioQueueProperty_ChannelAssignments through the C API (issue 22), written
 * from Apple's AudioQueue.h: an array of AudioQueueChannelAssignment, one per channel of the
 * queue's format, each naming the device (its UID) and a 1-based device channel.
 *
 * "offline" (run with AQSYNC_DEVICE=offline, 48 kHz): a stereo float playback queue reads its
 * default assignments (device channels 1 and 2 on kAudioQueueProperty_CurrentDevice's device,
 * each UID a CFString the caller releases); the result codes of docs/c-api.md ("Channel
 * assignments") for a wrong size, another device, a NULL UID and channels outside the device;
 * a listener hearing each set and none of the refused ones; channels swapped and read back;
 * the queue then moved to a 4-channel offline render format (carrying the swap), assigned to
 * channels 3 and 4, and 1 s of a known stereo signal rendered: outputs 1 and 2 exactly silent,
 * outputs 3 and 4 exactly the source's left and right, sample for sample. A recording queue's
 * default, set, get, listener and result codes on the offline device's two inputs.
 *
 * "live" (a JACK server; AQSYNC_INPUT_CONNECT names one port that clicks, so in_1 clicks and
 * in_2 is silent): a stereo recording queue assigned to inputs 2 and 1 (swapped) records about
 * 1.5 s; channel 1 (in_2) must be exactly silent and channel 2 (in_1) must hold the clicks,
 * printed as "click N" (device sample time) for the test to judge their spacing.
 *
 * Prints "N passed, N failed"; exits 1 on any failure. */
#include <AudioToolbox/AudioToolbox.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

#define RATE 48000
#define FRAMES RATE          /* 1 s of source */
#define PER_BUFFER 4800
#define CHUNK 1024

static AudioStreamBasicDescription floatFormat(UInt32 channels) {
    AudioStreamBasicDescription f;
    memset(&f, 0, sizeof f);
    f.mSampleRate = RATE;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    f.mBytesPerPacket = 4 * channels;
    f.mFramesPerPacket = 1;
    f.mBytesPerFrame = 4 * channels;
    f.mChannelsPerFrame = channels;
    f.mBitsPerChannel = 32;
    return f;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int heard;
static void listener(void *user, AudioQueueRef aq, AudioQueuePropertyID id) {
    (void)user; (void)aq;
    pthread_mutex_lock(&lock);
    if (id == kAudioQueueProperty_ChannelAssignments) heard++;
    pthread_mutex_unlock(&lock);
}
static int heardCount(void) {
    pthread_mutex_lock(&lock);
    int n = heard;
    pthread_mutex_unlock(&lock);
    return n;
}

static CFStringRef currentDevice(AudioQueueRef aq) {
    CFStringRef uid = NULL;
    UInt32 size = sizeof uid;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueProperty_CurrentDevice, &uid, &size), noErr);
    return uid;
}

/* Reads the assignments of a queue of `n` channels and checks them against `want` on the
 * queue's current device; releases the UIDs. */
static void expectAssignments(AudioQueueRef aq, int n, const UInt32 *want, const char *what) {
    UInt32 size = 0;
    EXPECT_STATUS(AudioQueueGetPropertySize(aq, kAudioQueueProperty_ChannelAssignments, &size), noErr);
    EXPECT(size == n * sizeof(AudioQueueChannelAssignment), "%s: size %u, want %u", what, size,
           (unsigned)(n * sizeof(AudioQueueChannelAssignment)));
    AudioQueueChannelAssignment got[8];
    memset(got, 0, sizeof got);
    size = n * sizeof(AudioQueueChannelAssignment);
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueProperty_ChannelAssignments, got, &size), noErr);
    CFStringRef device = currentDevice(aq);
    for (int i = 0; i < n; i++) {
        EXPECT(got[i].mChannelNumber == want[i], "%s: channel %d on device channel %u, want %u", what, i,
               got[i].mChannelNumber, want[i]);
        EXPECT(got[i].mDeviceUID != NULL && device != NULL && CFEqual(got[i].mDeviceUID, device),
               "%s: channel %d's UID is the queue's device", what, i);
        if (got[i].mDeviceUID) CFRelease(got[i].mDeviceUID);
    }
    if (device) CFRelease(device);
}

static OSStatus setAssignments(AudioQueueRef aq, CFStringRef uid, const UInt32 *channels, int n) {
    AudioQueueChannelAssignment a[8];
    for (int i = 0; i < n; i++) { a[i].mDeviceUID = uid; a[i].mChannelNumber = channels[i]; }
    return AudioQueueSetProperty(aq, kAudioQueueProperty_ChannelAssignments, a, n * sizeof(AudioQueueChannelAssignment));
}

/* The result codes every queue of `n` channels on a device of `deviceChannels` gives. */
static void expectRefusals(AudioQueueRef aq, int n, UInt32 deviceChannels, const char *what) {
    CFStringRef uid = currentDevice(aq);
    int before = heardCount();
    UInt32 ok[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    EXPECT_STATUS(setAssignments(aq, uid, ok, n - 1), kAudioQueueErr_InvalidPropertySize);
    EXPECT_STATUS(setAssignments(aq, uid, ok, n + 1), kAudioQueueErr_InvalidPropertySize);
    AudioQueueChannelAssignment a[8];
    for (int i = 0; i < n; i++) { a[i].mDeviceUID = uid; a[i].mChannelNumber = 1; }
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_ChannelAssignments, a, n * sizeof a[0] - 4),
                  kAudioQueueErr_InvalidPropertySize);
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_ChannelAssignments, NULL, 0), kAudioQueueErr_InvalidPropertySize);
    EXPECT_STATUS(setAssignments(aq, CFSTR("jack:elsewhere:nobody"), ok, n), kAudioQueueErr_InvalidDevice);
    a[n - 1].mDeviceUID = NULL;
    EXPECT_STATUS(AudioQueueSetProperty(aq, kAudioQueueProperty_ChannelAssignments, a, n * sizeof a[0]), kAudioQueueErr_InvalidDevice);
    UInt32 zero[8] = {1, 0, 1, 1, 1, 1, 1, 1};
    EXPECT_STATUS(setAssignments(aq, uid, zero, n), kAudioQueueErr_InvalidPropertyValue);
    UInt32 past[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    past[n - 1] = deviceChannels + 1;
    EXPECT_STATUS(setAssignments(aq, uid, past, n), kAudioQueueErr_InvalidPropertyValue);
    /* Too small to read. */
    AudioQueueChannelAssignment got[8];
    UInt32 size = (n - 1) * sizeof(AudioQueueChannelAssignment) + 8;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueProperty_ChannelAssignments, got, &size), kAudioQueueErr_InvalidPropertySize);
    EXPECT(heardCount() == before, "%s: the listener heard a refused set", what);
    if (uid) CFRelease(uid);
}

static void outputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b) { (void)user; (void)aq; (void)b; }
static void discardInput(void *user, AudioQueueRef aq, AudioQueueBufferRef b, const AudioTimeStamp *t, UInt32 n,
                         const AudioStreamPacketDescription *d) {
    (void)user; (void)aq; (void)b; (void)t; (void)n; (void)d;
}

/* Exact in float and distinct per channel and frame. */
static float left(int i) { return (float)((i % 1000) + 1) / 2048.0f; }
static float right(int i) { return -(float)((i % 777) + 1) / 4096.0f; }

static float rendered[4 * (FRAMES + CHUNK)];

static int offline(void) {
    AudioStreamBasicDescription stereo = floatFormat(2);
    AudioQueueRef aq = NULL;
    EXPECT_STATUS(AudioQueueNewOutput(&stereo, outputCallback, NULL, NULL, NULL, 0, &aq), noErr);
    if (!aq) return 1;
    EXPECT(sizeof(AudioQueueChannelAssignment) == 16, "sizeof(AudioQueueChannelAssignment) = %zu",
           sizeof(AudioQueueChannelAssignment));
    EXPECT(kAudioQueueProperty_ChannelAssignments == 0x61716361, "'aqca'");
    UInt32 identity[2] = {1, 2}, swapped[2] = {2, 1}, upper[2] = {3, 4};
    expectAssignments(aq, 2, identity, "playback default");
    EXPECT_STATUS(AudioQueueAddPropertyListener(aq, kAudioQueueProperty_ChannelAssignments, listener, NULL), noErr);
    UInt32 outputs = 0, size = 4;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueDeviceProperty_NumberChannels, &outputs, &size), noErr);
    expectRefusals(aq, 2, outputs, "playback");

    CFStringRef uid = currentDevice(aq);
    EXPECT_STATUS(setAssignments(aq, uid, swapped, 2), noErr);
    EXPECT(heardCount() == 1, "the listener heard the set (%d)", heardCount());
    expectAssignments(aq, 2, swapped, "playback swapped");
    if (uid) CFRelease(uid);

    /* A 4-channel offline format: the queue moves to a 4-output offline device, keeping the swap. */
    AudioStreamBasicDescription four = floatFormat(4);
    AudioChannelLayout layout;
    memset(&layout, 0, sizeof layout);
    layout.mChannelLayoutTag = kAudioChannelLayoutTag_DiscreteInOrder | 4;
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(aq, &four, &layout), noErr);
    size = 4;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueDeviceProperty_NumberChannels, &outputs, &size), noErr);
    EXPECT(outputs == 4, "the offline device has 4 outputs (%u)", outputs);
    expectAssignments(aq, 2, swapped, "carried to the offline device");
    expectRefusals(aq, 2, outputs, "playback, 4 outputs");
    uid = currentDevice(aq);
    EXPECT_STATUS(setAssignments(aq, uid, upper, 2), noErr);
    EXPECT(heardCount() == 2, "the listener heard the set after the move (%d)", heardCount());
    expectAssignments(aq, 2, upper, "playback on 3 and 4");
    if (uid) CFRelease(uid);

    AudioQueueBufferRef buffers[FRAMES / PER_BUFFER];
    for (int b = 0; b < FRAMES / PER_BUFFER; b++) {
        EXPECT_STATUS(AudioQueueAllocateBuffer(aq, PER_BUFFER * 8, &buffers[b]), noErr);
        float *s = buffers[b]->mAudioData;
        for (int i = 0; i < PER_BUFFER; i++) {
            s[2 * i] = left(b * PER_BUFFER + i);
            s[2 * i + 1] = right(b * PER_BUFFER + i);
        }
        buffers[b]->mAudioDataByteSize = PER_BUFFER * 8;
        EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, buffers[b], 0, NULL), noErr);
    }
    AudioQueueBufferRef render = NULL;
    EXPECT_STATUS(AudioQueueAllocateBuffer(aq, CHUNK * 16, &render), noErr);
    EXPECT_STATUS(AudioQueueStart(aq, NULL), noErr);
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    t.mFlags = kAudioTimeStampSampleTimeValid;
    int n = 0;
    while (render && n < FRAMES) {
        t.mSampleTime = n;
        OSStatus s = AudioQueueOfflineRender(aq, &t, render, CHUNK);
        if (s != noErr) { EXPECT(0, "AudioQueueOfflineRender = %d", (int)s); break; }
        EXPECT(render->mAudioDataByteSize == CHUNK * 16, "rendered %u bytes", render->mAudioDataByteSize);
        memcpy(rendered + 4 * n, render->mAudioData, CHUNK * 16);
        n += CHUNK;
    }
    int wrong = 0, firstWrong = -1;
    for (int i = 0; i < FRAMES && i < n; i++) {
        const float *f = rendered + 4 * i;
        if (f[0] != 0 || f[1] != 0 || f[2] != left(i) || f[3] != right(i)) {
            if (firstWrong < 0) firstWrong = i;
            wrong++;
        }
    }
    EXPECT(n >= FRAMES && wrong == 0, "%d of %d frames differ (first %d: %g %g %g %g, want 0 0 %g %g)", wrong, n, firstWrong,
           firstWrong >= 0 ? rendered[4 * firstWrong] : 0, firstWrong >= 0 ? rendered[4 * firstWrong + 1] : 0,
           firstWrong >= 0 ? rendered[4 * firstWrong + 2] : 0, firstWrong >= 0 ? rendered[4 * firstWrong + 3] : 0,
           firstWrong >= 0 ? left(firstWrong) : 0, firstWrong >= 0 ? right(firstWrong) : 0);
    printf("rendered %d frames; outputs 3 and 4 carry the source exactly: %s\n", n, wrong == 0 ? "yes" : "no");
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);

    /* A recording queue: the offline device's inputs (AQSYNC_INPUTS, default 2). */
    AudioQueueRef in = NULL;
    EXPECT_STATUS(AudioQueueNewInput(&stereo, discardInput, NULL, NULL, NULL, 0, &in), noErr);
    if (!in) return 1;
    expectAssignments(in, 2, identity, "recording default");
    EXPECT_STATUS(AudioQueueAddPropertyListener(in, kAudioQueueProperty_ChannelAssignments, listener, NULL), noErr);
    UInt32 inputs = 0;
    size = 4;
    EXPECT_STATUS(AudioQueueGetProperty(in, kAudioQueueDeviceProperty_NumberChannels, &inputs, &size), noErr);
    EXPECT(inputs == 2, "the offline device has 2 inputs (%u)", inputs);
    int before = heardCount();
    expectRefusals(in, 2, inputs, "recording");
    uid = currentDevice(in);
    EXPECT_STATUS(setAssignments(in, uid, swapped, 2), noErr);
    EXPECT(heardCount() == before + 1, "the recording queue's listener heard the set (%d)", heardCount() - before);
    expectAssignments(in, 2, swapped, "recording swapped");
    if (uid) CFRelease(uid);
    EXPECT_STATUS(AudioQueueDispose(in, true), noErr);
    return 0;
}

/* Live: in_1 clicks, in_2 is silent; the queue records them swapped. */
enum { kBuffers = 3, kFrames = 4096 };
static int recording = 1, buffersIn, nonSilentFirst, gaps;
static double nextStart = -1;

static void inputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b, const AudioTimeStamp *start,
                          UInt32 packets, const AudioStreamPacketDescription *d) {
    (void)user; (void)packets; (void)d;
    UInt32 frames = b->mAudioDataByteSize / 8;
    pthread_mutex_lock(&lock);
    if (frames > 0) {
        buffersIn++;
        if (nextStart >= 0 && start->mSampleTime != nextStart) gaps++;
        nextStart = start->mSampleTime + frames;
        const float *s = b->mAudioData;
        for (UInt32 i = 0; i < frames; i++) {
            if (s[2 * i] != 0) nonSilentFirst++;
            if (s[2 * i + 1] > 0.5f) printf("click %.0f\n", start->mSampleTime + i);
        }
    }
    int again = recording;
    pthread_mutex_unlock(&lock);
    if (again) AudioQueueEnqueueBuffer(aq, b, 0, NULL);
}

static int live(void) {
    AudioStreamBasicDescription stereo = floatFormat(2);
    AudioQueueRef aq = NULL;
    EXPECT_STATUS(AudioQueueNewInput(&stereo, inputCallback, NULL, NULL, NULL, 0, &aq), noErr);
    if (!aq) return 1;
    UInt32 identity[2] = {1, 2}, swapped[2] = {2, 1};
    expectAssignments(aq, 2, identity, "live default");
    CFStringRef uid = currentDevice(aq);
    char name[256] = "";
    if (uid) CFStringGetCString(uid, name, sizeof name, kCFStringEncodingUTF8);
    printf("device %s\n", name);
    EXPECT(strncmp(name, "jack:", 5) == 0, "a JACK device (%s)", name);
    EXPECT_STATUS(setAssignments(aq, CFSTR("offline"), swapped, 2), kAudioQueueErr_InvalidDevice);
    EXPECT_STATUS(setAssignments(aq, uid, swapped, 2), noErr);
    expectAssignments(aq, 2, swapped, "live swapped");
    if (uid) CFRelease(uid);

    AudioQueueBufferRef buffers[kBuffers];
    for (int i = 0; i < kBuffers; i++) {
        EXPECT_STATUS(AudioQueueAllocateBuffer(aq, kFrames * 8, &buffers[i]), noErr);
        EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, buffers[i], 0, NULL), noErr);
    }
    EXPECT_STATUS(AudioQueueStart(aq, NULL), noErr);
    usleep(1500000);
    pthread_mutex_lock(&lock);
    recording = 0;
    pthread_mutex_unlock(&lock);
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    pthread_mutex_lock(&lock);
    EXPECT(buffersIn >= 48000 / kFrames, "about 1.5 s recorded (%d buffers)", buffersIn);
    EXPECT(nonSilentFirst == 0, "channel 1 records the silent in_2: %d frames not silent", nonSilentFirst);
    EXPECT(gaps == 0, "%d buffers did not start where the previous ended", gaps);
    pthread_mutex_unlock(&lock);
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && strcmp(argv[1], "live") == 0) live(); else offline();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
