/* threadtime: the one place that selects the platform.
 *
 * It is public because the inline recording path in event.h reads the cycle
 * counter in the caller's code. The library adds its own platform code
 * (invariance check, frequency hints) in src/arch/<arch>/, chosen by the
 * build, and declares it in src/arch.h; nothing else tests the architecture.
 */
#ifndef THREADTIME_ARCH_H
#define THREADTIME_ARCH_H

#include <stdint.h>

#if defined(__x86_64__)
#include "arch/x86_64.h"
#elif defined(__aarch64__)
#include "arch/aarch64.h"
#else
/* No cycle counter known here: reading it gives 0, calibration therefore
 * refuses it, and every event takes the out-of-line path stamped with
 * clock_gettime(CLOCK_MONOTONIC_RAW). */
#define TT__ARCH_COUNTER_NAME "none"
static inline uint64_t tt__counter_read(void) { return 0; }
static inline void tt__counter_store(uint64_t *dst) { __atomic_store_n(dst, 0, __ATOMIC_RELAXED); }
static inline uint64_t tt__claim(uint64_t *p) { return __atomic_fetch_add(p, 1, __ATOMIC_RELAXED); }
static inline void tt__add(uint64_t *p, uint64_t v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline int tt__cas_local(uint64_t *p, uint64_t expected, uint64_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
static inline void tt__fence_release(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
static inline void tt__fence_acquire(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
#endif

#endif /* THREADTIME_ARCH_H */
