// The heavy half of an asymmetric memory barrier (Linux membarrier(2)), for RenderCore's gate:
// the render thread pays only a compiler barrier per cycle; a control thread that must know the
// render thread is not in a cycle pays a system call. See docs/architecture.md, "The gate".
#ifndef CMEMBARRIER_H
#define CMEMBARRIER_H

/// Registers the process for MEMBARRIER_CMD_PRIVATE_EXPEDITED. 0 when available (then
/// aq_membarrier may be used), -1 otherwise. Any thread; idempotent.
int aq_membarrier_register(void);

/// Makes every running thread of the process pass a full memory barrier before it returns
/// (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)). 0 on success. Control threads only: a system
/// call of a few microseconds.
int aq_membarrier(void);

/// Keeps the compiler from moving memory accesses across it; no instruction. Any thread,
/// the render thread included.
static inline void aq_compiler_barrier(void) { __asm__ __volatile__("" ::: "memory"); }

/// Asks the CPU to bring the cache line at `p` in for reading (a hint: no fault, no wait, no
/// effect on results). Swift has no prefetch of its own; RenderCore uses it to start the
/// loads of the queues it mixes next (docs/benchmarking.md, "Memory-bound points"). Any
/// thread, the render thread included.
static inline void aq_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }

#endif
