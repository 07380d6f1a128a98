/*
 * AudioToolbox/AudioToolbox.h — aqsync's C API (issue 12): the umbrella. Like Apple's, it pulls
 * in the C standard headers its users rely on.
 */
#ifndef AQSYNC_AUDIOTOOLBOX_H
#define AQSYNC_AUDIOTOOLBOX_H

#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stdint.h>
#include <math.h>

#include <CoreAudio/CoreAudioTypes.h>
#include <CoreFoundation/CFRunLoop.h>
#include <AudioToolbox/AudioQueue.h>
#include <AudioToolbox/AudioFileStream.h>
#include <AudioToolbox/AudioFile.h>
#include <AudioToolbox/ExtendedAudioFile.h>
#include <AudioToolbox/AudioFormat.h>
#include <AudioToolbox/AudioConverter.h>
#include <AudioToolbox/AudioServices.h>

#endif
