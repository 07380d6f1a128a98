// The plain C mixer of issue 13: what mixing N stereo planar float sources into two outputs
// costs with nothing else around it. Compiled with the package's flags (release: -O2; the
// x86-64 baseline, so SSE2 vectors); plain loops the compiler vectorises, no intrinsics, no
// `restrict` (the renderer cannot promise it either).
#include "CMixReference.h"
#include <string.h>

void aq_ref_mix_add(float *dst, const float *src, int count, float g) {
    for (int i = 0; i < count; i++) dst[i] += src[i] * g;
}

void aq_ref_mix_cycle(const float *data, const float *gains, int queues, int buffers, int buffer_frames,
                      int frames, long *position, float *out0, float *out1) {
    memset(out0, 0, (size_t)frames * sizeof(float));
    memset(out1, 0, (size_t)frames * sizeof(float));
    long pos = *position;
    const long loop = (long)buffers * buffer_frames;
    int done = 0;
    while (done < frames) {
        // The part of this cycle that lies in one buffer of every source.
        int b = (int)(pos / buffer_frames), o = (int)(pos % buffer_frames);
        int count = frames - done;
        if (count > buffer_frames - o) count = buffer_frames - o;
        for (int q = 0; q < queues; q++) {
            const float g = gains[q];
            const float *s0 = data + ((size_t)(q * buffers + b) * 2) * buffer_frames + o;
            const float *s1 = s0 + buffer_frames;
            float *d0 = out0 + done, *d1 = out1 + done;
            for (int i = 0; i < count; i++) d0[i] += s0[i] * g;
            for (int i = 0; i < count; i++) d1[i] += s1[i] * g;
        }
        done += count;
        pos = (pos + count) % loop;
    }
    *position = pos;
}
