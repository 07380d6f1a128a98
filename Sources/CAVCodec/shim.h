// libavcodec (FFmpeg's decoders) for AQConvert.PacketDecoder. Debian: libavcodec-dev, libavutil-dev.
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>
#include <libavutil/samplefmt.h>

// AVERROR(EAGAIN) and AVERROR_EOF are macros Swift cannot import.
static inline int aq_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int aq_averror_eof(void) { return AVERROR_EOF; }
