/*
 * CoreAudio/CoreAudioTypes.h — aqsync's C API (issue 12): the Core Audio data types that Audio
 * Queue Services and Audio File Stream Services use, with Apple's names and x86-64 layouts,
 * written from the references (docs/c-api.md). Four-char codes are written as hexadecimal
 * numbers (gcc warns about multi-character constants); the comment gives the characters.
 */
#ifndef AQSYNC_COREAUDIOTYPES_H
#define AQSYNC_COREAUDIOTYPES_H

#include <MacTypes.h>
#include <CoreFoundation/CFBase.h>

CF_EXTERN_C_BEGIN

/* ---- Stream formats ---------------------------------------------------------------------- */

typedef UInt32 AudioFormatID;
typedef UInt32 AudioFormatFlags;

/* 40 bytes. */
typedef struct AudioStreamBasicDescription {
    Float64          mSampleRate;       /* frames per second */
    AudioFormatID    mFormatID;
    AudioFormatFlags mFormatFlags;
    UInt32           mBytesPerPacket;
    UInt32           mFramesPerPacket;
    UInt32           mBytesPerFrame;
    UInt32           mChannelsPerFrame;
    UInt32           mBitsPerChannel;
    UInt32           mReserved;
} AudioStreamBasicDescription;

enum { kAudioStreamAnyRate = 0 };

/* 16 bytes: one packet of a buffer whose packets vary in size or in frames. */
typedef struct AudioStreamPacketDescription {
    SInt64 mStartOffset;              /* from the start of the buffer's data */
    UInt32 mVariableFramesInPacket;   /* 0 when every packet has mFramesPerPacket frames */
    UInt32 mDataByteSize;
} AudioStreamPacketDescription;

/* 16 bytes: one buffer of audio (issue 23: ExtAudioFileRead and ExtAudioFileWrite take them). For
 * interleaved data mNumberChannels is the format's channels; non-interleaved, 1 a buffer. */
typedef struct AudioBuffer {
    UInt32 mNumberChannels;
    UInt32 mDataByteSize;
    void  *mData;
} AudioBuffer;

/* 24 bytes with its one declared buffer; allocate room for mNumberBuffers of them
 * (offsetof(AudioBufferList, mBuffers) + n * sizeof(AudioBuffer)). */
typedef struct AudioBufferList {
    UInt32      mNumberBuffers;
    AudioBuffer mBuffers[1];
} AudioBufferList;

/* Format IDs. */
CF_ENUM(AudioFormatID) {
    kAudioFormatLinearPCM           = 0x6C70636D, /* 'lpcm' */
    kAudioFormatAC3                 = 0x61632D33, /* 'ac-3' */
    kAudioFormat60958AC3            = 0x63616333, /* 'cac3' */
    kAudioFormatAppleIMA4           = 0x696D6134, /* 'ima4' */
    kAudioFormatMPEG4AAC            = 0x61616320, /* 'aac ' */
    kAudioFormatMPEG4CELP           = 0x63656C70, /* 'celp' */
    kAudioFormatMPEG4HVXC           = 0x68767863, /* 'hvxc' */
    kAudioFormatMPEG4TwinVQ         = 0x74777671, /* 'twvq' */
    kAudioFormatMACE3               = 0x4D414333, /* 'MAC3' */
    kAudioFormatMACE6               = 0x4D414336, /* 'MAC6' */
    kAudioFormatULaw                = 0x756C6177, /* 'ulaw' */
    kAudioFormatALaw                = 0x616C6177, /* 'alaw' */
    kAudioFormatQDesign             = 0x51444D43, /* 'QDMC' */
    kAudioFormatQDesign2            = 0x51444D32, /* 'QDM2' */
    kAudioFormatQUALCOMM            = 0x51636C70, /* 'Qclp' */
    kAudioFormatMPEGLayer1          = 0x2E6D7031, /* '.mp1' */
    kAudioFormatMPEGLayer2          = 0x2E6D7032, /* '.mp2' */
    kAudioFormatMPEGLayer3          = 0x2E6D7033, /* '.mp3' */
    kAudioFormatTimeCode            = 0x74696D65, /* 'time' */
    kAudioFormatMIDIStream          = 0x6D696469, /* 'midi' */
    kAudioFormatParameterValueStream = 0x61707673, /* 'apvs' */
    kAudioFormatAppleLossless       = 0x616C6163, /* 'alac' */
    kAudioFormatMPEG4AAC_HE         = 0x61616368, /* 'aach' */
    kAudioFormatMPEG4AAC_LD         = 0x6161636C, /* 'aacl' */
    kAudioFormatMPEG4AAC_ELD        = 0x61616365, /* 'aace' */
    kAudioFormatMPEG4AAC_ELD_SBR    = 0x61616366, /* 'aacf' */
    kAudioFormatMPEG4AAC_HE_V2      = 0x61616370, /* 'aacp' */
    kAudioFormatMPEG4AAC_Spatial    = 0x61616373, /* 'aacs' */
    kAudioFormatAMR                 = 0x73616D72, /* 'samr' */
    kAudioFormatiLBC                = 0x696C6263, /* 'ilbc' */
    kAudioFormatDVIIntelIMA         = 0x6D730011,
    kAudioFormatMicrosoftGSM        = 0x6D730031,
    kAudioFormatAES3                = 0x61657333, /* 'aes3' */
    kAudioFormatFLAC                = 0x666C6163, /* 'flac' */
    kAudioFormatOpus                = 0x6F707573  /* 'opus' */
};

/* Format flags. */
CF_ENUM(AudioFormatFlags) {
    kAudioFormatFlagIsFloat                  = (1U << 0),
    kAudioFormatFlagIsBigEndian              = (1U << 1),
    kAudioFormatFlagIsSignedInteger          = (1U << 2),
    kAudioFormatFlagIsPacked                 = (1U << 3),
    kAudioFormatFlagIsAlignedHigh            = (1U << 4),
    kAudioFormatFlagIsNonInterleaved         = (1U << 5),
    kAudioFormatFlagIsNonMixable             = (1U << 6),
    kAudioFormatFlagsAreAllClear             = 0x80000000U,

    kLinearPCMFormatFlagIsFloat              = kAudioFormatFlagIsFloat,
    kLinearPCMFormatFlagIsBigEndian          = kAudioFormatFlagIsBigEndian,
    kLinearPCMFormatFlagIsSignedInteger      = kAudioFormatFlagIsSignedInteger,
    kLinearPCMFormatFlagIsPacked             = kAudioFormatFlagIsPacked,
    kLinearPCMFormatFlagIsAlignedHigh        = kAudioFormatFlagIsAlignedHigh,
    kLinearPCMFormatFlagIsNonInterleaved     = kAudioFormatFlagIsNonInterleaved,
    kLinearPCMFormatFlagIsNonMixable         = kAudioFormatFlagIsNonMixable,
    kLinearPCMFormatFlagsSampleFractionShift = 7,
    kLinearPCMFormatFlagsSampleFractionMask  = (0x3FU << 7),
    kLinearPCMFormatFlagsAreAllClear         = kAudioFormatFlagsAreAllClear,

    kAppleLosslessFormatFlag_16BitSourceData = 1,
    kAppleLosslessFormatFlag_20BitSourceData = 2,
    kAppleLosslessFormatFlag_24BitSourceData = 3,
    kAppleLosslessFormatFlag_32BitSourceData = 4
};

/* Linux on x86-64 and arm64 is little-endian: native endian sets no flag. */
CF_ENUM(AudioFormatFlags) {
    kAudioFormatFlagsNativeEndian      = 0,
    kAudioFormatFlagsCanonical         = kAudioFormatFlagIsFloat | kAudioFormatFlagsNativeEndian | kAudioFormatFlagIsPacked,
    kAudioFormatFlagsNativeFloatPacked = kAudioFormatFlagIsFloat | kAudioFormatFlagsNativeEndian | kAudioFormatFlagIsPacked
};

/* The canonical sample types of Apple's (deprecated) definitions, which Apple's Core Audio utility
 * classes (CAStreamBasicDescription) still use: 32-bit floats, as on macOS, unless the program
 * defines CA_PREFER_FIXED_POINT to 1 (then 16-bit integers and 8.24 fixed point, as on iOS before
 * iOS 8). Issue 23. */
#if defined(CA_PREFER_FIXED_POINT) && CA_PREFER_FIXED_POINT
typedef SInt16 AudioSampleType;
typedef SInt32 AudioUnitSampleType;
#define kAudioUnitSampleFractionBits 24
CF_ENUM(AudioFormatFlags) {
    kAudioFormatFlagsAudioUnitCanonical = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagsNativeEndian | kAudioFormatFlagIsPacked
                                          | kAudioFormatFlagIsNonInterleaved | (kAudioUnitSampleFractionBits << kLinearPCMFormatFlagsSampleFractionShift)
};
#else
typedef Float32 AudioSampleType;
typedef Float32 AudioUnitSampleType;
CF_ENUM(AudioFormatFlags) {
    kAudioFormatFlagsAudioUnitCanonical = kAudioFormatFlagIsFloat | kAudioFormatFlagsNativeEndian | kAudioFormatFlagIsPacked | kAudioFormatFlagIsNonInterleaved
};
#endif

/* ---- Time stamps ------------------------------------------------------------------------- */

typedef UInt32 SMPTETimeType;
CF_ENUM(SMPTETimeType) {
    kSMPTETimeType24 = 0, kSMPTETimeType25 = 1, kSMPTETimeType30Drop = 2, kSMPTETimeType30 = 3,
    kSMPTETimeType2997 = 4, kSMPTETimeType2997Drop = 5, kSMPTETimeType60 = 6, kSMPTETimeType5994 = 7,
    kSMPTETimeType60Drop = 8, kSMPTETimeType5994Drop = 9, kSMPTETimeType50 = 10, kSMPTETimeType2398 = 11
};

typedef UInt32 SMPTETimeFlags;
CF_ENUM(SMPTETimeFlags) { kSMPTETimeUnknown = 0, kSMPTETimeValid = (1U << 0), kSMPTETimeRunning = (1U << 1) };

/* 24 bytes. */
typedef struct SMPTETime {
    SInt16         mSubframes;
    SInt16         mSubframeDivisor;
    UInt32         mCounter;
    SMPTETimeType  mType;
    SMPTETimeFlags mFlags;
    SInt16         mHours;
    SInt16         mMinutes;
    SInt16         mSeconds;
    SInt16         mFrames;
} SMPTETime;

typedef UInt32 AudioTimeStampFlags;
CF_ENUM(AudioTimeStampFlags) {
    kAudioTimeStampNothingValid        = 0,
    kAudioTimeStampSampleTimeValid     = (1U << 0),
    kAudioTimeStampHostTimeValid       = (1U << 1),
    kAudioTimeStampRateScalarValid     = (1U << 2),
    kAudioTimeStampWordClockTimeValid  = (1U << 3),
    kAudioTimeStampSMPTETimeValid      = (1U << 4),
    kAudioTimeStampSampleHostTimeValid = kAudioTimeStampSampleTimeValid | kAudioTimeStampHostTimeValid
};

/* 64 bytes. Host time here is nanoseconds on CLOCK_MONOTONIC (docs/c-api.md). */
typedef struct AudioTimeStamp {
    Float64             mSampleTime;
    UInt64              mHostTime;
    Float64             mRateScalar;
    UInt64              mWordClockTime;
    SMPTETime           mSMPTETime;
    AudioTimeStampFlags mFlags;
    UInt32              mReserved;
} AudioTimeStamp;

/* ---- Channel layouts --------------------------------------------------------------------- */

typedef UInt32 AudioChannelLabel;
typedef UInt32 AudioChannelLayoutTag;
typedef UInt32 AudioChannelBitmap;
typedef UInt32 AudioChannelFlags;

/* 20 bytes. */
typedef struct AudioChannelDescription {
    AudioChannelLabel mChannelLabel;
    AudioChannelFlags mChannelFlags;
    Float32           mCoordinates[3];
} AudioChannelDescription;

/* 32 bytes with its one description; a layout with N descriptions takes
 * offsetof(AudioChannelLayout, mChannelDescriptions) + N * sizeof(AudioChannelDescription). */
typedef struct AudioChannelLayout {
    AudioChannelLayoutTag   mChannelLayoutTag;
    AudioChannelBitmap      mChannelBitmap;
    UInt32                  mNumberChannelDescriptions;
    AudioChannelDescription mChannelDescriptions[1];
} AudioChannelLayout;

CF_ENUM(AudioChannelFlags) {
    kAudioChannelFlags_AllOff = 0,
    kAudioChannelFlags_RectangularCoordinates = (1U << 0),
    kAudioChannelFlags_SphericalCoordinates = (1U << 1),
    kAudioChannelFlags_Meters = (1U << 2)
};

CF_ENUM(AudioChannelLabel) {
    kAudioChannelLabel_Unknown = 0xFFFFFFFFU,
    kAudioChannelLabel_Unused = 0,
    kAudioChannelLabel_UseCoordinates = 100,
    kAudioChannelLabel_Left = 1,
    kAudioChannelLabel_Right = 2,
    kAudioChannelLabel_Center = 3,
    kAudioChannelLabel_LFEScreen = 4,
    kAudioChannelLabel_LeftSurround = 5,
    kAudioChannelLabel_RightSurround = 6,
    kAudioChannelLabel_LeftCenter = 7,
    kAudioChannelLabel_RightCenter = 8,
    kAudioChannelLabel_CenterSurround = 9,
    kAudioChannelLabel_LeftSurroundDirect = 10,
    kAudioChannelLabel_RightSurroundDirect = 11,
    kAudioChannelLabel_TopCenterSurround = 12,
    kAudioChannelLabel_VerticalHeightLeft = 13,
    kAudioChannelLabel_VerticalHeightCenter = 14,
    kAudioChannelLabel_VerticalHeightRight = 15,
    kAudioChannelLabel_TopBackLeft = 16,
    kAudioChannelLabel_TopBackCenter = 17,
    kAudioChannelLabel_TopBackRight = 18,
    kAudioChannelLabel_RearSurroundLeft = 33,
    kAudioChannelLabel_RearSurroundRight = 34,
    kAudioChannelLabel_LeftWide = 35,
    kAudioChannelLabel_RightWide = 36,
    kAudioChannelLabel_LFE2 = 37,
    kAudioChannelLabel_LeftTotal = 38,
    kAudioChannelLabel_RightTotal = 39,
    kAudioChannelLabel_HearingImpaired = 40,
    kAudioChannelLabel_Narration = 41,
    kAudioChannelLabel_Mono = 42,
    kAudioChannelLabel_DialogCentricMix = 43,
    kAudioChannelLabel_CenterSurroundDirect = 44,
    kAudioChannelLabel_Haptic = 45,
    kAudioChannelLabel_Ambisonic_W = 200,
    kAudioChannelLabel_Ambisonic_X = 201,
    kAudioChannelLabel_Ambisonic_Y = 202,
    kAudioChannelLabel_Ambisonic_Z = 203,
    kAudioChannelLabel_MS_Mid = 204,
    kAudioChannelLabel_MS_Side = 205,
    kAudioChannelLabel_XY_X = 206,
    kAudioChannelLabel_XY_Y = 207,
    kAudioChannelLabel_HeadphonesLeft = 301,
    kAudioChannelLabel_HeadphonesRight = 302,
    kAudioChannelLabel_ClickTrack = 304,
    kAudioChannelLabel_ForeignLanguage = 305,
    kAudioChannelLabel_Discrete = 400,
    kAudioChannelLabel_Discrete_0 = (1U << 16) | 0,
    kAudioChannelLabel_Discrete_1 = (1U << 16) | 1,
    kAudioChannelLabel_Discrete_2 = (1U << 16) | 2,
    kAudioChannelLabel_Discrete_3 = (1U << 16) | 3,
    kAudioChannelLabel_Discrete_4 = (1U << 16) | 4,
    kAudioChannelLabel_Discrete_5 = (1U << 16) | 5,
    kAudioChannelLabel_Discrete_6 = (1U << 16) | 6,
    kAudioChannelLabel_Discrete_7 = (1U << 16) | 7,
    kAudioChannelLabel_Discrete_8 = (1U << 16) | 8,
    kAudioChannelLabel_Discrete_9 = (1U << 16) | 9,
    kAudioChannelLabel_Discrete_10 = (1U << 16) | 10,
    kAudioChannelLabel_Discrete_11 = (1U << 16) | 11,
    kAudioChannelLabel_Discrete_12 = (1U << 16) | 12,
    kAudioChannelLabel_Discrete_13 = (1U << 16) | 13,
    kAudioChannelLabel_Discrete_14 = (1U << 16) | 14,
    kAudioChannelLabel_Discrete_15 = (1U << 16) | 15,
    kAudioChannelLabel_Discrete_65535 = (1U << 16) | 65535
};

CF_ENUM(AudioChannelBitmap) {
    kAudioChannelBit_Left = (1U << 0),
    kAudioChannelBit_Right = (1U << 1),
    kAudioChannelBit_Center = (1U << 2),
    kAudioChannelBit_LFEScreen = (1U << 3),
    kAudioChannelBit_LeftSurround = (1U << 4),
    kAudioChannelBit_RightSurround = (1U << 5),
    kAudioChannelBit_LeftCenter = (1U << 6),
    kAudioChannelBit_RightCenter = (1U << 7),
    kAudioChannelBit_CenterSurround = (1U << 8),
    kAudioChannelBit_LeftSurroundDirect = (1U << 9),
    kAudioChannelBit_RightSurroundDirect = (1U << 10),
    kAudioChannelBit_TopCenterSurround = (1U << 11),
    kAudioChannelBit_VerticalHeightLeft = (1U << 12),
    kAudioChannelBit_VerticalHeightCenter = (1U << 13),
    kAudioChannelBit_VerticalHeightRight = (1U << 14),
    kAudioChannelBit_TopBackLeft = (1U << 15),
    kAudioChannelBit_TopBackCenter = (1U << 16),
    kAudioChannelBit_TopBackRight = (1U << 17)
};

/* A tag is (index << 16) | number of channels. */
#define AudioChannelLayoutTag_GetNumberOfChannels(layoutTag) ((UInt32)((layoutTag) & 0x0000FFFF))

CF_ENUM(AudioChannelLayoutTag) {
    kAudioChannelLayoutTag_UseChannelDescriptions = (0U << 16) | 0,
    kAudioChannelLayoutTag_UseChannelBitmap       = (1U << 16) | 0,
    kAudioChannelLayoutTag_Mono                   = (100U << 16) | 1,
    kAudioChannelLayoutTag_Stereo                 = (101U << 16) | 2,
    kAudioChannelLayoutTag_StereoHeadphones       = (102U << 16) | 2,
    kAudioChannelLayoutTag_MatrixStereo           = (103U << 16) | 2,
    kAudioChannelLayoutTag_MidSide                = (104U << 16) | 2,
    kAudioChannelLayoutTag_XY                     = (105U << 16) | 2,
    kAudioChannelLayoutTag_Binaural               = (106U << 16) | 2,
    kAudioChannelLayoutTag_Ambisonic_B_Format     = (107U << 16) | 4,
    kAudioChannelLayoutTag_Quadraphonic           = (108U << 16) | 4,
    kAudioChannelLayoutTag_Pentagonal             = (109U << 16) | 5,
    kAudioChannelLayoutTag_Hexagonal              = (110U << 16) | 6,
    kAudioChannelLayoutTag_Octagonal              = (111U << 16) | 8,
    kAudioChannelLayoutTag_Cube                   = (112U << 16) | 8,
    kAudioChannelLayoutTag_MPEG_1_0               = kAudioChannelLayoutTag_Mono,
    kAudioChannelLayoutTag_MPEG_2_0               = kAudioChannelLayoutTag_Stereo,
    kAudioChannelLayoutTag_MPEG_3_0_A             = (113U << 16) | 3,
    kAudioChannelLayoutTag_MPEG_3_0_B             = (114U << 16) | 3,
    kAudioChannelLayoutTag_MPEG_4_0_A             = (115U << 16) | 4,
    kAudioChannelLayoutTag_MPEG_4_0_B             = (116U << 16) | 4,
    kAudioChannelLayoutTag_MPEG_5_0_A             = (117U << 16) | 5,
    kAudioChannelLayoutTag_MPEG_5_0_B             = (118U << 16) | 5,
    kAudioChannelLayoutTag_MPEG_5_0_C             = (119U << 16) | 5,
    kAudioChannelLayoutTag_MPEG_5_0_D             = (120U << 16) | 5,
    kAudioChannelLayoutTag_MPEG_5_1_A             = (121U << 16) | 6,
    kAudioChannelLayoutTag_MPEG_5_1_B             = (122U << 16) | 6,
    kAudioChannelLayoutTag_MPEG_5_1_C             = (123U << 16) | 6,
    kAudioChannelLayoutTag_MPEG_5_1_D             = (124U << 16) | 6,
    kAudioChannelLayoutTag_MPEG_6_1_A             = (125U << 16) | 7,
    kAudioChannelLayoutTag_MPEG_7_1_A             = (126U << 16) | 8,
    kAudioChannelLayoutTag_MPEG_7_1_B             = (127U << 16) | 8,
    kAudioChannelLayoutTag_MPEG_7_1_C             = (128U << 16) | 8,
    kAudioChannelLayoutTag_Emagic_Default_7_1     = (129U << 16) | 8,
    kAudioChannelLayoutTag_SMPTE_DTV              = (130U << 16) | 8,
    kAudioChannelLayoutTag_ITU_1_0                = kAudioChannelLayoutTag_Mono,
    kAudioChannelLayoutTag_ITU_2_0                = kAudioChannelLayoutTag_Stereo,
    kAudioChannelLayoutTag_ITU_2_1                = (131U << 16) | 3,
    kAudioChannelLayoutTag_ITU_2_2                = (132U << 16) | 4,
    kAudioChannelLayoutTag_ITU_3_0                = kAudioChannelLayoutTag_MPEG_3_0_A,
    kAudioChannelLayoutTag_ITU_3_1                = kAudioChannelLayoutTag_MPEG_4_0_A,
    kAudioChannelLayoutTag_ITU_3_2                = kAudioChannelLayoutTag_MPEG_5_0_A,
    kAudioChannelLayoutTag_ITU_3_2_1              = kAudioChannelLayoutTag_MPEG_5_1_A,
    kAudioChannelLayoutTag_ITU_3_4_1              = kAudioChannelLayoutTag_MPEG_7_1_C,
    kAudioChannelLayoutTag_AudioUnit_4            = kAudioChannelLayoutTag_Quadraphonic,
    kAudioChannelLayoutTag_AudioUnit_5            = kAudioChannelLayoutTag_Pentagonal,
    kAudioChannelLayoutTag_AudioUnit_6            = kAudioChannelLayoutTag_Hexagonal,
    kAudioChannelLayoutTag_AudioUnit_8            = kAudioChannelLayoutTag_Octagonal,
    kAudioChannelLayoutTag_AudioUnit_5_0          = kAudioChannelLayoutTag_MPEG_5_0_B,
    kAudioChannelLayoutTag_AudioUnit_6_0          = (139U << 16) | 6,
    kAudioChannelLayoutTag_AudioUnit_7_0          = (136U << 16) | 7,
    kAudioChannelLayoutTag_AudioUnit_7_0_Front    = (148U << 16) | 7,
    kAudioChannelLayoutTag_AudioUnit_5_1          = kAudioChannelLayoutTag_MPEG_5_1_A,
    kAudioChannelLayoutTag_AudioUnit_6_1          = kAudioChannelLayoutTag_MPEG_6_1_A,
    kAudioChannelLayoutTag_AudioUnit_7_1          = kAudioChannelLayoutTag_MPEG_7_1_C,
    kAudioChannelLayoutTag_AudioUnit_7_1_Front    = kAudioChannelLayoutTag_MPEG_7_1_A,
    kAudioChannelLayoutTag_AAC_3_0                = kAudioChannelLayoutTag_MPEG_3_0_B,
    kAudioChannelLayoutTag_AAC_Quadraphonic       = kAudioChannelLayoutTag_Quadraphonic,
    kAudioChannelLayoutTag_AAC_4_0                = kAudioChannelLayoutTag_MPEG_4_0_B,
    kAudioChannelLayoutTag_AAC_5_0                = kAudioChannelLayoutTag_MPEG_5_0_D,
    kAudioChannelLayoutTag_AAC_5_1                = kAudioChannelLayoutTag_MPEG_5_1_D,
    kAudioChannelLayoutTag_AAC_6_0                = (141U << 16) | 6,
    kAudioChannelLayoutTag_AAC_6_1                = (142U << 16) | 7,
    kAudioChannelLayoutTag_AAC_7_0                = (143U << 16) | 7,
    kAudioChannelLayoutTag_AAC_7_1                = kAudioChannelLayoutTag_MPEG_7_1_B,
    kAudioChannelLayoutTag_AAC_Octagonal          = (144U << 16) | 8,
    kAudioChannelLayoutTag_TMH_10_2_std           = (145U << 16) | 16,
    kAudioChannelLayoutTag_TMH_10_2_full          = (146U << 16) | 21,
    kAudioChannelLayoutTag_DiscreteInOrder        = (147U << 16) | 0, /* | number of channels */
    kAudioChannelLayoutTag_Unknown                = 0xFFFF0000U
};

CF_EXTERN_C_END

#endif
