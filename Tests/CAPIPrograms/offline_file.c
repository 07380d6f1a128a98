/* offline_file.c — Apple's AQOfflineRenderTest, in C (issue 22): renders a compressed file to
 * another file through one queue switched to offline rendering. argv[1]: the input (any file
 * AudioFileOpenURL reads, e.g. AAC in .m4a, with a magic cookie); argv[2]: the output, raw
 * interleaved 32-bit float at the file's rate and channels. The queue is made where queues are
 * made (the JACK server when one is reachable), gets the file's magic cookie and three buffers
 * with packet descriptions, then the offline render format; its callback reads packets with
 * AudioFileReadPacketData. The program renders 4096 frames at a time until the file's frames
 * and 4096 more are out (no trimming: the encoder's priming is in the output, as in Apple's
 * sample), then puts the queue back with NULL. With argv[3] "live", a second queue plays
 * silence live the whole time and its time must have advanced by the end (it was not held up).
 * With argv[3] "nodesc" (a file of constant-size packets, Apple IMA4: issue 23), the buffers come
 * from AudioQueueAllocateBuffer, packets are read without descriptions and enqueued with none, as
 * Apple's programs play such files.
 * Prints "frames=N" (the file's frames as the packet count says) and "N passed, N failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
static int nodesc;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

enum { kPacketsPerBuffer = 64, kChunk = 4096 };

typedef struct {
    AudioFileID file;
    SInt64 next, count;
    UInt32 maxPacket;
    int done;
} Source;

static void callback(void *user, AudioQueueRef aq, AudioQueueBufferRef b) {
    Source *s = user;
    if (s->done) return;
    UInt32 bytes = b->mAudioDataBytesCapacity, n = kPacketsPerBuffer;
    OSStatus r = AudioFileReadPacketData(s->file, false, &bytes, nodesc ? NULL : b->mPacketDescriptions, s->next, &n, b->mAudioData);
    if ((r != noErr && r != kAudioFileEndOfFileError) || n == 0) { s->done = 1; return; }
    s->next += n;
    b->mAudioDataByteSize = bytes;
    b->mPacketDescriptionCount = nodesc ? 0 : n;
    EXPECT_STATUS(AudioQueueEnqueueBuffer(aq, b, 0, NULL), noErr);
}

static void otherCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b) {
    if (*(int *)user) return;
    b->mAudioDataByteSize = b->mAudioDataBytesCapacity;
    AudioQueueEnqueueBuffer(aq, b, 0, NULL);
}

static double queueTime(AudioQueueRef q) {
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    if (AudioQueueGetCurrentTime(q, NULL, &t, NULL) != noErr) return -1;
    return t.mSampleTime;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int live = argc > 3 && strcmp(argv[3], "live") == 0, stopOther = 0;
    nodesc = argc > 3 && strcmp(argv[3], "nodesc") == 0;
    Source s;
    memset(&s, 0, sizeof s);
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)argv[1], (CFIndex)strlen(argv[1]), false);
    EXPECT_STATUS(AudioFileOpenURL(url, kAudioFileReadPermission, 0, &s.file), noErr);
    CFRelease(url);
    AudioStreamBasicDescription in;
    UInt32 size = sizeof in;
    EXPECT_STATUS(AudioFileGetProperty(s.file, kAudioFilePropertyDataFormat, &size, &in), noErr);
    size = sizeof s.count;
    AudioFileGetProperty(s.file, kAudioFilePropertyAudioDataPacketCount, &size, &s.count);
    size = sizeof s.maxPacket;
    AudioFileGetProperty(s.file, kAudioFilePropertyMaximumPacketSize, &size, &s.maxPacket);

    AudioQueueRef other = NULL;
    if (live) {
        AudioStreamBasicDescription pcm = {48000, kAudioFormatLinearPCM, kAudioFormatFlagsNativeFloatPacked, 8, 1, 8, 2, 32, 0};
        EXPECT_STATUS(AudioQueueNewOutput(&pcm, otherCallback, &stopOther, NULL, NULL, 0, &other), noErr);
        for (int i = 0; i < 3 && other; i++) {
            AudioQueueBufferRef b;
            AudioQueueAllocateBuffer(other, 4800 * 8, &b);
            memset(b->mAudioData, 0, 4800 * 8);
            otherCallback(&stopOther, other, b);
        }
        if (other) EXPECT_STATUS(AudioQueueStart(other, NULL), noErr);
    }
    double otherBefore = other ? queueTime(other) : 0;
    AudioQueueRef q = NULL;
    EXPECT_STATUS(AudioQueueNewOutput(&in, callback, &s, NULL, NULL, 0, &q), noErr);
    if (!q) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    UInt32 cookieSize = 0;
    if (AudioFileGetPropertyInfo(s.file, kAudioFilePropertyMagicCookieData, &cookieSize, NULL) == noErr && cookieSize > 0) {
        void *cookie = malloc(cookieSize);
        AudioFileGetProperty(s.file, kAudioFilePropertyMagicCookieData, &cookieSize, cookie);
        EXPECT_STATUS(AudioQueueSetProperty(q, kAudioQueueProperty_MagicCookie, cookie, cookieSize), noErr);
        free(cookie);
    }
    AudioQueueBufferRef buffers[3];
    for (int i = 0; i < 3; i++) {
        if (nodesc) EXPECT_STATUS(AudioQueueAllocateBuffer(q, s.maxPacket * kPacketsPerBuffer, &buffers[i]), noErr);
        else EXPECT_STATUS(AudioQueueAllocateBufferWithPacketDescriptions(q, s.maxPacket * kPacketsPerBuffer, kPacketsPerBuffer, &buffers[i]), noErr);
    }

    /* As Apple's sample: the offline format, then the capture buffer, then prime and start. */
    AudioStreamBasicDescription out;
    memset(&out, 0, sizeof out);
    out.mSampleRate = in.mSampleRate;
    out.mFormatID = kAudioFormatLinearPCM;
    out.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    out.mChannelsPerFrame = in.mChannelsPerFrame;
    out.mBitsPerChannel = 32;
    out.mBytesPerPacket = out.mBytesPerFrame = 4 * in.mChannelsPerFrame;
    out.mFramesPerPacket = 1;
    AudioChannelLayout layout;
    memset(&layout, 0, sizeof layout);
    layout.mChannelLayoutTag = in.mChannelsPerFrame == 2 ? kAudioChannelLayoutTag_Stereo : kAudioChannelLayoutTag_Mono;
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(q, &out, &layout), noErr);
    AudioQueueBufferRef capture = NULL;
    EXPECT_STATUS(AudioQueueAllocateBuffer(q, kChunk * out.mBytesPerFrame, &capture), noErr);
    for (int i = 0; i < 3; i++) callback(&s, q, buffers[i]);
    EXPECT_STATUS(AudioQueueStart(q, NULL), noErr);
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    t.mFlags = kAudioTimeStampSampleTimeValid;
    EXPECT_STATUS(AudioQueueOfflineRender(q, &t, capture, 0), noErr);

    SInt64 fileFrames = s.count * (in.mFramesPerPacket ? in.mFramesPerPacket : 1);
    FILE *o = fopen(argv[2], "wb");
    for (SInt64 at = 0; at < fileFrames + kChunk; at += kChunk) {
        t.mSampleTime = (Float64)at;
        OSStatus r = AudioQueueOfflineRender(q, &t, capture, kChunk);
        if (r != noErr) { EXPECT(0, "AudioQueueOfflineRender at %lld: %d", (long long)at, (int)r); break; }
        fwrite(capture->mAudioData, 1, capture->mAudioDataByteSize, o);
    }
    fclose(o);
    EXPECT(s.next == s.count, "every packet enqueued (%lld of %lld)", (long long)s.next, (long long)s.count);
    s.done = 1;
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(q, NULL, NULL), noErr);
    EXPECT_STATUS(AudioQueueDispose(q, true), noErr);
    if (other) {
        double otherAfter = queueTime(other);
        EXPECT(otherAfter > otherBefore, "the live queue played on: %.0f -> %.0f", otherBefore, otherAfter);
        stopOther = 1;
        EXPECT_STATUS(AudioQueueStop(other, true), noErr);
        EXPECT_STATUS(AudioQueueDispose(other, true), noErr);
    }
    AudioFileClose(s.file);
    printf("frames=%lld\n%d passed, %d failed\n", (long long)fileFrames, passed, failed);
    return failed ? 1 : 0;
}
