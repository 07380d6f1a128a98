/* CoreAudio/CoreAudio.h — aqsync's C API: the data types, the little of the device API that
 * programs read (CoreAudio/AudioHardware.h: default devices, rate, buffer size, name), and the
 * host-time functions (CoreAudio/HostTime.h). */
#include <CoreAudio/CoreAudioTypes.h>
#include <CoreAudio/AudioHardware.h>
#include <CoreAudio/HostTime.h>
