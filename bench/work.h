/* Work of a given length for the fast clock's benchmarks: arithmetic until
 * CLOCK_MONOTONIC (vDSO: no system call, nothing that switches the thread
 * out) has advanced by ns. */
#ifndef TT_BENCH_WORK_H
#define TT_BENCH_WORK_H

#include "read_clock.h"

static inline void bench_work(int64_t ns)
{
    int64_t end = tt__read_clock(CLOCK_MONOTONIC) + ns;
    volatile uint64_t x = 1;
    while (tt__read_clock(CLOCK_MONOTONIC) < end)
        for (int i = 0; i < 50; i++)
            x = x * 6364136223846793005u + 1;
}

#endif /* TT_BENCH_WORK_H */
