// libavcodec (FFmpeg's decoders and encoders) for AQConvert.PacketDecoder and PacketEncoder,
// loaded at run time (issue 25): nothing links libavcodec or libavutil, so a process that never
// decodes or encodes a compressed format does not pay for them and their ~96 dependencies at
// start. The FFmpeg headers (Debian: libavcodec-dev, libavutil-dev) give the types and struct
// layouts; the functions are the aq_ wrappers below, which call the library that
// aq_avcodec_load() opened: libavcodec.so.<LIBAVCODEC_VERSION_MAJOR> and
// libavutil.so.<LIBAVUTIL_VERSION_MAJOR>, the sonames of the headers compiled against.
//
// Call the FFmpeg functions the headers declare only through their aq_ wrapper (a direct call
// would not link: no -lavcodec). No wrapper is named like an FFmpeg function.
#ifndef CAVCODEC_H
#define CAVCODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/mem.h>
#include <libavutil/samplefmt.h>

// The wrappers are linked into aqsync and libAudioToolbox.so but never exported from them
// (hidden: resolved when the library or program is linked, invisible to other libraries).
#pragma GCC visibility push(hidden)

// MARK: - Loading

/// Opens libavutil and libavcodec and resolves every function the wrappers call, on the first
/// call (pthread_once); later calls return the first call's answer at once. True when loaded.
/// The first call blocks for dlopen (disk, relocations: milliseconds): a control, feeder or
/// worker thread, never the render thread. Any other thread; concurrent first calls wait for
/// one load.
bool aq_avcodec_load(void);

/// Why aq_avcodec_load() failed ("libavcodec.so.59 could not be loaded: <dlerror>"), or NULL
/// when it succeeded or was not called yet. The text lives as long as the process. Any thread
/// after aq_avcodec_load() returned.
const char *aq_avcodec_load_error(void);

/// True once aq_avcodec_load() has succeeded; never loads. Any thread, does not block.
bool aq_avcodec_is_loaded(void);

/// The sonames aq_avcodec_load() opens, from the headers' major versions ("libavcodec.so.59",
/// "libavutil.so.57"). Any thread.
const char *aq_avcodec_soname(void);
const char *aq_avutil_soname(void);

/// Runs the same load as aq_avcodec_load() on the libraries named, into a table of its own that
/// it then closes: 0 when both open and have every function, else -1 with the reason written
/// to `message` (NUL-terminated, cut to `capacity`). For tests (a soname that does not exist, a
/// library without FFmpeg's functions); the process's own table is untouched. Blocks for
/// dlopen; not the render thread.
int aq_avcodec_probe(const char *avcodec_soname, const char *avutil_soname, char *message, size_t capacity);

// MARK: - libavcodec (valid only after aq_avcodec_load() returned true; the finders and
// allocators return NULL, the others an error or nothing, if it did not)

const AVCodec *aq_avcodec_find_decoder(enum AVCodecID id);
const AVCodec *aq_avcodec_find_encoder(enum AVCodecID id);
AVCodecContext *aq_avcodec_alloc_context3(const AVCodec *codec);
void aq_avcodec_free_context(AVCodecContext **context);
int aq_avcodec_open2(AVCodecContext *context, const AVCodec *codec, AVDictionary **options);
void aq_avcodec_flush_buffers(AVCodecContext *context);
int aq_avcodec_send_packet(AVCodecContext *context, const AVPacket *packet);
int aq_avcodec_receive_frame(AVCodecContext *context, AVFrame *frame);
int aq_avcodec_send_frame(AVCodecContext *context, const AVFrame *frame);
int aq_avcodec_receive_packet(AVCodecContext *context, AVPacket *packet);
AVPacket *aq_av_packet_alloc(void);
void aq_av_packet_free(AVPacket **packet);
void aq_av_packet_unref(AVPacket *packet);

// MARK: - libavutil (the same)

AVFrame *aq_av_frame_alloc(void);
void aq_av_frame_free(AVFrame **frame);
void aq_av_frame_unref(AVFrame *frame);
int aq_av_frame_get_buffer(AVFrame *frame, int align);
int aq_av_frame_make_writable(AVFrame *frame);
void *aq_av_malloc(size_t size);
void *aq_av_mallocz(size_t size);
void aq_av_free(void *pointer);
void aq_av_channel_layout_default(AVChannelLayout *layout, int channels);
int aq_av_channel_layout_copy(AVChannelLayout *destination, const AVChannelLayout *source);
int aq_av_strerror(int error, char *buffer, size_t capacity);

#pragma GCC visibility pop

// MARK: - Macros Swift cannot import (no library call)

// AVERROR(EAGAIN) and AVERROR_EOF.
static inline int aq_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int aq_averror_eof(void) { return AVERROR_EOF; }

// For AQConvert.PacketEncoder: flag and profile macros, imported as functions to be safe.
static inline int aq_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int aq_profile_aac_low(void) { return FF_PROFILE_AAC_LOW; }

#endif
