/*
 * MacTypes.h — aqsync's C API (issue 12): the basic scalar types Apple's audio headers use,
 * written for Linux (LP64: long is 64 bits, so the 32-bit types are int-based; ByteCount,
 * ByteOffset and ItemCount are unsigned long, as Apple's are).
 */
#ifndef AQSYNC_MACTYPES_H
#define AQSYNC_MACTYPES_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

typedef uint8_t  UInt8;
typedef int8_t   SInt8;
typedef uint16_t UInt16;
typedef int16_t  SInt16;
typedef uint32_t UInt32;
typedef int32_t  SInt32;
typedef uint64_t UInt64;
typedef int64_t  SInt64;
typedef float    Float32;
typedef double   Float64;
typedef unsigned char Boolean;   /* 0 or 1, one byte, as on Apple's systems */
typedef SInt32   OSStatus;       /* a result code: noErr (0) or an error */
typedef SInt16   OSErr;
typedef UInt32   FourCharCode;
typedef FourCharCode OSType;
typedef UInt8   *Ptr;
/* Counts are longs, as in Apple's MacTypes.h: 64 bits on LP64 (issue 22; they were UInt32). */
typedef unsigned long ByteCount;
typedef unsigned long ByteOffset;
typedef unsigned long ItemCount;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

/* Typed constants (issue 22). Apple's headers declare their constants with CF_ENUM(Type) {...},
 * an anonymous enum with a fixed underlying type where the compiler has them, so that Swift
 * imports each constant with that type (AudioQueuePropertyID, AudioFormatFlags, OSStatus...)
 * rather than as Int. AQSYNC_ENUM(Type) is that: `enum : Type` with clang (in every C mode, as an
 * extension; Swift reads the headers through clang), in C++11 and in C23; a plain `enum`
 * elsewhere (gcc before C23, which has no fixed underlying types), where the constants are int
 * as before. Define AQSYNC_FIXED_ENUM to 0 or 1 before including to choose. */
#ifndef AQSYNC_FIXED_ENUM
#if defined(__clang__) || (defined(__cplusplus) && __cplusplus >= 201103L) || \
    (!defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 202311L)
#define AQSYNC_FIXED_ENUM 1
#else
#define AQSYNC_FIXED_ENUM 0
#endif
#endif
#if AQSYNC_FIXED_ENUM
#define AQSYNC_ENUM(_type) enum : _type
#else
#define AQSYNC_ENUM(_type) enum
#endif

AQSYNC_ENUM(OSStatus) { noErr = 0 };

/* kAudio_ParamError: what a call answers for a NULL or unknown object or a bad argument. */
AQSYNC_ENUM(OSStatus) { kAudio_ParamError = -50 };

#endif
