/*
 * AudioToolbox/AudioConverter.h — aqsync's C API (issue 23): only the converter property IDs
 * that programs pass to an audio queue (Apple's queue forwards them to its converter):
 * AudioQueueGetProperty answers kAudioConverterCurrentOutputStreamDescription and
 * kAudioConverterCurrentInputStreamDescription with the queue's stream description and
 * kAudioConverterCompressionMagicCookie and kAudioConverterDecompressionMagicCookie with its
 * magic cookie; kAudioConverterPropertyMaximumOutputPacketSize is the queue's own
 * kAudioQueueProperty_MaximumOutputPacketSize (the same ID). The AudioConverter functions themselves are not there yet (docs/c-api.md).
 */
#ifndef AQSYNC_AUDIOCONVERTER_H
#define AQSYNC_AUDIOCONVERTER_H

#include <CoreAudio/CoreAudioTypes.h>

CF_EXTERN_C_BEGIN

typedef UInt32 AudioConverterPropertyID;
CF_ENUM(AudioConverterPropertyID) {
    kAudioConverterCurrentOutputStreamDescription = 0x61636F64, /* 'acod' */
    kAudioConverterCurrentInputStreamDescription  = 0x61636964, /* 'acid' */
    kAudioConverterCompressionMagicCookie         = 0x636D6763, /* 'cmgc' */
    kAudioConverterDecompressionMagicCookie       = 0x646D6763, /* 'dmgc' */
    kAudioConverterPropertyMaximumOutputPacketSize = 0x786F7073  /* 'xops': kAudioQueueProperty_MaximumOutputPacketSize's ID */
};

CF_EXTERN_C_END

#endif
