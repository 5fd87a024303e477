/* Internal declarations shared by the core's source files (never installed). */
#ifndef TT_INTERNAL_H
#define TT_INTERNAL_H

#define TT_BUILDING_LIBRARY 1
#include "threadtime/threadtime.h"

#include <errno.h>
#include <stdint.h>
#include <time.h>

#define TT__NS_PER_SEC INT64_C(1000000000)

/* One clock_gettime() on any clock id: ns >= 0, or -errno. */
static inline int64_t tt__read_clock(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return -errno;
    return (int64_t)ts.tv_sec * TT__NS_PER_SEC + ts.tv_nsec;
}

/* Three raw reads in the order that keeps them consistent: VIRT before PROF
 * (so PROF >= VIRT) and SCHED last (so runtime covers both samples). */
static inline int tt__read_three(clockid_t virt_id, clockid_t prof_id, clockid_t sched_id, int64_t v[3])
{
    v[1] = v[2] = 0;
    v[0] = tt__read_clock(virt_id);
    if (v[0] < 0)
        return (int)v[0];
    v[1] = tt__read_clock(prof_id);
    if (v[1] < 0)
        return (int)v[1];
    v[2] = tt__read_clock(sched_id);
    return v[2] < 0 ? (int)v[2] : 0;
}

/* Ticks and previous result of one thread's consistent split. */
typedef struct tt__split {
    int64_t user_ns;
    int64_t system_ns;
} tt__split;

/* The kernel's own split, as /proc printed it. */
static inline void tt__times_from_procfs(const tt_procfs_stat *st, tt_times *out)
{
    out->user_ns = st->user_ns;
    out->system_ns = st->system_ns;
    out->total_ns = st->user_ns + st->system_ns;
}

/* Folds a split of `total` whose system part is `sys` into *prev (updated)
 * so that each part stays monotonic and user + system == total; a total not
 * above the previous answer's returns that answer. */
void tt__split_merge(tt__split *prev, int64_t total, int64_t sys, tt_times *out);

/* Scales raw tick samples to the precise runtime the way the kernel's
 * cputime_adjust() does for /proc, and keeps each part monotonic against
 * *prev (updated). virt <= prof are the raw clocks, sched the runtime. */
void tt__split_scale(tt__split *prev, int64_t virt, int64_t prof, int64_t sched,
                     tt_times *out);

/* The calling thread's consistent split at ns resolution: three clock
 * reads scaled against this thread's previous answer. 0 or -errno. */
int tt__self_split_clockid(tt_times *out);

/* Classifies a tid the kernel refused: -ESRCH if no such task exists,
 * -EINVAL if it exists but is not a thread of this process. */
int tt__classify_missing(pid_t id);

#endif /* TT_INTERNAL_H */
