/* stereo_sine.c — the stereo sine tutorial (seed 004) in plain C: 48 kHz int16 stereo, 150 Hz on
 * the left and 250 Hz on the right, two buffers of 1/16 s refilled by the callback on the
 * library's internal thread (no run loop). Usage: stereo_sine [--seconds N]   (issue 12) */
#include <AudioToolbox/AudioToolbox.h>
#include <assert.h>
#include <stdio.h>
#include <unistd.h>

typedef struct {
    float framesBuffered;
    float sampleRate;
    float volume;
    float leftFrequency;
    float rightFrequency;
    int bytesPerFrame;
} SoundState;

static void streamCallback(void *userData, AudioQueueRef audioQueue, AudioQueueBufferRef buffer) {
    SoundState *soundState = (SoundState *)userData;
    int bufferFrameCapacity = buffer->mAudioDataBytesCapacity / (*soundState).bytesPerFrame;
    int16_t *sampleBuffer = (int16_t *)buffer->mAudioData;
    for (int i = 0; i < bufferFrameCapacity; i++) {
        /* (the tutorial's float frame count loses whole frames after a few minutes; the phase is
         * computed from it the same way here) */
        float t = ((*soundState).framesBuffered / (*soundState).sampleRate);
        float x1 = 2 * 3.141592f * t * (*soundState).leftFrequency;
        float x2 = 2 * 3.141592f * t * (*soundState).rightFrequency;
        *(sampleBuffer++) = (int16_t)(32767.0f * (*soundState).volume * sin(x1));
        *(sampleBuffer++) = (int16_t)(32767.0f * (*soundState).volume * sin(x2));
        (*soundState).framesBuffered += 1;
    }
    buffer->mAudioDataByteSize = bufferFrameCapacity * (*soundState).bytesPerFrame;
    AudioQueueEnqueueBuffer(audioQueue, buffer, 0, 0);
}

int main(int argc, char **argv) {
    double seconds = 3;
    for (int i = 1; i + 1 < argc; i++) if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[i + 1]);

    AudioStreamBasicDescription streamDesc;
    memset(&streamDesc, 0, sizeof streamDesc);
    streamDesc.mSampleRate = 48000;
    streamDesc.mFormatID = kAudioFormatLinearPCM;
    streamDesc.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked;
    streamDesc.mBytesPerPacket = 4;
    streamDesc.mFramesPerPacket = 1;
    streamDesc.mBytesPerFrame = 4;
    streamDesc.mChannelsPerFrame = 2;
    streamDesc.mBitsPerChannel = 16;

    SoundState state;
    state.framesBuffered = 0.0f;
    state.sampleRate = streamDesc.mSampleRate;
    state.volume = 0.1f;
    state.leftFrequency = 150.0f;
    state.rightFrequency = 250.0f;
    state.bytesPerFrame = streamDesc.mBytesPerFrame;

    AudioQueueRef audioQueue = 0;
    OSStatus err = AudioQueueNewOutput(&streamDesc, &streamCallback, &state,
                                       0, 0, 0, /* run loop, mode, flags: callbacks on the internal thread */
                                       &audioQueue);
    if (err) { fprintf(stderr, "stereo_sine: AudioQueueNewOutput: %d\n", (int)err); return 1; }

    /* Buffers holding at most 1/16th of a second of data. */
    int bufferSize = streamDesc.mBytesPerFrame * (streamDesc.mSampleRate / 16);
    AudioQueueBufferRef audioQueueBuffers[2];
    err = AudioQueueAllocateBuffer(audioQueue, bufferSize, &(audioQueueBuffers[0]));
    assert(!err);
    err = AudioQueueAllocateBuffer(audioQueue, bufferSize, &(audioQueueBuffers[1]));
    assert(!err);
    streamCallback(&state, audioQueue, audioQueueBuffers[0]);
    streamCallback(&state, audioQueue, audioQueueBuffers[1]);
    err = AudioQueueStart(audioQueue, 0);
    if (err) { fprintf(stderr, "stereo_sine: AudioQueueStart: %d\n", (int)err); return 1; }
    printf("stereo_sine: 150 Hz left, 250 Hz right for %.1f s\n", seconds);
    fflush(stdout);
    usleep((useconds_t)(seconds * 1e6));
    AudioQueueDispose(audioQueue, true); /* destroy immediately */
    return 0;
}
