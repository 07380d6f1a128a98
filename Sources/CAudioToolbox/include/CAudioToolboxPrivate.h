/* CAudioToolboxPrivate.h — not installed: helpers the Swift implementation of libAudioToolbox
 * needs for writing the const fields of AudioQueueBuffer. */
#ifndef AQSYNC_CAUDIOTOOLBOX_PRIVATE_H
#define AQSYNC_CAUDIOTOOLBOX_PRIVATE_H
#include <AudioToolbox/AudioQueue.h>
#include <string.h>

/* Fills a freshly allocated AudioQueueBuffer (its const fields included). */
static inline void aqc_buffer_init(AudioQueueBuffer *b, UInt32 capacity, void *data, UInt32 descriptionCapacity,
                                   AudioStreamPacketDescription *descriptions) {
    AudioQueueBuffer v = {capacity, data, 0, NULL, descriptionCapacity, descriptions, 0};
    memcpy(b, &v, sizeof v);
}
#if defined(__BLOCKS__)
/* dispatch_retain and dispatch_release, which Swift refuses to call ("can't be used with ARC"):
 * a dispatch-queue audio queue keeps its callback queue alive until it is disposed of. */
static inline void aqc_dispatch_retain(dispatch_queue_t q) { dispatch_retain(q); }
static inline void aqc_dispatch_release(dispatch_queue_t q) { dispatch_release(q); }
#endif
#endif
