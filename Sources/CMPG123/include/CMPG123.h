// libmpg123 (Debian: libmpg123-0, headers in libmpg123-dev) for AQConvert.PacketDecoder's MPEG
// Layer III packets, opened at run time on first use like libavcodec (issue 25; docs/codecs.md,
// "MP3 through libmpg123"): nothing links it. The header gives the constants and types; the
// functions are the aq_ wrappers below, which call the library aq_mpg123_load() opened
// (libmpg123.so.0). No wrapper is named like a libmpg123 function.
#ifndef CMPG123_H
#define CMPG123_H

#include <stdbool.h>
#include <stddef.h>

// Linked into aqsync and libAudioToolbox.so, never exported from them.
#pragma GCC visibility push(hidden)

/// Opens libmpg123 and resolves every function the wrappers call, on the first call
/// (pthread_once); later calls return the first call's answer at once. True when loaded. The
/// first call blocks for dlopen: a control, feeder or worker thread, never the render thread.
bool aq_mpg123_load(void);

/// Why aq_mpg123_load() failed, or NULL when it succeeded or was not called yet. Lives as long
/// as the process. Any thread after aq_mpg123_load() returned.
const char *aq_mpg123_load_error(void);

/// The soname aq_mpg123_load() opens ("libmpg123.so.0"). Any thread.
const char *aq_mpg123_soname(void);

/// Runs the same load on the library named, into a table of its own that it then closes: 0
/// when it opens and has every function, else -1 with the reason in `message`. For tests.
int aq_mpg123_probe(const char *soname, char *message, size_t capacity);

/// One Layer III stream decoded packet by packet: whole frames in, 32-bit float frames out,
/// interleaved, at `rate` with `channels` (1 or 2) channels. Made with read-ahead off (each
/// packet decodes at once, the first one too), the Xing/LAME frame decoded as any other frame
/// and no gapless trimming (the parser's packet table trims, as for libavcodec). NULL when
/// libmpg123 is not loaded or refuses the parameters (then `error`, if given, holds
/// libmpg123's code). The thread that uses it (one at a time); not the render thread.
typedef struct aq_mpg123_stream aq_mpg123_stream;
aq_mpg123_stream *aq_mpg123_stream_new(long rate, int channels, int *error);
void aq_mpg123_stream_free(aq_mpg123_stream *stream);

/// Drops everything the stream holds (bit reservoir, synthesis state): the next packet decodes
/// as a fresh stream's first, on a new libmpg123 handle (allocates). 0; otherwise libmpg123's
/// error code, and the old handle's feed was reopened instead.
int aq_mpg123_stream_reset(aq_mpg123_stream *stream);

/// Decodes one packet (`size` bytes; copied) into `output` (room for `capacity` frames of
/// `channels` floats): the frames written in `*frames`. 0; 1 when frames did not fit (the
/// rest were dropped, their count in `*dropped`); or minus libmpg123's error code (the packet
/// did not decode; `*frames` holds what came out before it).
int aq_mpg123_stream_decode(aq_mpg123_stream *stream, const void *packet, size_t size, float *output,
                            size_t capacity, size_t *frames, size_t *dropped);

/// libmpg123's text for an error code (positive, as aq_mpg123_stream_decode's result negated).
/// Any thread after a successful load.
const char *aq_mpg123_error_text(int error);

#pragma GCC visibility pop

#endif
