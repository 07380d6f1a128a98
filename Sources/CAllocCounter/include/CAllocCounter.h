// Counts the allocations one thread makes, for `aqsync bench` (render-thread allocations).
// Linked into the aqsync executable only: it defines malloc and friends, forwarding every call
// to glibc's allocator (__libc_malloc, ...), so the whole process uses it. See
// docs/benchmarking.md.
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
