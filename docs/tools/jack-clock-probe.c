/* jack-clock-probe: logs JACK's clock as a client sees it, one line per process cycle.
 *
 * Build:  cc -O2 -o jack-clock-probe jack-clock-probe.c $(pkg-config --cflags --libs jack)
 * Run:    jack-clock-probe [-n NAME] [-t SECONDS] [-c PORT[,PORT]] [-C CYCLE] [-s CYCLE] [-m]
 *   -n NAME    client name (default "probe")
 *   -t SECONDS how long to run (default 10)
 *   -c PORTS   comma-separated input ports to connect the probe's outputs out_1, out_2... to;
 *              an entry SRC>DST connects two other ports instead (in the same moment)
 *   -C CYCLE   make those connections only once the probe has run CYCLE cycles (default 0:
 *              right after activation), to see what a connection does to the clock
 *   -s CYCLE   in cycle CYCLE, sleep twice the period inside the process callback (an overrun)
 *   -m         mark each cycle: the first sample of cycle i on both outputs is (i + 1) / 4096,
 *              the rest silence, so a recording shows which cycles were played, and where
 *
 * Output (stdout), one line per cycle:
 *   C idx nframes cyc_frames cyc_usecs cyc_next_usecs cyc_period_usecs last_frame_time
 *     frame_time jack_get_time mono_us raw_us
 * cyc_* are jack_get_cycle_times' out-parameters; mono_us and raw_us are CLOCK_MONOTONIC and
 * CLOCK_MONOTONIC_RAW in microseconds, read right after jack_get_time. Event lines:
 *   X idx 0 mono_us        xrun callback (idx: cycles run so far)
 *   B idx nframes mono_us  buffer-size callback
 *   K idx 0 mono_us        the connections were made (after jack_connect returned)
 * The process callback only stores into a preallocated array; main() prints at the end. */
#include <jack/jack.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    jack_nframes_t nframes, cyc_frames, last_frame, frame_time;
    jack_time_t cyc_usecs, cyc_next, jget;
    float cyc_period;
    int cyc_rc;
    uint64_t mono, raw;
} rec_t;

typedef struct { char kind; long idx; uint32_t n; uint64_t mono; } ev_t;

#define MAXREC 400000
#define MAXEV 4096
static rec_t *recs;
static atomic_long nrec;
static ev_t evs[MAXEV];
static atomic_long nev;
static long sleep_cycle = -1;
static int mark;
static jack_port_t *outs[2];
static jack_client_t *client;

static uint64_t now_us(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void event(char kind, uint32_t n) {
    long i = atomic_fetch_add(&nev, 1);
    if (i < MAXEV) evs[i] = (ev_t){ kind, atomic_load(&nrec), n, now_us(CLOCK_MONOTONIC) };
}

static int process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    long i = atomic_load(&nrec);
    if (i < MAXREC) {
        rec_t *r = &recs[i];
        r->nframes = nframes;
        r->cyc_rc = jack_get_cycle_times(client, &r->cyc_frames, &r->cyc_usecs, &r->cyc_next, &r->cyc_period);
        r->last_frame = jack_last_frame_time(client);
        r->frame_time = jack_frame_time(client);
        r->jget = jack_get_time();
        r->mono = now_us(CLOCK_MONOTONIC);
        r->raw = now_us(CLOCK_MONOTONIC_RAW);
        atomic_store(&nrec, i + 1);
    }
    for (int c = 0; c < 2; c++) {
        float *buf = jack_port_get_buffer(outs[c], nframes);
        memset(buf, 0, nframes * sizeof(float));
        if (mark) buf[0] = (float)(i + 1) / 4096.0f;
    }
    if (i == sleep_cycle) {
        uint64_t us = (uint64_t)nframes * 2000000u / jack_get_sample_rate(client);
        struct timespec ts = { (time_t)(us / 1000000u), (long)(us % 1000000u) * 1000 };
        nanosleep(&ts, NULL);
    }
    return 0;
}

static int on_xrun(void *arg) { (void)arg; event('X', 0); return 0; }
static int on_bufsize(jack_nframes_t n, void *arg) { (void)arg; event('B', n); return 0; }

int main(int argc, char **argv) {
    const char *name = "probe", *ports = NULL;
    double seconds = 10;
    long connect_cycle = 0;
    int opt;
    while ((opt = getopt(argc, argv, "n:t:c:C:s:m")) != -1) {
        switch (opt) {
        case 'n': name = optarg; break;
        case 't': seconds = atof(optarg); break;
        case 'c': ports = optarg; break;
        case 'C': connect_cycle = atol(optarg); break;
        case 's': sleep_cycle = atol(optarg); break;
        case 'm': mark = 1; break;
        default: fprintf(stderr, "usage: see the comment at the top of the source\n"); return 2;
        }
    }
    recs = calloc(MAXREC, sizeof(rec_t));
    jack_status_t st;
    client = jack_client_open(name, JackNoStartServer, &st);
    if (!client) { fprintf(stderr, "jack_client_open failed (status 0x%x)\n", st); return 1; }
    outs[0] = jack_port_register(client, "out_1", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    outs[1] = jack_port_register(client, "out_2", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    jack_set_process_callback(client, process, NULL);
    jack_set_xrun_callback(client, on_xrun, NULL);
    jack_set_buffer_size_callback(client, on_bufsize, NULL);
    if (jack_activate(client)) { fprintf(stderr, "jack_activate failed\n"); return 1; }
    fprintf(stderr, "# rate %u, buffer size %u, t0 mono %llu raw %llu jack_get_time %llu\n", jack_get_sample_rate(client),
            jack_get_buffer_size(client), (unsigned long long)now_us(CLOCK_MONOTONIC),
            (unsigned long long)now_us(CLOCK_MONOTONIC_RAW), (unsigned long long)jack_get_time());
    int connected = ports == NULL;
    uint64_t end = now_us(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e6);
    while (now_us(CLOCK_MONOTONIC) < end) {
        if (!connected && atomic_load(&nrec) >= connect_cycle) {
            char *list = strdup(ports), *save = NULL;
            int c = 0;
            for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
                char *arrow = strchr(p, '>');
                const char *src = arrow ? p : (c < 2 ? jack_port_name(outs[c++]) : NULL), *dst = arrow ? arrow + 1 : p;
                if (arrow) *arrow = 0;
                if (!src) continue;
                int rc = jack_connect(client, src, dst);
                if (rc) fprintf(stderr, "jack_connect %s %s failed: %d\n", src, dst, rc);
            }
            free(list);
            event('K', 0);
            connected = 1;
        }
        usleep(1000);
    }
    jack_deactivate(client);
    long n = atomic_load(&nrec), e = atomic_load(&nev);
    if (e > MAXEV) e = MAXEV;
    for (long k = 0; k < e; k++)
        printf("%c %ld %u %llu\n", evs[k].kind, evs[k].idx, evs[k].n, (unsigned long long)evs[k].mono);
    for (long i = 0; i < n; i++) {
        rec_t *r = &recs[i];
        printf("C %ld %u %u %llu %llu %.3f %u %u %llu %llu %llu%s\n", i, r->nframes, r->cyc_frames,
               (unsigned long long)r->cyc_usecs, (unsigned long long)r->cyc_next, r->cyc_period, r->last_frame,
               r->frame_time, (unsigned long long)r->jget, (unsigned long long)r->mono, (unsigned long long)r->raw,
               r->cyc_rc ? " rc!=0" : "");
    }
    jack_client_close(client);
    return 0;
}
