// libavcodec (FFmpeg's decoders and encoders) for AQConvert.PacketDecoder and PacketEncoder. Debian: libavcodec-dev, libavutil-dev.
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/mem.h>
#include <libavutil/samplefmt.h>

// AVERROR(EAGAIN) and AVERROR_EOF are macros Swift cannot import.
static inline int aq_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int aq_averror_eof(void) { return AVERROR_EOF; }

// For AQConvert.PacketEncoder: flag and profile macros, imported as functions to be safe.
static inline int aq_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int aq_profile_aac_low(void) { return FF_PROFILE_AAC_LOW; }
