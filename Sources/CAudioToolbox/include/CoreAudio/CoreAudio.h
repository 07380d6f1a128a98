/* CoreAudio/CoreAudio.h — aqsync's C API: only the data types (no HAL). */
#include <CoreAudio/CoreAudioTypes.h>
