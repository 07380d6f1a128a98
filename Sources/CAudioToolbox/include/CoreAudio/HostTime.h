/*
 * CoreAudio/HostTime.h — aqsync's C API (issue 23): Core Audio's host-time functions, written
 * from Apple's Core Audio reference. The host time here is the one every AudioTimeStamp's
 * mHostTime carries (AudioQueueGetCurrentTime, AudioQueueDeviceGetCurrentTime, a start time's
 * host time): nanoseconds on CLOCK_MONOTONIC, so its frequency is 10^9 and the conversions to
 * and from nanoseconds are the identity (on Apple's systems they scale mach_absolute_time's
 * ticks). Any thread, including a queue's callbacks and a processing tap; never blocks.
 */
#ifndef AQSYNC_HOSTTIME_H
#define AQSYNC_HOSTTIME_H

#include <CoreAudio/CoreAudioTypes.h>

CF_EXTERN_C_BEGIN

/* The host time now. */
extern UInt64 AudioGetCurrentHostTime(void);
/* Host-time ticks per second: 1000000000. */
extern Float64 AudioGetHostClockFrequency(void);
/* The smallest difference of two host times the clock shows: 1 (one nanosecond). */
extern UInt32 AudioGetHostClockMinimumTimeDelta(void);
/* A host time in nanoseconds (the same number here). */
extern UInt64 AudioConvertHostTimeToNanos(UInt64 inHostTime);
/* Nanoseconds as a host time (the same number here). */
extern UInt64 AudioConvertNanosToHostTime(UInt64 inNanos);

CF_EXTERN_C_END

#endif
