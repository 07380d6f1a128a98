/* CoreFoundation/CoreFoundation.h — aqsync's C API: only CFBase.h and CFRunLoop.h exist. */
#ifndef AQSYNC_COREFOUNDATION_H
#define AQSYNC_COREFOUNDATION_H
#include <CoreFoundation/CFBase.h>
#include <CoreFoundation/CFRunLoop.h>
#endif
