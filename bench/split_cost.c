/* What the consistent split costs against the getrusage() it is built on,
 * measured interleaved (make bench-split): rounds of one batch of each
 * call in turn, so a load that comes and goes on a shared host hits every
 * row alike, and the medians of the per-call batch means. Never part of
 * the tests.
 *
 * Rows: getrusage(RUSAGE_THREAD) alone (the floor), the same plus one
 * tt_self_fast_ns() (what the split adds at the least), tt_self_times(),
 * getrusage(RUSAGE_SELF) alone and tt_process_times(0).
 *
 * Usage: split_cost [ROUNDS]   (default 3000 rounds of 200 calls per row)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "read_clock.h"
#include "threadtime/threadtime.h"

#define BATCH 200
enum { ROWS = 5 };

static const char *const names[ROWS] = {
    "getrusage(RUSAGE_THREAD)", "getrusage + tt_self_fast_ns", "tt_self_times",
    "getrusage(RUSAGE_SELF)",   "tt_process_times(0)",
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One batch of row r; returns a fold of the results so nothing is elided. */
static int64_t batch(int r)
{
    struct rusage ru;
    tt_times t;
    int64_t acc = 0;
    for (int i = 0; i < BATCH; i++) {
        switch (r) {
        case 0: acc += getrusage(RUSAGE_THREAD, &ru) + ru.ru_utime.tv_usec; break;
        case 1: acc += getrusage(RUSAGE_THREAD, &ru) + ru.ru_utime.tv_usec + tt_self_fast_ns(); break;
        case 2: acc += tt_self_times(&t) + t.user_ns; break;
        case 3: acc += getrusage(RUSAGE_SELF, &ru) + ru.ru_utime.tv_usec; break;
        default: acc += tt_process_times(0, &t) + t.user_ns; break;
        }
    }
    return acc;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3000;
    if (rounds < 1) {
        fprintf(stderr, "usage: split_cost [ROUNDS >= 1]\n");
        return 2;
    }
    double *ns[ROWS];
    for (int r = 0; r < ROWS; r++)
        if ((ns[r] = malloc(sizeof(double) * (size_t)rounds)) == NULL)
            return 1;
    int64_t acc = 0;
    tt_times warm;
    acc += tt_self_times(&warm); /* the fast clock's start (~25 ms) is paid here */
    for (int i = 0; i < rounds; i++) {
        for (int r = 0; r < ROWS; r++) {
            int64_t t0 = tt__read_clock(CLOCK_MONOTONIC);
            acc += batch(r);
            ns[r][i] = (double)(tt__read_clock(CLOCK_MONOTONIC) - t0) / BATCH;
        }
    }
    printf("%d rounds of %d calls per row, interleaved; median of the batch means, ns per call\n", rounds, BATCH);
    double med[ROWS];
    for (int r = 0; r < ROWS; r++) {
        qsort(ns[r], (size_t)rounds, sizeof(double), cmp_double);
        med[r] = ns[r][rounds / 2];
    }
    for (int r = 0; r < ROWS; r++) {
        double base = med[r < 3 ? 0 : 3];
        printf("%-30s %8.1f  %.3fx %s\n", names[r], med[r], med[r] / base,
               r < 3 ? "getrusage(RUSAGE_THREAD)" : "getrusage(RUSAGE_SELF)");
    }
    printf("floor: tt_self_times <= 1.2x getrusage(RUSAGE_THREAD): %s\n", med[2] <= 1.2 * med[0] ? "met" : "NOT MET");
    for (int r = 0; r < ROWS; r++)
        free(ns[r]);
    return acc == 42 ? 3 : 0; /* uses acc */
}
