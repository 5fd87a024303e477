/* threadtime-vthreads: choosing the clock and converting its units. */
#include "clock.h"

#include "event_internal.h"
#include "internal.h"
#include "prim/clockid.h"

vt_source vt__source = VT_SOURCE_CPU;

/* ns per counter tick, measured once by the core's calibration. */
static double g_ns_per_tick = 1.0;

void vt_clock_init(vt_mode mode)
{
    if (mode == VT_MODE_EXACT) {
        vt__source = VT_SOURCE_CPU;
        return;
    }
    double hz = 0;
    if (tt__counter_calibrated(&hz) && hz > 0) {
        g_ns_per_tick = 1e9 / hz;
        vt__source = VT_SOURCE_COUNTER;
    } else {
        vt__source = VT_SOURCE_MONOTONIC;
    }
}

int64_t vt__cpu_now(void)
{
    /* The core's fast clock: the carrier's precise CPU time for about one
     * counter read while the carrier has not been switched out since its
     * last real read, one real read otherwise (docs/fast-clock.md). Its
     * answers never decrease on one carrier, and time the carrier spent
     * descheduled or blocked is never counted, so exact mode stays exact. */
    return tt_self_fast_ns();
}

int64_t vt_clock_carrier_now(pid_t tid)
{
    return vt__source == VT_SOURCE_CPU ? tt_tid_total_ns(tid) : vt_clock_now();
}

int64_t vt_clock_to_ns(int64_t units)
{
    if (vt__source != VT_SOURCE_COUNTER || units < 0)
        return units;
    /* A double keeps 53 bits: below 1 ns of error for ~100 days of ticks,
     * and the same tick count always gives the same ns (monotonic). */
    return (int64_t)((double)units * g_ns_per_tick);
}

const char *vt_clock_name(void)
{
#if defined(TT__ARCH_COUNTER_NAME)
    if (vt__source == VT_SOURCE_COUNTER)
        return TT__ARCH_COUNTER_NAME;
#endif
    return vt__source == VT_SOURCE_CPU ? "thread-cpu" : "monotonic-raw";
}
