/*
 * TargetConditionals.h — aqsync's C API (issue 23): the TARGET_ macros Apple's headers define and
 * programs test (TARGET_OS_MAC, TARGET_OS_IPHONE, TARGET_RT_LITTLE_ENDIAN, …), for Linux, with
 * the values the toolchain's CoreFoundation/CFTargetConditionals.h gives on Linux (which, when a
 * TargetConditionals.h is on the include path, takes this one instead of its own), so that gcc
 * and clang see the same. Linux on x86-64 or arm64 only.
 */
#ifndef __TARGETCONDITIONALS__
#define __TARGETCONDITIONALS__

#if defined(__x86_64__)
#define TARGET_CPU_X86_64 1
#define TARGET_CPU_ARM64 0
#elif defined(__aarch64__)
#define TARGET_CPU_X86_64 0
#define TARGET_CPU_ARM64 1
#else
#error "aqsync's C API is built for Linux on x86-64 and arm64"
#endif
#define TARGET_CPU_ARM 0
#define TARGET_CPU_MIPS 0
#define TARGET_CPU_MIPS64 0
#define TARGET_CPU_PPC 0
#define TARGET_CPU_PPC64 0
#define TARGET_CPU_S390X 0
#define TARGET_CPU_WASM32 0
#define TARGET_CPU_X86 0

#define TARGET_OS_ANDROID 0
#define TARGET_OS_BSD 0
#define TARGET_OS_CYGWIN 0
#define TARGET_OS_DARWIN 0
#define TARGET_OS_IOS 0
#define TARGET_OS_IPHONE 0
#define TARGET_OS_LINUX 1
#define TARGET_OS_MAC TARGET_OS_DARWIN
#define TARGET_OS_OSX TARGET_OS_DARWIN
#define TARGET_OS_TV 0
#define TARGET_OS_WASI 0
#define TARGET_OS_WATCH 0
#define TARGET_OS_WIN32 TARGET_OS_WINDOWS
#define TARGET_OS_WINDOWS 0
#define TARGET_OS_SIMULATOR 0
#define TARGET_IPHONE_SIMULATOR 0
#define TARGET_OS_EMBEDDED 0
#define TARGET_OS_MACCATALYST 0
#define TARGET_OS_UNIX 0

#define TARGET_RT_64_BIT 1
#define TARGET_RT_BIG_ENDIAN 0
#define TARGET_RT_LITTLE_ENDIAN 1

#endif
