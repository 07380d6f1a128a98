/*
 * CoreAudio/AudioHardware.h — aqsync's C API (issue 23): the little of Core Audio's device API
 * that recorders and players read — the default input and output device, its nominal sample
 * rate, buffer frame size and name — answered from the JACK device the process's queues use
 * (docs/c-api.md, "Devices"). Written from Apple's Core Audio reference. Any thread; the first
 * call that needs the device opens the process's JACK client (starting a server when none is
 * reachable, as AudioQueueNewOutput does), which blocks as long as that takes.
 */
#ifndef AQSYNC_AUDIOHARDWARE_H
#define AQSYNC_AUDIOHARDWARE_H

#include <CoreAudio/CoreAudioTypes.h>

CF_EXTERN_C_BEGIN

typedef UInt32 AudioObjectID;
typedef AudioObjectID AudioDeviceID;
typedef UInt32 AudioObjectPropertySelector;
typedef UInt32 AudioObjectPropertyScope;
typedef UInt32 AudioObjectPropertyElement;

/* 12 bytes. */
typedef struct AudioObjectPropertyAddress {
    AudioObjectPropertySelector mSelector;
    AudioObjectPropertyScope    mScope;
    AudioObjectPropertyElement  mElement;
} AudioObjectPropertyAddress;

CF_ENUM(AudioObjectID) {
    kAudioObjectUnknown = 0,
    kAudioObjectSystemObject = 1   /* the system: its default devices */
    /* The process's JACK device is AudioObjectID 2 here. */
};
CF_ENUM(AudioObjectPropertyScope) {
    kAudioObjectPropertyScopeGlobal = 0x676C6F62, /* 'glob' */
    kAudioObjectPropertyScopeInput  = 0x696E7074, /* 'inpt' */
    kAudioObjectPropertyScopeOutput = 0x6F757470, /* 'outp' */
    kAudioDevicePropertyScopeInput  = 0x696E7074, /* 'inpt' */
    kAudioDevicePropertyScopeOutput = 0x6F757470  /* 'outp' */
};
CF_ENUM(AudioObjectPropertyElement) {
    kAudioObjectPropertyElementMain = 0,
    kAudioObjectPropertyElementMaster = 0
};
CF_ENUM(AudioObjectPropertySelector) {
    kAudioHardwarePropertyDefaultInputDevice        = 0x64496E20, /* 'dIn ' AudioDeviceID (system) */
    kAudioHardwarePropertyDefaultOutputDevice       = 0x644F7574, /* 'dOut' AudioDeviceID (system) */
    kAudioHardwarePropertyDefaultSystemOutputDevice = 0x734F7574, /* 'sOut' AudioDeviceID (system) */
    kAudioDevicePropertyNominalSampleRate           = 0x6E737274, /* 'nsrt' Float64: the JACK server's rate */
    kAudioDevicePropertyBufferFrameSize             = 0x6673697A, /* 'fsiz' UInt32: the JACK period */
    kAudioObjectPropertyName                        = 0x6C6E616D, /* 'lnam' CFStringRef (+1: release it): jack:SERVER:CLIENT */
    kAudioDevicePropertyDeviceNameCFString          = 0x6C6E616D  /* 'lnam' (the older name) */
};
CF_ENUM(OSStatus) {
    kAudioHardwareNoError                    = 0,
    kAudioHardwareNotRunningError            = 0x73746F70, /* 'stop' no JACK server reachable and none started */
    kAudioHardwareUnspecifiedError           = 0x77686174, /* 'what' */
    kAudioHardwareUnknownPropertyError       = 0x77686F3F, /* 'who?' */
    kAudioHardwareBadPropertySizeError       = 0x2173697A, /* '!siz' */
    kAudioHardwareIllegalOperationError      = 0x6E6F7065, /* 'nope' */
    kAudioHardwareBadObjectError             = 0x216F626A, /* '!obj' */
    kAudioHardwareBadDeviceError             = 0x21646576, /* '!dev' */
    kAudioHardwareUnsupportedOperationError  = 0x756E6F70  /* 'unop' */
};

/* True when the object has the property. */
extern Boolean AudioObjectHasProperty(AudioObjectID inObjectID, const AudioObjectPropertyAddress *inAddress);
/* The size of the property's value. An unknown object: kAudioHardwareBadObjectError; a property
 * it does not have: kAudioHardwareUnknownPropertyError. The qualifier is not used. */
extern OSStatus AudioObjectGetPropertyDataSize(AudioObjectID inObjectID, const AudioObjectPropertyAddress *inAddress,
                                               UInt32 inQualifierDataSize, const void *inQualifierData, UInt32 *outDataSize);
/* The property's value; *ioDataSize must be at least its size (kAudioHardwareBadPropertySizeError). */
extern OSStatus AudioObjectGetPropertyData(AudioObjectID inObjectID, const AudioObjectPropertyAddress *inAddress,
                                           UInt32 inQualifierDataSize, const void *inQualifierData, UInt32 *ioDataSize,
                                           void *outData);

CF_EXTERN_C_END

#endif
