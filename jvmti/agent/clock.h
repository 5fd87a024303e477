/* threadtime-vthreads: the clock segments are measured with.
 *
 *   exact    the carrier's precise CPU clock through the core's fast clock
 *            (tt_self_fast_ns, vt__cpu_now): about one counter read while
 *            the carrier stayed on its CPU since its last real read, one
 *            clock_gettime() (~550 ns here) after a switch or 1 ms of
 *            counter time. Units are ns of CPU time; time the carrier spent
 *            descheduled or blocked is not charged.
 *   mounted  the cycle counter (rdtsc / cntvct, ~10 ns), in ticks, converted
 *            to ns when read. Charges every ns the thread was mounted,
 *            including time its carrier was descheduled or blocked while the
 *            thread was pinned. Where the counter is not trusted (see the
 *            core's calibration), CLOCK_MONOTONIC_RAW instead (~25 ns).
 */
#ifndef VT_CLOCK_H
#define VT_CLOCK_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <threadtime/arch.h>
#include <threadtime/cpu.h>

#include "read_clock.h"

typedef enum vt_mode { VT_MODE_EXACT = 0, VT_MODE_MOUNTED = 1 } vt_mode;

/* What the mounted mode reads; fixed by vt_clock_init(). */
typedef enum vt_source { VT_SOURCE_CPU = 0, VT_SOURCE_COUNTER = 1, VT_SOURCE_MONOTONIC = 2 } vt_source;

/* Set once by vt_clock_init(), before any event is enabled. */
extern vt_source vt__source;

/* Chooses the source for `mode`. The mounted mode calibrates the counter
 * (~25 ms, the core's calibration) to decide whether it is trusted. */
void vt_clock_init(vt_mode mode);

/* The calling carrier's SCHED clock (exact mode), ns; < 0 if no source answers. */
int64_t vt__cpu_now(void);

/* The calling carrier's clock now, in units; < 0 if the read failed. */
static inline int64_t vt_clock_now(void)
{
    if (vt__source == VT_SOURCE_CPU)
        return vt__cpu_now();
    if (vt__source == VT_SOURCE_COUNTER)
        return (int64_t)tt__counter_read();
    return tt__read_clock(CLOCK_MONOTONIC_RAW);
}

/* The clock of a segment open on carrier `tid`, read from another thread:
 * that carrier's CPU clock in exact mode, the shared counter otherwise. */
int64_t vt_clock_carrier_now(pid_t tid);

/* Units to ns. */
int64_t vt_clock_to_ns(int64_t units);

/* "thread-cpu", "tsc"/"cntvct", or "monotonic-raw". */
const char *vt_clock_name(void);

#endif /* VT_CLOCK_H */
