// A plain C JACK client that notes when the first non-silent sample reaches its input port
// (issue 25, time to the first frame). Benchmarks only (linked through AQBench).
#ifndef CFIRSTFRAMEPROBE_H
#define CFIRSTFRAMEPROBE_H

#include <stdint.h>

typedef struct aq_ffp aq_ffp;

/// Opens and activates a client named `client_name` on server `server_name` (no server is
/// started) with one input port, `in`. NULL when it cannot. Control thread; blocks while
/// libjack talks to the server.
aq_ffp *aq_ffp_open(const char *server_name, const char *client_name);

/// Forgets what was seen: the next non-silent sample is the first again. Control thread.
void aq_ffp_rearm(aq_ffp *p);

/// CLOCK_MONOTONIC nanoseconds at which the first non-silent sample since the last rearm
/// entered the graph (the cycle's start time from jack_get_cycle_times, interpolated to the
/// sample, converted from JACK's clock with the offset measured in that cycle); 0 when none
/// yet. Any thread; never blocks.
int64_t aq_ffp_first_ns(aq_ffp *p);

/// CLOCK_MONOTONIC nanoseconds now. Any thread.
int64_t aq_ffp_now_ns(void);

/// Closes the client. Control thread.
void aq_ffp_close(aq_ffp *p);

#endif
