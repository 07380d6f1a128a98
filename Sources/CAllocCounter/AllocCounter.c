// See include/CAllocCounter.h. glibc (2.36 on Debian 12) exports its allocator under
// __libc_* names; definitions of malloc & co. in the executable take precedence over libc's
// for every library of the process, so each call passes here and goes on to glibc.
#define _GNU_SOURCE
#include "CAllocCounter.h"
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static _Atomic int watching = 0;
static _Atomic(uintptr_t) watched = 0;
static _Atomic long counted = 0;
static _Atomic int active = 0;

static inline void note(void) {
    // Written once: a store on every call would bounce the cache line between cores.
    if (!atomic_load_explicit(&active, memory_order_relaxed)) atomic_store_explicit(&active, 1, memory_order_relaxed);
    if (atomic_load_explicit(&watching, memory_order_relaxed)
        && (uintptr_t)pthread_self() == atomic_load_explicit(&watched, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed);
    }
}

void aq_alloc_watch(pthread_t thread) {
    atomic_store_explicit(&counted, 0, memory_order_relaxed);
    atomic_store_explicit(&watched, (uintptr_t)thread, memory_order_relaxed);
    atomic_store_explicit(&watching, 1, memory_order_release);
}

long aq_alloc_count(void) { return atomic_load_explicit(&counted, memory_order_acquire); }

void aq_alloc_stop(void) { atomic_store_explicit(&watching, 0, memory_order_release); }

int aq_alloc_counter_active(void) {
    // The Swift runtime and Foundation allocate from their own shared libraries long before
    // this is asked: when those calls came here, the interposition works process-wide.
    return atomic_load_explicit(&active, memory_order_relaxed);
}

void *malloc(size_t n) { note(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(); return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t a, size_t n) { note(); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { note(); return __libc_memalign(a, n); }
void *valloc(size_t n) { note(); return __libc_valloc(n); }
void *pvalloc(size_t n) { note(); return __libc_pvalloc(n); }
int posix_memalign(void **out, size_t a, size_t n) {
    if (a < sizeof(void *) || (a & (a - 1)) != 0) return EINVAL;
    note();
    void *p = __libc_memalign(a, n);
    if (!p && n) return ENOMEM;
    *out = p;
    return 0;
}
