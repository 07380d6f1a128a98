// The floating-point mode of the render thread: denormals flushed to zero (issue 20).
// A denormal (|x| < 2^-126 for Float) costs tens to hundreds of cycles per operation on x86
// when it is an operand or a result; a decaying tail or a volume ramp toward 0 makes them.
// The render thread sets flush-to-zero (results) and denormals-are-zero (operands) at the start
// of every render: one read of the control register, a write only when it differs.
// Every function here is a static inline: no call, no lock, no allocation (render thread safe).
#ifndef CFLOATMODE_H
#define CFLOATMODE_H

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
// MXCSR: FTZ is bit 15, DAZ bit 6.
#define AQ_FLOAT_FLUSH_BITS ((uint64_t)((1u << 15) | (1u << 6)))
static inline uint64_t aq_float_mode(void) {
    uint32_t csr;
    __asm__ __volatile__("stmxcsr %0" : "=m"(csr));
    return csr;
}
static inline void aq_set_float_mode(uint64_t mode) {
    uint32_t csr = (uint32_t)mode;
    __asm__ __volatile__("ldmxcsr %0" : : "m"(csr));
}
#elif defined(__aarch64__)
// FPCR: FZ is bit 24 (inputs and results; AArch64 has no separate DAZ).
#define AQ_FLOAT_FLUSH_BITS ((uint64_t)1 << 24)
static inline uint64_t aq_float_mode(void) {
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    return fpcr;
}
static inline void aq_set_float_mode(uint64_t mode) {
    __asm__ __volatile__("msr fpcr, %0" : : "r"(mode));
}
#else
#define AQ_FLOAT_FLUSH_BITS ((uint64_t)0)
static inline uint64_t aq_float_mode(void) { return 0; }
static inline void aq_set_float_mode(uint64_t mode) { (void)mode; }
#endif

/// The bits that flush denormals to zero on this architecture (0 where unknown).
static inline uint64_t aq_float_flush_bits(void) { return AQ_FLOAT_FLUSH_BITS; }

/// Makes the calling thread flush denormals to zero (results and operands); returns the mode
/// it had before. Reads the control register, writes it only when the bits are not set yet.
/// Any thread, the render thread included.
static inline uint64_t aq_flush_denormals(void) {
    uint64_t mode = aq_float_mode();
    uint64_t want = mode | AQ_FLOAT_FLUSH_BITS;
    if (want != mode) aq_set_float_mode(want);
    return mode;
}

/// Whether the calling thread's mode was set by ``aq_flush_denormals_once`` and not given back
/// since (one per thread, defined in CFloatMode.c; hidden: no other library sees it).
extern __thread int aq_float_flushing __attribute__((tls_model("initial-exec"), visibility("hidden")));

/// ``aq_flush_denormals`` once per thread: the first call on a thread reads (and if need be
/// writes) the control register; later calls read one thread-local flag. The render thread's
/// per-cycle call: reading the control register (`stmxcsr`, and the load of what it stored)
/// was a measurable part of a short cycle. A thread that changes its mode otherwise between
/// calls must give it back with ``aq_restore_float_mode``, which clears the flag.
static inline void aq_flush_denormals_once(void) {
    if (__builtin_expect(aq_float_flushing, 1)) return;
    (void)aq_flush_denormals();
    aq_float_flushing = 1;
}

/// Gives the calling thread back a mode ``aq_flush_denormals`` returned (only when it differs);
/// the next ``aq_flush_denormals_once`` on this thread sets the mode again.
static inline void aq_restore_float_mode(uint64_t mode) {
    if (aq_float_mode() != mode) aq_set_float_mode(mode);
    aq_float_flushing = 0;
}

#endif
