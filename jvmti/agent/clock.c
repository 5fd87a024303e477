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
    /* What tt_self_total_ns() reads, without the per-thread floor it keeps
     * (a locked compare-and-swap on every read): a stretch is now - mark,
     * and one whose end reads below its mark is dropped, so nothing here
     * needs the floor. A refused read goes to the core, which falls back
     * to getrusage() or /proc and remembers it. */
    if (tt__use_clockid()) {
        int64_t r = tt__read_clock(TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_SCHED));
        if (r >= 0)
            return r;
    }
    return tt_self_total_ns();
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
