/* Helpers of the tests that make threads compete for one CPU: burn a given
 * amount of the thread's own CPU time, and pin a thread to a CPU. */
#ifndef TT_BURN_UTIL_H
#define TT_BURN_UTIL_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "read_clock.h"

/* Burns until the calling thread's own CPU clock advanced by ns. */
static inline void burn_cpu(int64_t ns)
{
    volatile uint64_t x = 1;
    int64_t start = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
    while (tt__read_clock(CLOCK_THREAD_CPUTIME_ID) - start < ns)
        for (int i = 0; i < 2000; i++)
            x = x * 6364136223846793005u + 1;
}

/* The first CPU this process may run on. */
static inline int first_allowed_cpu(void)
{
    cpu_set_t mine;
    int cpu = 0;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        return 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mine))
        cpu++;
    return cpu;
}

/* Pins the calling thread to cpu: 0 or an errno. */
static inline int pin_to_cpu(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

#endif /* TT_BURN_UTIL_H */
