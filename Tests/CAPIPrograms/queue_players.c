/* queue_players.c — what streaming players and recorders need of Audio Queue Services
 * (issue 22), written from Apple's AudioQueue.h documentation; run offline at 44.1 kHz
 * (AQSYNC_DEVICE=offline, AQSYNC_SAMPLE_RATE=44100) with argv[1] an ADTS AAC file (44.1 kHz
 * stereo, a 1 kHz tone). Checks:
 *  - the properties StreamDescription, MaximumOutputPacketSize, DecodeBufferSizeFrames and
 *    ConverterError on playback and recording queues (a recording format of rate 0 records at
 *    the device's rate, which StreamDescription tells);
 *  - kAudioQueueErr_BufferEnqueuedTwice, _EnqueueDuringReset, _InvalidPropertyValue;
 *  - packet descriptions carried in the buffer itself (0/NULL passed), descriptions passed with
 *    a PCM buffer (ignored), a buffer from AudioQueueAllocateBuffer given more descriptions than
 *    one per 256 bytes, and 1000 buffers enqueued on one queue.
 * Prints "N passed, N failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

/* ---- the ADTS file through the parser: every packet and the cookie ---- */
static unsigned char packetData[1 << 20];
static AudioStreamPacketDescription packetDescs[4096];
static UInt32 packetCount, packetBytes;
static AudioStreamBasicDescription aacFormat;
static char cookie[64];
static UInt32 cookieSize;

static void listener(void *user, AudioFileStreamID s, AudioFileStreamPropertyID id, AudioFileStreamPropertyFlags *flags) {
    (void)user; (void)flags;
    if (id == kAudioFileStreamProperty_ReadyToProducePackets) {
        UInt32 size = sizeof aacFormat;
        AudioFileStreamGetProperty(s, kAudioFileStreamProperty_DataFormat, &size, &aacFormat);
        cookieSize = sizeof cookie;
        AudioFileStreamGetProperty(s, kAudioFileStreamProperty_MagicCookieData, &cookieSize, cookie);
    }
}
static void packetsProc(void *user, UInt32 bytes, UInt32 n, const void *data, AudioStreamPacketDescription *d) {
    (void)user; (void)bytes;
    for (UInt32 i = 0; d && i < n && packetCount < 4096 && packetBytes + d[i].mDataByteSize <= sizeof packetData; i++) {
        memcpy(packetData + packetBytes, (const char *)data + d[i].mStartOffset, d[i].mDataByteSize);
        packetDescs[packetCount] = d[i];
        packetDescs[packetCount].mStartOffset = packetBytes;
        packetBytes += d[i].mDataByteSize;
        packetCount++;
    }
}

/* ---- callbacks ---- */
static int handedBack;
static OSStatus reenqueueStatus = 1;
static int reenqueue;
static void outputCallback(void *user, AudioQueueRef q, AudioQueueBufferRef b) {
    (void)user;
    handedBack++;
    if (reenqueue) {
        /* From the callback a reset calls: Apple's rule, no enqueue during Reset/Stop. */
        reenqueueStatus = AudioQueueEnqueueBuffer(q, b, 0, NULL);
        reenqueue = 0;
    }
}
static void inputCallback(void *user, AudioQueueRef q, AudioQueueBufferRef b, const AudioTimeStamp *t, UInt32 n,
                          const AudioStreamPacketDescription *d) {
    (void)user; (void)q; (void)b; (void)t; (void)n; (void)d;
}

static AudioStreamBasicDescription pcm(Float64 rate, UInt32 bytes, UInt32 flags) {
    AudioStreamBasicDescription f;
    memset(&f, 0, sizeof f);
    f.mSampleRate = rate;
    f.mFormatID = kAudioFormatLinearPCM;
    f.mFormatFlags = flags;
    f.mBytesPerPacket = f.mBytesPerFrame = 2 * bytes;
    f.mFramesPerPacket = 1;
    f.mChannelsPerFrame = 2;
    f.mBitsPerChannel = 8 * bytes;
    return f;
}

static UInt32 getU32(AudioQueueRef q, AudioQueuePropertyID id, OSStatus *status) {
    UInt32 v = 0xDEADBEEF, size = sizeof v;
    *status = AudioQueueGetProperty(q, id, &v, &size);
    if (*status == noErr && size != 4) *status = -1;
    return v;
}

static void playbackPCM(void) {
    AudioStreamBasicDescription f = pcm(44100, 4, kAudioFormatFlagsNativeFloatPacked);
    AudioQueueRef q = NULL;
    EXPECT_STATUS(AudioQueueNewOutput(&f, outputCallback, NULL, NULL, NULL, 0, &q), noErr);
    if (!q) return;
    OSStatus st;
    AudioStreamBasicDescription got;
    UInt32 size = 0;
    EXPECT_STATUS(AudioQueueGetPropertySize(q, kAudioQueueProperty_StreamDescription, &size), noErr);
    EXPECT(size == sizeof got, "StreamDescription size %u", size);
    memset(&got, 0xAB, sizeof got);
    size = sizeof got;
    EXPECT_STATUS(AudioQueueGetProperty(q, kAudioQueueProperty_StreamDescription, &got, &size), noErr);
    EXPECT(memcmp(&got, &f, sizeof f) == 0, "StreamDescription is the queue's format");
    size = 8;
    EXPECT_STATUS(AudioQueueGetProperty(q, kAudioQueueProperty_StreamDescription, &got, &size), kAudioQueueErr_InvalidPropertySize);
    EXPECT_STATUS(AudioQueueSetProperty(q, kAudioQueueProperty_StreamDescription, &f, sizeof f), kAudioQueueErr_InvalidProperty);
    EXPECT(getU32(q, kAudioQueueProperty_MaximumOutputPacketSize, &st) == 8 && st == noErr, "PCM packets are 8 bytes");
    EXPECT(getU32(q, kAudioQueueProperty_ConverterError, &st) == 0 && st == noErr, "no converter error");
    EXPECT(getU32(q, kAudioQueueProperty_DecodeBufferSizeFrames, &st) == 4096 && st == noErr, "DecodeBufferSizeFrames default");
    UInt32 frames = 8192;
    EXPECT_STATUS(AudioQueueSetProperty(q, kAudioQueueProperty_DecodeBufferSizeFrames, &frames, 4), noErr);
    EXPECT(getU32(q, kAudioQueueProperty_DecodeBufferSizeFrames, &st) == 8192 && st == noErr, "DecodeBufferSizeFrames set");
    frames = 0;
    EXPECT_STATUS(AudioQueueSetProperty(q, kAudioQueueProperty_DecodeBufferSizeFrames, &frames, 4), kAudioQueueErr_InvalidPropertyValue);
    EXPECT_STATUS(AudioQueueSetProperty(q, kAudioQueueProperty_DecodeBufferSizeFrames, &frames, 2), kAudioQueueErr_InvalidPropertySize);
    EXPECT_STATUS(AudioQueueSetProperty(q, kAudioQueueProperty_MaximumOutputPacketSize, &frames, 4), kAudioQueueErr_InvalidProperty);

    /* Descriptions passed with PCM: ignored, as Apple's queue ignores them. */
    AudioQueueBufferRef b = NULL;
    EXPECT_STATUS(AudioQueueAllocateBuffer(q, 4096, &b), noErr);
    if (!b) return;
    b->mAudioDataByteSize = 4096;
    memset(b->mAudioData, 0, 4096);
    AudioStreamPacketDescription d[3] = {{0, 0, 8}, {8, 0, 8}, {16, 0, 8}};
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q, b, 3, d), noErr);
    /* The same buffer again before it came back. */
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q, b, 0, NULL), kAudioQueueErr_BufferEnqueuedTwice);
    /* A reset hands it back through the callback; enqueueing there is refused. */
    reenqueue = 1;
    handedBack = 0;
    EXPECT_STATUS(AudioQueueReset(q), noErr);
    EXPECT(handedBack == 1, "reset handed back %d buffers", handedBack);
    EXPECT(reenqueueStatus == kAudioQueueErr_EnqueueDuringReset, "enqueue from the reset's callback: %d", (int)reenqueueStatus);
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q, b, 0, NULL), noErr);
    /* The same during an immediate stop. */
    reenqueue = 1;
    reenqueueStatus = 1;
    EXPECT_STATUS(AudioQueueStop(q, true), noErr);
    EXPECT(reenqueueStatus == kAudioQueueErr_EnqueueDuringReset, "enqueue from the stop's callback: %d", (int)reenqueueStatus);

    /* 1000 buffers enqueued at once on one queue (64 used to be the most). */
    enum { many = 1000 };
    static AudioQueueBufferRef bufs[many];
    int ok = 0;
    for (int i = 0; i < many; i++) {
        if (AudioQueueAllocateBuffer(q, 256, &bufs[i]) != noErr) break;
        bufs[i]->mAudioDataByteSize = 256;
        memset(bufs[i]->mAudioData, 0, 256);
        if (AudioQueueEnqueueBuffer(q, bufs[i], 0, NULL) == noErr) ok++;
    }
    EXPECT(ok == many, "%d of %d buffers enqueued", ok, many);
    handedBack = 0;
    EXPECT_STATUS(AudioQueueReset(q), noErr);
    EXPECT(handedBack == many, "reset handed back %d", handedBack);
    EXPECT_STATUS(AudioQueueDispose(q, true), noErr);
}

/* Renders `q` offline (float stereo at 44.1 kHz) and counts the 1 kHz tone's rising zero
 * crossings in frames [from, to) of the left channel. */
static int crossings(AudioQueueRef q, int from, int to, float *peakOut) {
    AudioStreamBasicDescription out = pcm(44100, 4, kAudioFormatFlagsNativeFloatPacked);
    if (AudioQueueSetOfflineRenderFormat(q, &out, NULL) != noErr) return -1;
    AudioQueueBufferRef render = NULL;
    if (AudioQueueAllocateBuffer(q, 1024 * 8, &render) != noErr) return -2;
    static float left[64 * 1024];
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    t.mFlags = kAudioTimeStampSampleTimeValid;
    for (int chunk = 0; chunk * 1024 < to; chunk++) {
        t.mSampleTime = chunk * 1024;
        if (AudioQueueOfflineRender(q, &t, render, 1024) != noErr) return -3;
        const float *r = render->mAudioData;
        for (int i = 0; i < 1024; i++) left[chunk * 1024 + i] = r[2 * i];
    }
    int n = 0;
    float peak = 0;
    for (int i = from + 1; i < to; i++) {
        if (left[i - 1] < 0 && left[i] >= 0) n++;
        if (fabsf(left[i]) > peak) peak = fabsf(left[i]);
    }
    *peakOut = peak;
    return n;
}

static void playbackAAC(void) {
    AudioQueueRef q = NULL;
    EXPECT_STATUS(AudioQueueNewOutput(&aacFormat, outputCallback, NULL, NULL, NULL, 0, &q), noErr);
    if (!q) return;
    OSStatus st;
    EXPECT_STATUS(AudioQueueSetProperty(q, kAudioQueueProperty_MagicCookie, cookie, cookieSize), noErr);
    AudioStreamBasicDescription got;
    UInt32 size = sizeof got;
    EXPECT_STATUS(AudioQueueGetProperty(q, kAudioQueueProperty_StreamDescription, &got, &size), noErr);
    EXPECT(memcmp(&got, &aacFormat, sizeof got) == 0, "StreamDescription is the AAC format");
    EXPECT(getU32(q, kAudioQueueProperty_MaximumOutputPacketSize, &st) == 768 * 2 && st == noErr,
           "AAC: 6144 bits a channel, %u", getU32(q, kAudioQueueProperty_MaximumOutputPacketSize, &st));
    UInt32 frames = 65536;
    EXPECT_STATUS(AudioQueueSetProperty(q, kAudioQueueProperty_DecodeBufferSizeFrames, &frames, 4), noErr);

    /* 40 packets described in the buffer's own descriptions, 0/NULL passed. */
    AudioQueueBufferRef b = NULL;
    EXPECT_STATUS(AudioQueueAllocateBufferWithPacketDescriptions(q, 64 * 1024, 64, &b), noErr);
    if (!b) return;
    UInt32 n = packetCount < 40 ? packetCount : 40;
    UInt32 bytes = n < packetCount ? (UInt32)packetDescs[n].mStartOffset : packetBytes;
    memcpy(b->mAudioData, packetData, bytes);
    b->mAudioDataByteSize = bytes;
    memcpy(b->mPacketDescriptions, packetDescs, n * sizeof *packetDescs);
    b->mPacketDescriptionCount = n;
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q, b, 0, NULL), noErr);
    float peak = 0;
    int c = crossings(q, 4096, 28672, &peak);
    /* 24576 frames of 1000 Hz at 44.1 kHz: 557.3 periods. */
    EXPECT(peak > 0.05f && c >= 553 && c <= 561, "the buffer's own descriptions decode the tone: peak %f, %d crossings", peak, c);
    EXPECT(getU32(q, kAudioQueueProperty_ConverterError, &st) == 0 && st == noErr, "no converter error");
    EXPECT_STATUS(AudioQueueDispose(q, true), noErr);

    /* A 1024-byte buffer from AudioQueueAllocateBuffer (hidden room for 16) given 100
     * descriptions of 10-byte packets: taken (the room grows). The packets are not AAC: each
     * decodes to silence of its length and ConverterError tells ('bada'). */
    EXPECT_STATUS(AudioQueueNewOutput(&aacFormat, outputCallback, NULL, NULL, NULL, 0, &q), noErr);
    if (!q) return;
    EXPECT_STATUS(AudioQueueSetProperty(q, kAudioQueueProperty_MagicCookie, cookie, cookieSize), noErr);
    AudioQueueBufferRef small = NULL;
    EXPECT_STATUS(AudioQueueAllocateBuffer(q, 1024, &small), noErr);
    if (!small) return;
    static AudioStreamPacketDescription tiny[100];
    for (int i = 0; i < 100; i++) { tiny[i].mStartOffset = 10 * i; tiny[i].mDataByteSize = 10; tiny[i].mVariableFramesInPacket = 0; }
    memset(small->mAudioData, 0x5A, 1000);
    small->mAudioDataByteSize = 1000;
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q, small, 100, tiny), noErr);
    EXPECT(getU32(q, kAudioQueueProperty_ConverterError, &st) == 0x62616461 && st == noErr,
           "ConverterError after undecodable packets: %08x", getU32(q, kAudioQueueProperty_ConverterError, &st));
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q, small, 100, tiny), kAudioQueueErr_BufferEnqueuedTwice);
    EXPECT_STATUS(AudioQueueDispose(q, true), noErr);
}

static void recording(void) {
    /* Rate 0: the device's rate, which StreamDescription tells (libavo reads it). */
    AudioStreamBasicDescription f = pcm(0, 2, kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked);
    AudioQueueRef q = NULL;
    EXPECT_STATUS(AudioQueueNewInput(&f, inputCallback, NULL, NULL, NULL, 0, &q), noErr);
    if (!q) return;
    OSStatus st;
    AudioStreamBasicDescription got;
    UInt32 size = sizeof got;
    EXPECT_STATUS(AudioQueueGetProperty(q, kAudioQueueProperty_StreamDescription, &got, &size), noErr);
    EXPECT(size == sizeof got && got.mSampleRate == 44100 && got.mFormatID == kAudioFormatLinearPCM && got.mChannelsPerFrame == 2
           && got.mBytesPerFrame == 4 && got.mBitsPerChannel == 16, "recording format: %f Hz, %u bytes a frame", got.mSampleRate, got.mBytesPerFrame);
    EXPECT(getU32(q, kAudioQueueProperty_MaximumOutputPacketSize, &st) == 4 && st == noErr, "PCM recording: 4-byte packets");
    EXPECT(getU32(q, kAudioQueueProperty_ConverterError, &st) == 0 && st == noErr, "no converter error");
    getU32(q, kAudioQueueProperty_DecodeBufferSizeFrames, &st);
    EXPECT(st == kAudioQueueErr_InvalidProperty, "DecodeBufferSizeFrames on a recording queue: %d", (int)st);
    AudioQueueBufferRef b = NULL;
    EXPECT_STATUS(AudioQueueAllocateBuffer(q, 4096, &b), noErr);
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q, b, 0, NULL), noErr);
    EXPECT_STATUS(AudioQueueEnqueueBuffer(q, b, 0, NULL), kAudioQueueErr_BufferEnqueuedTwice);
    EXPECT_STATUS(AudioQueueDispose(q, true), noErr);

    AudioStreamBasicDescription aac;
    memset(&aac, 0, sizeof aac);
    aac.mSampleRate = 44100;
    aac.mFormatID = kAudioFormatMPEG4AAC;
    aac.mFramesPerPacket = 1024;
    aac.mChannelsPerFrame = 2;
    EXPECT_STATUS(AudioQueueNewInput(&aac, inputCallback, NULL, NULL, NULL, 0, &q), noErr);
    if (!q) return;
    UInt32 most = getU32(q, kAudioQueueProperty_MaximumOutputPacketSize, &st);
    EXPECT(st == noErr && most >= 768 * 2 && most < 4096, "AAC recording: largest packet %u", most);
    size = sizeof got;
    EXPECT_STATUS(AudioQueueGetProperty(q, kAudioQueueProperty_StreamDescription, &got, &size), noErr);
    EXPECT(got.mFormatID == kAudioFormatMPEG4AAC && got.mFramesPerPacket == 1024 && got.mSampleRate == 44100, "AAC recording format");
    EXPECT_STATUS(AudioQueueDispose(q, true), noErr);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    AudioFileStreamID s = NULL;
    EXPECT_STATUS(AudioFileStreamOpen(NULL, listener, packetsProc, kAudioFileAAC_ADTSType, &s), noErr);
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) AudioFileStreamParseBytes(s, (UInt32)n, chunk, 0);
    fclose(f);
    AudioFileStreamClose(s);
    EXPECT(packetCount > 80 && cookieSize == 2 && aacFormat.mFormatID == kAudioFormatMPEG4AAC, "%u packets, cookie %u bytes", packetCount, cookieSize);

    playbackPCM();
    playbackAAC();
    recording();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
