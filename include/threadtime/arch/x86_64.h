/* threadtime, x86-64: the counter read and the ring claim used inline.
 * Included only through threadtime/arch.h. */
#ifndef THREADTIME_ARCH_X86_64_H
#define THREADTIME_ARCH_X86_64_H

#include <stdint.h>

#define TT__ARCH_COUNTER_NAME "tsc"
/* Everything generic.h would give is done here, in fewer instructions. */
#define TT__ARCH_HAS_COUNTER_STORE 1
#define TT__ARCH_HAS_LOCAL_RMW 1
#define TT__ARCH_HAS_FENCES 1

/* rdtsc without a fence: ~10 ns in a KVM guest, ~7 ns on bare metal. Not
 * ordered against earlier loads; an event marks a point in the program, and
 * a fence (rdtscp or lfence) would double its cost for a few cycles of
 * precision. */
static inline uint64_t tt__counter_read(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* The counter, stored into *dst as its two 32-bit halves: rdtsc delivers
 * them in eax and edx, and two 32-bit stores cost less than joining them
 * first (x86-64 is little-endian, so the halves land as one uint64_t).
 * Readers take the word only through its record's commit word. */
typedef uint32_t tt__u32_alias __attribute__((may_alias));
static inline void tt__counter_store(uint64_t *dst)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    __atomic_store_n((tt__u32_alias *)dst, lo, __ATOMIC_RELAXED);
    __atomic_store_n((tt__u32_alias *)dst + 1, hi, __ATOMIC_RELAXED);
}

/* Returns *p and adds 1 in one instruction: xadd without the lock prefix.
 * One instruction cannot be split by a signal handler on this thread, so a
 * handler that logs between our read and our write cannot be given the same
 * slot; other threads never write *p, so no bus lock is needed (a locked
 * add would cost several times more for nothing). */
static inline uint64_t tt__claim(uint64_t *p)
{
    uint64_t v = 1;
    __asm__ __volatile__("xaddq %0, %1" : "+r"(v), "+m"(*p) : : "memory");
    return v;
}

/* Adds v to *p in one instruction (no lock prefix, for the reason given at
 * tt__claim): the probes' per-thread sums, which only their thread writes. */
static inline void tt__add(uint64_t *p, uint64_t v)
{
    __asm__ __volatile__("addq %1, %0" : "+m"(*p) : "r"(v) : "memory");
}

/* Stores desired in *p if it holds expected, in one instruction (cmpxchg
 * without lock: atomic against a signal handler on this thread, which is
 * all a thread-private word needs). Returns 1 if it stored. */
static inline int tt__cas_local(uint64_t *p, uint64_t expected, uint64_t desired)
{
    uint64_t prev = expected;
    __asm__ __volatile__("cmpxchgq %2, %1" : "+a"(prev), "+m"(*p) : "r"(desired) : "memory", "cc");
    return prev == expected;
}

/* Store-store and load-load ordering. x86-64 never reorders a store with
 * an older store nor a load with an older load (TSO), so release and
 * acquire fences only have to stop the compiler; a signal fence does exactly
 * that (and, unlike a thread fence, ThreadSanitizer accepts it). */
static inline void tt__fence_release(void) { __atomic_signal_fence(__ATOMIC_RELEASE); }
static inline void tt__fence_acquire(void) { __atomic_signal_fence(__ATOMIC_ACQUIRE); }

#include "generic.h"

#endif /* THREADTIME_ARCH_X86_64_H */
