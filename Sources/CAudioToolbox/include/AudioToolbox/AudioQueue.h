/*
 * AudioToolbox/AudioQueue.h — aqsync's C API (issue 12): Audio Queue Services, written from the
 * Audio Queue Services Reference. The functions are implemented by libAudioToolbox.so on
 * aqsync's engine (a JACK client). Threads, blocking and what differs from Apple's systems:
 * docs/c-api.md. Every function may be called from any thread, including from the queue's
 * callbacks, unless its comment says otherwise; none may be called from a signal handler.
 */
#ifndef AQSYNC_AUDIOQUEUE_H
#define AQSYNC_AUDIOQUEUE_H

#include <CoreAudio/CoreAudioTypes.h>
#include <CoreFoundation/CFRunLoop.h>
#if defined(__BLOCKS__)
/* The toolchain's libdispatch (found through pkg-config's -isystem), as Apple's header includes
 * it: only a compiler that reads blocks gets the dispatch-queue functions below. */
#include <dispatch/dispatch.h>
#endif

CF_EXTERN_C_BEGIN

/* ---- Result codes ------------------------------------------------------------------------ */
CF_ENUM(OSStatus) {
    kAudioQueueErr_InvalidBuffer        = -66687, /* the buffer is not this queue's */
    kAudioQueueErr_BufferEmpty          = -66686, /* mAudioDataByteSize is 0 */
    kAudioQueueErr_DisposalPending      = -66685, /* the queue is being disposed of */
    kAudioQueueErr_InvalidProperty      = -66684,
    kAudioQueueErr_InvalidPropertySize  = -66683,
    kAudioQueueErr_InvalidParameter     = -66682,
    kAudioQueueErr_CannotStart          = -66681,
    kAudioQueueErr_InvalidDevice        = -66680, /* also: no JACK server reachable */
    kAudioQueueErr_BufferInQueue        = -66679,
    kAudioQueueErr_InvalidRunState      = -66678,
    kAudioQueueErr_InvalidQueueType     = -66677, /* a playback queue's call on a recording queue */
    /* The later codes of Apple's header (issue 22). Those marked "never" name conditions that
     * cannot arise here (no permissions, input-queue taps, audio server or priming timeout);
     * they are declared so that programs naming them compile. docs/c-api.md, "Result codes". */
    kAudioQueueErr_Permissions          = -66676, /* never */
    kAudioQueueErr_InvalidPropertyValue = -66675, /* DecodeBufferSizeFrames out of range */
    kAudioQueueErr_PrimeTimedOut        = -66674, /* never */
    kAudioQueueErr_CodecNotFound        = -66673, /* never: an unknown format is 'fmt?' */
    kAudioQueueErr_InvalidCodecAccess   = -66672, /* never */
    kAudioQueueErr_QueueInvalidated     = -66671, /* never */
    kAudioQueueErr_TooManyTaps          = -66670, /* AudioQueueProcessingTapNew on a queue with a tap */
    kAudioQueueErr_InvalidTapContext    = -66669, /* tap GetSourceAudio/GetQueueTime outside its callback */
    kAudioQueueErr_RecordUnderrun       = -66668, /* never */
    kAudioQueueErr_InvalidTapType       = -66667, /* never: recording queues have no taps */
    kAudioQueueErr_BufferEnqueuedTwice  = -66666, /* the buffer is enqueued already */
    kAudioQueueErr_CannotStartYet       = -66665, /* never */
    kAudioQueueErr_EnqueueDuringReset   = -66632, /* enqueue while Reset/Stop(immediate) hands buffers back */
    kAudioQueueErr_InvalidOfflineMode   = -66626  /* AudioQueueOfflineRender without an offline format */
};

/* Declared in AudioFormat.h on Apple's systems. */
#ifndef AQSYNC_HAVE_kAudioFormatUnsupportedDataFormatError
#define AQSYNC_HAVE_kAudioFormatUnsupportedDataFormatError 1
CF_ENUM(OSStatus) { kAudioFormatUnsupportedDataFormatError = 0x666D743F /* 'fmt?' */ };
#endif

/* aqsync's own: a fixed capacity (queues, buffers, commands in flight) is used up. */
CF_ENUM(OSStatus) { kAQSyncErr_CapacityExceeded = -66600 };

/* ---- Properties and parameters ----------------------------------------------------------- */
typedef UInt32 AudioQueuePropertyID;
CF_ENUM(AudioQueuePropertyID) {
    kAudioQueueProperty_IsRunning           = 0x6171726E, /* 'aqrn' UInt32, read-only */
    kAudioQueueDeviceProperty_SampleRate    = 0x61717372, /* 'aqsr' Float64, read-only */
    kAudioQueueDeviceProperty_NumberChannels = 0x61716463, /* 'aqdc' UInt32, read-only */
    kAudioQueueProperty_CurrentDevice       = 0x61716364, /* 'aqcd' see docs/c-api.md */
    kAudioQueueProperty_MagicCookie         = 0x61716D63, /* 'aqmc' bytes */
    kAudioQueueProperty_ChannelLayout       = 0x6171636C, /* 'aqcl' AudioChannelLayout */
    kAudioQueueProperty_EnableLevelMetering = 0x61716D65, /* 'aqme' UInt32 */
    kAudioQueueProperty_CurrentLevelMeter   = 0x61716D76, /* 'aqmv' AudioQueueLevelMeterState[] */
    kAudioQueueProperty_CurrentLevelMeterDB = 0x61716D64, /* 'aqmd' AudioQueueLevelMeterState[] */
    kAudioQueueProperty_MaximumOutputPacketSize = 0x786F7073, /* 'xops' UInt32, read-only: the largest packet
                                                  of the queue's format (recording: what the encoder writes) */
    kAudioQueueProperty_StreamDescription   = 0x61716674, /* 'aqft' AudioStreamBasicDescription, read-only:
                                                  the queue's format */
    kAudioQueueProperty_DecodeBufferSizeFrames = 0x64636266, /* 'dcbf' UInt32, playback queues: frames of
                                                  decode room kept ready (1 to 2^20) */
    kAudioQueueProperty_ConverterError      = 0x71637665, /* 'qcve' UInt32, read-only: the latest decoding or
                                                  encoding error, 0 if none (docs/c-api.md) */
    /* Issue 22, playback queues (a recording queue: kAudioQueueErr_InvalidProperty). SoundTouch
     * on the enqueuing side; docs/c-api.md, "Time and pitch". */
    kAudioQueueProperty_EnableTimePitch     = 0x715F7470, /* 'q_tp' UInt32 0/1: set while stopped with no
                                                  buffer enqueued (else kAudioQueueErr_InvalidRunState) */
    kAudioQueueProperty_TimePitchAlgorithm  = 0x71747061, /* 'qtpa' UInt32, below (default Spectral); same rule;
                                                  another value: kAudioQueueErr_InvalidPropertyValue */
    kAudioQueueProperty_TimePitchBypass     = 0x71747062  /* 'qtpb' UInt32, 1 = bypassed; any time, from the
                                                  next buffer enqueued */
};

/* Issue 22: which device channel each channel of the queue plays on (playback) or records from
 * (recording). The value is an array of AudioQueueChannelAssignment, exactly one for each
 * channel of the queue's format. Set (any time; from the next render cycle): every mDeviceUID
 * must be the queue's device (kAudioQueueProperty_CurrentDevice's string, compared by value),
 * else kAudioQueueErr_InvalidDevice; mChannelNumber counts from 1 up to the device's output
 * (playback) or input (recording) channels, else kAudioQueueErr_InvalidPropertyValue; another
 * size than channels x sizeof(AudioQueueChannelAssignment): kAudioQueueErr_InvalidPropertySize.
 * Get (Apple's header calls the property write-only; readable here): the assignments in force,
 * each mDeviceUID a new CFString the caller releases (CFRelease), mChannelNumber 0 for a channel
 * a channel layout left unplayed; by default channel i on device channel i + 1 (a mono playback
 * queue plays on every output until assigned). Listeners hear a set, on the setting thread's
 * side as for ChannelLayout. A channel layout set later replaces the assignments (and the other
 * way round). docs/c-api.md, "Channel assignments". */
CF_ENUM(AudioQueuePropertyID) {
    kAudioQueueProperty_ChannelAssignments  = 0x61716361  /* 'aqca' AudioQueueChannelAssignment[] */
};

/* Values of kAudioQueueProperty_TimePitchAlgorithm, and the SoundTouch settings they run as. */
CF_ENUM(UInt32) {
    kAudioQueueTimePitchAlgorithm_Spectral   = 0x73706563, /* 'spec' tempo + pitch, full overlap search */
    kAudioQueueTimePitchAlgorithm_TimeDomain = 0x7469646F, /* 'tido' tempo, quick seek; Pitch not applied */
    kAudioQueueTimePitchAlgorithm_Varispeed  = 0x76737064, /* 'vspd' resampling: pitch follows the rate */
    kAudioQueueTimePitchAlgorithm_LowQualityZeroLatency = 0x6C717A6C /* 'lqzl' (deprecated by Apple)
                                                  tempo, quick seek, short sequences; not zero latency */
};

typedef UInt32 AudioQueueParameterID;
typedef Float32 AudioQueueParameterValue;
CF_ENUM(AudioQueueParameterID) {
    kAudioQueueParam_Volume         = 1,  /* linear gain 0...1 (default 1) */
    /* Issue 22: applied on the enqueuing side from the next buffer enqueued (or from the
     * buffer whose parameter event carries them), with EnableTimePitch on and not bypassed;
     * without it the value is kept and read back. Outside the range, or NaN:
     * kAudioQueueErr_InvalidParameter. docs/c-api.md, "Time and pitch". */
    kAudioQueueParam_PlayRate       = 2,  /* 0.5...2.0 (default 1) */
    kAudioQueueParam_Pitch          = 3,  /* -2400...2400 cents (default 0), Spectral algorithm only */
    /* Issue 22. Set with AudioQueueSetParameter only (a buffer's parameter event takes Volume,
     * PlayRate and Pitch only: kAudioQueueErr_InvalidParameter). docs/c-api.md, "Pan and volume ramps". */
    kAudioQueueParam_VolumeRampTime = 4,  /* seconds 0...3600 over which later volume changes ramp
                                             (default 0: 5 ms) */
    kAudioQueueParam_Pan            = 13  /* -1 (left) ... 1 (right), default 0: mono equal-power
                                             (unity at the centre), stereo balance, more channels
                                             unaffected */
};

/* ---- Types ------------------------------------------------------------------------------- */
typedef struct OpaqueAudioQueue *AudioQueueRef;
typedef struct OpaqueAudioQueueTimeline *AudioQueueTimelineRef;
/* A playback queue's processing tap (issue 22; docs/c-api.md, "Processing taps"). */
typedef struct OpaqueAudioQueueProcessingTap *AudioQueueProcessingTapRef;

/* AudioQueueProcessingTapNew takes PreEffects or PostEffects (not both), maybe with Siphon; the
 * callback gets them back, with StartOfStream after a discontinuity (also from GetSourceAudio).
 * EndOfStream is never set here. */
typedef UInt32 AudioQueueProcessingTapFlags;
CF_ENUM(AudioQueueProcessingTapFlags) {
    kAudioQueueProcessingTap_PreEffects    = (1 << 0), /* before time/pitch */
    kAudioQueueProcessingTap_PostEffects   = (1 << 1), /* after time/pitch */
    kAudioQueueProcessingTap_Siphon        = (1 << 2), /* sees the audio, may not change it */
    kAudioQueueProcessingTap_StartOfStream = (1 << 8),
    kAudioQueueProcessingTap_EndOfStream   = (1 << 9)
};

/* 56 bytes. The fields marked const are the queue's; the rest are the caller's while the
 * buffer is not enqueued. */
typedef struct AudioQueueBuffer {
    const UInt32                        mAudioDataBytesCapacity;
    void *const                         mAudioData;
    UInt32                              mAudioDataByteSize;
    void                               *mUserData;
    const UInt32                        mPacketDescriptionCapacity;
    AudioStreamPacketDescription *const mPacketDescriptions;
    UInt32                              mPacketDescriptionCount;
} AudioQueueBuffer;
typedef AudioQueueBuffer *AudioQueueBufferRef;

/* 8 bytes. */
typedef struct AudioQueueParameterEvent {
    AudioQueueParameterID    mID;
    AudioQueueParameterValue mValue;
} AudioQueueParameterEvent;

/* 8 bytes. */
typedef struct AudioQueueLevelMeterState {
    Float32 mAveragePower;
    Float32 mPeakPower;
} AudioQueueLevelMeterState;

/* 16 bytes: kAudioQueueProperty_ChannelAssignments's elements. mDeviceUID is the device's
 * identifier (kAudioQueueProperty_CurrentDevice's value); mChannelNumber the device channel,
 * counting from 1. */
typedef struct AudioQueueChannelAssignment {
    CFStringRef     mDeviceUID;
    UInt32          mChannelNumber;
} AudioQueueChannelAssignment;

/* ---- Callbacks --------------------------------------------------------------------------- */
/* A buffer is free to refill: on the queue's run loop's thread, or the library's internal
 * thread (NULL run loop); for buffers an immediate stop or a reset hands back, on the thread
 * that called it, before it returns. */
typedef void (*AudioQueueOutputCallback)(void *inUserData, AudioQueueRef inAQ, AudioQueueBufferRef inBuffer);
/* Recording: a filled buffer, the start time of its first frame (sample and host time valid),
 * the packets in it (linear PCM: its frames, with no descriptions). Same threads as the output
 * callback. */
typedef void (*AudioQueueInputCallback)(void *inUserData, AudioQueueRef inAQ, AudioQueueBufferRef inBuffer,
                                        const AudioTimeStamp *inStartTime, UInt32 inNumberPacketDescriptions,
                                        const AudioStreamPacketDescription *inPacketDescs);
/* A property changed (IsRunning: asynchronously after a start, after a drain completes, and
 * on the stopping thread for an immediate stop). Same threads as the output callback. */
typedef void (*AudioQueuePropertyListenerProc)(void *inUserData, AudioQueueRef inAQ, AudioQueuePropertyID inID);

/* A processing tap's callback: on the thread that enqueues a buffer (or flushes, or stops or
 * disposes of the queue asynchronously), with the queue's lock held, never on the render thread; it must not call
 * the queue except AudioQueueProcessingTapGetSourceAudio and ...GetQueueTime. A siphon finds
 * the audio in ioData (not to be written); any other tap finds NULL pointers, pulls its source
 * with GetSourceAudio, points ioData at its output and sets *outNumberFrames (fewer than
 * inNumberFrames: silence after them). */
typedef void (*AudioQueueProcessingTapCallback)(void *inClientData, AudioQueueProcessingTapRef inAQTap,
                                                UInt32 inNumberFrames, AudioTimeStamp *ioTimeStamp,
                                                AudioQueueProcessingTapFlags *ioFlags, UInt32 *outNumberFrames,
                                                AudioBufferList *ioData);

/* ---- Creating and disposing -------------------------------------------------------------- */
extern OSStatus AudioQueueNewOutput(const AudioStreamBasicDescription *inFormat, AudioQueueOutputCallback inCallbackProc,
                                    void *inUserData, CFRunLoopRef inCallbackRunLoop, CFStringRef inCallbackRunLoopMode,
                                    UInt32 inFlags, AudioQueueRef *outAQ);
/* Records the process client's input ports in_1... (AQSYNC_INPUTS, AQSYNC_INPUT_CONNECT;
 * docs/c-api.md), interleaved linear PCM at any rate. */
extern OSStatus AudioQueueNewInput(const AudioStreamBasicDescription *inFormat, AudioQueueInputCallback inCallbackProc,
                                   void *inUserData, CFRunLoopRef inCallbackRunLoop, CFStringRef inCallbackRunLoopMode,
                                   UInt32 inFlags, AudioQueueRef *outAQ);

#if defined(__BLOCKS__)
/* Callbacks as blocks on a dispatch queue (issue 22; clang -fblocks, the toolchain's libdispatch
 * and BlocksRuntime: pkg-config's Libs link them). Declared only for a compiler that reads blocks,
 * as in Apple's header, so that gcc and clang without -fblocks still read this header. The
 * queue and the block are retained until the audio queue is disposed of. The block and the
 * queue's property listeners are submitted to inCallbackDispatchQueue (dispatch_async_f, one
 * submission per callback, in the order the engine reports them), also for the buffers an
 * immediate stop or a reset hands back, which therefore run after that call returns. On a
 * concurrent queue they may run at once on several threads. Threads and blocking: as
 * AudioQueueNewOutput and AudioQueueNewInput (docs/c-api.md). */
typedef void (^AudioQueueOutputCallbackBlock)(AudioQueueRef inAQ, AudioQueueBufferRef inBuffer);
typedef void (^AudioQueueInputCallbackBlock)(AudioQueueRef inAQ, AudioQueueBufferRef inBuffer,
                                             const AudioTimeStamp *inStartTime, UInt32 inNumberPacketDescriptions,
                                             const AudioStreamPacketDescription *inPacketDescs);
extern OSStatus AudioQueueNewOutputWithDispatchQueue(AudioQueueRef *outAQ, const AudioStreamBasicDescription *inFormat,
                                                     UInt32 inFlags, dispatch_queue_t inCallbackDispatchQueue,
                                                     AudioQueueOutputCallbackBlock inCallbackBlock);
extern OSStatus AudioQueueNewInputWithDispatchQueue(AudioQueueRef *outAQ, const AudioStreamBasicDescription *inFormat,
                                                    UInt32 inFlags, dispatch_queue_t inCallbackDispatchQueue,
                                                    AudioQueueInputCallbackBlock inCallbackBlock);
#endif
/* Immediate: synchronous, no callback runs after it returns. Blocks until the renderer let go. */
extern OSStatus AudioQueueDispose(AudioQueueRef inAQ, Boolean inImmediate);

/* ---- Buffers ----------------------------------------------------------------------------- */
extern OSStatus AudioQueueAllocateBuffer(AudioQueueRef inAQ, UInt32 inBufferByteSize, AudioQueueBufferRef *outBuffer);
extern OSStatus AudioQueueAllocateBufferWithPacketDescriptions(AudioQueueRef inAQ, UInt32 inBufferByteSize,
                                                               UInt32 inNumberPacketDescriptions,
                                                               AudioQueueBufferRef *outBuffer);
extern OSStatus AudioQueueFreeBuffer(AudioQueueRef inAQ, AudioQueueBufferRef inBuffer);
/* Converts or decodes the buffer on the calling thread (holds only this queue's lock). */
extern OSStatus AudioQueueEnqueueBuffer(AudioQueueRef inAQ, AudioQueueBufferRef inBuffer, UInt32 inNumPacketDescs,
                                        const AudioStreamPacketDescription *inPacketDescs);
extern OSStatus AudioQueueEnqueueBufferWithParameters(AudioQueueRef inAQ, AudioQueueBufferRef inBuffer,
                                                      UInt32 inNumPacketDescs,
                                                      const AudioStreamPacketDescription *inPacketDescs,
                                                      UInt32 inTrimFramesAtStart, UInt32 inTrimFramesAtEnd,
                                                      UInt32 inNumParamValues,
                                                      const AudioQueueParameterEvent *inParamValues,
                                                      const AudioTimeStamp *inStartTime,
                                                      AudioTimeStamp *outActualStartTime);

/* ---- Control ----------------------------------------------------------------------------- */
/* NULL start time: as soon as possible. Does not block. */
extern OSStatus AudioQueueStart(AudioQueueRef inAQ, const AudioTimeStamp *inStartTime);
extern OSStatus AudioQueuePrime(AudioQueueRef inAQ, UInt32 inNumberOfFramesToPrepare, UInt32 *outNumberOfFramesPrepared);
/* Immediate: synchronous (the returned buffers' callbacks run on the calling thread). */
extern OSStatus AudioQueueStop(AudioQueueRef inAQ, Boolean inImmediate);
extern OSStatus AudioQueuePause(AudioQueueRef inAQ);
extern OSStatus AudioQueueFlush(AudioQueueRef inAQ);
/* Synchronous, like an immediate stop. */
extern OSStatus AudioQueueReset(AudioQueueRef inAQ);

/* ---- Parameters and properties ----------------------------------------------------------- */
extern OSStatus AudioQueueGetParameter(AudioQueueRef inAQ, AudioQueueParameterID inParamID, AudioQueueParameterValue *outValue);
extern OSStatus AudioQueueSetParameter(AudioQueueRef inAQ, AudioQueueParameterID inParamID, AudioQueueParameterValue inValue);
extern OSStatus AudioQueueGetProperty(AudioQueueRef inAQ, AudioQueuePropertyID inID, void *outData, UInt32 *ioDataSize);
extern OSStatus AudioQueueSetProperty(AudioQueueRef inAQ, AudioQueuePropertyID inID, const void *inData, UInt32 inDataSize);
extern OSStatus AudioQueueGetPropertySize(AudioQueueRef inAQ, AudioQueuePropertyID inID, UInt32 *outDataSize);
extern OSStatus AudioQueueAddPropertyListener(AudioQueueRef inAQ, AudioQueuePropertyID inID,
                                              AudioQueuePropertyListenerProc inProc, void *inUserData);
extern OSStatus AudioQueueRemovePropertyListener(AudioQueueRef inAQ, AudioQueuePropertyID inID,
                                                 AudioQueuePropertyListenerProc inProc, void *inUserData);

/* ---- Time -------------------------------------------------------------------------------- */
extern OSStatus AudioQueueCreateTimeline(AudioQueueRef inAQ, AudioQueueTimelineRef *outTimeline);
extern OSStatus AudioQueueDisposeTimeline(AudioQueueRef inAQ, AudioQueueTimelineRef inTimeline);
/* Queue time (sample time at the queue's rate since its start); never blocks. */
extern OSStatus AudioQueueGetCurrentTime(AudioQueueRef inAQ, AudioQueueTimelineRef inTimeline,
                                         AudioTimeStamp *outTimeStamp, Boolean *outTimelineDiscontinuity);
extern OSStatus AudioQueueDeviceGetCurrentTime(AudioQueueRef inAQ, AudioTimeStamp *outTimeStamp);
extern OSStatus AudioQueueDeviceTranslateTime(AudioQueueRef inAQ, const AudioTimeStamp *inTime, AudioTimeStamp *outTime);
extern OSStatus AudioQueueDeviceGetNearestStartTime(AudioQueueRef inAQ, AudioTimeStamp *ioRequestedStartTime, UInt32 inFlags);

/* ---- Offline rendering ------------------------------------------------------------------- */
extern OSStatus AudioQueueSetOfflineRenderFormat(AudioQueueRef inAQ, const AudioStreamBasicDescription *inFormat,
                                                 const AudioChannelLayout *inLayout);
extern OSStatus AudioQueueOfflineRender(AudioQueueRef inAQ, const AudioTimeStamp *inTimestamp,
                                        AudioQueueBufferRef ioBuffer, UInt32 inNumberFrames);

/* ---- Processing taps (issue 22; docs/c-api.md, "Processing taps") ------------------------ */
/* Playback queues only (a recording queue: kAudioQueueErr_InvalidQueueType), stopped (else
 * kAudioQueueErr_InvalidRunState), one tap per queue (kAudioQueueErr_TooManyTaps); bad flags or
 * NULL arguments: kAudio_ParamError. *outMaxFrames: the power of two nearest 50 ms at the
 * queue's rate (2048 at 44.1/48 kHz); *outProcessingFormat: Float32 non-interleaved at the
 * queue's rate and channels. The tap processes the buffers enqueued after it is made. */
extern OSStatus AudioQueueProcessingTapNew(AudioQueueRef inAQ, AudioQueueProcessingTapCallback inCallback,
                                           void *inClientData, AudioQueueProcessingTapFlags inFlags,
                                           UInt32 *outMaxFrames, AudioStreamBasicDescription *outProcessingFormat,
                                           AudioQueueProcessingTapRef *outAQTap);
/* Only while the queue is stopped; the callback is not called once it returns. Not from the
 * tap's own callback. An unknown or disposed tap: kAudio_ParamError. */
extern OSStatus AudioQueueProcessingTapDispose(AudioQueueProcessingTapRef inAQTap);
/* Only from the callback of a tap that is not a siphon (else kAudioQueueErr_InvalidTapContext).
 * ioData: mNumberBuffers = the processing format's channels; NULL mData: pointers into the
 * queue's memory, valid during the callback; else copied into (room for inNumberFrames). */
extern OSStatus AudioQueueProcessingTapGetSourceAudio(AudioQueueProcessingTapRef inAQTap, UInt32 inNumberFrames,
                                                      AudioTimeStamp *ioTimeStamp, AudioQueueProcessingTapFlags *outFlags,
                                                      UInt32 *outNumberFrames, AudioBufferList *ioData);
/* Only from the tap's callback: the queue time (queue frames) where the chunk being processed
 * plays, and the queue frames it stands for (its frames before time/pitch). */
extern OSStatus AudioQueueProcessingTapGetQueueTime(AudioQueueProcessingTapRef inAQTap, Float64 *outQueueSampleTime,
                                                    UInt32 *outQueueFrameCount);

CF_EXTERN_C_END

#endif
