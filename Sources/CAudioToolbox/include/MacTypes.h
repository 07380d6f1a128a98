/*
 * MacTypes.h — aqsync's C API (issue 12): the basic scalar types Apple's audio headers use,
 * written for Linux (LP64: long is 64 bits, so the 32-bit types are int-based; ByteCount,
 * ByteOffset and ItemCount are unsigned long, as Apple's are).
 */
#ifndef AQSYNC_MACTYPES_H
#define AQSYNC_MACTYPES_H

/* The scalar types (Boolean, UInt8…UInt64, SInt…, Float32/64, OSStatus, OSErr, FourCharCode,
 * OSType, UniChar, …) are Core Foundation's own: the toolchain's CFBase.h defines them, and
 * AQSyncCFSubset.h defines them the same way for compilers that cannot read it (issue 23).
 * Boolean is therefore `bool` (one byte, as Apple's `unsigned char`; Swift imports it as Bool).
 * CoreFoundation.h also brings the C headers Apple's umbrella brings (stdio.h, stdlib.h, …);
 * TargetConditionals.h the TARGET_ macros. */
#include <TargetConditionals.h>
#include <CoreFoundation/CoreFoundation.h>

/* Counts are longs, as in Apple's MacTypes.h: 64 bits on LP64 (issue 22; they were UInt32). */
typedef UInt8   *Ptr;
typedef unsigned long ByteCount;
typedef unsigned long ByteOffset;
typedef unsigned long ItemCount;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
#ifndef nil
#define nil NULL
#endif

/* Typed constants: AQSYNC_ENUM (AQSyncEnum.h, which says how). */
#include <AQSyncEnum.h>

/* The version macros Apple's SDK headers define, which Core Audio utility code tests
 * (`#if !defined(COREAUDIOTYPES_VERSION) || COREAUDIOTYPES_VERSION < …` redeclares constants). */
#ifndef MAC_OS_X_VERSION_10_5
#define MAC_OS_X_VERSION_10_4 1040
#define MAC_OS_X_VERSION_10_5 1050
#define MAC_OS_X_VERSION_10_6 1060
#define MAC_OS_X_VERSION_10_7 1070
#define MAC_OS_X_VERSION_10_8 1080
#define MAC_OS_X_VERSION_10_9 1090
#define MAC_OS_X_VERSION_10_10 101000
#define MAC_OS_X_VERSION_10_11 101100
#define MAC_OS_X_VERSION_10_12 101200
#define MAC_OS_X_VERSION_10_13 101300
#define MAC_OS_X_VERSION_10_14 101400
#define MAC_OS_X_VERSION_10_15 101500
#endif
#ifndef MAC_OS_X_VERSION_MIN_REQUIRED
#define MAC_OS_X_VERSION_MIN_REQUIRED MAC_OS_X_VERSION_10_15
#endif
#ifndef MAC_OS_X_VERSION_MAX_ALLOWED
#define MAC_OS_X_VERSION_MAX_ALLOWED MAC_OS_X_VERSION_10_15
#endif
#ifndef COREAUDIOTYPES_VERSION
#define COREAUDIOTYPES_VERSION 20150414
#endif

AQSYNC_ENUM(OSStatus) { noErr = 0 };

/* kAudio_ParamError: what a call answers for a NULL or unknown object or a bad argument. The
 * other general audio result codes of Apple's CoreAudioBaseTypes.h (issue 23), which programs
 * compare results with; kAudio_FileNotFoundError is what AudioFileOpenURL answers for a missing
 * file (as kAudioFileFileNotFoundError, the same value). */
AQSYNC_ENUM(OSStatus) {
    kAudio_UnimplementedError = -4,
    kAudio_FileNotFoundError = -43,
    kAudio_FilePermissionError = -54,
    kAudio_TooManyFilesOpenError = -42,
    kAudio_BadFilePathError = 0x21707468, /* '!pth' */
    kAudio_ParamError = -50,
    kAudio_MemFullError = -108
};

#endif
