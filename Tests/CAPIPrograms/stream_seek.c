/* stream_seek.c — an AudioStreamer-style seek through Audio File Stream Services and an output
 * Audio Queue, written from Apple's documentation (issue 22). It does what AudioStreamer and
 * StreamingKit do:
 *
 *   1. feed the file's first bytes to AudioFileStreamParseBytes (4 KiB at a time, as from a
 *      socket) until ReadyToProducePackets and at least 50 packets (AudioStreamer's
 *      BitRateEstimationMinPackets), dropping those packets;
 *   2. read DataOffset, DataFormat, AudioDataPacketCount, AudioDataByteCount and BitRate; the
 *      duration is packets × packet duration when the count is known, else the audio bytes over
 *      the bit rate (the players' calculatedBitRate: the average of the packets seen once there
 *      are more than 50, else the BitRate property);
 *   3. seekPacket = floor((duration / 2) / packetDuration); AudioFileStreamSeek(seekPacket) →
 *      outDataByteOffset and flags; read from DataOffset + outDataByteOffset with
 *      kAudioFileStreamParseFlag_Discontinuity (AudioStreamer: seekByteOffset =
 *      packetAlignedByteOffset + dataOffset);
 *   4. fill queue buffers with what the packets callback gives (with its descriptions, as
 *      AudioStreamer's handleAudioPackets does), on an output queue made from the stream's data
 *      format and magic cookie, rendered offline (AudioQueueSetOfflineRenderFormat, float32 at
 *      the file's rate and channel count).
 *
 * Usage: stream_seek FILE REFERENCE POSITIONS PREROLL [wrong]
 *   REFERENCE  ffmpeg's decode of the whole FILE, float32 interleaved, nothing trimmed
 *              (-flags2 +skip_manual): packet k's first frame is frame k × framesPerPacket.
 *   POSITIONS  ffprobe's packet positions (one file offset a line; blank lines and trailing
 *              commas ignored), or "-" for PCM (packet k at DataOffset + k × bytesPerPacket).
 *   PREROLL    packets the decoder needs after a discontinuity before its output is the whole
 *              file's: 0 for PCM and ALAC, 1 for AAC (the MDCT overlap with the packet before),
 *              "mp3" for MP3: counted from the packets delivered, as many as hold 511 bytes of
 *              main data (the bit reservoir's reach; 255 for MPEG-2), then two granules more
 *              (the IMDCT overlap and the synthesis filter's history): one frame in MPEG-1,
 *              two in MPEG-2/2.5.
 *   wrong      expect the packet after the right one: the judgement must then fail.
 *
 * The packet expected first: an exact seek (no OffsetIsEstimated) must answer the packet's own
 * position, and that packet plays first. An estimated seek lands anywhere; the parser resumes at
 * the first packet starting at or after DataOffset + outDataByteOffset, and that packet plays
 * first. The judgement: from PREROLL packets after it, one second of the rendered audio equals
 * the reference from the expected packet's frame (the largest difference is printed and must be
 * at most 1e-6), and it does not equal the reference one, two or three packets earlier or later
 * (so an off-by-one start is caught).
 *
 * Usage: stream_seek FILE - optm
 *   A file a stream parser can't play (an MP4 whose moov follows mdat, a CAF whose pakt follows
 *   data): parsing all of it must answer kAudioFileStreamError_NotOptimized, ReadyToProducePackets
 *   must not come, and AudioFileStreamSeek must fail rather than answer an offset.
 *
 * Environment: STREAM_SEEK_AT, the fraction to seek to (0.5); STREAM_SEEK_FEED, bytes a read
 * (4096); STREAM_SEEK_LINEAR set: when the answer is estimated, read instead from DataOffset +
 * the fraction of the audio bytes (AudioStreamer, StreamingKit); STREAM_SEEK_DUMP, a file to
 * write the render to (float32).
 *
 * Prints "name value" result lines and "N passed, N failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

static UInt32 FEED = 4096; /* bytes a read; STREAM_SEEK_FEED changes it */
#define COMPARE_SECONDS 1

static unsigned char *file;
static long fileLength;
static int ready;

/* Before the seek: packets counted and dropped (the players' processedPacketsCount and
 * processedPacketsSizeTotal). */
static int seeking = 0;
static unsigned long processedPackets;
static double processedBytes;

/* After the seek: queue buffers filled as AudioStreamer's handleAudioPackets does. */
static AudioQueueRef queue;
static AudioQueueBufferRef fill;
#define MAX_DESCRIPTIONS 512
static AudioStreamPacketDescription descriptions[MAX_DESCRIPTIONS];
static UInt32 packetsFilled, bytesFilled, bufferSize;
static unsigned long enqueuedPackets, enqueuedFrames, buffersEnqueued;
static UInt32 framesPerPacket;
static OSStatus queueError;
/* The first packets after the seek: their sizes and MP3 side information sizes. */
#define RECORDED 256
static UInt32 recordedSize[RECORDED], recordedMainData[RECORDED];
static int recorded, mpeg1 = 1;

static void outputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b) {
    (void)user; (void)aq; (void)b;
}

static void listener(void *user, AudioFileStreamID stream, AudioFileStreamPropertyID id, AudioFileStreamPropertyFlags *flags) {
    (void)user; (void)stream; (void)flags;
    if (id == kAudioFileStreamProperty_ReadyToProducePackets) ready = 1;
}

static void enqueueFill(void) {
    if (!fill || bytesFilled == 0) return;
    fill->mAudioDataByteSize = bytesFilled;
    OSStatus s = AudioQueueEnqueueBuffer(queue, fill, packetsFilled, packetsFilled ? descriptions : NULL);
    if (s != noErr && queueError == noErr) queueError = s;
    buffersEnqueued++;
    fill = NULL;
    packetsFilled = bytesFilled = 0;
}

static int takeBuffer(void) {
    if (fill) return 1;
    OSStatus s = AudioQueueAllocateBuffer(queue, bufferSize, &fill);
    if (s != noErr) { if (queueError == noErr) queueError = s; return 0; }
    return 1;
}

static void packetsProc(void *user, UInt32 bytes, UInt32 n, const void *data, AudioStreamPacketDescription *d) {
    (void)user;
    if (!seeking) {
        processedPackets += n;
        processedBytes += bytes;
        return;
    }
    if (!d) {
        /* Constant-size packets (PCM): copy the bytes, buffer by buffer. */
        const unsigned char *p = data;
        while (bytes > 0) {
            if (!takeBuffer()) return;
            UInt32 take = bufferSize - bytesFilled < bytes ? bufferSize - bytesFilled : bytes;
            memcpy((unsigned char *)fill->mAudioData + bytesFilled, p, take);
            bytesFilled += take;
            p += take;
            bytes -= take;
            if (bytesFilled == bufferSize) enqueueFill();
        }
        enqueuedPackets += n;
        enqueuedFrames += (unsigned long)n * framesPerPacket;
        return;
    }
    for (UInt32 i = 0; i < n; i++) {
        UInt32 size = d[i].mDataByteSize;
        if (recorded < RECORDED && size >= 4) {
            /* MPEG Layer III: header, CRC, side information (MPEG-1: 17 bytes mono, 32 other;
             * MPEG-2/2.5: 9 and 17), then the main data the bit reservoir holds. */
            const unsigned char *h = (const unsigned char *)data + d[i].mStartOffset;
            int one = ((h[1] >> 3) & 3) == 3, mono = (h[3] >> 6) == 3, crc = !(h[1] & 1);
            UInt32 side = 4 + (crc ? 2 : 0) + (one ? (mono ? 17 : 32) : (mono ? 9 : 17));
            mpeg1 = one;
            recordedSize[recorded] = size;
            recordedMainData[recorded] = size > side ? size - side : 0;
            recorded++;
        }
        if (size > bufferSize) { if (queueError == noErr) queueError = -1; return; }
        if (fill && (bufferSize - bytesFilled < size || packetsFilled == MAX_DESCRIPTIONS)) enqueueFill();
        if (!takeBuffer()) return;
        memcpy((unsigned char *)fill->mAudioData + bytesFilled, (const unsigned char *)data + d[i].mStartOffset, size);
        descriptions[packetsFilled] = d[i];
        descriptions[packetsFilled].mStartOffset = bytesFilled;
        bytesFilled += size;
        packetsFilled++;
        enqueuedPackets++;
        enqueuedFrames += d[i].mVariableFramesInPacket ? d[i].mVariableFramesInPacket : framesPerPacket;
    }
}

static int readFile(const char *path, unsigned char **out, long *length) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return 0; }
    fseek(f, 0, SEEK_END);
    *length = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = malloc(*length > 0 ? (size_t)*length : 1);
    size_t got = fread(*out, 1, (size_t)*length, f);
    fclose(f);
    return got == (size_t)*length;
}

static const char *fourcc(UInt32 v, char *s) {
    for (int i = 0; i < 4; i++) { unsigned char c = (unsigned char)(v >> (24 - 8 * i)); s[i] = c >= 32 && c < 127 ? (char)c : '?'; }
    s[4] = 0;
    return s;
}

/* A file the stream parser can't play: a clear 'optm', no hang, no packets promised. */
static int notStreamable(void) {
    AudioFileStreamID s = NULL;
    EXPECT_STATUS(AudioFileStreamOpen(NULL, listener, packetsProc, 0, &s), noErr);
    OSStatus st = noErr;
    long at = 0;
    while (at < fileLength && st == noErr) {
        UInt32 n = fileLength - at < FEED ? (UInt32)(fileLength - at) : FEED;
        st = AudioFileStreamParseBytes(s, n, file + at, 0);
        at += n;
    }
    char c[5];
    printf("not streamable: '%s' after %ld of %ld bytes\n", fourcc((UInt32)st, c), at, fileLength);
    EXPECT(st == kAudioFileStreamError_NotOptimized, "parsing answered '%s' (%d), want 'optm'", c, (int)st);
    EXPECT(!ready, "ReadyToProducePackets was sent");
    SInt64 offset = -1;
    AudioFileStreamSeekFlags flags = 0;
    OSStatus seek = AudioFileStreamSeek(s, 0, &offset, &flags);
    EXPECT(seek != noErr, "AudioFileStreamSeek answered offset %lld", (long long)offset);
    EXPECT_STATUS(AudioFileStreamParseBytes(s, 1, file, 0), kAudioFileStreamError_NotOptimized);
    EXPECT_STATUS(AudioFileStreamClose(s), noErr);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: stream_seek FILE REFERENCE POSITIONS PREROLL [wrong] | FILE - optm\n"); return 2; }
    if (getenv("STREAM_SEEK_FEED") && atoi(getenv("STREAM_SEEK_FEED")) > 0) FEED = (UInt32)atoi(getenv("STREAM_SEEK_FEED"));
    if (!readFile(argv[1], &file, &fileLength)) return 2;
    if (strcmp(argv[2], "-") == 0) return notStreamable();
    if (argc < 5) return 2;
    int mp3Preroll = strcmp(argv[4], "mp3") == 0;
    int preroll = mp3Preroll ? 0 : atoi(argv[4]);
    int wrong = argc > 5 && strcmp(argv[5], "wrong") == 0;

    unsigned char *refBytes = NULL;
    long refLength = 0;
    if (!readFile(argv[2], &refBytes, &refLength)) return 2;
    const float *reference = (const float *)refBytes;

    long long *positions = NULL;
    long positionCount = 0;
    if (strcmp(argv[3], "-") != 0) {
        FILE *pf = fopen(argv[3], "r");
        if (!pf) { perror(argv[3]); return 2; }
        char line[256];
        long capacity = 0;
        while (fgets(line, sizeof line, pf)) {
            if (line[0] < '0' || line[0] > '9') continue;
            if (positionCount == capacity) {
                capacity = capacity ? 2 * capacity : 1024;
                positions = realloc(positions, (size_t)capacity * sizeof *positions);
            }
            positions[positionCount++] = strtoll(line, NULL, 10);
        }
        fclose(pf);
    }

    /* 1. The first part of the file, until the parser is ready and 50 packets went by. */
    AudioFileStreamID stream = NULL;
    EXPECT_STATUS(AudioFileStreamOpen(NULL, listener, packetsProc, 0, &stream), noErr);
    long at = 0;
    while (at < fileLength && (!ready || processedPackets <= 50)) {
        UInt32 n = fileLength - at < FEED ? (UInt32)(fileLength - at) : FEED;
        OSStatus st = AudioFileStreamParseBytes(stream, n, file + at, 0);
        if (st != noErr) { EXPECT(0, "parse at %ld: %d", at, (int)st); return 1; }
        at += n;
    }
    EXPECT(ready, "ReadyToProducePackets after %ld bytes", at);
    if (!ready) return 1;

    /* 2. What the players read. */
    SInt64 dataOffset = 0;
    UInt32 size = sizeof dataOffset;
    EXPECT_STATUS(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_DataOffset, &size, &dataOffset), noErr);
    AudioStreamBasicDescription asbd;
    size = sizeof asbd;
    EXPECT_STATUS(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_DataFormat, &size, &asbd), noErr);
    UInt64 packetCount = 0, byteCount = 0;
    size = sizeof packetCount;
    int havePacketCount = AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_AudioDataPacketCount, &size, &packetCount) == noErr;
    size = sizeof byteCount;
    int haveByteCount = AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_AudioDataByteCount, &size, &byteCount) == noErr;
    UInt32 bitRate = 0;
    size = sizeof bitRate;
    AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_BitRate, &size, &bitRate);
    framesPerPacket = asbd.mFramesPerPacket;
    char c[5];
    printf("format %s %.0f Hz %u ch, flags %#x, %u bits, %u frames/packet, %u bytes/packet; data offset %lld\n",
           fourcc(asbd.mFormatID, c), asbd.mSampleRate, asbd.mChannelsPerFrame, asbd.mFormatFlags, asbd.mBitsPerChannel,
           asbd.mFramesPerPacket, asbd.mBytesPerPacket, (long long)dataOffset);
    EXPECT(framesPerPacket > 0 && asbd.mSampleRate > 0, "frames per packet %u", framesPerPacket);
    if (framesPerPacket == 0 || asbd.mSampleRate <= 0) return 1;

    double packetDuration = framesPerPacket / asbd.mSampleRate;
    double calculatedBitRate = processedPackets > 50 ? (processedBytes / processedPackets) / packetDuration * 8 : bitRate;
    double duration;
    if (havePacketCount && packetCount > 0) duration = packetCount * packetDuration;
    else {
        double audioBytes = haveByteCount ? (double)byteCount : (double)(fileLength - dataOffset);
        duration = calculatedBitRate > 0 ? audioBytes / (calculatedBitRate / 8) : 0;
    }
    printf("packets %s %llu, bytes %s %llu, bit rate %u (calculated %.0f), duration %.4f s\n",
           havePacketCount ? "known" : "unknown", (unsigned long long)packetCount, haveByteCount ? "known" : "unknown",
           (unsigned long long)byteCount, bitRate, calculatedBitRate, duration);
    EXPECT(duration > 1, "duration %f", duration);

    /* 3. Seek to 50 % (or STREAM_SEEK_AT, a fraction). */
    double fraction = getenv("STREAM_SEEK_AT") ? atof(getenv("STREAM_SEEK_AT")) : 0.5;
    SInt64 seekPacket = (SInt64)floor(duration * fraction / packetDuration);
    SInt64 byteOffset = -1;
    AudioFileStreamSeekFlags seekFlags = 0;
    EXPECT_STATUS(AudioFileStreamSeek(stream, seekPacket, &byteOffset, &seekFlags), noErr);
    int estimated = (seekFlags & kAudioFileStreamSeekFlag_OffsetIsEstimated) != 0;
    SInt64 seekByteOffset = byteOffset + dataOffset;
    if (estimated && getenv("STREAM_SEEK_LINEAR")) {
        /* What AudioStreamer and StreamingKit do with an estimated answer: ignore it and read from
         * the same fraction of the audio bytes (AudioStreamer: of the file after DataOffset). */
        double audioBytes = haveByteCount ? (double)byteCount : (double)(fileLength - dataOffset);
        seekByteOffset = dataOffset + (SInt64)(fraction * audioBytes);
        printf("the players' linear estimate instead: file offset %lld\n", (long long)seekByteOffset);
    }
    printf("seek packet %lld -> data byte %lld%s, file offset %lld\n", (long long)seekPacket, (long long)byteOffset,
           estimated ? " (estimated)" : " (exact)", (long long)seekByteOffset);
    AudioBytePacketTranslation bp;
    memset(&bp, 0, sizeof bp);
    bp.mPacket = seekPacket;
    size = sizeof bp;
    EXPECT_STATUS(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_PacketToByte, &size, &bp), noErr);
    EXPECT(bp.mByte == byteOffset && ((bp.mFlags & kBytePacketTranslationFlag_IsEstimate) != 0) == estimated,
           "PacketToByte %lld (flags %u) agrees with the seek", (long long)bp.mByte, bp.mFlags);

    /* The packet that must play first. */
    SInt64 expected = seekPacket;
    if (positions) {
        long q = 0;
        while (q < positionCount && positions[q] < seekByteOffset) q++;
        EXPECT(q < positionCount, "no packet at or after %lld", (long long)seekByteOffset);
        if (!estimated) EXPECT(q == seekPacket && positions[q] == seekByteOffset,
                               "exact seek: packet %lld is at %lld, the seek answered %lld",
                               (long long)seekPacket, seekPacket < positionCount ? positions[seekPacket] : -1LL, (long long)seekByteOffset);
        expected = q;
        printf("first packet at or after the offset: %ld (at %lld; %+lld from the packet asked for, %lld bytes after the offset)\n",
               q, q < positionCount ? positions[q] : -1LL, (long long)(q - seekPacket),
               q < positionCount ? positions[q] - seekByteOffset : -1LL);
    } else {
        EXPECT(!estimated && asbd.mBytesPerPacket > 0 && byteOffset == seekPacket * (SInt64)asbd.mBytesPerPacket,
               "PCM seek: data byte %lld, want %lld exact", (long long)byteOffset, (long long)(seekPacket * (SInt64)asbd.mBytesPerPacket));
    }
    if (wrong) expected += 1;

    /* 4. An output queue from the stream's format and cookie, fed from the offset. */
    EXPECT_STATUS(AudioQueueNewOutput(&asbd, outputCallback, NULL, NULL, NULL, 0, &queue), noErr);
    if (!queue) return 1;
    /* The offline format first, as Apple's AQOfflineRenderTest does: setting it moves the queue
     * to an engine at the format's rate, stopped, which gives back what was enqueued
     * (docs/c-api.md, "Offline rendering of any queue"). */
    UInt32 channels = asbd.mChannelsPerFrame;
    AudioStreamBasicDescription pcm;
    memset(&pcm, 0, sizeof pcm);
    pcm.mSampleRate = asbd.mSampleRate;
    pcm.mFormatID = kAudioFormatLinearPCM;
    pcm.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    pcm.mBytesPerPacket = pcm.mBytesPerFrame = 4 * channels;
    pcm.mFramesPerPacket = 1;
    pcm.mChannelsPerFrame = channels;
    pcm.mBitsPerChannel = 32;
    EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(queue, &pcm, NULL), noErr);
    UInt32 cookieSize = 0;
    if (AudioFileStreamGetPropertyInfo(stream, kAudioFileStreamProperty_MagicCookieData, &cookieSize, NULL) == noErr && cookieSize > 0) {
        void *cookie = malloc(cookieSize);
        EXPECT_STATUS(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_MagicCookieData, &cookieSize, cookie), noErr);
        EXPECT_STATUS(AudioQueueSetProperty(queue, kAudioQueueProperty_MagicCookie, cookie, cookieSize), noErr);
        free(cookie);
    }
    UInt32 upper = 0;
    size = sizeof upper;
    AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_PacketSizeUpperBound, &size, &upper);
    bufferSize = upper > 32768 ? 2 * upper : 65536;
    /* Whole packets in a buffer: 24-bit stereo PCM has 6-byte packets. */
    if (asbd.mBytesPerPacket > 0) bufferSize -= bufferSize % asbd.mBytesPerPacket;

    unsigned long compareFrames = (unsigned long)(COMPARE_SECONDS * asbd.mSampleRate);
    /* MP3's pre-roll is counted in bytes: a frame's main data may begin up to 511 bytes
     * (MPEG-1; 255 for MPEG-2/2.5: main_data_begin's 9 or 8 bits) before its header, in the
     * bit reservoir of the frames before it. The first frame with that many bytes of main data
     * delivered before it decodes whole, but its first granule overlaps (IMDCT) the granule
     * before, and the granule after that one still has the first one's subband samples in its
     * synthesis filter's history: the output is the whole file's from two granules after the
     * first whole frame starts, i.e. one frame later in MPEG-1 (two granules a frame), two in
     * MPEG-2/2.5 (one). 40 packets cover any case. */
    unsigned long wantFrames = (mp3Preroll ? 40UL : (unsigned long)preroll) * framesPerPacket + compareFrames + 4UL * framesPerPacket;
    seeking = 1;
    at = seekByteOffset;
    int first = 1;
    while (at < fileLength && enqueuedFrames < wantFrames && queueError == noErr) {
        UInt32 n = fileLength - at < FEED ? (UInt32)(fileLength - at) : FEED;
        OSStatus st = AudioFileStreamParseBytes(stream, n, file + at, first ? kAudioFileStreamParseFlag_Discontinuity : 0);
        if (st != noErr) { EXPECT(0, "parse after the seek at %ld: %d", at, (int)st); break; }
        first = 0;
        at += n;
    }
    enqueueFill();
    EXPECT(queueError == noErr, "queue: %d", (int)queueError);
    printf("after the seek: %lu packets (%lu frames) in %lu buffers from %ld bytes\n", enqueuedPackets, enqueuedFrames,
           buffersEnqueued, at - (long)seekByteOffset);
    EXPECT(enqueuedFrames >= wantFrames, "only %lu frames after the seek (want %lu)", enqueuedFrames, wantFrames);
    if (mp3Preroll) {
        UInt32 reservoir = mpeg1 ? 511 : 255, before = 0;
        int whole = 0;
        while (whole < recorded && before < reservoir) before += recordedMainData[whole++];
        preroll = whole + (mpeg1 ? 1 : 2);
        printf("MP3 pre-roll: packet %d is the first with %u bytes of main data before it (reservoir %u); pre-roll %d packets (sizes",
               whole, before, reservoir, preroll);
        for (int i = 0; i <= whole && i < recorded; i++) printf(" %u", recordedSize[i]);
        printf(")\n");
    }
    unsigned long prerollFrames = (unsigned long)preroll * framesPerPacket;
    EXPECT_STATUS(AudioQueueFlush(queue), noErr);

    enum { CHUNK = 4096 };
    AudioQueueBufferRef render = NULL;
    EXPECT_STATUS(AudioQueueAllocateBuffer(queue, CHUNK * 4 * channels, &render), noErr);
    unsigned long renderFrames = (prerollFrames + compareFrames + CHUNK - 1) / CHUNK * CHUNK;
    float *out = calloc(renderFrames * channels, sizeof(float));
    AudioTimeStamp t;
    memset(&t, 0, sizeof t);
    t.mFlags = kAudioTimeStampSampleTimeValid;
    for (unsigned long done = 0; render && done < renderFrames; done += CHUNK) {
        t.mSampleTime = (Float64)done;
        OSStatus st = AudioQueueOfflineRender(queue, &t, render, CHUNK);
        if (st != noErr) { EXPECT(0, "AudioQueueOfflineRender = %d", (int)st); break; }
        memcpy(out + done * channels, render->mAudioData, (size_t)CHUNK * 4 * channels);
    }

    if (getenv("STREAM_SEEK_DUMP")) {
        FILE *d = fopen(getenv("STREAM_SEEK_DUMP"), "wb");
        if (d) { fwrite(out, sizeof(float), renderFrames * channels, d); fclose(d); }
    }

    /* 5. The judgement: the rendered audio against ffmpeg's decode of the whole file. */
    long referenceFrames = refLength / (long)(4 * channels);
    double largest[7];
    for (int shift = -3; shift <= 3; shift++) {
        long base = (long)(expected + shift) * (long)framesPerPacket;
        double m = INFINITY;
        if (base >= 0 && base + (long)prerollFrames + (long)compareFrames <= referenceFrames) {
            m = 0;
            for (unsigned long i = prerollFrames; i < prerollFrames + compareFrames; i++)
                for (UInt32 ch = 0; ch < channels; ch++) {
                    double d = fabs((double)out[i * channels + ch] - (double)reference[(base + (long)i) * channels + ch]);
                    if (d > m) m = d;
                }
        }
        largest[shift + 3] = m;
    }
    printf("largest difference from the reference at the packet expected %+d: ", wrong ? 1 : 0);
    for (int shift = -3; shift <= 3; shift++) printf("%s%+d: %.3g", shift == -3 ? "" : ", ", shift, largest[shift + 3]);
    printf("\n");
    /* The pre-roll packets, for the record. */
    for (int p = 0; p < preroll; p++) {
        double m = 0;
        long base = (long)expected * (long)framesPerPacket;
        for (unsigned long i = (unsigned long)p * framesPerPacket; i < (unsigned long)(p + 1) * framesPerPacket; i++)
            for (UInt32 ch = 0; ch < channels; ch++) {
                double d = fabs((double)out[i * channels + ch] - (double)reference[(base + (long)i) * channels + ch]);
                if (d > m) m = d;
            }
        printf("pre-roll packet %d: largest difference %.3g\n", p, m);
    }
    EXPECT(largest[3] <= 1e-6, "the audio after %d pre-roll packets is not the reference's from packet %lld: largest difference %g",
           preroll, (long long)expected, largest[3]);
    for (int shift = -3; shift <= 3; shift++)
        if (shift != 0) EXPECT(largest[shift + 3] > 1e-3, "the reference %+d packets away matches too (%g): the signal can't tell packets apart",
                               shift, largest[shift + 3]);
    printf("result: seek %lld, %s, data byte %lld, first packet %lld (%+lld), largest difference %.3g\n", (long long)seekPacket,
           estimated ? "estimated" : "exact", (long long)byteOffset, (long long)(expected - wrong), (long long)(expected - wrong - seekPacket),
           largest[3]);

    EXPECT_STATUS(AudioQueueDispose(queue, true), noErr);
    EXPECT_STATUS(AudioFileStreamClose(stream), noErr);
    free(out);
    free(positions);
    free(refBytes);
    free(file);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
