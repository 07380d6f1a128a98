// See include/CFirstFrameProbe.h.
#include "CFirstFrameProbe.h"

#include <jack/jack.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

struct aq_ffp {
    jack_client_t *client;
    jack_port_t *in;
    _Atomic int64_t first_ns;
};

int64_t aq_ffp_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int process(jack_nframes_t n, void *arg) {
    aq_ffp *p = arg;
    if (atomic_load_explicit(&p->first_ns, memory_order_relaxed) != 0) return 0;
    const float *x = jack_port_get_buffer(p->in, n);
    jack_nframes_t i = 0;
    while (i < n && x[i] == 0) i++;
    if (i == n) return 0;
    jack_nframes_t cf = 0;
    jack_time_t cu = 0, nu = 0;
    float pu = 0;
    if (jack_get_cycle_times(p->client, &cf, &cu, &nu, &pu) != 0 || nu <= cu) {
        cu = jack_get_time();
        nu = cu;
    }
    // The narrowest of three CLOCK_MONOTONIC windows around one jack_get_time (which
    // truncates to the microsecond: its middle is j + 500 ns).
    int64_t offset = 0, width = -1;
    for (int k = 0; k < 3; k++) {
        int64_t m0 = aq_ffp_now_ns(), j = (int64_t)jack_get_time() * 1000 + 500, m1 = aq_ffp_now_ns();
        if (width < 0 || m1 - m0 < width) { width = m1 - m0; offset = (m0 + m1) / 2 - j; }
    }
    double us = (double)cu + (double)i * (double)(nu - cu) / (double)n;
    int64_t ns = (int64_t)(us * 1000.0 + 0.5) + offset;
    atomic_store_explicit(&p->first_ns, ns > 0 ? ns : 1, memory_order_release);
    return 0;
}

aq_ffp *aq_ffp_open(const char *server_name, const char *client_name) {
    aq_ffp *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    jack_status_t st;
    p->client = jack_client_open(client_name, JackNoStartServer | JackServerName, &st, server_name);
    if (!p->client) { free(p); return NULL; }
    p->in = jack_port_register(p->client, "in", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    if (!p->in || jack_set_process_callback(p->client, process, p) || jack_activate(p->client)) {
        jack_client_close(p->client);
        free(p);
        return NULL;
    }
    return p;
}

void aq_ffp_rearm(aq_ffp *p) { atomic_store_explicit(&p->first_ns, 0, memory_order_release); }

int64_t aq_ffp_first_ns(aq_ffp *p) { return atomic_load_explicit(&p->first_ns, memory_order_acquire); }

void aq_ffp_close(aq_ffp *p) {
    if (!p) return;
    jack_deactivate(p->client);
    jack_client_close(p->client);
    free(p);
}
