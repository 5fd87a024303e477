/* threadtime, aarch64: the counter read and the ring claim used inline.
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

/* The counter, stored into *dst. */
static inline void tt__counter_store(uint64_t *dst) { __atomic_store_n(dst, tt__counter_read(), __ATOMIC_RELAXED); }

/* Returns *p and adds 1, as one access a signal handler cannot split.
 * aarch64 has no single-instruction non-atomic add to memory, so this is a
 * relaxed atomic add (one LSE ldadd on ARMv8.1+; a ll/sc loop before). */
static inline uint64_t tt__claim(uint64_t *p)
{
    return __atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

/* Adds v to *p as one access a signal handler cannot split (a relaxed
 * atomic add, for the reason given at tt__claim). */
static inline void tt__add(uint64_t *p, uint64_t v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }

/* Stores desired in *p if it holds expected; returns 1 if it stored. */
static inline int tt__cas_local(uint64_t *p, uint64_t expected, uint64_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Store-store and load-load ordering: real barriers here (dmb ishst /
 * dmb ishld), as the memory model is weak. */
static inline void tt__fence_release(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
static inline void tt__fence_acquire(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }

#endif /* THREADTIME_ARCH_AARCH64_H */
