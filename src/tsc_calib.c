/* Earning trust in the cycle counter: the invariance bit, then a frequency
 * measured against CLOCK_MONOTONIC_RAW over two back-to-back windows that
 * must agree. MONOTONIC_RAW is the reference because NTP never slews it, so
 * the ratio measured now holds for the rest of the run. */
#include "internal.h"
#include "arch.h"
#include "event_internal.h"

#include <stdatomic.h>

/* Brackets per anchor; the tightest is kept. Eight cost ~1 us. */
#define TT__ANCHOR_TRIES 8
/* Each calibration window: long enough that a 30 ns bracket is ~2 ppm of
 * it, short enough that tt_log_start stays quick. */
#define TT__CALIB_WINDOW_NS (INT64_C(12) * 1000 * 1000 + 500 * 1000)
/* The two windows must give the same frequency within this (1000 ppm); a
 * counter that drifts more is not a clock. */
#define TT__CALIB_AGREE 1e-3

int tt__anchor_take(tt__anchor *a, int use_counter)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < TT__ANCHOR_TRIES; i++) {
        int64_t m1 = tt__read_clock(CLOCK_MONOTONIC_RAW);
        uint64_t c = use_counter ? tt__counter_read() : 0;
        int64_t m2 = tt__read_clock(CLOCK_MONOTONIC_RAW);
        int64_t r = tt__read_clock(CLOCK_REALTIME);
        if (m1 < 0 || m2 < 0 || r < 0)
            return (int)(m1 < 0 ? m1 : m2 < 0 ? m2 : r);
        if (m2 - m1 < best) {
            best = m2 - m1;
            a->mono_ns = m1 + (m2 - m1) / 2;
            a->counter = use_counter ? c : (uint64_t)a->mono_ns;
            a->real_ns = r;
        }
    }
    return 0;
}

static double window_hz(const tt__anchor *a, const tt__anchor *b)
{
    if (b->mono_ns <= a->mono_ns || b->counter <= a->counter)
        return 0;
    return (double)(b->counter - a->counter) * 1e9 / (double)(b->mono_ns - a->mono_ns);
}

/* To an absolute deadline: a relative sleep restarted with its remainder
 * gets the timer slack again at each restart, so a signal storm faster than
 * the slack kept the calibration asleep for ever (seen in test_signal). */
static void sleep_ns(int64_t ns)
{
    int64_t end = tt__read_clock(CLOCK_MONOTONIC) + ns;
    struct timespec ts = {.tv_sec = end / TT__NS_PER_SEC, .tv_nsec = end % TT__NS_PER_SEC};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Not started, under way, done. An atomic state rather than pthread_once:
 * the fast clock may first ask from a signal handler, which must not wait
 * for a calibration that the code it interrupted is running. */
enum { CALIB_NOT = 0, CALIB_RUNNING = 1, CALIB_DONE = 2 };
static _Atomic int g_calib_state;
static int g_calib_trusted;
static double g_calib_hz;

static void calibrate_once(void)
{
    tt__anchor a[3];
    for (int i = 0; i < 3; i++) {
        if (i > 0)
            sleep_ns(TT__CALIB_WINDOW_NS);
        if (tt__anchor_take(&a[i], 1) != 0)
            return;
    }
    double hz1 = window_hz(&a[0], &a[1]), hz2 = window_hz(&a[1], &a[2]);
    double hz = window_hz(&a[0], &a[2]);
    /* 1 MHz .. 20 GHz: anything else is a broken or emulated counter. */
    if (hz < 1e6 || hz > 2e10 || hz1 <= 0 || hz2 <= 0)
        return;
    g_calib_hz = hz;
    g_calib_trusted = tt__counter_invariant() &&
                      (hz1 > hz2 ? hz1 - hz2 : hz2 - hz1) <= TT__CALIB_AGREE * hz;
}

/* Runs the calibration if nobody has; 0 once it is done, -EAGAIN if
 * another caller is running it and wait is 0. */
static int calibrate(int wait)
{
    for (;;) {
        /* Acquire: pairs with the release below; the results are in. */
        int st = atomic_load_explicit(&g_calib_state, memory_order_acquire);
        if (st == CALIB_DONE)
            return 0;
        if (st == CALIB_NOT && atomic_compare_exchange_strong(&g_calib_state, &st, CALIB_RUNNING)) {
            calibrate_once();
            atomic_store_explicit(&g_calib_state, CALIB_DONE, memory_order_release);
            return 0;
        }
        if (!wait)
            return -EAGAIN;
        sleep_ns(1000 * 1000); /* another thread calibrates: ~25 ms in all */
    }
}

int tt__counter_calibrated(double *hz)
{
    calibrate(1);
    *hz = g_calib_hz;
    return g_calib_trusted;
}

int tt__counter_calibrated_nowait(double *hz)
{
    if (calibrate(0) != 0)
        return -EAGAIN;
    *hz = g_calib_hz;
    return g_calib_trusted;
}
