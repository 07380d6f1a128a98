// Counts the allocations one thread makes, for `aqsync bench` (render-thread allocations).
// Built as libAQAllocCounter.so and linked into nothing: `aqsync bench` preloads it into its
// own process (LD_PRELOAD), where its malloc and friends, forwarding every call to glibc's
// allocator (__libc_malloc, ...), take the place of libc's. See docs/benchmarking.md.
#ifndef AQ_ALLOC_COUNTER_H
#define AQ_ALLOC_COUNTER_H

#include <pthread.h>

/// Starts counting allocations (malloc, calloc, realloc, the aligned variants) made on `thread`,
/// from zero. Any thread.
void aq_alloc_watch(pthread_t thread);
/// Allocations counted since aq_alloc_watch. Any thread.
long aq_alloc_count(void);
/// Stops counting. Any thread.
void aq_alloc_stop(void);
/// 1 when this process's malloc is the counting one (the executable's definitions won). Any thread.
int aq_alloc_counter_active(void);

#endif
