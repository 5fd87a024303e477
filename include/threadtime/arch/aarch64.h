/* threadtime, aarch64: the counter read used inline; the rest is generic.h.
 * Included only through threadtime/arch.h. */
#ifndef THREADTIME_ARCH_AARCH64_H
#define THREADTIME_ARCH_AARCH64_H

#include <stdint.h>

#define TT__ARCH_COUNTER_NAME "cntvct"

/* The generic timer's virtual count: constant frequency by architecture
 * (CNTFRQ_EL0), readable from user space on Linux. No isb: like rdtsc on
 * x86-64 the read may move a few instructions. */
static inline uint64_t tt__counter_read(void)
{
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}

/* The counter store, the ring claim, the adds and the fences are the
 * compiler's atomics: generic.h. */
#include "generic.h"

#endif /* THREADTIME_ARCH_AARCH64_H */
