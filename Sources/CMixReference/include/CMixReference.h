// The plain C mixer that the renderer is measured against (issue 13). Benchmarks only: linked
// by AQBench (aqsync bench) and the Benchmarks/ package, never by a library product.
#ifndef CMIXREFERENCE_H
#define CMIXREFERENCE_H

#include <stddef.h>

/// One cycle of the reference mix over the engine's storage layout: `queues` stereo sources,
/// each with `buffers` planar float buffers of `buffer_frames` frames (source q, buffer b,
/// channel c starts at data + ((q * buffers + b) * 2 + c) * buffer_frames), played one after
/// the other in a loop, each source at gains[q], added into `frames` frames of out0/out1,
/// which are cleared first. `*position` is the frame all sources are at (0 ≤ it <
/// buffers × buffer_frames); it moves on by `frames`. No allocation, no lock, no call out.
/// Thread safety: any thread; the caller owns every pointer for the call's duration.
void aq_ref_mix_cycle(const float *data, const float *gains, int queues, int buffers, int buffer_frames,
                      int frames, long *position, float *out0, float *out1);

/// dst[i] += src[i] * g for i < count: the reference's inner loop, for tests. Any thread.
void aq_ref_mix_add(float *dst, const float *src, int count, float g);

// The C JACK client that runs this mix (live comparison).
#include "CMixReferenceJack.h"
#include "CFirstFrameProbe.h"
#include "CStallWitness.h"

#endif
