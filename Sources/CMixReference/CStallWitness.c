// The machine's stall witness (CStallWitness.h): a cyclictest-like thread per CPU.
#define _GNU_SOURCE
#include "CStallWitness.h"
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    aq_stall_witness *owner;
    pthread_t thread;
    int cpu;
    int started;
    uint64_t *starts;
    uint64_t *ends;
    _Atomic int count;
    _Atomic int realtime;
} aq_stall_cpu;

struct aq_stall_witness {
    uint64_t period_ns;
    uint64_t threshold_ns;
    int capacity;
    int cpus;
    _Atomic int stop;
    _Atomic uint64_t dropped;
    sem_t ready;
    aq_stall_cpu *per_cpu;
};

uint64_t aq_stall_witness_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *watch(void *arg) {
    aq_stall_cpu *c = arg;
    aq_stall_witness *w = c->owner;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(c->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    struct sched_param p = { .sched_priority = sched_get_priority_max(SCHED_FIFO) };
    atomic_store(&c->realtime, pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) == 0);
    sem_post(&w->ready);
    uint64_t last = aq_stall_witness_now();
    uint64_t due = last;
    while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
        due += w->period_ns;
        struct timespec t = { .tv_sec = (time_t)(due / 1000000000u), .tv_nsec = (long)(due % 1000000000u) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0) {}
        uint64_t now = aq_stall_witness_now();
        if (now > due + w->threshold_ns) {
            int n = atomic_load_explicit(&c->count, memory_order_relaxed);
            if (n < w->capacity) {
                c->starts[n] = last;
                c->ends[n] = now;
                atomic_store_explicit(&c->count, n + 1, memory_order_release);
            } else {
                atomic_fetch_add_explicit(&w->dropped, 1, memory_order_relaxed);
            }
        }
        // After a stall the next wake-up is a period from now, not a burst to catch up.
        if (now > due + w->period_ns) due = now;
        last = now;
    }
    return NULL;
}

aq_stall_witness *aq_stall_witness_start(int period_us, int threshold_us, int capacity) {
    if (period_us < 50 || threshold_us < 1 || capacity < 1) return NULL;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 1) online = 1;
    aq_stall_witness *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->period_ns = (uint64_t)period_us * 1000u;
    w->threshold_ns = (uint64_t)threshold_us * 1000u;
    w->capacity = capacity;
    w->cpus = (int)online;
    w->per_cpu = calloc((size_t)online, sizeof *w->per_cpu);
    if (!w->per_cpu) { free(w); return NULL; }
    sem_init(&w->ready, 0, 0);
    for (int i = 0; i < w->cpus; i++) {
        aq_stall_cpu *c = &w->per_cpu[i];
        c->owner = w;
        c->cpu = i;
        c->starts = calloc((size_t)capacity, sizeof(uint64_t));
        c->ends = calloc((size_t)capacity, sizeof(uint64_t));
        if (c->starts && c->ends) {
            // Written here so that no page is first touched by the watching thread.
            memset(c->starts, 0xff, (size_t)capacity * sizeof(uint64_t));
            memset(c->ends, 0xff, (size_t)capacity * sizeof(uint64_t));
        }
        if (!c->starts || !c->ends || pthread_create(&c->thread, NULL, watch, c) != 0) {
            aq_stall_witness_stop(w);
            return NULL;
        }
        c->started = 1;
    }
    // Every thread has set its scheduling (or been refused) before this returns.
    for (int i = 0; i < w->cpus; i++) while (sem_wait(&w->ready) != 0) {}
    return w;
}

int aq_stall_witness_threads(aq_stall_witness *w) { return w->cpus; }

int aq_stall_witness_realtime(aq_stall_witness *w) {
    int n = 0;
    for (int i = 0; i < w->cpus; i++) n += atomic_load(&w->per_cpu[i].realtime);
    return n;
}

int aq_stall_witness_windows(aq_stall_witness *w, uint64_t since_ns, uint64_t *starts, uint64_t *ends, int max) {
    int out = 0;
    for (int i = 0; i < w->cpus && out < max; i++) {
        aq_stall_cpu *c = &w->per_cpu[i];
        int n = atomic_load_explicit(&c->count, memory_order_acquire);
        for (int k = 0; k < n && out < max; k++) {
            if (c->ends[k] < since_ns) continue;
            starts[out] = c->starts[k];
            ends[out] = c->ends[k];
            out++;
        }
    }
    return out;
}

uint64_t aq_stall_witness_dropped(aq_stall_witness *w) { return atomic_load(&w->dropped); }

void aq_stall_witness_stop(aq_stall_witness *w) {
    if (!w) return;
    atomic_store(&w->stop, 1);
    for (int i = 0; i < w->cpus; i++) {
        aq_stall_cpu *c = &w->per_cpu[i];
        if (c->started) pthread_join(c->thread, NULL);
        free(c->starts);
        free(c->ends);
    }
    free(w->per_cpu);
    sem_destroy(&w->ready);
    free(w);
}
