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
#endif
