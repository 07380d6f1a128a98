/*
 * CoreFoundation/CFBase.h — aqsync's C API (issue 12): the few Core Foundation names the audio
 * headers need, and Apple's annotation macros defined so that gcc and clang accept code that
 * uses them. This is not Core Foundation: CFStringRef exists only for the run-loop mode
 * constants (see CFRunLoop.h and docs/c-api.md).
 */
#ifndef AQSYNC_CFBASE_H
#define AQSYNC_CFBASE_H

#include <MacTypes.h>

#ifdef __cplusplus
#define CF_EXTERN_C_BEGIN extern "C" {
#define CF_EXTERN_C_END }
#else
#define CF_EXTERN_C_BEGIN
#define CF_EXTERN_C_END
#endif
#define CF_EXPORT extern
#define CF_INLINE static inline

/* CF_ENUM(Type) { ... };  constants of type Type (where the compiler takes a fixed underlying
 * type: see AQSYNC_ENUM in MacTypes.h), as Apple's headers declare theirs.
 * typedef CF_ENUM(UInt32, Name) { ... };  declares Name as UInt32 and constants of type Name.
 * (Apple's two-argument form makes Name an enum type, which Swift imports as a Swift enum or
 * option set; here Name stays the integer type. docs/c-api.md.) CF_OPTIONS and CF_CLOSED_ENUM
 * are the same. */
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
#ifndef AVAILABLE_MAC_OS_X_VERSION_10_5_AND_LATER
#define AVAILABLE_MAC_OS_X_VERSION_10_5_AND_LATER
#define AVAILABLE_MAC_OS_X_VERSION_10_6_AND_LATER
#endif

typedef const struct __CFString *CFStringRef;
typedef struct __CFRunLoop *CFRunLoopRef;
typedef double CFTimeInterval;
typedef signed long CFIndex;   /* as Apple's CFBase.h: 64 bits on LP64 (issue 22; it was SInt32) */

#endif
