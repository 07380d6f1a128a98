/*
 * AudioToolbox/AudioConverter.h — aqsync's C API (issue 23): Audio Converter Services, the part
 * file converters use: a converter from a compressed format (AAC, MP3, ALAC, FLAC, Opus, Vorbis:
 * libavcodec) or linear PCM to linear PCM, or from linear PCM to AAC LC or Apple Lossless
 * (libavcodec's encoders), at any rates and channel counts, pulled with
 * AudioConverterFillComplexBuffer. Also the converter property IDs programs pass to an audio
 * queue (Apple's queue forwards them to its converter): AudioQueueGetProperty answers
 * kAudioConverterCurrentOutputStreamDescription and kAudioConverterCurrentInputStreamDescription
 * with the queue's stream description and kAudioConverterCompressionMagicCookie and
 * kAudioConverterDecompressionMagicCookie with its magic cookie;
 * kAudioConverterPropertyMaximumOutputPacketSize is the queue's own
 * kAudioQueueProperty_MaximumOutputPacketSize (the same ID). docs/c-api.md, "Audio Converter
 * Services", says what is not there yet.
 *
 * Threads: a converter is used from one thread at a time, any thread; AudioConverterFillComplexBuffer
 * calls the input procedure on that thread, before it returns, and decodes or encodes there. Not for a
 * realtime thread.
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
    kAudioConverterPropertyMaximumOutputPacketSize = 0x786F7073, /* 'xops': kAudioQueueProperty_MaximumOutputPacketSize's ID */
    kAudioConverterChannelMap                     = 0x63686D70, /* 'chmp' SInt32 per destination channel: its source channel, or -1 */
    kAudioConverterSampleRateConverterQuality     = 0x73726371, /* 'srcq' UInt32, a kAudioConverterQuality_ value */
    kAudioConverterSampleRateConverterComplexity  = 0x73726361, /* 'srca' UInt32, a kAudioConverterSampleRateConverterComplexity_ value */
    kAudioConverterEncodeBitRate                  = 0x62726174, /* 'brat' UInt32 bits per second: an AAC encoder's target */
    kAudioConverterCodecQuality                   = 0x63647175, /* 'cdqu' UInt32, a kAudioConverterQuality_ value: an encoder's (kept and read back) */
    kAudioConverterPrimeInfo                      = 0x7072696D, /* 'prim' AudioConverterPrimeInfo */
    /* Declared for the programs that ask (Apple's ConvertFile): channel layouts are not kept by
     * a converter here, so both answer kAudioConverterErr_PropertyNotSupported, and such a
     * program takes the layout from its file, as it does when Apple's converter has none. */
    kAudioConverterInputChannelLayout             = 0x69636C20, /* 'icl ' AudioChannelLayout */
    kAudioConverterOutputChannelLayout            = 0x6F636C20, /* 'ocl ' AudioChannelLayout */
    /* UInt32, 1 if a hardware codec can resume after an interruption (iOS): answered
     * kAudioConverterErr_PropertyNotSupported, which Apple's samples take for a software codec,
     * one that can always resume. */
    kAudioConverterPropertyCanResumeFromInterruption = 0x6372736D /* 'crsm' */
};

CF_ENUM(UInt32) {
    kAudioConverterQuality_Max    = 0x7F,
    kAudioConverterQuality_High   = 0x60,
    kAudioConverterQuality_Medium = 0x40,
    kAudioConverterQuality_Low    = 0x20,
    kAudioConverterQuality_Min    = 0
};

CF_ENUM(UInt32) {
    kAudioConverterSampleRateConverterComplexity_Linear       = 0x6C696E65, /* 'line' */
    kAudioConverterSampleRateConverterComplexity_Normal       = 0x6E6F726D, /* 'norm' */
    kAudioConverterSampleRateConverterComplexity_Mastering    = 0x62617473, /* 'bats' */
    kAudioConverterSampleRateConverterComplexity_MinimumPhase = 0x6D696E70  /* 'minp' */
};

typedef struct OpaqueAudioConverter *AudioConverterRef;

/* kAudioConverterPrimeInfo: an encoder's leading frames are the priming its packets begin with
 * (AAC 1024 here, ALAC 0) and its trailing frames the padding of its last packet, known once the
 * input has ended (0 before). A decoder or a PCM converter has neither by default (0, 0): what
 * it gives starts at its input's frame 0 (the resampler's delay is removed). Set on a decoder
 * (issue 23, as Apple's ConvertFile does with a file's packet table), leadingFrames decoded
 * frames are dropped from the start of the stream (after creation and after each reset) and
 * trailingFrames is kept and read back without cutting anything, as Apple's decoders; a PCM
 * converter keeps both and uses neither; an encoder's is read-only. */
typedef struct AudioConverterPrimeInfo {
    UInt32 leadingFrames;
    UInt32 trailingFrames;
} AudioConverterPrimeInfo;

/* AudioConverterNewSpecific's codec descriptions (Apple's AudioClassDescription). */
typedef struct AudioClassDescription {
    OSType mType;
    OSType mSubType;
    OSType mManufacturer;
} AudioClassDescription;

CF_ENUM(OSType) {
    kAudioDecoderComponentType           = 0x61646563, /* 'adec' */
    kAudioEncoderComponentType           = 0x61656E63, /* 'aenc' */
    kAppleSoftwareAudioCodecManufacturer = 0x6170706C, /* 'appl' */
    kAppleHardwareAudioCodecManufacturer = 0x61706877  /* 'aphw' */
};

CF_ENUM(OSStatus) {
    kAudioConverterErr_FormatNotSupported        = 0x666D743F, /* 'fmt?' a conversion this does not make */
    kAudioConverterErr_OperationNotSupported     = 0x6F703F3F, /* 'op??' */
    kAudioConverterErr_PropertyNotSupported      = 0x70726F70, /* 'prop' */
    kAudioConverterErr_InvalidInputSize          = 0x696E737A, /* 'insz' */
    kAudioConverterErr_InvalidOutputSize         = 0x6F74737A, /* 'otsz' an output buffer too small for one frame */
    kAudioConverterErr_UnspecifiedError          = 0x77686174, /* 'what' */
    kAudioConverterErr_BadPropertySizeError      = 0x2173697A, /* '!siz' */
    kAudioConverterErr_RequiresPacketDescriptionsError = 0x21706B64, /* '!pkd' compressed input, or an encoder's output, without its descriptions */
    kAudioConverterErr_InputSampleRateOutOfRange = 0x21697372, /* '!isr' */
    kAudioConverterErr_OutputSampleRateOutOfRange = 0x216F7372, /* '!osr' */
    /* Apple's hardware codecs' codes (iOS), declared for the programs that test for them
     * (iPhoneACFileConvertTest): never answered here, every codec is software. */
    kAudioConverterErr_HardwareInUse             = 0x68776975, /* 'hwiu' */
    kAudioConverterErr_NoHardwarePermission      = 0x7065726D  /* 'perm' */
};

/* Asked for input by AudioConverterFillComplexBuffer: set *ioNumberDataPackets to the packets
 * given (0: the input has ended), ioData's first buffer to them, and, for compressed input,
 * *outDataPacketDescription to their descriptions. A result other than noErr ends the fill,
 * which returns it with the frames made so far (the "no data yet" convention). */
typedef OSStatus (*AudioConverterComplexInputDataProc)(AudioConverterRef inAudioConverter, UInt32 *ioNumberDataPackets,
                                                       AudioBufferList *ioData,
                                                       AudioStreamPacketDescription **outDataPacketDescription,
                                                       void *inUserData);

/* A converter from inSourceFormat (a format PacketDecoder decodes, or linear PCM) to
 * inDestinationFormat (linear PCM: 16/24/32-bit signed integers or 32-bit floats, interleaved or
 * not, either byte order; or, from linear PCM, AAC LC 'aac ' or Apple Lossless 'alac' of 1 to 8
 * channels, completed as kAudioFormatProperty_FormatInfo completes them), at any rates from 1000 to 768000 Hz (libsoxr, high quality, linear
 * phase; kAudioConverterErr_InputSampleRateOutOfRange / …OutputSampleRateOutOfRange outside)
 * and any channel counts (kAudioConverterChannelMap; by default, as Apple's: the first source
 * channels to the first destination channels, extra sources dropped, extra destinations
 * silent); otherwise kAudioConverterErr_FormatNotSupported. A decoder that needs a magic cookie
 * (AAC, ALAC, Opus, Vorbis) gets it with kAudioConverterDecompressionMagicCookie before the
 * first fill. */
extern OSStatus AudioConverterNew(const AudioStreamBasicDescription *inSourceFormat,
                                  const AudioStreamBasicDescription *inDestinationFormat, AudioConverterRef *outAudioConverter);
/* AudioConverterNew with codec descriptions: they are accepted (any number, NULL when 0) and
 * not used, as there is one codec a format here. */
extern OSStatus AudioConverterNewSpecific(const AudioStreamBasicDescription *inSourceFormat,
                                          const AudioStreamBasicDescription *inDestinationFormat, UInt32 inNumberClassDescriptions,
                                          const AudioClassDescription *inClassDescriptions, AudioConverterRef *outAudioConverter);
extern OSStatus AudioConverterDispose(AudioConverterRef inAudioConverter);
/* Drops what the converter holds (decoded frames not given yet, the decoder's or encoder's
 * state): the next input is the start of a new stream. */
extern OSStatus AudioConverterReset(AudioConverterRef inAudioConverter);
/* Properties: kAudioConverterCurrentInputStreamDescription, …CurrentOutputStreamDescription,
 * kAudioConverterPropertyMaximumOutputPacketSize (the output's bytes a frame; an encoder's
 * largest packet), kAudioConverterPrimeInfo (settable when not an encoder), and, settable,
 * kAudioConverterDecompressionMagicCookie, kAudioConverterChannelMap,
 * kAudioConverterSampleRateConverterQuality and …Complexity (kept and read back; libsoxr's
 * high-quality recipe serves them all). An encoder's: kAudioConverterCompressionMagicCookie
 * (read-only: AAC's ES descriptor, ALAC's ALACSpecificConfig) and, for AAC,
 * kAudioConverterEncodeBitRate (settable before the first fill; 0 or unset: 96000 a channel);
 * kAudioConverterCodecQuality (settable, kept and read back: libavcodec's encoders run at
 * their defaults, AAC's quality following the bit rate; default kAudioConverterQuality_High).
 * Others: kAudioConverterErr_PropertyNotSupported. */
extern OSStatus AudioConverterGetPropertyInfo(AudioConverterRef inAudioConverter, AudioConverterPropertyID inPropertyID,
                                              UInt32 *outSize, Boolean *outWritable);
extern OSStatus AudioConverterGetProperty(AudioConverterRef inAudioConverter, AudioConverterPropertyID inPropertyID,
                                          UInt32 *ioPropertyDataSize, void *outPropertyData);
extern OSStatus AudioConverterSetProperty(AudioConverterRef inAudioConverter, AudioConverterPropertyID inPropertyID,
                                          UInt32 inPropertyDataSize, const void *inPropertyData);
/* Fills outOutputData with up to *ioOutputDataPacketSize frames (output packets), asking
 * inInputDataProc for input as needed; on return *ioOutputDataPacketSize is the frames made (0:
 * the input has ended) and each buffer's mDataByteSize their bytes. To linear PCM,
 * outPacketDescription is not used. An encoder fills the first buffer with as many whole
 * packets as fit (kAudioConverterErr_InvalidOutputSize when not even one does) and describes
 * each in outPacketDescription (required: kAudioConverterErr_RequiresPacketDescriptionsError);
 * once the input has ended its last packets follow, then 0. Blocks, decodes and encodes on
 * the calling thread. */
extern OSStatus AudioConverterFillComplexBuffer(AudioConverterRef inAudioConverter, AudioConverterComplexInputDataProc inInputDataProc,
                                                void *inInputDataProcUserData, UInt32 *ioOutputDataPacketSize,
                                                AudioBufferList *outOutputData, AudioStreamPacketDescription *outPacketDescription);

/* One linear PCM format to another at the same rate (else kAudioConverterErr_OperationNotSupported),
 * interleaved both: inInputDataSize bytes of whole frames in, *ioOutputDataSize bytes of room
 * (enough for them all, else kAudioConverterErr_InvalidOutputSize) out, set to the bytes
 * written. Starts the converter's stream over before and after. */
extern OSStatus AudioConverterConvertBuffer(AudioConverterRef inAudioConverter, UInt32 inInputDataSize, const void *inInputData,
                                            UInt32 *ioOutputDataSize, void *outOutputData);
/* The same for inNumberPCMFrames frames in buffer lists (the source interleaved or mono; the
 * destination's buffers each with room for them all). */
extern OSStatus AudioConverterConvertComplexBuffer(AudioConverterRef inAudioConverter, UInt32 inNumberPCMFrames,
                                                   const AudioBufferList *inInputData, AudioBufferList *outOutputData);

CF_EXTERN_C_END

#endif
