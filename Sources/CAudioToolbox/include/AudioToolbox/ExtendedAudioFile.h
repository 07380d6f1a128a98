/*
 * AudioToolbox/ExtendedAudioFile.h — aqsync's C API (issue 23): Extended Audio File Services.
 * Reading: a file opened (or an AudioFileID wrapped) is read as linear PCM in the client data
 * format, decoded by libavcodec (AAC, MP3, ALAC, FLAC, Opus, Vorbis) or converted from the file's
 * PCM, the encoder's priming and remainder frames left out, with sample-exact seeking, at the
 * client's rate (libsoxr) and channel count. Writing: the client's linear PCM (at any rate,
 * the file's channel count) into a linear PCM file, or encoded to AAC or ALAC in CAF. Written
 * from Apple's Extended Audio File Services reference; docs/c-api.md, "Extended Audio File
 * Services", says what is not there yet.
 *
 * Threads: an ExtAudioFileRef is used from one thread at a time, any thread; reads and writes
 * block on the file and decode or encode on the calling thread. Not for a realtime thread.
 */
#ifndef AQSYNC_EXTENDEDAUDIOFILE_H
#define AQSYNC_EXTENDEDAUDIOFILE_H

#include <CoreAudio/CoreAudioTypes.h>
#include <CoreFoundation/CFURL.h>
#include <AudioToolbox/AudioFile.h>

CF_EXTERN_C_BEGIN

typedef struct OpaqueExtAudioFile *ExtAudioFileRef;
typedef UInt32 ExtAudioFilePropertyID;

CF_ENUM(ExtAudioFilePropertyID) {
    kExtAudioFileProperty_FileDataFormat      = 0x66666D74, /* 'ffmt' R AudioStreamBasicDescription: the file's */
    kExtAudioFileProperty_FileChannelLayout   = 0x66636C6F, /* 'fclo' R AudioChannelLayout (files that have one) */
    kExtAudioFileProperty_ClientDataFormat    = 0x63666D74, /* 'cfmt' RW AudioStreamBasicDescription: what ExtAudioFileRead gives */
    kExtAudioFileProperty_ClientChannelLayout = 0x63636C6F, /* 'cclo' (not supported) */
    kExtAudioFileProperty_CodecManufacturer   = 0x636D616E, /* 'cman' (not supported) */
    kExtAudioFileProperty_AudioConverter      = 0x61636E76, /* 'acnv' R AudioConverterRef: a compressed file being written, once its client format is set: the converter from it to the file's format, the file's own (disposed of with it); its kAudioConverterEncodeBitRate is taken at ConverterConfig or the first write (not given for reading) */
    kExtAudioFileProperty_AudioFile           = 0x6166696C, /* 'afil' R AudioFileID: the file underneath */
    kExtAudioFileProperty_FileMaxPacketSize   = 0x666D7073, /* 'fmps' R UInt32 */
    kExtAudioFileProperty_ClientMaxPacketSize = 0x636D7073, /* 'cmps' R UInt32: the client format's bytes a frame */
    kExtAudioFileProperty_FileLengthFrames    = 0x2366726D, /* '#frm' R SInt64: the file's frames, priming and remainder left out (ExtAudioFileRead gives them all, or round(this × client / file) at another client rate) */
    kExtAudioFileProperty_ConverterConfig     = 0x61636366, /* 'accf' W CFArrayRef (NULL): after the converter's properties were set, the writer takes them (before the first frame); only once AudioConverter was asked for */
    kExtAudioFileProperty_IOBufferSizeBytes   = 0x696F6273, /* 'iobs' (not supported) */
    kExtAudioFileProperty_IOBuffer            = 0x696F6266, /* 'iobf' (not supported) */
    kExtAudioFileProperty_PacketTable         = 0x78707469  /* 'xpti' R AudioFilePacketTableInfo: the priming and remainder left out */
};

CF_ENUM(OSStatus) {
    kExtAudioFileError_InvalidProperty         = -66561, /* a property not listed, or not supported */
    kExtAudioFileError_InvalidPropertySize     = -66562,
    kExtAudioFileError_NonPCMClientFormat      = -66563, /* reading a compressed file without a linear PCM client format */
    kExtAudioFileError_InvalidChannelMap       = -66564,
    kExtAudioFileError_InvalidOperationOrder   = -66565,
    kExtAudioFileError_InvalidDataFormat       = -66566, /* a client format this cannot give (8-bit, a rate outside 1000…768000 Hz, another channel count when writing, …) */
    kExtAudioFileError_MaxPacketSizeUnknown    = -66567,
    kExtAudioFileError_InvalidSeek             = -66568, /* a negative frame */
    kExtAudioFileError_AsyncWriteTooLarge      = -66569,
    kExtAudioFileError_AsyncWriteBufferOverflow = -66570
};

/* Opens a file for reading (what AudioFileOpenURL reads). The client format starts as the file's
 * when that is linear PCM; a compressed file needs one set before ExtAudioFileRead. Blocks. */
extern OSStatus ExtAudioFileOpenURL(CFURLRef inURL, ExtAudioFileRef *outExtAudioFile);
/* Reads through an AudioFileID opened for reading (inForWriting must be false:
 * kExtAudioFileError_InvalidOperationOrder otherwise). The AudioFileID stays the caller's: it is
 * not closed by ExtAudioFileDispose and must outlive the ExtAudioFileRef. */
extern OSStatus ExtAudioFileWrapAudioFileID(AudioFileID inFileID, Boolean inForWriting, ExtAudioFileRef *outExtAudioFile);
/* Creates a file to write through the client format: linear PCM in WAVE, AIFF, AIFC or CAF
 * (16-, 24-, 32-bit integers or 32-, 64-bit floats, as AudioFileCreateWithURL takes them), or
 * AAC (LC) and Apple Lossless in CAF, encoded by libavcodec (the description may give just the
 * format ID, rate and channels: it is completed). inChannelLayout is not used. An existing file
 * needs kAudioFileFlags_EraseFile. The client format starts as the file's for linear PCM; a
 * compressed file needs one set. A compressed format at rate 0 takes the client format's rate
 * when that is set (before the first write), as Apple's ConvertFile expects when it sets a bit
 * rate. */
extern OSStatus ExtAudioFileCreateWithURL(CFURLRef inURL, AudioFileTypeID inFileType, const AudioStreamBasicDescription *inStreamDesc,
                                          const AudioChannelLayout *inChannelLayout, UInt32 inFlags, ExtAudioFileRef *outExtAudioFile);
/* Writes inNumberFrames frames of the client format from ioData's buffers (encoding on the
 * calling thread). */
extern OSStatus ExtAudioFileWrite(ExtAudioFileRef inExtAudioFile, UInt32 inNumberFrames, const AudioBufferList *ioData);
/* ExtAudioFileWrite; here it writes before it returns (and a call with no frames and no buffer,
 * which Apple's programs make to prepare the writer, does nothing). */
extern OSStatus ExtAudioFileWriteAsync(ExtAudioFileRef inExtAudioFile, UInt32 inNumberFrames, const AudioBufferList *ioData);
/* Closes: a file being written gets its last packets, packet table and sizes; the file too is
 * closed when ExtAudioFile opened or created it. */
extern OSStatus ExtAudioFileDispose(ExtAudioFileRef inExtAudioFile);
/* Reads up to *ioNumberFrames frames in the client format into ioData's buffers (one buffer
 * for interleaved data; one per channel for non-interleaved; each mDataByteSize holds the room
 * on input and the bytes on output). *ioNumberFrames is 0 at the end. Blocks and decodes. */
extern OSStatus ExtAudioFileRead(ExtAudioFileRef inExtAudioFile, UInt32 *ioNumberFrames, AudioBufferList *ioData);
/* Moves to frame inFrameOffset, counted at the FILE's rate as Apple's QA1609 says (0 is the
 * first after the priming); the next read starts there exactly. With a client at another rate
 * it starts at that frame's client frame, round(inFrameOffset × client / file), with the frames
 * a read through gives there to within 1e-6 (docs/c-api.md). Past the end: the next read gives
 * 0 frames. */
extern OSStatus ExtAudioFileSeek(ExtAudioFileRef inExtAudioFile, SInt64 inFrameOffset);
/* The frame the next read starts at, at the file's rate (with a client at another rate: the
 * nearest file frame, round(C × file / client) for client frame C). While writing: the file
 * frames written. */
extern OSStatus ExtAudioFileTell(ExtAudioFileRef inExtAudioFile, SInt64 *outFrameOffset);
extern OSStatus ExtAudioFileGetPropertyInfo(ExtAudioFileRef inExtAudioFile, ExtAudioFilePropertyID inPropertyID,
                                            UInt32 *outSize, Boolean *outWritable);
extern OSStatus ExtAudioFileGetProperty(ExtAudioFileRef inExtAudioFile, ExtAudioFilePropertyID inPropertyID,
                                        UInt32 *ioPropertyDataSize, void *outPropertyData);
/* kExtAudioFileProperty_ClientDataFormat only: linear PCM, interleaved or not, 16-, 24- or 32-bit
 * signed integers or 32-bit floats in either byte order, at any rate from 1000 to 768000 Hz
 * (converted by libsoxr) and, reading, any channel count (1…64; writing: the file's)
 * (kExtAudioFileError_InvalidDataFormat otherwise). The position is kept. Writing, the rate
 * cannot change once frames were written (kExtAudioFileError_InvalidOperationOrder). */
extern OSStatus ExtAudioFileSetProperty(ExtAudioFileRef inExtAudioFile, ExtAudioFilePropertyID inPropertyID,
                                        UInt32 inPropertyDataSize, const void *inPropertyData);

CF_EXTERN_C_END

#endif
