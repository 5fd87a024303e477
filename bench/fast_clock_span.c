/* What the length of an anchor's span costs (make bench-fast-clock; never
 * part of the tests). A fast read re-arms, with one real read (a system
 * call), once the thread was switched out or its anchor has served SPAN of
 * counter time. So a thread whose reads are farther apart than the span
 * pays a system call for each; one that reads more often pays one per span.
 *
 * For each span given (ns) and each gap between reads (work of that many
 * ns of CLOCK_MONOTONIC, vDSO: no system call), READS fast reads are timed
 * one by one with the cycle counter around each. Printed per span and gap:
 * the share of reads that re-armed, and the mean and p50 ns per read. The
 * floor, two counter reads back to back, is printed first.
 *
 * usage: fast_clock_span READS SPAN_NS...   e.g. 2000 1000000 50000 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "event_internal.h" /* the counter and its rate */
#include "internal.h"       /* tt__fast_ns, tt__fast_span_set */
#include "read_clock.h"
#include "work.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Mean and p50 of n counter spans, in ns. */
static void stats(uint64_t *t, long n, double ns_per_tick, double *mean, double *p50)
{
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += (double)t[i];
    qsort(t, (size_t)n, sizeof *t, cmp_u64);
    *mean = sum / (double)n * ns_per_tick;
    *p50 = (double)t[n / 2] * ns_per_tick;
}

int main(int argc, char **argv)
{
    long n = argc > 2 ? strtol(argv[1], NULL, 10) : 0;
    if (n < 10 || n > 10000000) {
        fprintf(stderr, "usage: fast_clock_span READS (10..1e7) SPAN_NS...\n");
        return 2;
    }
    double hz = 0;
    if (tt_self_fast_ns() < 0 || tt__counter_calibrated(&hz) != 1 || hz <= 0) {
        fprintf(stderr, "fast_clock_span: no fast clock here (%s)\n", tt_fast_clock_name());
        return 1;
    }
    double ns_per_tick = 1e9 / hz;
    uint64_t *t = malloc((size_t)n * sizeof *t);
    if (t == NULL)
        return 1;
    double mean, p50;
    for (long i = 0; i < n; i++) {
        uint64_t a = tt__counter_read();
        t[i] = tt__counter_read() - a;
    }
    stats(t, n, ns_per_tick, &mean, &p50);
    printf("floor two_counter_reads mean_ns=%.1f p50_ns=%.1f\n", mean, p50);
    static const int64_t gaps[] = {0, 1000, 10000, 30000, 60000, 200000, 1000000};
    /* Spans interleaved within each gap, after one untimed pass (the first
     * timed loop of a process otherwise ran slower). */
    for (long i = 0; i < n; i++)
        tt_self_fast_ns();
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        for (int s = 2; s < argc; s++) {
            int64_t span = strtoll(argv[s], NULL, 10);
            if (tt__fast_span_set(span) < 0) {
                fprintf(stderr, "fast_clock_span: span %s refused\n", argv[s]);
                return 1;
            }
            long rearmed = 0;
            uint64_t prev_anchor = UINT64_MAX;
            long reads = gaps[g] >= 200000 ? n / 10 + 10 : n; /* bounded wall time */
            for (long i = 0; i < reads; i++) {
                if (gaps[g] > 0)
                    bench_work(gaps[g]);
                uint64_t anchor;
                uint64_t a = tt__counter_read();
                tt__fast_ns(&anchor);
                t[i] = tt__counter_read() - a;
                rearmed += anchor == UINT64_MAX || anchor != prev_anchor;
                prev_anchor = anchor;
            }
            stats(t, reads, ns_per_tick, &mean, &p50);
            printf("span_ns=%lld gap_ns=%lld reads=%ld rearmed_pct=%.1f mean_ns=%.1f p50_ns=%.1f\n",
                   (long long)span, (long long)gaps[g], reads, 100.0 * (double)rearmed / (double)reads, mean, p50);
        }
    }
    free(t);
    return 0;
}
