/* CoreAudio/CoreAudio.h — aqsync's C API: the data types and the little of the device API that
 * programs read (CoreAudio/AudioHardware.h: default devices, rate, buffer size, name). */
#include <CoreAudio/CoreAudioTypes.h>
#include <CoreAudio/AudioHardware.h>
