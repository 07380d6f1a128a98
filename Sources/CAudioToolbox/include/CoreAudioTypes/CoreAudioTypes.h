/* CoreAudioTypes/CoreAudioTypes.h — the same declarations as CoreAudio/CoreAudioTypes.h. */
#include <CoreAudio/CoreAudioTypes.h>
