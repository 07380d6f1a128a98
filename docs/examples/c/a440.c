/* a440.c — the A440 sine player of the talk "Audio Queue Services" (seed 001) in plain C: 44.1 kHz
 * int16 stereo, three buffers primed by calling the callback, callbacks on this thread's run
 * loop, an asynchronous stop when the time is up and an IsRunning listener that ends the run
 * loop when the queue has drained. Usage: a440 [--seconds N]   (issue 12; docs/c-api.md) */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>

#define FAIL_ON_ERR(call) do { status = (call); if (status != noErr) { fprintf(stderr, "a440: %s: %d\n", #call, (int)status); return 1; } } while (0)

static const Float64 SAMPLE_RATE = 44100.0;

typedef struct {
    float currentPhase;
    float phaseIncrement;
} A440SineWaveGenerator;

static void A440SineWaveGeneratorInitWithFrequency(A440SineWaveGenerator *self, double frequency) {
    /* cycles/second × radians/cycle × seconds/sample = radians/sample */
    self->currentPhase = 0.0;
    self->phaseIncrement = frequency * 2 * M_PI / SAMPLE_RATE;
}

static int16_t A440SineWaveGeneratorNextSample(A440SineWaveGenerator *self) {
    int16_t sample = INT16_MAX * sinf(self->currentPhase);
    self->currentPhase += self->phaseIncrement;
    while (self->currentPhase > 2 * M_PI) self->currentPhase -= 2 * M_PI;
    return sample;
}

typedef struct {
    AudioQueueRef queue;
    AudioStreamBasicDescription dataFormat;
    AudioQueueBufferRef buffers[3];
    A440SineWaveGenerator sineWaveGenerator;
    bool shouldBufferDataInCallback;
    UInt32 framesLeft;
    CFRunLoopRef runLoop;
} A440AudioQueue;

static void FillFrame(A440AudioQueue *self, int16_t *sample) {
    int16_t sampleValue = A440SineWaveGeneratorNextSample(&self->sineWaveGenerator);
    sampleValue /= 4; /* keep the volume away from the max */
    sample[0] = sampleValue;
    sample[1] = sampleValue;
}

static void HandleOutputBuffer(void *inUserData, AudioQueueRef inAQ, AudioQueueBufferRef inBuffer) {
    A440AudioQueue *self = inUserData;
    (void)inAQ;
    if (!self->shouldBufferDataInCallback) return;
    int16_t *sample = inBuffer->mAudioData;
    UInt32 numberOfFrames = inBuffer->mAudioDataBytesCapacity / self->dataFormat.mBytesPerFrame;
    if (numberOfFrames > self->framesLeft) numberOfFrames = self->framesLeft;
    for (UInt32 i = 0; i < numberOfFrames; i++) {
        FillFrame(self, sample);
        sample += self->dataFormat.mChannelsPerFrame;
    }
    self->framesLeft -= numberOfFrames;
    inBuffer->mAudioDataByteSize = numberOfFrames * self->dataFormat.mBytesPerFrame;
    if (numberOfFrames > 0) {
        OSStatus result = AudioQueueEnqueueBuffer(self->queue, inBuffer, 0, NULL);
        if (result != noErr) fprintf(stderr, "a440: AudioQueueEnqueueBuffer error: %d\n", (int)result);
    }
    if (self->framesLeft == 0) {
        /* Asynchronous stop: every queued buffer still plays. */
        self->shouldBufferDataInCallback = false;
        AudioQueueStop(self->queue, false);
    }
}

static void HandleIsRunningChanged(void *inUserData, AudioQueueRef inAQ, AudioQueuePropertyID inID) {
    A440AudioQueue *self = inUserData;
    UInt32 running = 0, size = sizeof running;
    AudioQueueGetProperty(inAQ, inID, &running, &size);
    if (!running) CFRunLoopStop(self->runLoop);
}

static void setupDataFormat(A440AudioQueue *self) {
    AudioStreamBasicDescription *f = &self->dataFormat;
    memset(f, 0, sizeof *f);
    f->mSampleRate = SAMPLE_RATE;
    f->mFormatID = kAudioFormatLinearPCM;
    f->mFormatFlags = kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked;
    f->mBytesPerPacket = 4;
    f->mFramesPerPacket = 1;
    f->mBytesPerFrame = 4;
    f->mChannelsPerFrame = 2;
    f->mBitsPerChannel = 16;
}

int main(int argc, char **argv) {
    double seconds = 2;
    for (int i = 1; i + 1 < argc; i++) if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[i + 1]);

    A440AudioQueue player;
    memset(&player, 0, sizeof player);
    A440AudioQueue *self = &player;
    OSStatus status;
    self->framesLeft = (UInt32)(seconds * SAMPLE_RATE);
    self->runLoop = CFRunLoopGetCurrent();
    setupDataFormat(self);
    FAIL_ON_ERR(AudioQueueNewOutput(&self->dataFormat, HandleOutputBuffer, self, CFRunLoopGetCurrent(),
                                    kCFRunLoopCommonModes, 0, &self->queue));
    FAIL_ON_ERR(AudioQueueAddPropertyListener(self->queue, kAudioQueueProperty_IsRunning, HandleIsRunningChanged, self));
    for (int i = 0; i < 3; i++) {
        /* half a second each */
        FAIL_ON_ERR(AudioQueueAllocateBuffer(self->queue, (UInt32)(SAMPLE_RATE / 2) * self->dataFormat.mBytesPerFrame,
                                             &self->buffers[i]));
    }
    A440SineWaveGeneratorInitWithFrequency(&self->sineWaveGenerator, 440.0);
    self->shouldBufferDataInCallback = true;
    for (int i = 0; i < 3; i++) HandleOutputBuffer(self, self->queue, self->buffers[i]); /* prime */
    FAIL_ON_ERR(AudioQueueStart(self->queue, NULL));
    printf("a440: playing 440 Hz for %.1f s\n", seconds);
    fflush(stdout);
    /* The callbacks and the listener run here, inside the run loop, until the listener stops it
     * (the 60 s are a safety net). */
    CFRunLoopRunInMode(kCFRunLoopDefaultMode, seconds + 60, false);
    FAIL_ON_ERR(AudioQueueDispose(self->queue, true));
    return 0;
}
