// libavcodec and libavutil opened at run time (issue 25; docs/codecs.md, "Loading libavcodec").
// The first aq_avcodec_load() dlopens the sonames of the headers compiled against and resolves
// every function in the lists below; the aq_ wrappers call through that table. Only the aq_
// functions of CAVCodec.h are visible outside this file: the rest is static, and no name here
// is an FFmpeg function's (libavcodec, loaded with RTLD_LOCAL, must never find its own symbols
// defined by us).
#include "CAVCodec.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define AQ_STR2(x) #x
#define AQ_STR(x) AQ_STR2(x)
#define AQ_AVCODEC_SONAME "libavcodec.so." AQ_STR(LIBAVCODEC_VERSION_MAJOR)
#define AQ_AVUTIL_SONAME "libavutil.so." AQ_STR(LIBAVUTIL_VERSION_MAJOR)

// Every FFmpeg function the wrappers call, by library.
#define AQ_AVCODEC_FUNCTIONS(X)                                                                    \
    X(avcodec_find_decoder) X(avcodec_find_encoder) X(avcodec_alloc_context3)                      \
    X(avcodec_free_context) X(avcodec_open2) X(avcodec_flush_buffers) X(avcodec_send_packet)       \
    X(avcodec_receive_frame) X(avcodec_send_frame) X(avcodec_receive_packet) X(av_packet_alloc)   \
    X(av_packet_free) X(av_packet_unref)
#define AQ_AVUTIL_FUNCTIONS(X)                                                                     \
    X(av_frame_alloc) X(av_frame_free) X(av_frame_unref) X(av_frame_get_buffer)                    \
    X(av_frame_make_writable) X(av_malloc) X(av_mallocz) X(av_free) X(av_channel_layout_default)   \
    X(av_channel_layout_copy) X(av_strerror)

// The handles and one pointer per function, typed from the header's own declaration.
struct table {
    void *avcodec;
    void *avutil;
#define AQ_MEMBER(f) __typeof__(f) *f;
    AQ_AVCODEC_FUNCTIONS(AQ_MEMBER)
    AQ_AVUTIL_FUNCTIONS(AQ_MEMBER)
#undef AQ_MEMBER
};

static void table_close(struct table *t) {
    if (t->avcodec) dlclose(t->avcodec);
    if (t->avutil) dlclose(t->avutil);
    memset(t, 0, sizeof *t);
}

static int failed(struct table *t, const char *soname, char *message, size_t capacity) {
    const char *why = dlerror();
    if (capacity > 0) snprintf(message, capacity, "%s could not be loaded: %s", soname, why ? why : "unknown error");
    table_close(t);
    return -1;
}

// Opens both libraries and resolves every function into `t`; 0, or -1 with `message` set and
// `t` cleared. libavcodec first: a missing libavutil then shows in its error as the dependency
// it lacks.
static int table_load(struct table *t, const char *avcodec, const char *avutil, char *message, size_t capacity) {
    memset(t, 0, sizeof *t);
    dlerror();
    // RTLD_NOW: a missing symbol fails here, not at a call; RTLD_LOCAL: FFmpeg's names stay
    // out of the global scope.
    if (!(t->avcodec = dlopen(avcodec, RTLD_NOW | RTLD_LOCAL))) return failed(t, avcodec, message, capacity);
    if (!(t->avutil = dlopen(avutil, RTLD_NOW | RTLD_LOCAL))) return failed(t, avutil, message, capacity);
#define AQ_RESOLVE(handle, soname, f)                                                               \
    dlerror();                                                                                     \
    if (!(t->f = (__typeof__(t->f))dlsym(t->handle, #f))) return failed(t, soname, message, capacity);
#define AQ_RESOLVE_AVCODEC(f) AQ_RESOLVE(avcodec, avcodec, f)
#define AQ_RESOLVE_AVUTIL(f) AQ_RESOLVE(avutil, avutil, f)
    AQ_AVCODEC_FUNCTIONS(AQ_RESOLVE_AVCODEC)
    AQ_AVUTIL_FUNCTIONS(AQ_RESOLVE_AVUTIL)
#undef AQ_RESOLVE_AVUTIL
#undef AQ_RESOLVE_AVCODEC
#undef AQ_RESOLVE
    return 0;
}

// The process's table: all NULL until a load succeeded, then written once (in load_once, before
// pthread_once returns to any caller) and never again.
static struct table lib;
static char load_message[512];
static atomic_bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load_once(void) {
    struct table t;
    if (table_load(&t, AQ_AVCODEC_SONAME, AQ_AVUTIL_SONAME, load_message, sizeof load_message) == 0) {
        lib = t;
        atomic_store(&loaded, true);
    }
}

bool aq_avcodec_load(void) {
    pthread_once(&once, load_once);
    return atomic_load(&loaded);
}

const char *aq_avcodec_load_error(void) {
    return load_message[0] ? load_message : NULL;
}

bool aq_avcodec_is_loaded(void) { return atomic_load(&loaded); }

const char *aq_avcodec_soname(void) { return AQ_AVCODEC_SONAME; }
const char *aq_avutil_soname(void) { return AQ_AVUTIL_SONAME; }

int aq_avcodec_probe(const char *avcodec_soname, const char *avutil_soname, char *message, size_t capacity) {
    struct table t;
    if (table_load(&t, avcodec_soname, avutil_soname, message, capacity) != 0) return -1;
    table_close(&t);
    if (capacity > 0) message[0] = 0;
    return 0;
}

// MARK: - Wrappers: each calls the loaded function, or answers as a failure when none is loaded.

#define AQ_NOT_LOADED AVERROR(ENOSYS)

const AVCodec *aq_avcodec_find_decoder(enum AVCodecID id) { return lib.avcodec_find_decoder ? lib.avcodec_find_decoder(id) : NULL; }
const AVCodec *aq_avcodec_find_encoder(enum AVCodecID id) { return lib.avcodec_find_encoder ? lib.avcodec_find_encoder(id) : NULL; }
AVCodecContext *aq_avcodec_alloc_context3(const AVCodec *codec) { return lib.avcodec_alloc_context3 ? lib.avcodec_alloc_context3(codec) : NULL; }
void aq_avcodec_free_context(AVCodecContext **context) { if (lib.avcodec_free_context) lib.avcodec_free_context(context); }
int aq_avcodec_open2(AVCodecContext *context, const AVCodec *codec, AVDictionary **options) {
    return lib.avcodec_open2 ? lib.avcodec_open2(context, codec, options) : AQ_NOT_LOADED;
}
void aq_avcodec_flush_buffers(AVCodecContext *context) { if (lib.avcodec_flush_buffers) lib.avcodec_flush_buffers(context); }
int aq_avcodec_send_packet(AVCodecContext *context, const AVPacket *packet) {
    return lib.avcodec_send_packet ? lib.avcodec_send_packet(context, packet) : AQ_NOT_LOADED;
}
int aq_avcodec_receive_frame(AVCodecContext *context, AVFrame *frame) {
    return lib.avcodec_receive_frame ? lib.avcodec_receive_frame(context, frame) : AQ_NOT_LOADED;
}
int aq_avcodec_send_frame(AVCodecContext *context, const AVFrame *frame) {
    return lib.avcodec_send_frame ? lib.avcodec_send_frame(context, frame) : AQ_NOT_LOADED;
}
int aq_avcodec_receive_packet(AVCodecContext *context, AVPacket *packet) {
    return lib.avcodec_receive_packet ? lib.avcodec_receive_packet(context, packet) : AQ_NOT_LOADED;
}
AVPacket *aq_av_packet_alloc(void) { return lib.av_packet_alloc ? lib.av_packet_alloc() : NULL; }
void aq_av_packet_free(AVPacket **packet) { if (lib.av_packet_free) lib.av_packet_free(packet); }
void aq_av_packet_unref(AVPacket *packet) { if (lib.av_packet_unref) lib.av_packet_unref(packet); }

AVFrame *aq_av_frame_alloc(void) { return lib.av_frame_alloc ? lib.av_frame_alloc() : NULL; }
void aq_av_frame_free(AVFrame **frame) { if (lib.av_frame_free) lib.av_frame_free(frame); }
void aq_av_frame_unref(AVFrame *frame) { if (lib.av_frame_unref) lib.av_frame_unref(frame); }
int aq_av_frame_get_buffer(AVFrame *frame, int align) { return lib.av_frame_get_buffer ? lib.av_frame_get_buffer(frame, align) : AQ_NOT_LOADED; }
int aq_av_frame_make_writable(AVFrame *frame) { return lib.av_frame_make_writable ? lib.av_frame_make_writable(frame) : AQ_NOT_LOADED; }
void *aq_av_malloc(size_t size) { return lib.av_malloc ? lib.av_malloc(size) : NULL; }
void *aq_av_mallocz(size_t size) { return lib.av_mallocz ? lib.av_mallocz(size) : NULL; }
void aq_av_free(void *pointer) { if (lib.av_free) lib.av_free(pointer); }
void aq_av_channel_layout_default(AVChannelLayout *layout, int channels) {
    if (lib.av_channel_layout_default) lib.av_channel_layout_default(layout, channels);
}
int aq_av_channel_layout_copy(AVChannelLayout *destination, const AVChannelLayout *source) {
    return lib.av_channel_layout_copy ? lib.av_channel_layout_copy(destination, source) : AQ_NOT_LOADED;
}
int aq_av_strerror(int error, char *buffer, size_t capacity) {
    if (lib.av_strerror) return lib.av_strerror(error, buffer, capacity);
    if (capacity > 0) snprintf(buffer, capacity, "libavcodec is not loaded");
    return AQ_NOT_LOADED;
}
