/* The cycle counter's calibration: converted to ns it keeps within 10 ppm
 * of CLOCK_MONOTONIC_RAW over a few seconds. */
#include <math.h>
#include <time.h>

#include "event_test_util.h"

#define SPAN_NS (INT64_C(3) * 1000 * 1000 * 1000)

TT_TEST(calibration_within_10_ppm_over_seconds)
{
    double hz = 0;
    int trusted = tt__counter_calibrated(&hz);
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_log_info info = {.size = sizeof info};
    CHECK_OP(tt_log_info_get(&info), ==, 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    if (!trusted) {
        /* No trustworthy counter here: the log must have fallen back. */
        printf("counter not trusted here; checking the fallback instead\n");
        CHECK_OP(info.source, ==, TT_LOG_CLOCK_MONOTONIC);
        return;
    }
    CHECK_OP(info.source, ==, TT_LOG_CLOCK_COUNTER);
    CHECK(info.counter_hz == hz);
    tt__anchor a, b;
    CHECK_OP(tt__anchor_take(&a, 1), ==, 0);
    struct timespec ts = {SPAN_NS / 1000000000, SPAN_NS % 1000000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    CHECK_OP(tt__anchor_take(&b, 1), ==, 0);
    /* What the calibrated frequency predicts for b, against what
     * MONOTONIC_RAW says. */
    double predicted = (double)(b.counter - a.counter) * 1e9 / hz;
    double actual = (double)(b.mono_ns - a.mono_ns);
    double ppm = fabs(predicted - actual) / actual * 1e6;
    printf("calibrated %.3f Hz; over %.3f s the counter is off by %.3f ppm\n", hz, actual / 1e9, ppm);
    CHECK(ppm <= 10.0);
}

TT_TEST_MAIN()
