/* How lumpy is this host's per-thread CPU clock? One thread reads its own
 * CPU clock (CLOCK_THREAD_CPUTIME_ID, the kernel's precise clock that every
 * "exact" figure in threadtime rests on) and CLOCK_MONOTONIC back to back
 * for argv[1] seconds (default 10), and counts how far the CPU clock moved
 * between two reads. A read pair costs well under a microsecond, so a step
 * of hundreds of microseconds is CPU time the kernel charged to the thread
 * in one lump; where the wall clock moved less than that over the same
 * step, the lump was not even spent in the loop. The tests' bounds on what
 * the JVM's own work costs must leave room for such lumps
 * (make bench-clock-steps; never part of the tests). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "read_clock.h"

static int failed(int64_t code)
{
    fprintf(stderr, "cpu_clock_steps: clock_gettime: %s\n", strerror((int)-code));
    return 1;
}

/* Upper edges of the histogram's bins, ns; the last bin has none. */
static const int64_t edges[] = {10000, 100000, 500000, 1000000, 2000000, 5000000};
#define BINS (sizeof edges / sizeof edges[0] + 1)

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? strtod(argv[1], NULL) : 10;
    if (!(seconds > 0 && seconds <= 3600)) {
        fprintf(stderr, "usage: cpu_clock_steps [seconds, 0 < s <= 3600]\n");
        return 2;
    }
    int64_t bins[BINS] = {0}, reads = 0, ahead = 0, largest = 0, largest_wall = 0;
    int64_t cpu = tt__read_clock(CLOCK_THREAD_CPUTIME_ID), wall = tt__read_clock(CLOCK_MONOTONIC);
    if (cpu < 0 || wall < 0)
        return failed(cpu < 0 ? cpu : wall);
    const int64_t end = wall + (int64_t)(seconds * 1e9);
    while (wall < end) {
        int64_t c = tt__read_clock(CLOCK_THREAD_CPUTIME_ID), w = tt__read_clock(CLOCK_MONOTONIC);
        if (c < 0 || w < 0)
            return failed(c < 0 ? c : w);
        int64_t step = c - cpu, wall_step = w - wall;
        size_t b = 0;
        while (b < BINS - 1 && step >= edges[b])
            b++;
        bins[b]++;
        reads++;
        if (step > wall_step + 10000)
            ahead++;
        if (step > largest) {
            largest = step;
            largest_wall = wall_step;
        }
        cpu = c;
        wall = w;
    }
    printf("%lld read pairs in %.1f s; CPU clock steps between two reads:\n", (long long)reads, seconds);
    for (size_t b = 0; b < BINS; b++) {
        if (b < BINS - 1)
            printf("  < %7.3f ms  %lld\n", (double)edges[b] / 1e6, (long long)bins[b]);
        else
            printf(" >= %7.3f ms  %lld\n", (double)edges[b - 1] / 1e6, (long long)bins[b]);
    }
    printf("largest step %.3f ms, over %.3f ms of wall time\n", (double)largest / 1e6, (double)largest_wall / 1e6);
    printf("steps more than 10 us ahead of the wall clock: %lld\n", (long long)ahead);
    return 0;
}
