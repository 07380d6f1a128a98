// A witness of the machine's stalls (issue 25): one thread per online CPU, pinned to it, at
// SCHED_FIFO's highest priority, waking every `period_us` on CLOCK_MONOTONIC and recording
// every wake-up later than `threshold_us` as a window in which that CPU ran nothing of the
// guest's (a host that took the virtual CPU, a kernel section that could not be preempted).
// Nothing a JACK client does at a lower priority can delay it, so a window it records is the
// machine's, never the client's. Benchmarks only (linked through AQBench).
#ifndef CSTALLWITNESS_H
#define CSTALLWITNESS_H

#include <stdint.h>

typedef struct aq_stall_witness aq_stall_witness;

/// Starts the threads; each keeps at most `capacity` windows (later ones are counted as
/// dropped). NULL when a thread cannot be started. The threads ask for SCHED_FIFO; on a
/// system that refuses, they run as ordinary threads and `aq_stall_witness_realtime` says so
/// (their windows then say nothing about the machine). Control thread; returns once every
/// thread has set its scheduling.
aq_stall_witness *aq_stall_witness_start(int period_us, int threshold_us, int capacity);

/// Threads started (the online CPUs), and how many of them run SCHED_FIFO. Any thread.
int aq_stall_witness_threads(aq_stall_witness *w);
int aq_stall_witness_realtime(aq_stall_witness *w);

/// Copies the windows recorded so far whose end is at or after `since_ns` (CLOCK_MONOTONIC),
/// every CPU's, into `starts`/`ends` (ns; the start is the thread's last wake-up before the
/// window, so the stall lies inside) and returns how many were copied (at most `max`). Any
/// thread, while the witness runs or after; never blocks.
int aq_stall_witness_windows(aq_stall_witness *w, uint64_t since_ns, uint64_t *starts, uint64_t *ends, int max);

/// Windows that did not fit. Any thread.
uint64_t aq_stall_witness_dropped(aq_stall_witness *w);

/// Stops and joins the threads and frees everything. Control thread; blocks for at most one
/// period.
void aq_stall_witness_stop(aq_stall_witness *w);

/// CLOCK_MONOTONIC now, ns (the witness's clock). Any thread.
uint64_t aq_stall_witness_now(void);

#endif
