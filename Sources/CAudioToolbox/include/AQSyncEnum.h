/*
 * AQSyncEnum.h — aqsync's C API: AQSYNC_ENUM(Type), the typed-constant enum MacTypes.h and the
 * gcc view of Core Foundation (CoreFoundation/AQSyncCFSubset.h) declare their constants with.
 */
#ifndef AQSYNC_ENUM_H
#define AQSYNC_ENUM_H

/* Typed constants (issue 22). Apple's headers declare their constants with CF_ENUM(Type) {...},
 * an anonymous enum with a fixed underlying type where the compiler has them, so that Swift
 * imports each constant with that type (AudioQueuePropertyID, AudioFormatFlags, OSStatus...)
 * rather than as Int. With the toolchain's Core Foundation, CF_ENUM is its own (a fixed type
 * under clang); AQSYNC_ENUM(Type) (and CF_ENUM under AQSyncCFSubset.h) is `enum : Type` with
 * clang (in every C mode, as an extension), in C++11 and in C23; a plain `enum` elsewhere (gcc
 * before C23, which has no fixed underlying types), where the constants are int. Define
 * AQSYNC_FIXED_ENUM to 0 or 1 before including to choose. */
#ifndef AQSYNC_FIXED_ENUM
#if defined(__clang__) || (defined(__cplusplus) && __cplusplus >= 201103L) || \
    (!defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 202311L)
#define AQSYNC_FIXED_ENUM 1
#else
#define AQSYNC_FIXED_ENUM 0
#endif
#endif
#ifndef AQSYNC_ENUM
#if AQSYNC_FIXED_ENUM
#define AQSYNC_ENUM(_type) enum : _type
#else
#define AQSYNC_ENUM(_type) enum
#endif
#endif

#endif
