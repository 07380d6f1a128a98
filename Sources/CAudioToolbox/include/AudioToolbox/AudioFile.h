/*
 * AudioToolbox/AudioFile.h — aqsync's C API (issue 23): Audio File Services, written from Apple's
 * Audio File Services reference; implemented by libAudioToolbox.so on aqsync's parser
 * (reading every container it reads: docs/file-stream.md) and its own writers (linear PCM in
 * WAVE, AIFF, AIFC and CAF; AAC, HE-AAC, ALAC and MP3 packets in CAF). docs/c-api.md, "Audio File Services", says what differs.
 *
 * Threads: an AudioFileID is used from one thread at a time (any thread); no call takes a lock
 * another call holds for long. AudioFileOpenURL reads the file's header (and, for packets of
 * variable size, every packet's place: the whole file); reads and writes block on the file
 * system; AudioFileClose writes the header's sizes. Not for a realtime thread.
 */
#ifndef AQSYNC_AUDIOFILE_H
#define AQSYNC_AUDIOFILE_H

#include <CoreAudio/CoreAudioTypes.h>
#include <CoreFoundation/CFURL.h>
#include <AudioToolbox/AudioFileStream.h>   /* AudioFileTypeID, the translation structures */

CF_EXTERN_C_BEGIN

typedef struct OpaqueAudioFileID *AudioFileID;
typedef UInt32 AudioFilePropertyID;

/* ---- Result codes ------------------------------------------------------------------------- */
CF_ENUM(OSStatus) {
    kAudioFileUnspecifiedError               = 0x7768743F, /* 'wht?' */
    kAudioFileUnsupportedFileTypeError       = 0x7479703F, /* 'typ?' the container is not one this reads or writes */
    kAudioFileUnsupportedDataFormatError     = 0x666D743F, /* 'fmt?' the format cannot go in this container */
    kAudioFileUnsupportedPropertyError       = 0x7074793F, /* 'pty?' */
    kAudioFileBadPropertySizeError           = 0x2173697A, /* '!siz' */
    kAudioFilePermissionsError               = 0x70726D3F, /* 'prm?' the file cannot be opened, read, made or written (an existing one without EraseFile) */
    kAudioFileNotOptimizedError              = 0x6F70746D, /* 'optm' */
    kAudioFileInvalidChunkError              = 0x63686B3F, /* 'chk?' */
    kAudioFileDoesNotAllow64BitDataSizeError = 0x6F66663F, /* 'off?' a WAVE or AIFF data chunk past 4 GiB */
    kAudioFileInvalidPacketOffsetError       = 0x70636B3F, /* 'pck?' a negative packet or byte offset, or one past the end */
    kAudioFileInvalidPacketDependencyError   = 0x6465703F, /* 'dep?' */
    kAudioFileInvalidFileError               = 0x6474613F, /* 'dta?' the file is malformed */
    kAudioFileOperationNotSupportedError     = 0x6F703F3F, /* 'op??' */
    kAudioFileNotOpenError                   = -38,        /* (unused: a closed AudioFileID is kAudio_ParamError) */
    kAudioFileEndOfFileError                 = -39,        /* AudioFileReadBytes read fewer bytes than asked: the end of the audio data */
    kAudioFilePositionError                  = -40,
    kAudioFileFileNotFoundError              = -43         /* AudioFileOpenURL: no such file */
};

/* ---- Flags and permissions ---------------------------------------------------------------- */
/* As Apple's header declares them (two-argument CF_OPTIONS and CF_ENUM): Swift imports
 * AudioFileFlags as an option set (.eraseFile) and AudioFilePermissions as an enum
 * (.readPermission), as on Apple's systems; C sees the integer types and the constants. */
typedef CF_OPTIONS(UInt32, AudioFileFlags) {
    kAudioFileFlags_EraseFile = 1,              /* AudioFileCreateWithURL replaces an existing file (without it: kAudioFilePermissionsError) */
    kAudioFileFlags_DontPageAlignAudioData = 2  /* accepted; the audio data is never padded here */
};
typedef CF_ENUM(SInt8, AudioFilePermissions) {
    kAudioFileReadPermission = 0x01,
    kAudioFileWritePermission = 0x02,
    kAudioFileReadWritePermission = 0x03
};

/* ---- Properties (the type each holds; R: readable, W: settable) ----------------------------- */
CF_ENUM(AudioFilePropertyID) {
    kAudioFilePropertyFileFormat           = 0x66666D74, /* 'ffmt' R AudioFileTypeID */
    kAudioFilePropertyDataFormat           = 0x64666D74, /* 'dfmt' R AudioStreamBasicDescription */
    kAudioFilePropertyIsOptimized          = 0x6F70746D, /* 'optm' R UInt32: 1 (this never leaves a file unoptimized) */
    kAudioFilePropertyMagicCookieData      = 0x6D676963, /* 'mgic' R bytes (a file without one: kAudioFileUnsupportedPropertyError) */
    kAudioFilePropertyAudioDataByteCount   = 0x62636E74, /* 'bcnt' R UInt64 */
    kAudioFilePropertyAudioDataPacketCount = 0x70636E74, /* 'pcnt' R UInt64 */
    kAudioFilePropertyMaximumPacketSize    = 0x70737A65, /* 'psze' R UInt32: the largest packet in the file */
    kAudioFilePropertyDataOffset           = 0x646F6666, /* 'doff' R SInt64: where the audio data starts in the file */
    kAudioFilePropertyChannelLayout        = 0x636D6170, /* 'cmap' R AudioChannelLayout (files that have one) */
    kAudioFilePropertyDeferSizeUpdates     = 0x6473757A, /* 'dszu' RW UInt32 (sizes are always written at close here) */
    kAudioFilePropertyMarkerList           = 0x6D6B6C73, /* 'mkls' (not supported) */
    kAudioFilePropertyRegionList           = 0x72676C73, /* 'rgls' (not supported) */
    kAudioFilePropertyChunkIDs             = 0x63686964, /* 'chid' (not supported) */
    kAudioFilePropertyInfoDictionary       = 0x696E666F, /* 'info' R CFDictionaryRef (+1: release it) of the kAFInfoDictionary_ keys below that the file answers */
    kAudioFilePropertyPacketTableInfo      = 0x706E666F, /* 'pnfo' R AudioFilePacketTableInfo (files that have one) */
    kAudioFilePropertyFormatList           = 0x666C7374, /* 'flst' R AudioFormatListItem[] */
    kAudioFilePropertyPacketSizeUpperBound = 0x706B7562, /* 'pkub' R UInt32: the largest packet the format can have */
    kAudioFilePropertyReserveDuration      = 0x72737276, /* 'rsrv' (not supported) */
    kAudioFilePropertyEstimatedDuration    = 0x65647572, /* 'edur' R Float64 seconds */
    kAudioFilePropertyBitRate              = 0x62726174, /* 'brat' R UInt32 bits per second */
    kAudioFilePropertyID3Tag               = 0x69643374, /* 'id3t' (not supported) */
    kAudioFilePropertySourceBitDepth       = 0x73627464, /* 'sbtd' R SInt32: linear PCM's bits (compressed: not supported) */
    kAudioFilePropertyAlbumArtwork         = 0x61617274, /* 'aart' (not supported) */
    kAudioFilePropertyAudioTrackCount      = 0x61746374, /* 'atct' R UInt32: 1 */
    kAudioFilePropertyUseAudioTrack        = 0x7561746B, /* 'uatk' (not supported) */
    kAudioFilePropertyPacketToFrame        = 0x706B6672, /* 'pkfr' R AudioFramePacketTranslation (mPacket in, mFrame out) */
    kAudioFilePropertyFrameToPacket        = 0x6672706B, /* 'frpk' R AudioFramePacketTranslation (mFrame in) */
    kAudioFilePropertyPacketToByte         = 0x706B6279, /* 'pkby' R AudioBytePacketTranslation (mPacket in) */
    kAudioFilePropertyByteToPacket         = 0x6279706B  /* 'bypk' R AudioBytePacketTranslation (mByte in) */
};

/* The keys of kAudioFilePropertyInfoDictionary (CFString keys, CFString values). Answered here:
 * ApproximateDurationInSeconds ("2.000"), NominalBitRate ("128 kbps"), SourceBitDepth (linear
 * PCM: "16"); the tags (artist, title, …) are not read yet. */
#define kAFInfoDictionary_Artist                       "artist"
#define kAFInfoDictionary_Album                        "album"
#define kAFInfoDictionary_Tempo                        "tempo"
#define kAFInfoDictionary_KeySignature                 "key signature"
#define kAFInfoDictionary_TimeSignature                "time signature"
#define kAFInfoDictionary_TrackNumber                  "track number"
#define kAFInfoDictionary_Year                         "year"
#define kAFInfoDictionary_Composer                     "composer"
#define kAFInfoDictionary_Lyricist                     "lyricist"
#define kAFInfoDictionary_Genre                        "genre"
#define kAFInfoDictionary_Title                        "title"
#define kAFInfoDictionary_RecordedDate                 "recorded date"
#define kAFInfoDictionary_Comments                     "comments"
#define kAFInfoDictionary_Copyright                    "copyright"
#define kAFInfoDictionary_SourceEncoder                "source encoder"
#define kAFInfoDictionary_EncodingApplication          "encoding application"
#define kAFInfoDictionary_NominalBitRate               "nominal bit rate"
#define kAFInfoDictionary_ChannelLayout                "channel layout"
#define kAFInfoDictionary_ApproximateDurationInSeconds "approximate duration in seconds"
#define kAFInfoDictionary_SourceBitDepth               "source bit depth"
#define kAFInfoDictionary_ISRC                         "ISRC"
#define kAFInfoDictionary_SubTitle                     "subtitle"

/* ---- Opening, creating, closing ----------------------------------------------------------- */
/* Opens an existing file (a file URL, from CFURLCreateFromFileSystemRepresentation or
 * CFURLCreateWithFileSystemPath). inFileTypeHint 0: detect (the hint helps headerless MP3 and
 * ADTS). Reading only: a write permission is checked (kAudioFilePermissionsError when the file is
 * not writable) but later writes answer kAudioFileOperationNotSupportedError. No such file:
 * kAudioFileFileNotFoundError; unreadable: kAudioFilePermissionsError; not audio the parser
 * reads: kAudioFileUnsupportedFileTypeError or kAudioFileInvalidFileError. Blocks on the file. */
extern OSStatus AudioFileOpenURL(CFURLRef inFileRef, AudioFilePermissions inPermissions, AudioFileTypeID inFileTypeHint,
                                 AudioFileID *outAudioFile);
/* Creates a file for writing linear PCM: kAudioFileWAVEType (little-endian integer or float),
 * kAudioFileAIFFType (big-endian integer), kAudioFileAIFCType (either order, float too),
 * kAudioFileCAFType (any linear PCM; and AAC, HE-AAC, ALAC or MP3 packets, with
 * mFramesPerPacket set and mBytesPerPacket 0). Anything else: kAudioFileUnsupportedDataFormatError
 * (a format the type cannot hold) or kAudioFileUnsupportedFileTypeError. An
 * existing file without kAudioFileFlags_EraseFile: kAudioFilePermissionsError. Blocks. */
extern OSStatus AudioFileCreateWithURL(CFURLRef inFileRef, AudioFileTypeID inFileType, const AudioStreamBasicDescription *inFormat,
                                       AudioFileFlags inFlags, AudioFileID *outAudioFile);
/* The caller's storage instead of a file. The callbacks are called on the thread making the
 * call, before it returns, and never after AudioFileClose. inPosition and the counts are bytes.
 * A read answering kAudioFileEndOfFileError with *actualCount bytes is a short read. */
typedef OSStatus (*AudioFile_ReadProc)(void *inClientData, SInt64 inPosition, UInt32 requestCount, void *buffer, UInt32 *actualCount);
typedef OSStatus (*AudioFile_WriteProc)(void *inClientData, SInt64 inPosition, UInt32 requestCount, const void *buffer, UInt32 *actualCount);
typedef SInt64 (*AudioFile_GetSizeProc)(void *inClientData);
typedef OSStatus (*AudioFile_SetSizeProc)(void *inClientData, SInt64 inSize);
/* AudioFileOpenURL on the caller's bytes: inReadFunc and inGetSizeFunc are needed
 * (kAudio_ParamError without); the others may be NULL (writes are not supported on opened
 * files). */
extern OSStatus AudioFileOpenWithCallbacks(void *inClientData, AudioFile_ReadProc inReadFunc, AudioFile_WriteProc inWriteFunc,
                                           AudioFile_GetSizeProc inGetSizeFunc, AudioFile_SetSizeProc inSetSizeFunc,
                                           AudioFileTypeID inFileTypeHint, AudioFileID *outAudioFile);
/* AudioFileCreateWithURL into the caller's storage: inWriteFunc, inGetSizeFunc and
 * inSetSizeFunc are needed; the storage is first set to size 0, then written as a new file
 * (the header, the audio data, the sizes at AudioFileOptimize and AudioFileClose). */
extern OSStatus AudioFileInitializeWithCallbacks(void *inClientData, AudioFile_ReadProc inReadFunc, AudioFile_WriteProc inWriteFunc,
                                                 AudioFile_GetSizeProc inGetSizeFunc, AudioFile_SetSizeProc inSetSizeFunc,
                                                 AudioFileTypeID inFileType, const AudioStreamBasicDescription *inFormat,
                                                 AudioFileFlags inFlags, AudioFileID *outAudioFile);
/* Writes the header's sizes (a created file) and closes; the AudioFileID is then invalid. */
extern OSStatus AudioFileClose(AudioFileID inAudioFile);
/* Writes the header's sizes now (a created file); noErr for an opened one. */
extern OSStatus AudioFileOptimize(AudioFileID inAudioFile);

/* ---- Reading ------------------------------------------------------------------------------ */
/* Bytes of the audio data (inStartingByte from its start, as the file stores it). Fewer than
 * asked at the end: *ioNumBytes says how many, kAudioFileEndOfFileError. inUseCache is ignored. */
extern OSStatus AudioFileReadBytes(AudioFileID inAudioFile, Boolean inUseCache, SInt64 inStartingByte, UInt32 *ioNumBytes,
                                   void *outBuffer);
/* Whole packets from inStartingPacket into outBuffer, as many as *ioNumPackets asks and
 * *ioNumBytes holds; on return both say what was read (0 packets past the end, noErr).
 * outPacketDescriptions (one per packet, offsets into outBuffer) is needed for packets of
 * variable size and may be NULL for constant ones. A buffer too small for the first packet:
 * kAudio_ParamError (nothing read); a negative packet: kAudioFileInvalidPacketOffsetError. */
extern OSStatus AudioFileReadPacketData(AudioFileID inAudioFile, Boolean inUseCache, UInt32 *ioNumBytes,
                                        AudioStreamPacketDescription *outPacketDescriptions, SInt64 inStartingPacket,
                                        UInt32 *ioNumPackets, void *outBuffer);
/* The older form: outBuffer must hold *ioNumPackets packets of kAudioFilePropertyMaximumPacketSize
 * (or PacketSizeUpperBound); *outNumBytes says how many bytes were read. */
extern OSStatus AudioFileReadPackets(AudioFileID inAudioFile, Boolean inUseCache, UInt32 *outNumBytes,
                                     AudioStreamPacketDescription *outPacketDescriptions, SInt64 inStartingPacket,
                                     UInt32 *ioNumPackets, void *outBuffer);

/* ---- Writing (files made by AudioFileCreateWithURL) --------------------------------------- */
/* Bytes of audio data at inStartingByte from its start (linear PCM: in the file's byte order). */
extern OSStatus AudioFileWriteBytes(AudioFileID inAudioFile, Boolean inUseCache, SInt64 inStartingByte, UInt32 *ioNumBytes,
                                    const void *inBuffer);
/* *ioNumPackets packets (inNumBytes bytes) at packet inStartingPacket; descriptions are not
 * needed for linear PCM, whose packets are *ioNumPackets × mBytesPerPacket bytes (inNumBytes is
 * not used for them, as on Apple's systems). Compressed packets need their descriptions (kAudio_ParamError without)
 * and are written in order: inStartingPacket must be the number written so far
 * (kAudioFileInvalidPacketOffsetError otherwise). */
extern OSStatus AudioFileWritePackets(AudioFileID inAudioFile, Boolean inUseCache, UInt32 inNumBytes,
                                      const AudioStreamPacketDescription *inPacketDescriptions, SInt64 inStartingPacket,
                                      UInt32 *ioNumPackets, const void *inBuffer);

/* ---- Properties --------------------------------------------------------------------------- */
/* The size a property's value takes now, and whether it can be set (isWritable: 0 or 1, UInt32
 * as in Apple's header: 1 for kAudioFilePropertyDeferSizeUpdates, and for the magic cookie and
 * the packet table of a compressed file being written). Either pointer may be NULL. Unknown or absent: kAudioFileUnsupportedPropertyError. */
extern OSStatus AudioFileGetPropertyInfo(AudioFileID inAudioFile, AudioFilePropertyID inPropertyID, UInt32 *outDataSize,
                                         UInt32 *isWritable);
/* Copies the value; *ioDataSize in: the room, out: the bytes written. Fixed-size values need
 * their whole size (kAudioFileBadPropertySizeError); the magic cookie, channel layout and
 * format list need at least their size too. The translations read their input field from
 * outPropertyData. */
extern OSStatus AudioFileGetProperty(AudioFileID inAudioFile, AudioFilePropertyID inPropertyID, UInt32 *ioDataSize,
                                     void *outPropertyData);
/* kAudioFilePropertyDeferSizeUpdates (accepted, changes nothing); on a CAF of compressed packets
 * being written, kAudioFilePropertyMagicCookieData (any time before AudioFileClose, at most 4084
 * bytes: kAudioFileBadPropertySizeError past that; an AAC AudioSpecificConfig is stored in an
 * esds, an MP4 'alac' atom after a 'frma' atom, as CAF readers expect) and
 * kAudioFilePropertyPacketTableInfo (its priming and remainder frames; the valid frames follow).
 * Others answer kAudioFileUnsupportedPropertyError or kAudioFileOperationNotSupportedError. */
extern OSStatus AudioFileSetProperty(AudioFileID inAudioFile, AudioFilePropertyID inPropertyID, UInt32 inDataSize,
                                     const void *inPropertyData);

/* ---- User data ---------------------------------------------------------------------------- */
/* User data are a file's top-level chunks of type inUserDataID (a four-char code such as 'LIST',
 * 'bext', 'info' or 'uuid'), numbered from 0 in file order: CAF, WAVE/RF64 and AIFF/AIFC files.
 * Other containers answer kAudioFileOperationNotSupportedError; an index with no item
 * kAudioFileInvalidChunkError. A file opened for reading is read as it is (its user data cannot
 * change: kAudioFilePermissionsError); a file being created (CAF, WAVE, AIFF/AIFC) keeps what is
 * set and writes it after its audio data (a CAF's: after its packet table) at AudioFileOptimize
 * and AudioFileClose, with the header's sizes counting it. */
extern OSStatus AudioFileCountUserData(AudioFileID inAudioFile, UInt32 inUserDataID, UInt32 *outNumberItems);
/* An item's size in bytes (one over 4 GiB: kAudioFileDoesNotAllow64BitDataSizeError; use …Size64). */
extern OSStatus AudioFileGetUserDataSize(AudioFileID inAudioFile, UInt32 inUserDataID, UInt32 inIndex, UInt32 *outUserDataSize);
extern OSStatus AudioFileGetUserDataSize64(AudioFileID inAudioFile, UInt32 inUserDataID, UInt32 inIndex, UInt64 *outUserDataSize);
/* Copies up to *ioUserDataSize bytes of the item; *ioUserDataSize says how many were copied. */
extern OSStatus AudioFileGetUserData(AudioFileID inAudioFile, UInt32 inUserDataID, UInt32 inIndex, UInt32 *ioUserDataSize,
                                     void *outUserData);
/* The same from byte inOffset of the item (past its end: 0 bytes). */
extern OSStatus AudioFileGetUserDataAtOffset(AudioFileID inAudioFile, UInt32 inUserDataID, UInt32 inIndex, SInt64 inOffset,
                                             UInt32 *ioUserDataSize, void *outUserData);
/* Replaces item inIndex, or adds one when inIndex is the count (a larger index:
 * kAudioFileInvalidChunkError). A file being created only. */
extern OSStatus AudioFileSetUserData(AudioFileID inAudioFile, UInt32 inUserDataID, UInt32 inIndex, UInt32 inUserDataSize,
                                     const void *inUserData);
/* Removes item inIndex; the items after it move down. A file being created only. */
extern OSStatus AudioFileRemoveUserData(AudioFileID inAudioFile, UInt32 inUserDataID, UInt32 inIndex);

/* ---- Global information (about file types, not a file) ------------------------------------ */
/* AudioFileGetGlobalInfo's specifier for kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat. */
typedef struct AudioFileTypeAndFormatID {
    AudioFileTypeID mFileType;
    AudioFormatID   mFormatID;
} AudioFileTypeAndFormatID;

CF_ENUM(AudioFilePropertyID) {
    kAudioFileGlobalInfo_ReadableTypes       = 0x61667266, /* 'afrf' AudioFileTypeID[]: the types AudioFileOpenURL reads */
    kAudioFileGlobalInfo_WritableTypes       = 0x61667766, /* 'afwf' AudioFileTypeID[]: the types AudioFileCreateWithURL makes */
    kAudioFileGlobalInfo_FileTypeName        = 0x66746E6D, /* 'ftnm' specifier AudioFileTypeID: CFStringRef (+1: release it) */
    kAudioFileGlobalInfo_AvailableFormatIDs  = 0x666D6964, /* 'fmid' specifier AudioFileTypeID (writable): AudioFormatID[] it takes */
    kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat = 0x73646964, /* 'sdid' specifier AudioFileTypeAndFormatID: AudioStreamBasicDescription[] (rate 0: any) */
    kAudioFileGlobalInfo_AllExtensions       = 0x616C7874, /* 'alxt' CFArrayRef of CFStringRef (+1) */
    kAudioFileGlobalInfo_ExtensionsForType   = 0x66657874, /* 'fext' specifier AudioFileTypeID: CFArrayRef of CFStringRef (+1) */
    kAudioFileGlobalInfo_TypesForExtension   = 0x74796578, /* 'tyex' specifier CFStringRef (no dot): AudioFileTypeID[] */
    kAudioFileGlobalInfo_AllMIMETypes        = 0x616D696D, /* 'amim' CFArrayRef of CFStringRef (+1) */
    kAudioFileGlobalInfo_MIMETypesForType    = 0x666D696D, /* 'fmim' specifier AudioFileTypeID: CFArrayRef of CFStringRef (+1) */
    kAudioFileGlobalInfo_TypesForMIMEType    = 0x746D696D  /* 'tmim' specifier CFStringRef: AudioFileTypeID[] */
};

/* The size of a global value (for the CF values: sizeof(CFTypeRef)). A property not listed:
 * kAudioFileUnsupportedPropertyError; a specifier of the wrong size:
 * kAudioFileBadPropertySizeError; a type these properties do not know:
 * kAudioFileUnsupportedFileTypeError. Any thread; never blocks. */
extern OSStatus AudioFileGetGlobalInfoSize(AudioFilePropertyID inPropertyID, UInt32 inSpecifierSize, void *inSpecifier,
                                           UInt32 *outDataSize);
/* A global value; *ioDataSize in: the room (the arrays fill as many whole items as fit), out:
 * the bytes written. */
extern OSStatus AudioFileGetGlobalInfo(AudioFilePropertyID inPropertyID, UInt32 inSpecifierSize, void *inSpecifier,
                                       UInt32 *ioDataSize, void *outPropertyData);

CF_EXTERN_C_END

#endif
