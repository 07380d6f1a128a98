/*
 * CoreFoundation/AQSyncCFSubset.h — aqsync's C API (issue 23): what a compiler that cannot read
 * the toolchain's Core Foundation headers (gcc; clang without -fblocks: they declare blocks
 * unconditionally and gcc does not know the toolchain's endianness macros) sees of Core
 * Foundation. It defines nothing: every function and constant here is declared exactly as the
 * toolchain's headers declare it (same types, same struct tags) and is the one
 * swift-corelibs-foundation's libFoundation.so exports, which pkg-config's Libs link. Only the
 * part audio programs use is here: base types and memory management, CFByteOrder, CFString, CFURL, CFData,
 * CFDictionary (reading), CFNumber (making and reading), CFRunLoop with timers and sources,
 * absolute time. Build with clang -fblocks for all of Core Foundation. docs/c-api.md.
 */
#ifndef AQSYNC_CFSUBSET_H
#define AQSYNC_CFSUBSET_H

/* The C headers the toolchain's CoreFoundation.h includes (programs rely on them). */
#include <sys/types.h>
#include <stdarg.h>
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

/* Scalar types as the toolchain's CFBase.h defines them (Boolean is bool there). */
typedef bool Boolean;
typedef unsigned char UInt8;
typedef signed char SInt8;
typedef unsigned short UInt16;
typedef signed short SInt16;
typedef unsigned int UInt32;
typedef signed int SInt32;
typedef uint64_t UInt64;
typedef int64_t SInt64;
typedef SInt32 OSStatus;
typedef float Float32;
typedef double Float64;
typedef unsigned short UniChar;
typedef unsigned long UniCharCount;
typedef unsigned char *StringPtr;
typedef const unsigned char *ConstStringPtr;
typedef unsigned char Str255[256];
typedef const unsigned char *ConstStr255Param;
typedef SInt16 OSErr;
typedef SInt16 RegionCode;
typedef SInt16 LangCode;
typedef SInt16 ScriptCode;
typedef UInt32 FourCharCode;
typedef FourCharCode OSType;
typedef UInt8 Byte;
typedef SInt8 SignedByte;
typedef UInt32 UTF32Char;
typedef UInt16 UTF16Char;
typedef UInt8 UTF8Char;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

#ifdef __cplusplus
#define CF_EXTERN_C_BEGIN extern "C" {
#define CF_EXTERN_C_END }
#else
#define CF_EXTERN_C_BEGIN
#define CF_EXTERN_C_END
#endif
#define CF_EXPORT extern
#define CF_INLINE static inline

/* CF_ENUM(Type) { ... }: constants of type Type where the compiler takes a fixed underlying
 * type (AQSYNC_ENUM of AQSyncEnum.h: clang, C++11, C23), else a plain enum; typedef CF_ENUM(Type, Name) { ... }
 * declares Name as Type. CF_OPTIONS and CF_CLOSED_ENUM are the same. */
#include <AQSyncEnum.h>
#define AQSYNC_CF_ENUM_PICK(_1, _2, _macro, ...) _macro
#define AQSYNC_CF_ANON_ENUM(_type) AQSYNC_ENUM(_type)
#define AQSYNC_CF_NAMED_ENUM(_type, _name) _type _name; AQSYNC_ENUM(_name)
#ifndef CF_ENUM
#define CF_ENUM(...) AQSYNC_CF_ENUM_PICK(__VA_ARGS__, AQSYNC_CF_NAMED_ENUM, AQSYNC_CF_ANON_ENUM, )(__VA_ARGS__)
#endif
#ifndef CF_OPTIONS
#define CF_OPTIONS(...) AQSYNC_CF_ENUM_PICK(__VA_ARGS__, AQSYNC_CF_NAMED_ENUM, AQSYNC_CF_ANON_ENUM, )(__VA_ARGS__)
#endif
#ifndef CF_CLOSED_ENUM
#define CF_CLOSED_ENUM(...) AQSYNC_CF_ENUM_PICK(__VA_ARGS__, AQSYNC_CF_NAMED_ENUM, AQSYNC_CF_ANON_ENUM, )(__VA_ARGS__)
#endif

/* Nullability: clang knows _Nullable, _Nonnull, _Null_unspecified; gcc does not. glibc's
 * <sys/cdefs.h> already uses __nonnull(params) for its own meaning, so __nonnull is left alone. */
#if !defined(__clang__)
#ifndef _Nullable
#define _Nullable
#endif
#ifndef _Nonnull
#define _Nonnull
#endif
#ifndef _Null_unspecified
#define _Null_unspecified
#endif
#ifndef __nullable
#define __nullable
#endif
#ifndef __null_unspecified
#define __null_unspecified
#endif
#else
#ifndef __nullable
#define __nullable _Nullable
#endif
#ifndef __null_unspecified
#define __null_unspecified _Null_unspecified
#endif
#endif
#ifndef CF_ASSUME_NONNULL_BEGIN
#define CF_ASSUME_NONNULL_BEGIN
#define CF_ASSUME_NONNULL_END
#endif
#ifndef NS_ASSUME_NONNULL_BEGIN
#define NS_ASSUME_NONNULL_BEGIN
#define NS_ASSUME_NONNULL_END
#endif
#ifndef CF_RETURNS_RETAINED
#define CF_RETURNS_RETAINED
#define CF_RETURNS_NOT_RETAINED
#endif
#ifndef CF_SWIFT_NAME
#define CF_SWIFT_NAME(_name)
#endif
#ifndef CF_REFINED_FOR_SWIFT
#define CF_REFINED_FOR_SWIFT
#endif
#ifndef CF_NOESCAPE
#define CF_NOESCAPE
#endif

/* Availability: everything here is available on Linux; the macros expand to nothing. */
#ifndef API_AVAILABLE
#define API_AVAILABLE(...)
#define API_UNAVAILABLE(...)
#define API_DEPRECATED(...)
#define API_DEPRECATED_WITH_REPLACEMENT(...)
#endif
#ifndef __API_AVAILABLE
#define __API_AVAILABLE(...)
#define __API_UNAVAILABLE(...)
#define __API_DEPRECATED(...)
#endif
#ifndef __OSX_AVAILABLE_STARTING
#define __OSX_AVAILABLE_STARTING(_mac, _ios)
#define __OSX_AVAILABLE_BUT_DEPRECATED(_macIntro, _macDep, _iosIntro, _iosDep)
#define __OSX_AVAILABLE(_v)
#define __IOS_AVAILABLE(_v)
#define __TVOS_AVAILABLE(_v)
#define __WATCHOS_AVAILABLE(_v)
#define __IOS_PROHIBITED
#define __TVOS_PROHIBITED
#define __WATCHOS_PROHIBITED
#endif
#ifndef CF_AVAILABLE
#define CF_AVAILABLE(_mac, _ios)
#define CF_ENUM_AVAILABLE(_mac, _ios)
#endif

CF_EXTERN_C_BEGIN

/* ---- CFBase.h ---- */
typedef unsigned long CFTypeID;
typedef unsigned long CFOptionFlags;
typedef unsigned long CFHashCode;
typedef signed long CFIndex;
typedef const void *CFTypeRef;
typedef const struct __CFString *CFStringRef;
typedef struct __CFString *CFMutableStringRef;
typedef const struct __CFAllocator *CFAllocatorRef;
typedef CFTypeRef CFPropertyListRef;
typedef struct { CFIndex location; CFIndex length; } CFRange;
typedef CFIndex CFComparisonResult;
AQSYNC_ENUM(CFComparisonResult) { kCFCompareLessThan = -1L, kCFCompareEqualTo = 0, kCFCompareGreaterThan = 1 };
typedef const struct __CFNull *CFNullRef;
extern const CFNullRef kCFNull;
extern const CFAllocatorRef kCFAllocatorDefault;
extern const CFAllocatorRef kCFAllocatorSystemDefault;
extern const CFAllocatorRef kCFAllocatorMalloc;
extern const CFAllocatorRef kCFAllocatorNull;
static inline CFRange CFRangeMake(CFIndex loc, CFIndex len) { CFRange r; r.location = loc; r.length = len; return r; }
static const CFIndex kCFNotFound = -1;
extern CFTypeID CFGetTypeID(CFTypeRef cf);
extern CFTypeRef CFRetain(CFTypeRef cf);
extern void CFRelease(CFTypeRef cf);
extern CFIndex CFGetRetainCount(CFTypeRef cf);
extern Boolean CFEqual(CFTypeRef cf1, CFTypeRef cf2);
extern CFHashCode CFHash(CFTypeRef cf);
extern CFStringRef CFCopyDescription(CFTypeRef cf);
extern void CFShow(CFTypeRef obj);

/* ---- CFByteOrder.h (inline, as the toolchain's; Linux on x86-64 and arm64 is little-endian) ---- */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "AQSyncCFSubset.h is written for little-endian machines: build with clang -fblocks"
#endif
typedef CFIndex CFByteOrder;
AQSYNC_ENUM(CFByteOrder) { CFByteOrderUnknown = 0, CFByteOrderLittleEndian = 1, CFByteOrderBigEndian = 2 };
static inline CFByteOrder CFByteOrderGetCurrent(void) { return CFByteOrderLittleEndian; }
static inline uint16_t CFSwapInt16(uint16_t arg) { return __builtin_bswap16(arg); }
static inline uint32_t CFSwapInt32(uint32_t arg) { return __builtin_bswap32(arg); }
static inline uint64_t CFSwapInt64(uint64_t arg) { return __builtin_bswap64(arg); }
static inline uint16_t CFSwapInt16BigToHost(uint16_t arg) { return CFSwapInt16(arg); }
static inline uint32_t CFSwapInt32BigToHost(uint32_t arg) { return CFSwapInt32(arg); }
static inline uint64_t CFSwapInt64BigToHost(uint64_t arg) { return CFSwapInt64(arg); }
static inline uint16_t CFSwapInt16HostToBig(uint16_t arg) { return CFSwapInt16(arg); }
static inline uint32_t CFSwapInt32HostToBig(uint32_t arg) { return CFSwapInt32(arg); }
static inline uint64_t CFSwapInt64HostToBig(uint64_t arg) { return CFSwapInt64(arg); }
static inline uint16_t CFSwapInt16LittleToHost(uint16_t arg) { return arg; }
static inline uint32_t CFSwapInt32LittleToHost(uint32_t arg) { return arg; }
static inline uint64_t CFSwapInt64LittleToHost(uint64_t arg) { return arg; }
static inline uint16_t CFSwapInt16HostToLittle(uint16_t arg) { return arg; }
static inline uint32_t CFSwapInt32HostToLittle(uint32_t arg) { return arg; }
static inline uint64_t CFSwapInt64HostToLittle(uint64_t arg) { return arg; }

/* ---- CFString.h ---- */
typedef UInt32 CFStringEncoding;
AQSYNC_ENUM(CFStringEncoding) {
    kCFStringEncodingMacRoman = 0, kCFStringEncodingWindowsLatin1 = 0x0500, kCFStringEncodingISOLatin1 = 0x0201,
    kCFStringEncodingNextStepLatin = 0x0B01, kCFStringEncodingASCII = 0x0600, kCFStringEncodingUnicode = 0x0100,
    kCFStringEncodingUTF8 = 0x08000100, kCFStringEncodingNonLossyASCII = 0x0BFF
};
typedef CFOptionFlags CFStringCompareFlags;
AQSYNC_ENUM(CFStringCompareFlags) { kCFCompareCaseInsensitive = 1, kCFCompareBackwards = 4, kCFCompareAnchored = 8, kCFCompareNonliteral = 16,
    kCFCompareLocalized = 32, kCFCompareNumerically = 64 };
extern CFTypeID CFStringGetTypeID(void);
extern CFStringRef CFStringCreateWithCString(CFAllocatorRef alloc, const char *cStr, CFStringEncoding encoding);
extern CFStringRef CFStringCreateWithBytes(CFAllocatorRef alloc, const UInt8 *bytes, CFIndex numBytes, CFStringEncoding encoding, Boolean isExternalRepresentation);
extern CFStringRef CFStringCreateWithFormat(CFAllocatorRef alloc, CFTypeRef formatOptions, CFStringRef format, ...);
extern CFStringRef CFStringCreateCopy(CFAllocatorRef alloc, CFStringRef theString);
extern CFMutableStringRef CFStringCreateMutable(CFAllocatorRef alloc, CFIndex maxLength);
extern void CFStringAppend(CFMutableStringRef theString, CFStringRef appendedString);
extern void CFStringAppendCString(CFMutableStringRef theString, const char *cStr, CFStringEncoding encoding);
extern CFIndex CFStringGetLength(CFStringRef theString);
extern Boolean CFStringGetCString(CFStringRef theString, char *buffer, CFIndex bufferSize, CFStringEncoding encoding);
extern const char *CFStringGetCStringPtr(CFStringRef theString, CFStringEncoding encoding);
extern CFIndex CFStringGetMaximumSizeForEncoding(CFIndex length, CFStringEncoding encoding);
extern CFComparisonResult CFStringCompare(CFStringRef theString1, CFStringRef theString2, CFStringCompareFlags compareOptions);
extern CFRange CFStringFind(CFStringRef theString, CFStringRef stringToFind, CFStringCompareFlags compareOptions);
extern CFStringRef CFStringCreateWithSubstring(CFAllocatorRef alloc, CFStringRef str, CFRange range);
extern Boolean CFStringHasSuffix(CFStringRef theString, CFStringRef suffix);
extern Boolean CFStringHasPrefix(CFStringRef theString, CFStringRef prefix);
extern SInt32 CFStringGetIntValue(CFStringRef str);
extern double CFStringGetDoubleValue(CFStringRef str);
/* CFSTR("…"): a constant CFString, laid out as the toolchain's CFString.h lays it out for C
 * compilers on Linux (the object header of Foundation's _NSCFConstantString, pinned). */
struct __CFConstStr {
    struct { uintptr_t _cfisa; uintptr_t _swift_rc; uint64_t _cfinfoa; } _base;
    uint8_t *_ptr;
    uint32_t _length;
};
extern void *$s10Foundation19_NSCFConstantStringCN[];
#define CFSTR(cStr) ({ \
    static struct __CFConstStr str = {{(uintptr_t)&$s10Foundation19_NSCFConstantStringCN, (uintptr_t)0x80000004ffffffffULL, 0x07C8}, \
                                      (uint8_t *)(cStr), sizeof(cStr) - 1}; \
    (CFStringRef)&str; \
})

/* ---- CFData.h, CFDictionary.h, CFArray.h, CFNumber.h (the parts audio programs read) ---- */
typedef const struct __CFData *CFDataRef;
typedef struct __CFData *CFMutableDataRef;
extern CFDataRef CFDataCreate(CFAllocatorRef allocator, const UInt8 *bytes, CFIndex length);
extern CFIndex CFDataGetLength(CFDataRef theData);
extern const UInt8 *CFDataGetBytePtr(CFDataRef theData);
extern void CFDataGetBytes(CFDataRef theData, CFRange range, UInt8 *buffer);
typedef const struct __CFDictionary *CFDictionaryRef;
typedef struct __CFDictionary *CFMutableDictionaryRef;
extern CFIndex CFDictionaryGetCount(CFDictionaryRef theDict);
extern const void *CFDictionaryGetValue(CFDictionaryRef theDict, const void *key);
extern Boolean CFDictionaryGetValueIfPresent(CFDictionaryRef theDict, const void *key, const void **value);
extern void CFDictionaryGetKeysAndValues(CFDictionaryRef theDict, const void **keys, const void **values);
extern CFTypeID CFDictionaryGetTypeID(void);
typedef const struct __CFArray *CFArrayRef;
extern CFIndex CFArrayGetCount(CFArrayRef theArray);
extern const void *CFArrayGetValueAtIndex(CFArrayRef theArray, CFIndex idx);
typedef const struct __CFNumber *CFNumberRef;
typedef CFIndex CFNumberType;
AQSYNC_ENUM(CFNumberType) {
    kCFNumberSInt8Type = 1, kCFNumberSInt16Type = 2, kCFNumberSInt32Type = 3, kCFNumberSInt64Type = 4,
    kCFNumberFloat32Type = 5, kCFNumberFloat64Type = 6, kCFNumberIntType = 9, kCFNumberDoubleType = 13
};
extern CFNumberRef CFNumberCreate(CFAllocatorRef allocator, CFNumberType theType, const void *valuePtr);
extern Boolean CFNumberGetValue(CFNumberRef number, CFNumberType theType, void *valuePtr);

/* ---- CFURL.h ---- */
typedef const struct __CFURL *CFURLRef;
typedef CFIndex CFURLPathStyle;
AQSYNC_ENUM(CFURLPathStyle) { kCFURLPOSIXPathStyle = 0, kCFURLWindowsPathStyle = 2 };
extern CFURLRef CFURLCreateFromFileSystemRepresentation(CFAllocatorRef allocator, const UInt8 *buffer, CFIndex bufLen, Boolean isDirectory);
extern CFURLRef CFURLCreateWithFileSystemPath(CFAllocatorRef allocator, CFStringRef filePath, CFURLPathStyle pathStyle, Boolean isDirectory);
extern CFURLRef CFURLCreateWithString(CFAllocatorRef allocator, CFStringRef URLString, CFURLRef baseURL);
extern Boolean CFURLGetFileSystemRepresentation(CFURLRef url, Boolean resolveAgainstBase, UInt8 *buffer, CFIndex maxBufLen);
extern CFStringRef CFURLCopyFileSystemPath(CFURLRef anURL, CFURLPathStyle pathStyle);
extern CFStringRef CFURLGetString(CFURLRef anURL);
extern CFStringRef CFURLCopyPathExtension(CFURLRef url);
extern CFStringRef CFURLCopyPath(CFURLRef anURL);
extern CFStringRef CFURLCopyLastPathComponent(CFURLRef url);

/* ---- CFDate.h ---- */
typedef double CFTimeInterval;
typedef CFTimeInterval CFAbsoluteTime;
extern CFAbsoluteTime CFAbsoluteTimeGetCurrent(void);

/* ---- CFRunLoop.h ---- */
typedef CFStringRef CFRunLoopMode;
typedef struct __CFRunLoop *CFRunLoopRef;
typedef struct __CFRunLoopSource *CFRunLoopSourceRef;
typedef struct __CFRunLoopObserver *CFRunLoopObserverRef;
typedef struct __CFRunLoopTimer *CFRunLoopTimerRef;
typedef SInt32 CFRunLoopRunResult;
AQSYNC_ENUM(CFRunLoopRunResult) {
    kCFRunLoopRunFinished = 1, kCFRunLoopRunStopped = 2, kCFRunLoopRunTimedOut = 3, kCFRunLoopRunHandledSource = 4
};
extern const CFRunLoopMode kCFRunLoopDefaultMode;
extern const CFRunLoopMode kCFRunLoopCommonModes;
extern CFTypeID CFRunLoopGetTypeID(void);
extern CFRunLoopRef CFRunLoopGetCurrent(void);
extern CFRunLoopRef CFRunLoopGetMain(void);
extern CFRunLoopMode CFRunLoopCopyCurrentMode(CFRunLoopRef rl);
extern void CFRunLoopRun(void);
extern CFRunLoopRunResult CFRunLoopRunInMode(CFRunLoopMode mode, CFTimeInterval seconds, Boolean returnAfterSourceHandled);
extern Boolean CFRunLoopIsWaiting(CFRunLoopRef rl);
extern void CFRunLoopWakeUp(CFRunLoopRef rl);
extern void CFRunLoopStop(CFRunLoopRef rl);
extern Boolean CFRunLoopContainsSource(CFRunLoopRef rl, CFRunLoopSourceRef source, CFRunLoopMode mode);
extern void CFRunLoopAddSource(CFRunLoopRef rl, CFRunLoopSourceRef source, CFRunLoopMode mode);
extern void CFRunLoopRemoveSource(CFRunLoopRef rl, CFRunLoopSourceRef source, CFRunLoopMode mode);
extern Boolean CFRunLoopContainsTimer(CFRunLoopRef rl, CFRunLoopTimerRef timer, CFRunLoopMode mode);
extern void CFRunLoopAddTimer(CFRunLoopRef rl, CFRunLoopTimerRef timer, CFRunLoopMode mode);
extern void CFRunLoopRemoveTimer(CFRunLoopRef rl, CFRunLoopTimerRef timer, CFRunLoopMode mode);
typedef struct {
    CFIndex version;
    void *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    CFStringRef (*copyDescription)(const void *info);
    Boolean (*equal)(const void *info1, const void *info2);
    CFHashCode (*hash)(const void *info);
    void (*schedule)(void *info, CFRunLoopRef rl, CFRunLoopMode mode);
    void (*cancel)(void *info, CFRunLoopRef rl, CFRunLoopMode mode);
    void (*perform)(void *info);
} CFRunLoopSourceContext;
extern CFRunLoopSourceRef CFRunLoopSourceCreate(CFAllocatorRef allocator, CFIndex order, CFRunLoopSourceContext *context);
extern void CFRunLoopSourceInvalidate(CFRunLoopSourceRef source);
extern Boolean CFRunLoopSourceIsValid(CFRunLoopSourceRef source);
extern void CFRunLoopSourceSignal(CFRunLoopSourceRef source);
typedef struct {
    CFIndex version;
    void *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    CFStringRef (*copyDescription)(const void *info);
} CFRunLoopTimerContext;
typedef void (*CFRunLoopTimerCallBack)(CFRunLoopTimerRef timer, void *info);
extern CFRunLoopTimerRef CFRunLoopTimerCreate(CFAllocatorRef allocator, CFAbsoluteTime fireDate, CFTimeInterval interval, CFOptionFlags flags, CFIndex order, CFRunLoopTimerCallBack callout, CFRunLoopTimerContext *context);
extern CFAbsoluteTime CFRunLoopTimerGetNextFireDate(CFRunLoopTimerRef timer);
extern void CFRunLoopTimerSetNextFireDate(CFRunLoopTimerRef timer, CFAbsoluteTime fireDate);
extern CFTimeInterval CFRunLoopTimerGetInterval(CFRunLoopTimerRef timer);
extern void CFRunLoopTimerInvalidate(CFRunLoopTimerRef timer);
extern Boolean CFRunLoopTimerIsValid(CFRunLoopTimerRef timer);

CF_EXTERN_C_END

#endif
