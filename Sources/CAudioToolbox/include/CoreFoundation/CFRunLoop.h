/*
 * CoreFoundation/CFRunLoop.h — aqsync's C API (issue 12): a minimal run loop, enough for
 * programs that pass CFRunLoopGetCurrent() to AudioQueueNewOutput and then run that loop.
 *
 * A queue made with a run loop delivers its output callbacks and property listeners on the
 * thread that runs that loop (inside CFRunLoopRun or CFRunLoopRunInMode); with NULL they run
 * on the library's internal thread. Modes are not distinguished: every mode runs every
 * source. There are no timers, observers or sources other than the queues'. See docs/c-api.md.
 */
#ifndef AQSYNC_CFRUNLOOP_H
#define AQSYNC_CFRUNLOOP_H

#include <CoreFoundation/CFBase.h>

CF_EXTERN_C_BEGIN

/* What CFRunLoopRunInMode returns. */
typedef SInt32 CFRunLoopRunResult;
CF_ENUM(CFRunLoopRunResult) {
    kCFRunLoopRunFinished = 1,      /* (never returned here: queue sources count as sources) */
    kCFRunLoopRunStopped = 2,       /* CFRunLoopStop was called */
    kCFRunLoopRunTimedOut = 3,      /* the time ran out */
    kCFRunLoopRunHandledSource = 4  /* returnAfterSourceHandled and a callback ran */
};

/* The mode names (compared by nothing: every mode is every mode here). */
extern const CFStringRef kCFRunLoopDefaultMode;
extern const CFStringRef kCFRunLoopCommonModes;

/* The calling thread's run loop, made on first use. Any thread; does not block. */
extern CFRunLoopRef CFRunLoopGetCurrent(void);
/* The run loop of the thread that first called CFRunLoopGetMain or of the process's main
 * thread if it called CFRunLoopGetCurrent first. Any thread; does not block. */
extern CFRunLoopRef CFRunLoopGetMain(void);
/* Runs the current thread's loop until CFRunLoopStop. Blocks; callbacks run inside it. */
extern void CFRunLoopRun(void);
/* Runs the current thread's loop for `seconds` (really waiting that long, delivering callbacks
 * as they come), or until CFRunLoopStop, or after the first callback when
 * returnAfterSourceHandled is true. Blocks. */
extern CFRunLoopRunResult CFRunLoopRunInMode(CFStringRef mode, CFTimeInterval seconds, Boolean returnAfterSourceHandled);
/* Makes the loop's current or next run return. Any thread; does not block. */
extern void CFRunLoopStop(CFRunLoopRef rl);
/* Wakes the loop (it re-checks for work). Any thread; does not block. */
extern void CFRunLoopWakeUp(CFRunLoopRef rl);

CF_EXTERN_C_END

#endif
