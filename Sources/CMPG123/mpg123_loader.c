// libmpg123 opened at run time (issue 25; docs/codecs.md, "MP3 through libmpg123"). The first
// aq_mpg123_load() dlopens libmpg123.so.0 and resolves every function in the list below; the
// aq_ functions call through that table. Only the aq_ functions of CMPG123.h are visible outside
// this file, and none is named like a libmpg123 function (it is loaded RTLD_LOCAL and must never
// find its own names defined by us).
#include "CMPG123.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpg123.h>

// libmpg123's soname has had major version 0 since its first release; the header carries no
// soname to take it from.
#define AQ_MPG123_SONAME "libmpg123.so.0"

#define AQ_MPG123_FUNCTIONS(X)                                                                      \
    X(mpg123_init) X(mpg123_new) X(mpg123_delete) X(mpg123_param) X(mpg123_format_none)          \
    X(mpg123_format) X(mpg123_open_feed) X(mpg123_close) X(mpg123_decode) X(mpg123_getformat)    \
    X(mpg123_errcode) X(mpg123_plain_strerror)

struct table {
    void *handle;
#define AQ_MEMBER(f) __typeof__(f) *f;
    AQ_MPG123_FUNCTIONS(AQ_MEMBER)
#undef AQ_MEMBER
};

static void table_close(struct table *t) {
    if (t->handle) dlclose(t->handle);
    memset(t, 0, sizeof *t);
}

static int failed(struct table *t, const char *soname, char *message, size_t capacity) {
    const char *why = dlerror();
    if (capacity > 0) snprintf(message, capacity, "%s could not be loaded: %s", soname, why ? why : "unknown error");
    table_close(t);
    return -1;
}

static int table_load(struct table *t, const char *soname, char *message, size_t capacity) {
    memset(t, 0, sizeof *t);
    dlerror();
    if (!(t->handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL))) return failed(t, soname, message, capacity);
#define AQ_RESOLVE(f)                                                                               \
    dlerror();                                                                                     \
    if (!(t->f = (__typeof__(t->f))dlsym(t->handle, #f))) return failed(t, soname, message, capacity);
    AQ_MPG123_FUNCTIONS(AQ_RESOLVE)
#undef AQ_RESOLVE
    return 0;
}

// The process's table: all NULL until a load succeeded, then written once (before pthread_once
// returns to any caller) and never again.
static struct table lib;
static char load_message[512];
static atomic_bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load_once(void) {
    struct table t;
    if (table_load(&t, AQ_MPG123_SONAME, load_message, sizeof load_message) != 0) return;
    // A no-op since libmpg123 1.27, required before it.
    if (t.mpg123_init() != MPG123_OK) {
        snprintf(load_message, sizeof load_message, "%s could not be initialised", AQ_MPG123_SONAME);
        table_close(&t);
        return;
    }
    lib = t;
    atomic_store(&loaded, true);
}

bool aq_mpg123_load(void) {
    pthread_once(&once, load_once);
    return atomic_load(&loaded);
}

const char *aq_mpg123_load_error(void) { return load_message[0] ? load_message : NULL; }

const char *aq_mpg123_soname(void) { return AQ_MPG123_SONAME; }

int aq_mpg123_probe(const char *soname, char *message, size_t capacity) {
    struct table t;
    if (table_load(&t, soname, message, capacity) != 0) return -1;
    table_close(&t);
    if (capacity > 0) message[0] = 0;
    return 0;
}

const char *aq_mpg123_error_text(int error) {
    return lib.mpg123_plain_strerror ? lib.mpg123_plain_strerror(error) : "libmpg123 is not loaded";
}

// MARK: - A stream

struct aq_mpg123_stream {
    mpg123_handle *handle;
    long rate;
    int channels;
    // Where frames that did not fit the caller's output go (counted, then dropped).
    float spill[1152 * 2 * 4];
};

// The handle's parameters and output format, and a new feed.
static int configure(aq_mpg123_stream *s) {
    mpg123_handle *h = s->handle;
    int r;
    // Read-ahead off: every packet is a whole frame, decoded as it comes (with it, the first
    // frame of a stream waits for the next one's header). The info frame decodes as audio (as
    // libavcodec decodes it); no gapless trimming (the parser's packet table trims).
    if ((r = lib.mpg123_param(h, MPG123_ADD_FLAGS, MPG123_NO_READAHEAD | MPG123_IGNORE_INFOFRAME | MPG123_QUIET, 0.)) != MPG123_OK) return r;
    if ((r = lib.mpg123_param(h, MPG123_REMOVE_FLAGS, MPG123_GAPLESS, 0.)) != MPG123_OK) return r;
    if ((r = lib.mpg123_format_none(h)) != MPG123_OK) return r;
    if ((r = lib.mpg123_format(h, s->rate, s->channels == 1 ? MPG123_MONO : MPG123_STEREO, MPG123_ENC_FLOAT_32)) != MPG123_OK) return r;
    return lib.mpg123_open_feed(h);
}

aq_mpg123_stream *aq_mpg123_stream_new(long rate, int channels, int *error) {
    if (!atomic_load(&loaded) || (channels != 1 && channels != 2)) {
        if (error) *error = MPG123_ERR;
        return NULL;
    }
    aq_mpg123_stream *s = calloc(1, sizeof *s);
    if (!s) {
        if (error) *error = MPG123_OUT_OF_MEM;
        return NULL;
    }
    int r = MPG123_OK;
    s->handle = lib.mpg123_new(NULL, &r);
    s->rate = rate;
    s->channels = channels;
    if (!s->handle || (r = configure(s)) != MPG123_OK) {
        if (error) *error = r != MPG123_OK ? r : MPG123_ERR;
        if (s->handle) lib.mpg123_delete(s->handle);
        free(s);
        return NULL;
    }
    return s;
}

void aq_mpg123_stream_free(aq_mpg123_stream *s) {
    if (!s) return;
    lib.mpg123_delete(s->handle);  // closes the feed too
    free(s);
}

int aq_mpg123_stream_reset(aq_mpg123_stream *s) {
    // A new handle: closing the feed and opening another keeps synthesis state that makes the
    // frames after a reset differ from a fresh stream's by rounding (up to 3e-8 on a sweep),
    // and a loop pass or a seek must give the samples the first pass gave once the bit
    // reservoir is full again (LoopRenderTests), as libavcodec's flush does.
    int r = MPG123_OK;
    mpg123_handle *old = s->handle;
    s->handle = lib.mpg123_new(NULL, &r);
    if (s->handle && (r = configure(s)) == MPG123_OK) {
        lib.mpg123_delete(old);
        return 0;
    }
    if (s->handle) lib.mpg123_delete(s->handle);
    s->handle = old;
    lib.mpg123_close(old);
    int o = lib.mpg123_open_feed(old);
    return o != MPG123_OK ? o : (r != MPG123_OK ? r : MPG123_ERR);
}

// The decoded format, after MPG123_NEW_FORMAT: 0 when it is the stream's, else libmpg123's
// (positive) error code.
static int check_format(aq_mpg123_stream *s) {
    long rate = 0;
    int channels = 0, encoding = 0;
    if (lib.mpg123_getformat(s->handle, &rate, &channels, &encoding) != MPG123_OK) return lib.mpg123_errcode(s->handle);
    if (rate != s->rate || channels != s->channels || encoding != MPG123_ENC_FLOAT_32) return MPG123_BAD_OUTFORMAT;
    return 0;
}

int aq_mpg123_stream_decode(aq_mpg123_stream *s, const void *packet, size_t size, float *output, size_t capacity,
                            size_t *frames, size_t *dropped) {
    const size_t frameBytes = (size_t)s->channels * sizeof(float);
    size_t written = 0, lost = 0;
    const unsigned char *in = packet;
    size_t inSize = size;
    int status = 0;
    for (;;) {
        // Into the caller's output while there is room, then into the spill (dropped).
        bool spilling = written >= capacity;
        unsigned char *out = spilling ? (unsigned char *)s->spill : (unsigned char *)(output + written * (size_t)s->channels);
        size_t room = spilling ? sizeof s->spill : (capacity - written) * frameBytes;
        size_t done = 0;
        int r = lib.mpg123_decode(s->handle, in, inSize, out, room, &done);
        in = NULL;
        inSize = 0;
        if (spilling) {
            lost += done / frameBytes;
            if (done) status = 1;
        } else {
            written += done / frameBytes;
        }
        if (r == MPG123_NEW_FORMAT) {
            int f = check_format(s);
            if (f != 0) { status = -f; break; }
            continue;
        }
        if (r == MPG123_OK && done > 0) continue;  // more output may be ready
        if (r == MPG123_OK || r == MPG123_NEED_MORE || r == MPG123_DONE) break;
        int code = r == MPG123_ERR ? lib.mpg123_errcode(s->handle) : r;
        status = code > 0 ? -code : -MPG123_BAD_HANDLE;
        break;
    }
    *frames = written;
    *dropped = lost;
    return status;
}
