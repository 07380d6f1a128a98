/* stream_adts.c — streams an audio file (an ADTS AAC file in the tests) through
 * AudioFileStreamParseBytes into an output queue: packet descriptions and the magic cookie from
 * the parser, three buffers with packet descriptions, a start once the first buffers are
 * enqueued, an asynchronous stop at the end of the file, and an exit once the IsRunning
 * listener reports the drain. Written from the two references (issue 12). Since issue 22 it
 * reads the cookie at ReadyToProducePackets without CacheProperty and enqueues with the
 * buffer's own descriptions (0/NULL passed), as Apple's queue and parser allow.
 * Usage: stream_adts FILE   Prints "packets N" and "drained"; exits 0 when it played to the end. */
#include <AudioToolbox/AudioToolbox.h>
#include <pthread.h>
#include <stdio.h>

#define BUFFER_BYTES 16384
#define BUFFER_PACKETS 512
#define BUFFERS 3

typedef struct {
    AudioFileStreamID stream;
    AudioQueueRef queue;
    AudioQueueBufferRef buffers[BUFFERS];
    bool inUse[BUFFERS];
    int current;              /* the buffer being filled */
    UInt32 bytesFilled, packetsFilled;
    unsigned long packets;
    bool started, failed, drained;
    pthread_mutex_t lock;
    pthread_cond_t changed;
} Player;

static void fail(Player *p, const char *what, OSStatus s) {
    fprintf(stderr, "stream_adts: %s: %d\n", what, (int)s);
    p->failed = true;
}

static void outputCallback(void *user, AudioQueueRef aq, AudioQueueBufferRef buffer) {
    Player *p = user;
    (void)aq;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < BUFFERS; i++) if (p->buffers[i] == buffer) p->inUse[i] = false;
    pthread_cond_signal(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

static void isRunningChanged(void *user, AudioQueueRef aq, AudioQueuePropertyID id) {
    Player *p = user;
    UInt32 running = 1, size = sizeof running;
    AudioQueueGetProperty(aq, id, &running, &size);
    pthread_mutex_lock(&p->lock);
    if (!running && p->started) p->drained = true;
    pthread_cond_signal(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

/* Enqueues the buffer being filled and waits until the next one is free. */
static void enqueueCurrent(Player *p) {
    if (p->packetsFilled == 0) return;
    AudioQueueBufferRef b = p->buffers[p->current];
    b->mAudioDataByteSize = p->bytesFilled;
    b->mPacketDescriptionCount = p->packetsFilled;
    pthread_mutex_lock(&p->lock);
    p->inUse[p->current] = true;
    pthread_mutex_unlock(&p->lock);
    /* The buffer's own descriptions, none passed: Apple's queue reads mPacketDescriptionCount
     * (issue 22; this was BufferEmpty). */
    b->mPacketDescriptionCount = (UInt32)p->packetsFilled;
    OSStatus s = AudioQueueEnqueueBuffer(p->queue, b, 0, NULL);
    if (s != noErr) fail(p, "AudioQueueEnqueueBuffer", s);
    if (!p->started && p->current == BUFFERS - 2) {
        s = AudioQueueStart(p->queue, NULL);
        if (s != noErr) fail(p, "AudioQueueStart", s);
        p->started = true;
    }
    p->current = (p->current + 1) % BUFFERS;
    p->bytesFilled = 0;
    p->packetsFilled = 0;
    pthread_mutex_lock(&p->lock);
    while (p->inUse[p->current]) pthread_cond_wait(&p->changed, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

static void propertyListener(void *user, AudioFileStreamID stream, AudioFileStreamPropertyID id, AudioFileStreamPropertyFlags *flags) {
    Player *p = user;
    /* No CacheProperty: as in Apple's AudioFileStreamExample, the cookie is read when the
     * parser is ready, which Apple's parser (and aqsync's since issue 22) allows. */
    (void)flags;
    if (id != kAudioFileStreamProperty_ReadyToProducePackets) return;
    AudioStreamBasicDescription format;
    UInt32 size = sizeof format;
    OSStatus s = AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_DataFormat, &size, &format);
    if (s != noErr) return fail(p, "DataFormat", s);
    s = AudioQueueNewOutput(&format, outputCallback, p, NULL, NULL, 0, &p->queue);
    if (s != noErr) return fail(p, "AudioQueueNewOutput", s);
    Boolean writable = 1;
    s = AudioFileStreamGetPropertyInfo(stream, kAudioFileStreamProperty_MagicCookieData, &size, &writable);
    if (s == noErr && size > 0) {
        void *cookie = malloc(size);
        s = AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_MagicCookieData, &size, cookie);
        if (s == noErr) s = AudioQueueSetProperty(p->queue, kAudioQueueProperty_MagicCookie, cookie, size);
        free(cookie);
        if (s != noErr) return fail(p, "magic cookie", s);
    }
    s = AudioQueueAddPropertyListener(p->queue, kAudioQueueProperty_IsRunning, isRunningChanged, p);
    if (s != noErr) return fail(p, "AudioQueueAddPropertyListener", s);
    for (int i = 0; i < BUFFERS; i++) {
        s = AudioQueueAllocateBufferWithPacketDescriptions(p->queue, BUFFER_BYTES, BUFFER_PACKETS, &p->buffers[i]);
        if (s != noErr) return fail(p, "AudioQueueAllocateBufferWithPacketDescriptions", s);
    }
}

static void packetsProc(void *user, UInt32 numberBytes, UInt32 numberPackets, const void *data, AudioStreamPacketDescription *descriptions) {
    Player *p = user;
    (void)numberBytes;
    if (!p->queue || p->failed) return;
    for (UInt32 i = 0; i < numberPackets; i++) {
        SInt64 offset = descriptions[i].mStartOffset;
        UInt32 bytes = descriptions[i].mDataByteSize;
        if (p->bytesFilled + bytes > BUFFER_BYTES || p->packetsFilled == BUFFER_PACKETS) enqueueCurrent(p);
        AudioQueueBufferRef b = p->buffers[p->current];
        memcpy((char *)b->mAudioData + p->bytesFilled, (const char *)data + offset, bytes);
        b->mPacketDescriptions[p->packetsFilled] = descriptions[i];
        b->mPacketDescriptions[p->packetsFilled].mStartOffset = p->bytesFilled;
        p->bytesFilled += bytes;
        p->packetsFilled++;
        p->packets++;
    }
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: stream_adts FILE\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    Player p;
    memset(&p, 0, sizeof p);
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.changed, NULL);
    OSStatus s = AudioFileStreamOpen(&p, propertyListener, packetsProc, kAudioFileAAC_ADTSType, &p.stream);
    if (s != noErr) { fprintf(stderr, "AudioFileStreamOpen: %d\n", (int)s); return 1; }
    char chunk[4096];
    size_t n;
    while (!p.failed && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        s = AudioFileStreamParseBytes(p.stream, (UInt32)n, chunk, 0);
        if (s != noErr) { fprintf(stderr, "AudioFileStreamParseBytes: %d\n", (int)s); return 1; }
    }
    fclose(f);
    if (p.failed || !p.queue) return 1;
    enqueueCurrent(&p);
    if (!p.started) {
        s = AudioQueueStart(p.queue, NULL);
        if (s != noErr) { fprintf(stderr, "AudioQueueStart: %d\n", (int)s); return 1; }
        p.started = true;
    }
    s = AudioQueueFlush(p.queue);
    if (s == noErr) s = AudioQueueStop(p.queue, false); /* asynchronous: everything enqueued plays */
    if (s != noErr) { fprintf(stderr, "stop: %d\n", (int)s); return 1; }
    printf("packets %lu\n", p.packets);
    fflush(stdout);
    pthread_mutex_lock(&p.lock);
    while (!p.drained) pthread_cond_wait(&p.changed, &p.lock);
    pthread_mutex_unlock(&p.lock);
    printf("drained\n");
    AudioQueueDispose(p.queue, true);
    AudioFileStreamClose(p.stream);
    return 0;
}
