/*
 * AudioToolbox/AudioFileStream.h — aqsync's C API (issue 12): Audio File Stream Services, the
 * push parser, written from the Audio File Stream Services Reference; implemented by
 * libAudioToolbox.so on aqsync's parser (docs/file-stream.md). A stream is used from one thread
 * at a time; its callbacks run on the thread that calls AudioFileStreamParseBytes (or Seek),
 * before the call returns.
 */
#ifndef AQSYNC_AUDIOFILESTREAM_H
#define AQSYNC_AUDIOFILESTREAM_H

#include <CoreAudio/CoreAudioTypes.h>

CF_EXTERN_C_BEGIN

/* ---- File types (AudioFile.h on Apple's systems); the parser reads those marked * ---------- */
#ifndef AQSYNC_HAVE_AudioFileTypeID
#define AQSYNC_HAVE_AudioFileTypeID 1
typedef UInt32 AudioFileTypeID;
CF_ENUM(AudioFileTypeID) {
    kAudioFileAIFFType         = 0x41494646, /* 'AIFF' * */
    kAudioFileAIFCType         = 0x41494643, /* 'AIFC' * */
    kAudioFileWAVEType         = 0x57415645, /* 'WAVE' * */
    kAudioFileRF64Type         = 0x52463634, /* 'RF64' * */
    kAudioFileBW64Type         = 0x42573634, /* 'BW64' * */
    kAudioFileWave64Type       = 0x57363466, /* 'W64f' * */
    kAudioFileSoundDesigner2Type = 0x53643266, /* 'Sd2f' */
    kAudioFileNextType         = 0x4E655854, /* 'NeXT' * */
    kAudioFileMP3Type          = 0x4D504733, /* 'MPG3' * */
    kAudioFileMP2Type          = 0x4D504732, /* 'MPG2' * */
    kAudioFileMP1Type          = 0x4D504731, /* 'MPG1' * */
    kAudioFileAC3Type          = 0x61632D33, /* 'ac-3' */
    kAudioFileAAC_ADTSType     = 0x61647473, /* 'adts' * */
    kAudioFileMPEG4Type        = 0x6D703466, /* 'mp4f' * */
    kAudioFileM4AType          = 0x6D346166, /* 'm4af' * */
    kAudioFileM4BType          = 0x6D346266, /* 'm4bf' */
    kAudioFileCAFType          = 0x63616666, /* 'caff' * */
    kAudioFile3GPType          = 0x33677070, /* '3gpp' */
    kAudioFile3GP2Type         = 0x33677032, /* '3gp2' */
    kAudioFileAMRType          = 0x616D7266, /* 'amrf' */
    kAudioFileFLACType         = 0x666C6163, /* 'flac' * */
    kAudioFileLATMInLOASType   = 0x6C6F6173  /* 'loas' */
};
#endif

/* ---- Result codes ------------------------------------------------------------------------ */
CF_ENUM(OSStatus) {
    kAudioFileStreamError_UnsupportedFileType      = 0x7479703F, /* 'typ?' */
    kAudioFileStreamError_UnsupportedDataFormat    = 0x666D743F, /* 'fmt?' */
    kAudioFileStreamError_UnsupportedProperty      = 0x7074793F, /* 'pty?' */
    kAudioFileStreamError_BadPropertySize          = 0x2173697A, /* '!siz' */
    kAudioFileStreamError_NotOptimized             = 0x6F70746D, /* 'optm' */
    kAudioFileStreamError_InvalidPacketOffset      = 0x70636B3F, /* 'pck?' */
    kAudioFileStreamError_InvalidFile              = 0x6474613F, /* 'dta?' */
    kAudioFileStreamError_ValueUnknown             = 0x756E6B3F, /* 'unk?' */
    kAudioFileStreamError_DataUnavailable          = 0x6D6F7265, /* 'more' */
    kAudioFileStreamError_IllegalOperation         = 0x6E6F7065, /* 'nope' */
    kAudioFileStreamError_UnspecifiedError         = 0x7768743F, /* 'wht?' */
    kAudioFileStreamError_DiscontinuityCantRecover = 0x64736321  /* 'dsc!' */
};

/* ---- Flags ------------------------------------------------------------------------------- */
/* Every property stays readable after its notification, the magic cookie too: the listener
 * always gets PropertyIsCached, and setting CacheProperty changes nothing (issue 22). */
typedef UInt32 AudioFileStreamPropertyFlags;
CF_ENUM(AudioFileStreamPropertyFlags) {
    kAudioFileStreamPropertyFlag_PropertyIsCached = 1,
    kAudioFileStreamPropertyFlag_CacheProperty    = 2
};
typedef UInt32 AudioFileStreamParseFlags;
CF_ENUM(AudioFileStreamParseFlags) { kAudioFileStreamParseFlag_Discontinuity = 1 };
typedef UInt32 AudioFileStreamSeekFlags;
CF_ENUM(AudioFileStreamSeekFlags) { kAudioFileStreamSeekFlag_OffsetIsEstimated = 1 };

/* ---- Properties -------------------------------------------------------------------------- */
typedef UInt32 AudioFileStreamPropertyID;
CF_ENUM(AudioFileStreamPropertyID) {
    kAudioFileStreamProperty_ReadyToProducePackets = 0x72656479, /* 'redy' UInt32 */
    kAudioFileStreamProperty_FileFormat            = 0x66666D74, /* 'ffmt' AudioFileTypeID */
    kAudioFileStreamProperty_DataFormat            = 0x64666D74, /* 'dfmt' AudioStreamBasicDescription */
    kAudioFileStreamProperty_FormatList            = 0x666C7374, /* 'flst' AudioFormatListItem[] */
    kAudioFileStreamProperty_MagicCookieData       = 0x6D676963, /* 'mgic' bytes */
    kAudioFileStreamProperty_AudioDataByteCount    = 0x62636E74, /* 'bcnt' UInt64 */
    kAudioFileStreamProperty_AudioDataPacketCount  = 0x70636E74, /* 'pcnt' UInt64 */
    kAudioFileStreamProperty_MaximumPacketSize     = 0x70737A65, /* 'psze' UInt32 */
    kAudioFileStreamProperty_DataOffset            = 0x646F6666, /* 'doff' SInt64 */
    kAudioFileStreamProperty_ChannelLayout         = 0x636D6170, /* 'cmap' AudioChannelLayout */
    kAudioFileStreamProperty_PacketToFrame         = 0x706B6672, /* 'pkfr' AudioFramePacketTranslation */
    kAudioFileStreamProperty_FrameToPacket         = 0x6672706B, /* 'frpk' AudioFramePacketTranslation */
    kAudioFileStreamProperty_PacketToByte          = 0x706B6279, /* 'pkby' AudioBytePacketTranslation */
    kAudioFileStreamProperty_ByteToPacket          = 0x6279706B, /* 'bypk' AudioBytePacketTranslation */
    kAudioFileStreamProperty_PacketTableInfo       = 0x706E666F, /* 'pnfo' AudioFilePacketTableInfo */
    kAudioFileStreamProperty_PacketSizeUpperBound  = 0x706B7562, /* 'pkub' UInt32 */
    kAudioFileStreamProperty_AverageBytesPerPacket = 0x61627070, /* 'abpp' Float64 */
    kAudioFileStreamProperty_BitRate               = 0x62726174  /* 'brat' UInt32 */
};

/* ---- Structures the properties use (AudioFile.h / AudioFormat.h on Apple's systems) ------- */
#ifndef AQSYNC_HAVE_AudioFilePacketTableInfo
#define AQSYNC_HAVE_AudioFilePacketTableInfo 1
/* 16 bytes. */
typedef struct AudioFilePacketTableInfo {
    SInt64 mNumberValidFrames;
    SInt32 mPrimingFrames;
    SInt32 mRemainderFrames;
} AudioFilePacketTableInfo;
/* 24 bytes. */
typedef struct AudioFramePacketTranslation {
    SInt64 mFrame;
    SInt64 mPacket;
    UInt32 mFrameOffsetInPacket;
} AudioFramePacketTranslation;
typedef UInt32 AudioBytePacketTranslationFlags;
CF_ENUM(AudioBytePacketTranslationFlags) { kBytePacketTranslationFlag_IsEstimate = 1 };
/* 24 bytes. */
typedef struct AudioBytePacketTranslation {
    SInt64 mByte;
    SInt64 mPacket;
    UInt32 mByteOffsetInPacket;
    AudioBytePacketTranslationFlags mFlags;
} AudioBytePacketTranslation;
#endif
#ifndef AQSYNC_HAVE_AudioFormatListItem
#define AQSYNC_HAVE_AudioFormatListItem 1
/* 48 bytes. */
typedef struct AudioFormatListItem {
    AudioStreamBasicDescription mASBD;
    AudioChannelLayoutTag       mChannelLayoutTag;
} AudioFormatListItem;
#endif

typedef struct OpaqueAudioFileStreamID *AudioFileStreamID;

/* ---- Callbacks (both on the parsing thread, inside AudioFileStreamParseBytes) ------------- */
typedef void (*AudioFileStream_PropertyListenerProc)(void *inClientData, AudioFileStreamID inAudioFileStream,
                                                     AudioFileStreamPropertyID inPropertyID,
                                                     AudioFileStreamPropertyFlags *ioFlags);
/* inPacketDescriptions is NULL for constant-size packets (PCM). */
typedef void (*AudioFileStream_PacketsProc)(void *inClientData, UInt32 inNumberBytes, UInt32 inNumberPackets,
                                            const void *inInputData,
                                            AudioStreamPacketDescription *inPacketDescriptions);

/* ---- Functions --------------------------------------------------------------------------- */
/* inFileTypeHint 0: detect. Any thread; the stream then belongs to one thread at a time. */
extern OSStatus AudioFileStreamOpen(void *inClientData, AudioFileStream_PropertyListenerProc inPropertyListenerProc,
                                    AudioFileStream_PacketsProc inPacketsProc, AudioFileTypeID inFileTypeHint,
                                    AudioFileStreamID *outAudioFileStream);
/* Calls the callbacks on the calling thread; not from a callback ('nope'). */
extern OSStatus AudioFileStreamParseBytes(AudioFileStreamID inAudioFileStream, UInt32 inDataByteSize,
                                          const void *inData, AudioFileStreamParseFlags inFlags);
/* outDataByteOffset: where packet inPacketOffset starts, counted from the start of the audio data
 * (as Apple's parser does): read the file from outDataByteOffset + kAudioFileStreamProperty_DataOffset,
 * then pass those bytes with kAudioFileStreamParseFlag_Discontinuity. */
extern OSStatus AudioFileStreamSeek(AudioFileStreamID inAudioFileStream, SInt64 inPacketOffset,
                                    SInt64 *outDataByteOffset, AudioFileStreamSeekFlags *ioFlags);
extern OSStatus AudioFileStreamGetPropertyInfo(AudioFileStreamID inAudioFileStream, AudioFileStreamPropertyID inPropertyID,
                                               UInt32 *outPropertyDataSize, Boolean *outWritable);
extern OSStatus AudioFileStreamGetProperty(AudioFileStreamID inAudioFileStream, AudioFileStreamPropertyID inPropertyID,
                                           UInt32 *ioPropertyDataSize, void *outPropertyData);
extern OSStatus AudioFileStreamSetProperty(AudioFileStreamID inAudioFileStream, AudioFileStreamPropertyID inPropertyID,
                                           UInt32 inPropertyDataSize, const void *inPropertyData);
extern OSStatus AudioFileStreamClose(AudioFileStreamID inAudioFileStream);

CF_EXTERN_C_END

#endif
