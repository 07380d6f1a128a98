/* record_alac_jack.c — Apple Lossless recording through the C API (issues 11, 12): the format
 * completed by the queue (4096 frames a packet), the magic cookie readable from creation
 * (GetPropertySize, GetProperty: the 24-byte ALACSpecificConfig), buffers with packet
 * descriptions, each callback's descriptions consistent with its bytes, and start times that
 * advance by exactly the packets' frames. Prints "N passed, N failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int recording = 1, callbacks, packetsIn, badDescriptions, gaps, missingDescriptions;
static double nextStart = -1;

static void inputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b, const AudioTimeStamp *start,
                          UInt32 packets, const AudioStreamPacketDescription *d) {
    (void)user;
    pthread_mutex_lock(&lock);
    callbacks++;
    if (packets > 0) {
        if (d == NULL) missingDescriptions++;
        else {
            UInt32 bytes = 0;
            for (UInt32 i = 0; i < packets; i++) {
                if (d[i].mStartOffset != bytes || d[i].mDataByteSize == 0) badDescriptions++;
                bytes += d[i].mDataByteSize;
            }
            if (bytes != b->mAudioDataByteSize) badDescriptions++;
            if (b->mPacketDescriptionCount != packets) badDescriptions++;
        }
        if (nextStart >= 0 && start->mSampleTime != nextStart) gaps++;
        nextStart = start->mSampleTime + 4096.0 * packets;
        packetsIn += packets;
    }
    int again = recording;
    pthread_mutex_unlock(&lock);
    if (again) AudioQueueEnqueueBuffer(aq, b, 0, NULL);
}

int main(void) {
    AudioStreamBasicDescription f = {0};
    f.mSampleRate = 48000;
    f.mFormatID = kAudioFormatAppleLossless;
    f.mFormatFlags = 1; /* kAppleLosslessFormatFlag_16BitSourceData */
    f.mChannelsPerFrame = 2;
    AudioQueueRef aq = NULL;
    EXPECT_STATUS(AudioQueueNewInput(&f, inputCallback, NULL, NULL, NULL, 0, &aq), noErr);
    if (!aq) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    UInt32 size = 0;
    EXPECT_STATUS(AudioQueueGetPropertySize(aq, kAudioQueueProperty_MagicCookie, &size), noErr);
    EXPECT(size == 24, "the ALAC cookie is 24 bytes (%u)", size);
    unsigned char cookie[64] = {0};
    size = sizeof cookie;
    EXPECT_STATUS(AudioQueueGetProperty(aq, kAudioQueueProperty_MagicCookie, cookie, &size), noErr);
    UInt32 frameLength = (UInt32)cookie[0] << 24 | (UInt32)cookie[1] << 16 | (UInt32)cookie[2] << 8 | cookie[3];
    EXPECT(size == 24 && frameLength == 4096 && cookie[5] == 16 && cookie[9] == 2,
           "cookie: %u bytes, %u frames, %u bits, %u channels", size, frameLength, cookie[5], cookie[9]);
    AudioQueueBufferRef buffers[3];
    for (int i = 0; i < 3; i++) {
        EXPECT_STATUS(AudioQueueAllocateBufferWithPacketDescriptions(aq, 8 * 4096 * 4, 8, &buffers[i]), noErr);
        EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, buffers[i], 0, NULL), noErr);
    }
    EXPECT_STATUS(AudioQueueStart(aq, NULL), noErr);
    sleep(2);
    pthread_mutex_lock(&lock);
    recording = 0;
    pthread_mutex_unlock(&lock);
    EXPECT_STATUS(AudioQueueStop(aq, true), noErr);
    pthread_mutex_lock(&lock);
    EXPECT(packetsIn >= 2 * 48000 / 4096 - 2, "about 2 s of packets (%d)", packetsIn);
    EXPECT(missingDescriptions == 0 && badDescriptions == 0, "descriptions: %d missing, %d inconsistent", missingDescriptions, badDescriptions);
    EXPECT(gaps == 0, "%d buffers did not start where the previous ended", gaps);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < 3; i++) EXPECT_STATUS(AudioQueueFreeBuffer(aq, buffers[i]), noErr);
    EXPECT_STATUS(AudioQueueDispose(aq, true), noErr);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
