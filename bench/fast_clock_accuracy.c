/* How far the fast clock is from the kernel's own clock, interval by
 * interval (make bench-fast-clock; never part of the tests).
 *
 * Each interval is measured both ways. At each end the real clock
 * (clock_gettime(CLOCK_THREAD_CPUTIME_ID)) is read just before (b) and
 * just after (r) the fast read. The reference is r: a fast answer stands
 * for the end of its call (a fast read takes the counter last, and an
 * anchor pairs its real read with the counter read after it), so r is the
 * same short distance later for every fast read, re-arming or not. The
 * midpoint of b and r is reported beside it: it would be the reference if
 * a re-arming read stood for the middle of its system call. Lengths are
 * log-uniform from 5 us to 2 ms of work; one interval in eight also holds
 * a 50 us sleep, which neither figure may count.
 *
 * Prints one line: the intervals; the total error of the fast figures
 * against the real ones (%); the mean and p99 |fast - real| per interval;
 * the worst interval; the intervals off by more than 50 us; the total
 * error against the midpoints; the intervals read from one anchor and their
 * total error; the steal time all CPUs reported in /proc/stat meanwhile
 * (ms; 10 ms ticks); the span; the clock in use.
 *
 * usage: fast_clock_accuracy [INTERVALS [SPAN_NS]]   (defaults 10000 and
 * the library's TT_FAST_BOUND_NS) */
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h" /* tt__fast_ns: which anchor an answer came from */
#include "read_clock.h"
#include "work.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Steal time of all CPUs so far, in ms (the "cpu" line of /proc/stat, its
 * eighth field, in USER_HZ ticks); -1 if unreadable. */
static double steal_ms(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (f == NULL)
        return -1;
    unsigned long long v[8] = {0};
    int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                     &v[6], &v[7]);
    fclose(f);
    return got == 8 ? (double)v[7] * 1000.0 / (double)sysconf(_SC_CLK_TCK) : -1;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
    int64_t span = argc > 2 ? strtoll(argv[2], NULL, 10) : TT_FAST_BOUND_NS;
    if (n < 1 || n > 100000000 || span <= 0) {
        fprintf(stderr, "usage: fast_clock_accuracy [INTERVALS (1..1e8) [SPAN_NS (> 0)]]\n");
        return 2;
    }
    int64_t *err = malloc((size_t)n * sizeof *err);
    if (err == NULL)
        return 1;
    if (tt_self_fast_ns() < 0) {
        fprintf(stderr, "fast_clock_accuracy: tt_self_fast_ns failed\n");
        return 1;
    }
    if (span != TT_FAST_BOUND_NS && tt__fast_span_set(span) < 0) {
        fprintf(stderr, "fast_clock_accuracy: no span to set (%s)\n", tt_fast_clock_name());
        return 1;
    }
    double steal0 = steal_ms();
    srand48(12345);
    double sum_fast = 0, sum_real = 0, sum_mid = 0;
    /* Apart: intervals read from one anchor (the counter's advance against
     * the kernel's). */
    double same_fast = 0, same_real = 0;
    long same = 0;
    struct timespec pause = {0, 50 * 1000};
    for (long i = 0; i < n; i++) {
        int64_t len = (int64_t)(5000.0 * exp(drand48() * log(2e6 / 5e3)));
        uint64_t a0, a1;
        int64_t b0 = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
        int64_t f0 = tt__fast_ns(&a0);
        int64_t r0 = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
        if (i % 8 == 7) {
            bench_work(len / 2);
            nanosleep(&pause, NULL);
            bench_work(len - len / 2);
        } else {
            bench_work(len);
        }
        int64_t b1 = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
        int64_t f1 = tt__fast_ns(&a1);
        int64_t r1 = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
        if (f0 < 0 || f1 < 0 || b0 < 0 || r0 < 0 || b1 < 0 || r1 < 0) {
            fprintf(stderr, "fast_clock_accuracy: a read failed\n");
            return 1;
        }
        sum_fast += (double)(f1 - f0);
        sum_real += (double)(r1 - r0);
        sum_mid += (double)((b1 + r1) - (b0 + r0)) / 2;
        err[i] = (f1 - f0) - (r1 - r0);
        if (a0 == a1 && a0 != UINT64_MAX) {
            same++;
            same_fast += (double)(f1 - f0);
            same_real += (double)(r1 - r0);
        }
    }
    double steal1 = steal_ms();
    double abs_sum = 0;
    int64_t worst = 0;
    long over = 0;
    for (long i = 0; i < n; i++) {
        int64_t a = err[i] < 0 ? -err[i] : err[i];
        abs_sum += (double)a;
        over += a > 50000;
        if (a > (worst < 0 ? -worst : worst))
            worst = err[i];
        err[i] = a;
    }
    qsort(err, (size_t)n, sizeof *err, cmp_i64);
    printf("intervals=%ld total_error_pct=%.4f mean_abs_ns=%.0f p99_abs_ns=%lld worst_ns=%lld over_50us=%ld "
           "midpoint_error_pct=%.4f one_anchor=%ld one_anchor_error_pct=%.4f real_total_ms=%.1f steal_ms=%.0f "
           "span_ns=%lld clock=\"%s\"\n",
           n, 100.0 * (sum_fast - sum_real) / sum_real, abs_sum / (double)n, (long long)err[(n * 99) / 100],
           (long long)worst, over, 100.0 * (sum_fast - sum_mid) / sum_mid, same,
           same ? 100.0 * (same_fast - same_real) / same_real : 0.0, sum_real / 1e6,
           steal0 >= 0 && steal1 >= 0 ? steal1 - steal0 : -1.0, (long long)span, tt_fast_clock_name());
    free(err);
    return 0;
}
