// The plain C JACK client of issue 13: the reference mix in a process callback, timed the way
// the engine's cycle probe times the engine's (entry and exit on CLOCK_MONOTONIC).
#include "CMixReferenceJack.h"
#include "CMixReference.h"
#include <jack/jack.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BUFFERS = 3, BUFFER_FRAMES = 4096, XRUN_TIMES = 4096 };

struct aq_ref_jack {
    jack_client_t *client;
    jack_port_t *ports[2];
    float *data;
    float *gains;
    int queues;
    long position;
    uint64_t *durations;
    int capacity;
    _Atomic int count;
    _Atomic uint64_t xruns;
    _Atomic int notifier_raised;
    uint64_t xrun_times[XRUN_TIMES];
    _Atomic uint64_t dropped;
};

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int process(jack_nframes_t frames, void *arg) {
    aq_ref_jack *c = arg;
    uint64_t t0 = now_ns();
    float *o0 = jack_port_get_buffer(c->ports[0], frames);
    float *o1 = jack_port_get_buffer(c->ports[1], frames);
    aq_ref_mix_cycle(c->data, c->gains, c->queues, BUFFERS, BUFFER_FRAMES, (int)frames, &c->position, o0, o1);
    uint64_t t1 = now_ns();
    int n = atomic_load_explicit(&c->count, memory_order_relaxed);
    if (n < c->capacity) {
        c->durations[n] = t1 - t0;
        atomic_store_explicit(&c->count, n + 1, memory_order_release);
    } else {
        atomic_fetch_add_explicit(&c->dropped, 1, memory_order_relaxed);
    }
    return 0;
}

// libjack's notification thread (an ordinary thread) is raised to SCHED_FIFO just below the
// stall witness (CStallWitness.h) the first time it calls this client, so that the players'
// realtime threads (aqsync's feeders) cannot delay the xrun times it takes: the times are
// matched against the machine's stalls. Once; a refusal leaves it as it was.
static void raise_notifier(aq_ref_jack *c) {
    if (atomic_exchange_explicit(&c->notifier_raised, 1, memory_order_relaxed)) return;
    struct sched_param p = { .sched_priority = sched_get_priority_max(SCHED_FIFO) - 1 };
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &p);
}

static int graph_order(void *arg) {
    raise_notifier(arg);
    return 0;
}

static int xrun(void *arg) {
    aq_ref_jack *c = arg;
    raise_notifier(c);
    // One writer (libjack's notification thread): the time first, then the count.
    uint64_t n = atomic_load_explicit(&c->xruns, memory_order_relaxed);
    c->xrun_times[n % XRUN_TIMES] = now_ns();
    atomic_store_explicit(&c->xruns, n + 1, memory_order_release);
    return 0;
}

aq_ref_jack *aq_ref_jack_open(const char *server_name, const char *client_name, int queues, int capacity) {
    if (queues < 1 || capacity < 1) return NULL;
    aq_ref_jack *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    size_t total = (size_t)queues * BUFFERS * 2 * BUFFER_FRAMES;
    c->data = malloc(total * sizeof(float));
    c->gains = malloc((size_t)queues * sizeof(float));
    c->durations = malloc((size_t)capacity * sizeof(uint64_t));
    if (!c->data || !c->gains || !c->durations) { aq_ref_jack_close(c); return NULL; }
    // Values like the engine live workload's (a saw per queue and channel), its gains 0.25…0.625.
    for (size_t i = 0; i < total; i++) c->data[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
    for (int q = 0; q < queues; q++) c->gains[q] = 0.25f + (float)(q % 7) / 16.0f;
    // Written here so that no page is first touched in a callback.
    memset(c->durations, 0, (size_t)capacity * sizeof(uint64_t));
    c->queues = queues;
    c->capacity = capacity;
    jack_status_t status;
    c->client = jack_client_open(client_name, JackNoStartServer | JackServerName, &status, server_name);
    if (!c->client) { aq_ref_jack_close(c); return NULL; }
    c->ports[0] = jack_port_register(c->client, "out_1", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    c->ports[1] = jack_port_register(c->client, "out_2", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    if (!c->ports[0] || !c->ports[1]
        || jack_set_process_callback(c->client, process, c) != 0
        || jack_set_xrun_callback(c->client, xrun, c) != 0
        || jack_set_graph_order_callback(c->client, graph_order, c) != 0) {
        aq_ref_jack_close(c);
        return NULL;
    }
    return c;
}

int aq_ref_jack_activate(aq_ref_jack *c) { return jack_activate(c->client); }

int aq_ref_jack_deactivate(aq_ref_jack *c) { return jack_deactivate(c->client); }

int aq_ref_jack_take(aq_ref_jack *c, uint64_t *out, int max) {
    int n = atomic_load_explicit(&c->count, memory_order_acquire);
    if (n > max) n = max;
    memcpy(out, c->durations, (size_t)n * sizeof(uint64_t));
    atomic_store_explicit(&c->count, 0, memory_order_relaxed);
    return n;
}

uint64_t aq_ref_jack_xruns(aq_ref_jack *c) { return atomic_load_explicit(&c->xruns, memory_order_acquire); }

uint64_t aq_ref_jack_xrun_time(aq_ref_jack *c, uint64_t index) {
    uint64_t n = atomic_load_explicit(&c->xruns, memory_order_acquire);
    // The last XRUN_TIMES are kept (a ring: a long run's trials each read their own).
    return index < n && n - index <= XRUN_TIMES ? c->xrun_times[index % XRUN_TIMES] : 0;
}

uint64_t aq_ref_jack_dropped(aq_ref_jack *c) { return atomic_load_explicit(&c->dropped, memory_order_relaxed); }

void aq_ref_jack_close(aq_ref_jack *c) {
    if (!c) return;
    if (c->client) jack_client_close(c->client);
    free(c->data);
    free(c->gains);
    free(c->durations);
    free(c);
}
