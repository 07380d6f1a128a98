/* conformance_filestream.c — Audio File Stream Services through the C API, written from the
 * reference (issue 12): every function, the properties of an ADTS AAC file (argv[1]: 44.1 kHz
 * stereo), translations, seeking, and the result codes. Prints "N passed, N failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <stdio.h>

static int passed, failed;
#define EXPECT(cond, ...) do { if (cond) passed++; else { failed++; printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
#define EXPECT_STATUS(call, want) do { OSStatus s_ = (call); EXPECT(s_ == (want), "%s = %d, want %d", #call, (int)s_, (int)(want)); } while (0)

static AudioFileStreamID theStream;
static char keptCookie[256];
static UInt32 keptCookieSize;
static void noCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef b) { (void)user; (void)aq; (void)b; }
static unsigned long packets, packetCalls, cookieBytes;
static int ready, nestedChecked, descriptionsOk = 1;

static void listener(void *user, AudioFileStreamID stream, AudioFileStreamPropertyID id, AudioFileStreamPropertyFlags *flags) {
    (void)user;
    if (id == kAudioFileStreamProperty_MagicCookieData) {
        UInt32 size = 0;
        Boolean writable = 1;
        EXPECT_STATUS(AudioFileStreamGetPropertyInfo(stream, id, &size, &writable), noErr);
        EXPECT(size > 0 && writable == 0, "cookie size %u writable %d", size, writable);
        char cookie[256];
        size = sizeof cookie;
        EXPECT_STATUS(AudioFileStreamGetProperty(stream, id, &size, cookie), noErr);
        cookieBytes = size;
        memcpy(keptCookie, cookie, size);
        keptCookieSize = size;
        EXPECT(*flags & kAudioFileStreamPropertyFlag_PropertyIsCached, "the cookie stays readable after its notification");
    }
    if (id == kAudioFileStreamProperty_ReadyToProducePackets) {
        /* As Apple's AudioFileStreamExample does: the cookie, read when the parser is ready,
         * without CacheProperty having been set at its own notification. */
        UInt32 size = 0;
        EXPECT_STATUS(AudioFileStreamGetPropertyInfo(stream, kAudioFileStreamProperty_MagicCookieData, &size, NULL), noErr);
        char cookie[256];
        EXPECT(size == keptCookieSize, "cookie size at ready %u, at its notification %u", size, keptCookieSize);
        size = sizeof cookie;
        EXPECT_STATUS(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_MagicCookieData, &size, cookie), noErr);
        EXPECT(size == keptCookieSize && memcmp(cookie, keptCookie, size) == 0, "the cookie read at ready is the cookie");
        EXPECT(*flags & kAudioFileStreamPropertyFlag_PropertyIsCached, "ready is cached");
        ready++;
    }
}

/* The first packets, kept for the queue part. */
#define KEPT 40
static unsigned char keptData[KEPT * 1536];
static AudioStreamPacketDescription kept[KEPT];
static UInt32 keptCount, keptBytes;

static void packetsProc(void *user, UInt32 bytes, UInt32 n, const void *data, AudioStreamPacketDescription *d) {
    (void)user;
    for (UInt32 i = 0; d && i < n && keptCount < KEPT && keptBytes + d[i].mDataByteSize <= sizeof keptData; i++) {
        memcpy(keptData + keptBytes, (const char *)data + d[i].mStartOffset, d[i].mDataByteSize);
        kept[keptCount] = d[i];
        kept[keptCount].mStartOffset = keptBytes;
        keptBytes += d[i].mDataByteSize;
        keptCount++;
    }
    packets += n;
    packetCalls++;
    if (!d) descriptionsOk = 0;
    else for (UInt32 i = 0; i < n; i++) if (d[i].mStartOffset + d[i].mDataByteSize > bytes) descriptionsOk = 0;
    if (!nestedChecked) {
        nestedChecked = 1;
        EXPECT_STATUS(AudioFileStreamParseBytes(theStream, 0, NULL, 0), kAudioFileStreamError_IllegalOperation);
    }
}

/* AudioFileStreamSeek's offset counts from the start of the audio data, as Apple's does:
 * a WAVE file (44-byte header, 16-bit stereo, sample k of each channel = k) seeks to packet 900
 * at data byte 3600; the player adds kAudioFileStreamProperty_DataOffset (44) and parses from
 * there: the first packet delivered is exactly packet 900. */
static short wavFirst = -1;
static unsigned long wavPackets;
static void wavListener(void *user, AudioFileStreamID stream, AudioFileStreamPropertyID id, AudioFileStreamPropertyFlags *flags) {
    (void)user; (void)stream; (void)id; (void)flags;
}
static void wavPacketsProc(void *user, UInt32 bytes, UInt32 n, const void *data, AudioStreamPacketDescription *d) {
    (void)user; (void)bytes; (void)d;
    if (wavPackets == 0 && n > 0) wavFirst = ((const short *)data)[0];
    wavPackets += n;
}
static void put32(unsigned char *p, UInt32 v) { p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24; }
static void seekIsRelativeToTheAudioData(void) {
    enum { frames = 1000 };
    static unsigned char file[44 + frames * 4];
    memcpy(file, "RIFF", 4); put32(file + 4, sizeof file - 8); memcpy(file + 8, "WAVEfmt ", 8);
    put32(file + 16, 16); put32(file + 20, 1 | (2 << 16)); put32(file + 24, 44100); put32(file + 28, 44100 * 4);
    put32(file + 32, 4 | (16 << 16)); memcpy(file + 36, "data", 4); put32(file + 40, frames * 4);
    for (int k = 0; k < frames; k++) { short v = (short)k; memcpy(file + 44 + 4 * k, &v, 2); memcpy(file + 46 + 4 * k, &v, 2); }
    AudioFileStreamID w = NULL;
    EXPECT_STATUS(AudioFileStreamOpen(NULL, wavListener, wavPacketsProc, 0, &w), noErr);
    EXPECT_STATUS(AudioFileStreamParseBytes(w, 100, file, 0), noErr);
    SInt64 dataOffset = -1, byteOffset = -1;
    UInt32 size = sizeof dataOffset;
    EXPECT_STATUS(AudioFileStreamGetProperty(w, kAudioFileStreamProperty_DataOffset, &size, &dataOffset), noErr);
    EXPECT(dataOffset == 44, "WAVE data offset %lld", (long long)dataOffset);
    AudioFileStreamSeekFlags flags = 99;
    EXPECT_STATUS(AudioFileStreamSeek(w, 900, &byteOffset, &flags), noErr);
    EXPECT(byteOffset == 3600 && flags == 0, "seek to packet 900: data byte %lld (want 3600), flags %u", (long long)byteOffset, flags);
    AudioBytePacketTranslation bp;
    memset(&bp, 0, sizeof bp);
    bp.mPacket = 900;
    size = sizeof bp;
    EXPECT_STATUS(AudioFileStreamGetProperty(w, kAudioFileStreamProperty_PacketToByte, &size, &bp), noErr);
    EXPECT(bp.mByte == byteOffset, "PacketToByte %lld agrees with the seek", (long long)bp.mByte);
    wavPackets = 0;
    wavFirst = -1;
    SInt64 at = byteOffset + dataOffset;
    EXPECT_STATUS(AudioFileStreamParseBytes(w, (UInt32)(sizeof file - at), file + at, kAudioFileStreamParseFlag_Discontinuity), noErr);
    EXPECT(wavFirst == 900 && wavPackets == 100, "after the seek: first packet %d (want 900), %lu packets", wavFirst, wavPackets);
    EXPECT_STATUS(AudioFileStreamSeek(w, 0, &byteOffset, &flags), noErr);
    EXPECT(byteOffset == 0, "packet 0 is data byte 0: %lld", (long long)byteOffset);
    EXPECT_STATUS(AudioFileStreamClose(w), noErr);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    AudioFileStreamID s = NULL, other = NULL;
    EXPECT_STATUS(AudioFileStreamOpen(NULL, NULL, packetsProc, 0, &s), kAudio_ParamError);
    EXPECT_STATUS(AudioFileStreamOpen(NULL, listener, packetsProc, 0x78787878, &other), kAudioFileStreamError_UnsupportedFileType);
    EXPECT_STATUS(AudioFileStreamOpen(NULL, listener, packetsProc, kAudioFileAAC_ADTSType, &s), noErr);
    theStream = s;

    AudioStreamBasicDescription format;
    UInt32 size = sizeof format;
    EXPECT_STATUS(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_DataFormat, &size, &format), kAudioFileStreamError_ValueUnknown);
    EXPECT_STATUS(AudioFileStreamGetPropertyInfo(s, 0x78787878, &size, NULL), kAudioFileStreamError_UnsupportedProperty);

    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    char chunk[1000];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        OSStatus st = AudioFileStreamParseBytes(s, (UInt32)n, chunk, 0);
        if (st != noErr) { EXPECT(0, "parse: %d", (int)st); break; }
    }
    fclose(f);
    EXPECT(ready == 1, "ReadyToProducePackets heard %d times", ready);
    EXPECT(cookieBytes > 0, "cookie read in the listener");
    EXPECT(packets > 80 && packets < 95, "packets %lu (2 s at 1024 frames)", packets);
    EXPECT(descriptionsOk, "packet descriptions inside the data");
    EXPECT(nestedChecked, "parse from a callback refused");

    UInt32 u32 = 0;
    size = 4;
    EXPECT_STATUS(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_ReadyToProducePackets, &size, &u32), noErr);
    EXPECT(u32 == 1, "ready");
    size = 4;
    EXPECT_STATUS(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_FileFormat, &size, &u32), noErr);
    EXPECT(u32 == kAudioFileAAC_ADTSType, "file format %08x", u32);
    size = sizeof format;
    EXPECT_STATUS(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_DataFormat, &size, &format), noErr);
    EXPECT(format.mFormatID == kAudioFormatMPEG4AAC && format.mSampleRate == 44100 && format.mChannelsPerFrame == 2
           && format.mFramesPerPacket == 1024, "format %08x %f %u %u", format.mFormatID, format.mSampleRate,
           format.mChannelsPerFrame, format.mFramesPerPacket);
    size = 8;
    EXPECT_STATUS(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_DataFormat, &size, &format), kAudioFileStreamError_BadPropertySize);
    Boolean writable = 1;
    EXPECT_STATUS(AudioFileStreamGetPropertyInfo(s, kAudioFileStreamProperty_FormatList, &size, &writable), noErr);
    EXPECT(size == sizeof(AudioFormatListItem) && writable == 0, "format list %u", size);
    AudioFormatListItem item;
    EXPECT_STATUS(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_FormatList, &size, &item), noErr);
    EXPECT(item.mASBD.mFormatID == kAudioFormatMPEG4AAC && item.mChannelLayoutTag == kAudioChannelLayoutTag_Stereo, "format list item");
    /* With AQSYNC_DEVICE=offline (at 44.1 kHz): the parser's format and cookie make a queue
     * that decodes the packets; a buffer from AudioQueueAllocateBuffer takes descriptions
     * passed to AudioQueueEnqueueBuffer (up to its hidden room, docs/c-api.md). */
    if (getenv("AQSYNC_DEVICE") && strcmp(getenv("AQSYNC_DEVICE"), "offline") == 0) {
        AudioQueueRef q = NULL;
        EXPECT_STATUS(AudioQueueNewOutput(&format, NULL, NULL, NULL, NULL, 0, &q), kAudio_ParamError);
        EXPECT_STATUS(AudioQueueNewOutput(&format, noCallback, NULL, NULL, NULL, 0, &q), noErr);
        AudioQueueBufferRef b = NULL, small = NULL, render = NULL;
        AudioTimeStamp t;
        memset(&t, 0, sizeof t);
        t.mFlags = kAudioTimeStampSampleTimeValid;
        if (q) {
            EXPECT_STATUS(AudioQueueSetProperty(q, kAudioQueueProperty_MagicCookie, keptCookie, keptCookieSize), noErr);
            EXPECT_STATUS(AudioQueueAllocateBuffer(q, sizeof keptData, &b), noErr);
            EXPECT(b && b->mPacketDescriptionCapacity == 0, "no visible descriptions");
            memcpy(b->mAudioData, keptData, keptBytes);
            b->mAudioDataByteSize = keptBytes;
            EXPECT_STATUS(AudioQueueAllocateBuffer(q, 1024, &small), noErr);
            memcpy(small->mAudioData, keptData, 1024);
            small->mAudioDataByteSize = 1024;
            EXPECT_STATUS(AudioQueueEnqueueBuffer(q, small, KEPT, kept), kAudioQueueErr_InvalidParameter);
            EXPECT_STATUS(AudioQueueEnqueueBuffer(q, b, keptCount, kept), noErr);
            AudioStreamBasicDescription pcm;
            memset(&pcm, 0, sizeof pcm);
            pcm.mSampleRate = 44100;
            pcm.mFormatID = kAudioFormatLinearPCM;
            pcm.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
            pcm.mBytesPerPacket = pcm.mBytesPerFrame = 8;
            pcm.mFramesPerPacket = 1;
            pcm.mChannelsPerFrame = 2;
            pcm.mBitsPerChannel = 32;
            EXPECT_STATUS(AudioQueueSetOfflineRenderFormat(q, &pcm, NULL), noErr);
            EXPECT_STATUS(AudioQueueAllocateBuffer(q, 1024 * 8, &render), noErr);
            static float out[32 * 1024];
            for (int chunk = 0; chunk < 32; chunk++) {
                t.mSampleTime = chunk * 1024;
                EXPECT_STATUS(AudioQueueOfflineRender(q, &t, render, 1024), noErr);
                /* keep the left channel */
                const float *r = render->mAudioData;
                for (int i = 0; i < 1024; i++) out[chunk * 1024 + i] = r[2 * i];
            }
            /* 40 packets: 40960 frames, the tone from after the encoder's priming; count rising
             * zero crossings in frames 4096..28672 (24576 frames = 557.3 ms of 1000 Hz). */
            int crossings = 0;
            float peak = 0;
            for (int i = 4097; i < 28672; i++) {
                if (out[i - 1] < 0 && out[i] >= 0) crossings++;
                if (fabsf(out[i]) > peak) peak = fabsf(out[i]);
            }
            EXPECT(peak > 0.05f && crossings >= 553 && crossings <= 561, "decoded tone: peak %f, %d crossings", peak, crossings);
            EXPECT_STATUS(AudioQueueDispose(q, true), noErr);
            printf("the queue part ran\n");
        }
    }

    SInt64 offset = -1;
    size = sizeof offset;
    EXPECT_STATUS(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_DataOffset, &size, &offset), noErr);
    EXPECT(offset == 0, "data offset %lld", (long long)offset);

    AudioFramePacketTranslation fp;
    memset(&fp, 0, sizeof fp);
    fp.mPacket = 10;
    size = sizeof fp;
    EXPECT_STATUS(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_PacketToFrame, &size, &fp), noErr);
    EXPECT(fp.mFrame == 10240, "packet 10 -> frame %lld", (long long)fp.mFrame);
    fp.mFrame = 10250;
    EXPECT_STATUS(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_FrameToPacket, &size, &fp), noErr);
    EXPECT(fp.mPacket == 10 && fp.mFrameOffsetInPacket == 10, "frame 10250 -> packet %lld + %u", (long long)fp.mPacket, fp.mFrameOffsetInPacket);
    AudioBytePacketTranslation bp;
    memset(&bp, 0, sizeof bp);
    bp.mPacket = 5;
    size = sizeof bp;
    EXPECT_STATUS(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_PacketToByte, &size, &bp), noErr);
    EXPECT(bp.mByte > 0, "packet 5 -> byte %lld", (long long)bp.mByte);
    size = 4;
    EXPECT_STATUS(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_PacketToByte, &size, &bp), kAudioFileStreamError_BadPropertySize);

    u32 = 1;
    EXPECT_STATUS(AudioFileStreamSetProperty(s, kAudioFileStreamProperty_BitRate, 4, &u32), kAudioFileStreamError_UnsupportedProperty);
    SInt64 byteOffset = -1;
    AudioFileStreamSeekFlags seekFlags = 0;
    EXPECT_STATUS(AudioFileStreamSeek(s, 0, &byteOffset, &seekFlags), noErr);
    EXPECT(byteOffset == 0, "seek to packet 0: byte %lld", (long long)byteOffset);
    EXPECT_STATUS(AudioFileStreamSeek(s, 0, NULL, &seekFlags), kAudio_ParamError);
    seekIsRelativeToTheAudioData();
    EXPECT_STATUS(AudioFileStreamParseBytes(s, 10, NULL, 0), kAudio_ParamError);
    EXPECT_STATUS(AudioFileStreamParseBytes(s, 0, NULL, kAudioFileStreamParseFlag_Discontinuity), noErr);
    EXPECT_STATUS(AudioFileStreamClose(s), noErr);
    EXPECT_STATUS(AudioFileStreamClose(s), kAudio_ParamError);
    EXPECT_STATUS(AudioFileStreamParseBytes(NULL, 0, NULL, 0), kAudio_ParamError);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
