// A plain C JACK client doing the reference mix (issue 13, the live side-by-side comparison).
// Benchmarks only (linked through AQBench).
#ifndef CMIXREFERENCEJACK_H
#define CMIXREFERENCEJACK_H

#include <stdint.h>

typedef struct aq_ref_jack aq_ref_jack;

/// Opens a client named `client_name` on server `server_name` (no server is started) with two
/// output ports, mixing `queues` stereo sources (three 4096-frame planar float buffers each,
/// each at its own gain; the data is allocated and filled here) with aq_ref_mix_cycle every
/// process cycle, timing each callback (CLOCK_MONOTONIC, entry to exit) into a preallocated
/// array of `capacity` durations. NULL when the client cannot be opened. Control thread.
aq_ref_jack *aq_ref_jack_open(const char *server_name, const char *client_name, int queues, int capacity);

/// Activates the client (its callbacks start) and starts recording; 0 on success. Control thread.
int aq_ref_jack_activate(aq_ref_jack *c);

/// Deactivates it (no callback runs after this returns); 0 on success. Control thread.
int aq_ref_jack_deactivate(aq_ref_jack *c);

/// Copies the recorded callback durations (ns) to `out` (room for `max`), forgets them, and
/// returns how many were copied. Only while deactivated. Control thread.
int aq_ref_jack_take(aq_ref_jack *c, uint64_t *out, int max);

/// Xruns JACK reported to this client since it was opened. Any thread.
uint64_t aq_ref_jack_xruns(aq_ref_jack *c);

/// When this client's xrun callback ran for xrun number `index` (0-based, < aq_ref_jack_xruns),
/// CLOCK_MONOTONIC ns; 0 when not among the last 4096 or not yet reported. The callback runs on
/// libjack's notification thread, an ordinary thread: the time is after jackd detected the
/// xrun, by the notification's delivery; the client raises that thread to SCHED_FIFO (just
/// below the stall witness) at its first notification, so that the players' realtime threads
/// cannot delay it. Any thread.
uint64_t aq_ref_jack_xrun_time(aq_ref_jack *c, uint64_t index);

/// Cycles whose duration did not fit in the array. Any thread.
uint64_t aq_ref_jack_dropped(aq_ref_jack *c);

/// Closes the client and frees everything. Control thread.
void aq_ref_jack_close(aq_ref_jack *c);

#endif
