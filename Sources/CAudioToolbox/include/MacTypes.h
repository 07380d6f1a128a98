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

enum { noErr = 0 };

/* kAudio_ParamError: what a call answers for a NULL or unknown object or a bad argument. */
enum { kAudio_ParamError = -50 };

#endif
