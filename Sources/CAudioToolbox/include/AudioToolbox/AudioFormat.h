/*
 * AudioToolbox/AudioFormat.h — aqsync's C API (issue 23): the part of Audio Format Services
 * recorders use to complete a stream description: kAudioFormatProperty_FormatInfo; (issue 23)
 * the formats an AAC stream decodes to, kAudioFormatProperty_FormatList; and the lists of
 * formats converters decode and encode (…DecodeFormatIDs, …EncodeFormatIDs). Written from
 * Apple's Audio Format Services reference. Any thread; never blocks.
 */
#ifndef AQSYNC_AUDIOFORMAT_H
#define AQSYNC_AUDIOFORMAT_H

#include <CoreAudio/CoreAudioTypes.h>

CF_EXTERN_C_BEGIN

typedef UInt32 AudioFormatPropertyID;

#ifndef AQSYNC_HAVE_AudioFormatListItem
#define AQSYNC_HAVE_AudioFormatListItem 1
/* 48 bytes. */
typedef struct AudioFormatListItem {
    AudioStreamBasicDescription mASBD;
    AudioChannelLayoutTag       mChannelLayoutTag;
} AudioFormatListItem;
#endif

/* The specifier of kAudioFormatProperty_FormatList: a format and its magic cookie. */
typedef struct AudioFormatInfo {
    AudioStreamBasicDescription mASBD;
    const void                 *mMagicCookie;
    UInt32                      mMagicCookieSize;
} AudioFormatInfo;

CF_ENUM(AudioFormatPropertyID) {
    /* In and out: an AudioStreamBasicDescription with at least mFormatID (and, for linear PCM,
     * mBitsPerChannel and mChannelsPerFrame) set; the rest is filled: linear PCM's packed sizes
     * (1 frame a packet), the frames per packet of AAC (1024), HE-AAC and HE-AAC v2 (2048),
     * ALAC (4096), MP1 (384), MP2 and MP3 (1152), Opus (960, at 48 kHz), FLAC (0: it varies). The specifier (a magic cookie) is
     * accepted and not read. */
    kAudioFormatProperty_FormatInfo = 0x666D7469, /* 'fmti' */
    /* Specifier: an AudioFormatInfo (format + magic cookie). Value: AudioFormatListItem[], the
     * formats the stream can be decoded to, the richest first. For AAC ('aac ', 'aach', 'aacp')
     * with a cookie (an AudioSpecificConfig or an esds): HE-AAC v2 ('aacp', stereo), HE-AAC
     * ('aach'), both at the SBR rate with 2048 frames a packet, when the config signals them or
     * (implicit signalling) when it does not and the core runs at 24 kHz or less; then the LC
     * core ('aac ', 1024 frames). Any other format: one item, the format itself. */
    kAudioFormatProperty_FormatList = 0x666C7374, /* 'flst' */
    /* Specifier: one or more AudioFormatListItem (a FormatList's). Value: a UInt32, the index of
     * the first item an output queue can play (the format ID, rate and channels decodable here);
     * none: kAudioFormatUnsupportedDataFormatError; a specifier not a whole number of items:
     * kAudioFormatBadSpecifierSizeError. */
    kAudioFormatProperty_FirstPlayableFormatFromList = 0x6670666C, /* 'fpfl' */
    /* Out: an array of UInt32 format IDs (no specifier): the formats an AudioConverter decodes
     * here — linear PCM, u-law, a-law, then those of MPEG Layers I–III '.mp1' '.mp2' '.mp3', AAC
     * 'aac ', HE-AAC 'aach', HE-AAC v2 'aacp', Apple Lossless 'alac', FLAC 'flac', Opus 'opus',
     * Vorbis 'vorb' whose decoder the libavcodec loaded has. */
    kAudioFormatProperty_DecodeFormatIDs = 0x61636966, /* 'acif' */
    /* Out: the same for encoding: linear PCM, then AAC 'aac ' and Apple Lossless 'alac' when
     * libavcodec has their encoders. A size too small for them all gets as many as fit (and
     * *ioPropertyDataSize says how many bytes). */
    kAudioFormatProperty_EncodeFormatIDs = 0x61636F66  /* 'acof' */
};

CF_ENUM(OSStatus) {
    kAudioFormatUnspecifiedError        = 0x77686174, /* 'what' */
    kAudioFormatUnsupportedPropertyError = 0x70726F70, /* 'prop' */
    kAudioFormatBadPropertySizeError    = 0x2173697A, /* '!siz' */
    kAudioFormatBadSpecifierSizeError   = 0x21737063, /* '!spc' */
    kAudioFormatUnknownFormatError      = 0x21666D74  /* '!fmt' */
};
#ifndef AQSYNC_HAVE_kAudioFormatUnsupportedDataFormatError
#define AQSYNC_HAVE_kAudioFormatUnsupportedDataFormatError 1
CF_ENUM(OSStatus) { kAudioFormatUnsupportedDataFormatError = 0x666D743F /* 'fmt?' */ };
#endif

/* The size of the property's value (FormatInfo: sizeof(AudioStreamBasicDescription);
 * DecodeFormatIDs, EncodeFormatIDs: 4 bytes an ID). */
extern OSStatus AudioFormatGetPropertyInfo(AudioFormatPropertyID inPropertyID, UInt32 inSpecifierSize, const void *inSpecifier,
                                           UInt32 *outPropertyDataSize);
/* The property's value. FormatInfo: *ioPropertyDataSize must be at least 40 (else
 * kAudioFormatBadPropertySizeError); a format this does not know:
 * kAudioFormatUnsupportedDataFormatError; linear PCM without bits or channels:
 * kAudioFormatUnsupportedDataFormatError; another property: kAudioFormatUnsupportedPropertyError. */
extern OSStatus AudioFormatGetProperty(AudioFormatPropertyID inPropertyID, UInt32 inSpecifierSize, const void *inSpecifier,
                                       UInt32 *ioPropertyDataSize, void *outPropertyData);

CF_EXTERN_C_END

#endif
