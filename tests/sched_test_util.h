/* Helpers of the tests of the scheduler's accounts: burn a given amount of
 * the thread's own CPU time, pin a thread to a CPU, find the schedstat
 * descriptor the library keeps for a thread. */
#ifndef TT_SCHED_TEST_UTIL_H
#define TT_SCHED_TEST_UTIL_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* The descriptor the library keeps for the calling thread: the one whose
 * link names /proc/<pid>/task/<tid>/schedstat (the kernel's answer), or -1. */
static inline int kept_descriptor(void)
{
    char want[64], link[128], path[64];
    snprintf(want, sizeof want, "/proc/%d/task/%d/schedstat", (int)getpid(), (int)gettid());
    for (int fd = 0; fd < 1024; fd++) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n > 0) {
            link[n] = '\0';
            if (strcmp(link, want) == 0)
                return fd;
        }
    }
    return -1;
}

#endif /* TT_SCHED_TEST_UTIL_H */
