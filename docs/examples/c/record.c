/* record.c — recording with an audio queue, in the shape of the Audio Queue Services
 * Programming Guide's "Recording Audio" (seed 003): a recorder state, an input callback that
 * writes each filled buffer to the file and enqueues it again, a buffer size derived from the
 * format, three buffers, start, stop. Records N seconds of the default input (the JACK client's
 * in_1 and in_2, connected to the physical capture ports unless AQSYNC_INPUT_CONNECT says
 * otherwise) into a 16-bit stereo WAV file. There is no AudioFile API here, so the file is
 * written with stdio. Usage: record FILE.wav [--seconds N]   (issues 11, 12; docs/c-api.md) */
#include <AudioToolbox/AudioToolbox.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define FAIL_ON_ERR(call) do { status = (call); if (status != noErr) { fprintf(stderr, "record: %s: %d\n", #call, (int)status); return 1; } } while (0)

enum { kNumberBuffers = 3 };

typedef struct {
    AudioStreamBasicDescription mDataFormat;
    AudioQueueRef mQueue;
    AudioQueueBufferRef mBuffers[kNumberBuffers];
    FILE *mFile;
    UInt32 bufferByteSize;
    SInt64 mCurrentPacket;
    SInt64 mPacketsWanted;
    bool mIsRunning;
    pthread_mutex_t mLock;
    pthread_cond_t mDone;
} AQRecorderState;

/* A little-endian WAV header for `frames` frames of the recorder's format. */
static void WriteWAVHeader(AQRecorderState *s, UInt32 frames) {
    UInt32 dataBytes = frames * s->mDataFormat.mBytesPerFrame;
    UInt32 u32[] = {36 + dataBytes, 16, (UInt32)s->mDataFormat.mSampleRate,
                    (UInt32)s->mDataFormat.mSampleRate * s->mDataFormat.mBytesPerFrame, dataBytes};
    UInt16 fmt[] = {1, (UInt16)s->mDataFormat.mChannelsPerFrame};
    UInt16 align[] = {(UInt16)s->mDataFormat.mBytesPerFrame, (UInt16)s->mDataFormat.mBitsPerChannel};
    fseek(s->mFile, 0, SEEK_SET);
    fwrite("RIFF", 1, 4, s->mFile); fwrite(&u32[0], 4, 1, s->mFile); fwrite("WAVEfmt ", 1, 8, s->mFile);
    fwrite(&u32[1], 4, 1, s->mFile); fwrite(fmt, 2, 2, s->mFile); fwrite(&u32[2], 4, 2, s->mFile);
    fwrite(align, 2, 2, s->mFile); fwrite("data", 1, 4, s->mFile); fwrite(&u32[4], 4, 1, s->mFile);
    fseek(s->mFile, 0, SEEK_END);
}

/* The recording callback: write what the buffer holds (up to the packets wanted), then give the
 * buffer back to the queue. For linear PCM the packet count is the buffer's frames. */
static void HandleInputBuffer(void *aqData, AudioQueueRef inAQ, AudioQueueBufferRef inBuffer,
                              const AudioTimeStamp *inStartTime, UInt32 inNumPackets,
                              const AudioStreamPacketDescription *inPacketDesc) {
    AQRecorderState *pAqData = aqData;
    (void)inStartTime; (void)inPacketDesc;
    if (inNumPackets == 0 && pAqData->mDataFormat.mBytesPerPacket != 0)
        inNumPackets = inBuffer->mAudioDataByteSize / pAqData->mDataFormat.mBytesPerPacket;
    pthread_mutex_lock(&pAqData->mLock);
    SInt64 left = pAqData->mPacketsWanted - pAqData->mCurrentPacket;
    if (inNumPackets > left) inNumPackets = (UInt32)left;
    if (inNumPackets > 0) {
        fwrite(inBuffer->mAudioData, pAqData->mDataFormat.mBytesPerPacket, inNumPackets, pAqData->mFile);
        pAqData->mCurrentPacket += inNumPackets;
    }
    if (pAqData->mCurrentPacket == pAqData->mPacketsWanted) pthread_cond_signal(&pAqData->mDone);
    bool running = pAqData->mIsRunning;
    pthread_mutex_unlock(&pAqData->mLock);
    if (!running) return;
    AudioQueueEnqueueBuffer(inAQ, inBuffer, 0, NULL);
}

/* A buffer holding `seconds` of audio in the queue's format. */
static void DeriveBufferSize(AudioStreamBasicDescription *format, Float64 seconds, UInt32 *outBufferSize) {
    static const UInt32 maxBufferSize = 0x50000;
    Float64 numBytesForTime = format->mSampleRate * format->mBytesPerPacket * seconds;
    *outBufferSize = (UInt32)(numBytesForTime < maxBufferSize ? numBytesForTime : maxBufferSize);
}

int main(int argc, char **argv) {
    OSStatus status;
    double seconds = 5;
    if (argc < 2) { fprintf(stderr, "usage: record FILE.wav [--seconds N]\n"); return 2; }
    if (argc > 3 && strcmp(argv[2], "--seconds") == 0) seconds = atof(argv[3]);

    AQRecorderState aqData = {0};
    pthread_mutex_init(&aqData.mLock, NULL);
    pthread_cond_init(&aqData.mDone, NULL);
    aqData.mDataFormat.mFormatID = kAudioFormatLinearPCM;
    aqData.mDataFormat.mSampleRate = 48000.0;
    aqData.mDataFormat.mChannelsPerFrame = 2;
    aqData.mDataFormat.mBitsPerChannel = 16;
    aqData.mDataFormat.mBytesPerPacket = aqData.mDataFormat.mBytesPerFrame =
        aqData.mDataFormat.mChannelsPerFrame * sizeof(SInt16);
    aqData.mDataFormat.mFramesPerPacket = 1;
    aqData.mDataFormat.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked;
    aqData.mPacketsWanted = (SInt64)(seconds * aqData.mDataFormat.mSampleRate);

    aqData.mFile = fopen(argv[1], "wb");
    if (!aqData.mFile) { perror(argv[1]); return 1; }
    WriteWAVHeader(&aqData, 0);

    FAIL_ON_ERR(AudioQueueNewInput(&aqData.mDataFormat, HandleInputBuffer, &aqData, NULL, kCFRunLoopCommonModes, 0, &aqData.mQueue));
    DeriveBufferSize(&aqData.mDataFormat, 0.5, &aqData.bufferByteSize);
    for (int i = 0; i < kNumberBuffers; ++i) {
        FAIL_ON_ERR(AudioQueueAllocateBuffer(aqData.mQueue, aqData.bufferByteSize, &aqData.mBuffers[i]));
        FAIL_ON_ERR(AudioQueueEnqueueBuffer(aqData.mQueue, aqData.mBuffers[i], 0, NULL));
    }
    aqData.mCurrentPacket = 0;
    aqData.mIsRunning = true;
    FAIL_ON_ERR(AudioQueueStart(aqData.mQueue, NULL));

    /* Wait until the callback has written the packets wanted, then stop. */
    pthread_mutex_lock(&aqData.mLock);
    while (aqData.mCurrentPacket < aqData.mPacketsWanted) pthread_cond_wait(&aqData.mDone, &aqData.mLock);
    aqData.mIsRunning = false;
    pthread_mutex_unlock(&aqData.mLock);
    FAIL_ON_ERR(AudioQueueStop(aqData.mQueue, true));

    AudioQueueDispose(aqData.mQueue, true);
    WriteWAVHeader(&aqData, (UInt32)aqData.mCurrentPacket);
    fclose(aqData.mFile);
    printf("record: %lld frames written to %s\n", (long long)aqData.mCurrentPacket, argv[1]);
    return 0;
}
