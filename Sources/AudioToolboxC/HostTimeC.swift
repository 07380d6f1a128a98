// Core Audio's host-time functions (CoreAudio/HostTime.h), issue 23: the host time of every
// AudioTimeStamp the library gives is AQCore's HostClock, nanoseconds on CLOCK_MONOTONIC. Any
// thread; never blocks.
import AQCore

/// `AudioGetCurrentHostTime`, exported to C: its contract is in `CoreAudio/HostTime.h`.
@c public func AudioGetCurrentHostTime() -> UInt64 { HostClock.now() }

/// `AudioGetHostClockFrequency`, exported to C: its contract is in `CoreAudio/HostTime.h`.
@c public func AudioGetHostClockFrequency() -> Float64 { 1_000_000_000 }

/// `AudioGetHostClockMinimumTimeDelta`, exported to C: its contract is in `CoreAudio/HostTime.h`.
@c public func AudioGetHostClockMinimumTimeDelta() -> UInt32 { 1 }

/// `AudioConvertHostTimeToNanos`, exported to C: its contract is in `CoreAudio/HostTime.h`.
@c public func AudioConvertHostTimeToNanos(_ inHostTime: UInt64) -> UInt64 { inHostTime }

/// `AudioConvertNanosToHostTime`, exported to C: its contract is in `CoreAudio/HostTime.h`.
@c public func AudioConvertNanosToHostTime(_ inNanos: UInt64) -> UInt64 { inNanos }
