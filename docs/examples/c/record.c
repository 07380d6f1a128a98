/* record.c — recording with an audio queue, in the shape of the Audio Queue Services
 * Programming Guide's "Recording Audio" (seed 003): a recorder state, an input callback that
 * writes each filled buffer to the file with AudioFileWritePackets and enqueues it again, a
 * buffer size derived from the format, three buffers, start, stop, AudioFileClose. Records N
 * seconds of the default input (the JACK client's in_1 and in_2, connected to the physical
 * capture ports unless AQSYNC_INPUT_CONNECT says otherwise) into a 16-bit stereo WAV or CAF file
 * (by its extension) made with AudioFileCreateWithURL.
 * Usage: record FILE.wav|FILE.caf [--seconds N]   (issues 11, 12, 23; docs/c-api.md) */
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
    AudioFileID mAudioFile;
    UInt32 bufferByteSize;
    SInt64 mCurrentPacket;
    SInt64 mPacketsWanted;
    bool mIsRunning;
    pthread_mutex_t mLock;
    pthread_cond_t mDone;
} AQRecorderState;

/* The recording callback: write what the buffer holds (up to the packets wanted) to the file at
 * the next packet, then give the buffer back to the queue. For linear PCM the packet count is
 * the buffer's frames and there are no packet descriptions. */
static void HandleInputBuffer(void *aqData, AudioQueueRef inAQ, AudioQueueBufferRef inBuffer,
                              const AudioTimeStamp *inStartTime, UInt32 inNumPackets,
                              const AudioStreamPacketDescription *inPacketDesc) {
    AQRecorderState *pAqData = aqData;
    (void)inStartTime;
    if (inNumPackets == 0 && pAqData->mDataFormat.mBytesPerPacket != 0)
        inNumPackets = inBuffer->mAudioDataByteSize / pAqData->mDataFormat.mBytesPerPacket;
    pthread_mutex_lock(&pAqData->mLock);
    SInt64 left = pAqData->mPacketsWanted - pAqData->mCurrentPacket;
    if (inNumPackets > left) inNumPackets = (UInt32)left;
    if (inNumPackets > 0) {
        if (AudioFileWritePackets(pAqData->mAudioFile, false, inNumPackets * pAqData->mDataFormat.mBytesPerPacket, inPacketDesc,
                                  pAqData->mCurrentPacket, &inNumPackets, inBuffer->mAudioData) == noErr)
            pAqData->mCurrentPacket += inNumPackets;
        else
            pAqData->mCurrentPacket = pAqData->mPacketsWanted;  /* the disk failed: stop */
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
    if (argc < 2) { fprintf(stderr, "usage: record FILE.wav|FILE.caf [--seconds N]\n"); return 2; }
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

    /* The file: CAF for a name ending in .caf, WAVE otherwise (little-endian PCM suits both). */
    size_t length = strlen(argv[1]);
    AudioFileTypeID fileType = length > 4 && strcmp(argv[1] + length - 4, ".caf") == 0 ? kAudioFileCAFType : kAudioFileWAVEType;
    CFURLRef audioFileURL = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)argv[1], (CFIndex)length, false);
    FAIL_ON_ERR(AudioFileCreateWithURL(audioFileURL, fileType, &aqData.mDataFormat, kAudioFileFlags_EraseFile, &aqData.mAudioFile));
    CFRelease(audioFileURL);

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
    FAIL_ON_ERR(AudioFileClose(aqData.mAudioFile));
    printf("record: %lld frames written to %s\n", (long long)aqData.mCurrentPacket, argv[1]);
    return 0;
}
