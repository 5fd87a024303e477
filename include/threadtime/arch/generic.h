/* threadtime: the platform primitives an arch header leaves to the
 * compiler's atomics (liburcu's arch/generic.h pattern). Each arch header
 * defines what it does differently, says so with the TT__ARCH_HAS_* macro,
 * and includes this file last; a platform without a header of its own gets
 * everything from here. Included only through threadtime/arch.h. */
#ifndef THREADTIME_ARCH_GENERIC_H
#define THREADTIME_ARCH_GENERIC_H

#include <stdint.h>

#ifndef TT__ARCH_COUNTER_NAME
/* No cycle counter known here: reading it gives 0, calibration therefore
 * refuses it, and every event takes the out-of-line path stamped with
 * clock_gettime(CLOCK_MONOTONIC_RAW). */
#define TT__ARCH_COUNTER_NAME "none"
static inline uint64_t tt__counter_read(void) { return 0; }
#endif

#ifndef TT__ARCH_HAS_COUNTER_STORE
/* The counter, stored into *dst. */
static inline void tt__counter_store(uint64_t *dst) { __atomic_store_n(dst, tt__counter_read(), __ATOMIC_RELAXED); }
#endif

#ifndef TT__ARCH_HAS_LOCAL_RMW
/* Returns *p and adds 1, as one access a signal handler cannot split. A
 * relaxed atomic add: without a single-instruction non-atomic add to memory
 * that is the cheapest such access (on aarch64 one LSE ldadd on ARMv8.1+,
 * a ll/sc loop before). */
static inline uint64_t tt__claim(uint64_t *p) { return __atomic_fetch_add(p, 1, __ATOMIC_RELAXED); }

/* Adds v to *p as one access a signal handler cannot split (a relaxed
 * atomic add, for the reason given at tt__claim). */
static inline void tt__add(uint64_t *p, uint64_t v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }

/* Stores desired in *p if it holds expected; returns 1 if it stored. */
static inline int tt__cas_local(uint64_t *p, uint64_t expected, uint64_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
#endif

#ifndef TT__ARCH_HAS_FENCES
/* Store-store and load-load ordering: real barriers on a weak memory model
 * (on aarch64 dmb ishst / dmb ishld). */
static inline void tt__fence_release(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
static inline void tt__fence_acquire(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
#endif

#endif /* THREADTIME_ARCH_GENERIC_H */
