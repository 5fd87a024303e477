/* The kernel's encoding of dynamic CPU clock ids (Linux ABI, stable since
 * 2.6.12). References for the names: the kernel's posix-timers types header
 * and glibc's kernel-posix-cpu-timers header.
 *
 *   bit 31 ............................ 3     2          1 .. 0
 *  +-------------------------------------+----------+-------------+
 *  |  ~pid  (bitwise NOT of pid or tid)  | PERTHREAD|    WHICH    |
 *  +-------------------------------------+----------+-------------+
 *
 *  ~pid:      all ones (pid 0) means "the caller"; the kernel then takes
 *             current without a pid lookup, the cheapest path.
 *  PERTHREAD: 1 = the single thread named, 0 = its whole process.
 *  WHICH:     0 PROF (user+system ticks), 1 VIRT (user ticks),
 *             2 SCHED (precise runtime, ns). 3 is invalid.
 * The result is always negative, which is how the kernel tells it from the
 * static clock ids (CLOCK_MONOTONIC = 1, ...).
 */
#ifndef TT_PRIM_CLOCKID_H
#define TT_PRIM_CLOCKID_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define TT__CPUCLOCK_WHICH_MASK 0x3u
#define TT__CPUCLOCK_PERTHREAD_MASK 0x4u
#define TT__CPUCLOCK_PID_SHIFT 3
#define TT__CPUCLOCK_PROF 0u
#define TT__CPUCLOCK_VIRT 1u
#define TT__CPUCLOCK_SCHED 2u
#define TT__CPUCLOCK_MAX 3u
/* Largest pid whose NOT still fits in bits 31..3. The kernel's own limit
 * (PID_MAX_LIMIT, 4M) is far below it. */
#define TT__CPUCLOCK_PID_MAX ((pid_t)((UINT32_C(1) << (32 - TT__CPUCLOCK_PID_SHIFT - 1)) - 1))

/* pid 0 = caller; which < TT__CPUCLOCK_MAX; checked by the caller. */
static inline clockid_t tt__cpu_clockid(pid_t pid, int per_thread, unsigned which)
{
    uint32_t bits = (~(uint32_t)pid) << TT__CPUCLOCK_PID_SHIFT;
    bits |= per_thread ? TT__CPUCLOCK_PERTHREAD_MASK : 0u;
    bits |= which & TT__CPUCLOCK_WHICH_MASK;
    return (clockid_t)(int32_t)bits;
}

/* The pid or tid a clock id names (0: the caller), as
 * pthread_getcpuclockid() makes one from a thread's tid. */
static inline pid_t tt__cpu_clockid_pid(clockid_t id)
{
    return (pid_t)(~((uint32_t)id >> TT__CPUCLOCK_PID_SHIFT) & (UINT32_MAX >> TT__CPUCLOCK_PID_SHIFT));
}

/* The calling thread's clocks, resolved by the kernel without any lookup. */
#define TT__SELF_THREAD_CLOCK(which) tt__cpu_clockid(0, 1, (which))

#endif /* TT_PRIM_CLOCKID_H */
