/*
 * AudioToolbox/AudioServices.h — aqsync's C API (issue 23): Audio Hardware Services, the
 * AudioToolbox names older programs use for Core Audio's device properties; each is
 * AudioObject… of CoreAudio/AudioHardware.h under another name (same threads, blocking and
 * result codes). System sounds are not here.
 */
#ifndef AQSYNC_AUDIOSERVICES_H
#define AQSYNC_AUDIOSERVICES_H

#include <CoreAudio/AudioHardware.h>

CF_EXTERN_C_BEGIN

extern Boolean AudioHardwareServiceHasProperty(AudioObjectID inObjectID, const AudioObjectPropertyAddress *inAddress);
extern OSStatus AudioHardwareServiceGetPropertyDataSize(AudioObjectID inObjectID, const AudioObjectPropertyAddress *inAddress,
                                                        UInt32 inQualifierDataSize, const void *inQualifierData,
                                                        UInt32 *outDataSize);
extern OSStatus AudioHardwareServiceGetPropertyData(AudioObjectID inObjectID, const AudioObjectPropertyAddress *inAddress,
                                                    UInt32 inQualifierDataSize, const void *inQualifierData,
                                                    UInt32 *ioDataSize, void *outData);

CF_EXTERN_C_END

#endif
